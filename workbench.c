/*
 * mcp-workbench: a stdio MCP server that aggregates other stdio MCP
 * servers.  main, the command line, startup, the single poll() loop,
 * signals and shutdown.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "workbench.h"


#define SHUTDOWN_MS	1900
#define TRIM_IDLE_MS	1000


static int sigfd = -1;
static int saved_fl[3] = { -1, -1, -1 };
static long long stop_at;
static bool probing;			/* --probe: no client, a report. */
static bool probe_json;
static int exit_status;			/* The exit status. */
static const char *stop_why;		/* Why shutdown began. */

/* A new pipe must never land on fds 0-2: keep them open. */
static void
guard_std_fds(void)
{
	int fd;

	while ((fd = open("/dev/null", O_RDWR | O_CLOEXEC)) >= 0 && fd <= 2)
		fcntl(fd, F_SETFD, 0);
	if (fd > 2)
		close(fd);
}

static void
set_std_nonblock(void)
{
	int i;

	for (i = 0; i < 3; i++) {
		saved_fl[i] = fcntl(i, F_GETFL);
		fcntl(i, F_SETFL, saved_fl[i] | O_NONBLOCK);
	}
}

/* O_NONBLOCK on 0-2 is shared with whoever started us: give it back. */
static void
restore_std_fds(void)
{
	int i;

	for (i = 0; i < 3; i++)
		if (saved_fl[i] >= 0)
			fcntl(i, F_SETFL, saved_fl[i]);
}

/*
 * The loop's descriptors, rebuilt from state each pass.
 */
enum slot_kind {
	SLOT_SIGNAL,
	SLOT_CLIENT_IN,		/* A session's input. */
	SLOT_CLIENT_OUT,	/* A session's output, with bytes waiting. */
	SLOT_SERVER,		/* One of a server's (enum srv_fd). */
	SLOT_GUARD,		/* The guardian's socket, with news waiting. */
	SLOT_LOG,		/* Our stderr, with log waiting (flush_all). */
	SLOT_HTTP,		/* The HTTP listener or a connection (tag). */
	SLOT_HOST		/* The shared workbench's (share_host.c). */
};

struct slot {
	enum slot_kind	 kind;
	struct server	*srv;
	enum srv_fd	 which;		/* Which of the server's. */
	pid_t		 pid;		/* The server's process when watched. */
	struct session	*sess;
	void		*tag;		/* SLOT_HTTP: for hhost_event. */
};

static struct pollfd *pfd;
static struct slot *slots;
static int npfd, cappfd;
static int host_first, host_n;		/* The shared workbench's slots. */

static void
grow_pollfds(void)
{
	cappfd = cappfd == 0 ? 16 : cappfd * 2;
	pfd = xrealloc(pfd, (size_t)cappfd * sizeof(*pfd));
	slots = xrealloc(slots, (size_t)cappfd * sizeof(*slots));
}

/* Poll fd for events; with none, for its hang-up and errors alone. */
static void
watch(int fd, short events, enum slot_kind kind, struct server *s)
{
	if (fd < 0)
		return;
	if (npfd == cappfd)
		grow_pollfds();
	pfd[npfd].fd = fd;
	pfd[npfd].events = events;
	pfd[npfd].revents = 0;
	slots[npfd].kind = kind;
	slots[npfd].srv = s;
	slots[npfd].sess = NULL;
	npfd++;
}

static void
watch_host(int fd, short events)
{
	watch(fd, events, SLOT_HOST, NULL);
}

/*
 * A session's descriptors.  While its client does not read, neither do
 * we; but it may have left (end of file), and that must still be seen.
 */
static void
watch_session(struct session *se)
{
	struct session_fds fds;
	int first = npfd;

	session_watch(se, &fds);
	if (!wb.stopping && !probing && !host_leaving(se))
		watch(fds.in, dispatch_busy(se) ? 0 : POLLIN, SLOT_CLIENT_IN,
		    NULL);
	watch(fds.out, POLLOUT, SLOT_CLIENT_OUT, NULL);
	for (; first < npfd; first++)
		slots[first].sess = se;
}

/* A server's descriptors; its stdout only when read. */
static void
watch_server(struct server *s, bool read)
{
	struct srv_fds fds;
	int k;

	srv_watch(s, read, &fds);
	for (k = 0; k < SRV_FDS; k++) {
		if (fds.fd[k] < 0)
			continue;
		watch(fds.fd[k], fds.events[k], SLOT_SERVER, s);
		slots[npfd - 1].which = (enum srv_fd)k;
		slots[npfd - 1].pid = fds.pid;
	}
}

/* The HTTP listener's and connections' descriptors (hhost_watch). */
static void
watch_http(void *arg, int fd, short events, void *tag)
{
	(void)arg;
	watch(fd, events, SLOT_HTTP, NULL);
	slots[npfd - 1].tag = tag;
}

/*
 * Is every session behind: so full that the servers are not read?  A
 * session alone holds the servers back while its client is behind
 * (backpressure, and nothing is lost).  With others there, one behind
 * does not: the servers serve them all, and one client that does not
 * read would hold up every other; its queue grows instead, to
 * session_overrun's bound.
 */
static bool
sessions_full(bool *held_full)
{
	struct session *se;
	bool all = true, any = false;

	*held_full = false;
	SESSION_EACH(se) {
		any = true;
		all &= session_queued(se) > HIGH_WATER;
		*held_full |= pace_holds_much(se);
	}
	return any && all;
}

/*
 * A session so far behind, while others are not, that it must end: more
 * than HIGH_WATER and a whole message wait for its client.
 */
static bool
session_overrun(const struct session *se)
{
	bool held = false;

	if (session_queued(se) <= HIGH_WATER + wb.cfg.max_message)
		return false;
	if (sessions_full(&held))
		return false;
	wb_log_warn("a client is %zu MiB behind while others are served: its "
	    "session ends", session_queued(se) >> 20);
	return true;
}

/*
 * Backpressure: while a client does not read, we read neither it nor
 * the servers.  A server that does not read its stdin is not waited for:
 * calls to it fail once its queue is full (call_route).
 */
static void
build_pollfds(void)
{
	bool held_full, client_full = sessions_full(&held_full);
	struct session *se;
	struct server *s;

	npfd = 0;
	watch(sigfd, POLLIN, SLOT_SIGNAL, NULL);
	SESSION_EACH(se)
		watch_session(se);
	host_first = npfd;
	if (host_active())
		host_watch(watch_host);
	host_n = npfd - host_first;
	watch(guard_wants_out(), POLLOUT, SLOT_GUARD, NULL);
	watch(wb_log_wants_out(), POLLOUT, SLOT_LOG, NULL);
	hhost_watch(watch_http, NULL);
	SRV_EACH(s)
		watch_server(s, (!client_full && (!held_full || stream_of(s))) ||
		    wb.stopping);
}

static long long
next_deadline(void)
{
	long long t = proc_deadline(), d = bridge_deadline();
	struct server *s;

	if (d > 0 && (t < 0 || d < t))
		t = d;
	if ((d = hhost_deadline()) >= 0 && (t < 0 || d < t))
		t = d;
	SRV_EACH(s) {
		d = srv_deadline(s);
		if (d >= 0 && (t < 0 || d < t))
			t = d;
	}
	if (wb.stopping && (t < 0 || stop_at < t))
		t = stop_at;
	if (host_active() && (d = host_deadline()) >= 0 && (t < 0 || d < t))
		t = d;
	return t;
}

static void
check_timeouts(long long now)
{
	struct server *s;

	proc_tick(now);
	bridge_check(now);
	hhost_timeouts(now);
	SRV_EACH(s) {
		host_about(s, NULL);
		srv_check_timers(s, now);
	}
	host_about(NULL, NULL);
}

/*
 * At debug, how a process that is no running server's ended: one
 * stopped (its input closed, then signals), the guardian, or one a
 * server left behind.
 */
static void
debug_reaped(pid_t pid, int status)
{
	struct buf why = { 0 };

	if (WB_DEBUG > wb_log_reach)
		return;
	proc_status(status, &why);
	wb_log_debug("process %ld ended: %s", (long)pid, buf_cstr(&why));
	buf_free(&why);
}

static void
reap(void)
{
	struct server *s;
	int status;
	pid_t pid;

	/*
	 * Servers, guardians, and what servers left behind (we are their
	 * subreaper); the escalation looks at groups afresh (proc_tick).
	 */
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		if ((s = srv_by_pid(pid)) != NULL)
			srv_exited(s, status);
		else {
			debug_reaped(pid, status);
			guard_reaped(pid);
		}
	}
}

/*
 * Shutdown begins, for why (said in a shared workbench's log when it
 * stops: a user reading it after the fact asks first why it is gone).
 */
static void
begin_shutdown(const char *why)
{
	if (wb.stopping)
		return;
	stop_why = why;
	wb.stopping = true;
	stop_at = now_ms() + SHUTDOWN_MS;
	hhost_shutdown();
	listen_end_all();
	srv_stop_all();
}

/*
 * A client left (gone: it cannot even be written to).  The stdio client
 * is the workbench's reason to run: when it leaves, the workbench ends;
 * a shared workbench's session ends alone (share_host.c).
 */
static void
client_left(struct session *se, bool gone)
{
	wb_log_debug_for(se, "session %lu: its client left%s",
	    session_serial(se), gone ? ", its output gone" : "");
	if (host_active())
		host_leave(se, gone);
	else
		begin_shutdown("its client left");
}

/*
 * A session's input: its lines, or its leaving.  An input that fails
 * for good (a directory as stdin: EISDIR) is readable again at once:
 * left watched it would spin the loop, so the session ends, its answers
 * still written.
 */
static void
on_client_in(struct session *se, const struct pollfd *p)
{
	ssize_t n = 1;

	if (p->events != 0)
		n = dispatch_read(se);
	if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
		wb_log_error("the client's input cannot be read (%s); the "
		    "session ends", strerror(errno));
		client_left(se, false);
		return;
	}
	/* Watched for its hang-up alone: the client left. */
	if (p->events == 0 || n == 0 ||
	    (p->revents & (POLLHUP | POLLERR) && !(p->revents & POLLIN)))
		client_left(se, false);
}

static void
dispatch(long long now)
{
	int i, sig;

	for (i = 0; i < npfd; i++) {
		if (pfd[i].revents == 0)
			continue;
		host_about(slots[i].srv, slots[i].sess);
		switch (slots[i].kind) {
		case SLOT_SIGNAL:
			if ((sig = proc_signal_take()) != 0)
				begin_shutdown(sig == SIGTERM ? "SIGTERM" :
				    sig == SIGINT ? "SIGINT" : sig == SIGHUP ?
				    "SIGHUP" : "a signal");
			reap();
			break;
		case SLOT_CLIENT_IN:
			on_client_in(slots[i].sess, &pfd[i]);
			break;
		case SLOT_CLIENT_OUT:
		case SLOT_HOST:
		case SLOT_LOG:
			break;
		case SLOT_GUARD:
			guard_writable();
			break;
		case SLOT_HTTP:
			hhost_event(slots[i].tag, pfd[i].fd, pfd[i].revents);
			break;
		case SLOT_SERVER:
			srv_event(slots[i].srv, slots[i].which, slots[i].pid,
			    pfd[i].fd, pfd[i].revents);
		}
	}
	host_about(NULL, NULL);
	if (host_n > 0)
		host_events(pfd + host_first, host_n, now);
	check_timeouts(now);
}

/* Has every client been given all there is for it? */
static bool
clients_written(void)
{
	struct session *se;

	SESSION_EACH(se)
		if (!session_written(se))
			return false;
	return true;
}

/* Write every queue: true if a client left meanwhile (it cannot be). */
static bool
flush_all(void)
{
	struct session *se;
	bool left = false;

	SESSION_EACH(se) {
		/* A probe has no client: nothing is said to one. */
		if (probing)
			session_drop(se);
		else if (session_flush(se) < 0 || session_overrun(se)) {
			session_drop(se);
			client_left(se, true);
			left = true;
		}
	}
	srv_write_all(now_ms());
	hhost_flush();
	wb_log_flush();
	return left;
}

/*
 * What must be done once per turn before poll() (redis's beforeSleep):
 * what the lower layers asked for, since they do not call up.  Toolboxes
 * whose servers settled answer their waiters and the client hears of
 * list changes (box_before_poll); the lists replaced while paced replies
 * read them go once none is left.
 */
static void
before_poll(void)
{
	hhost_before_poll();
	box_before_poll();
	srv_reclaim(sessions_pacing());
	if (!sessions_pacing())
		list_free_retired();
}

/* Apply fn to every session's and server's peer; true if any said so. */
static bool
each_peer(bool (*fn)(struct peer *))
{
	struct session *se;
	bool any = false;

	SESSION_EACH(se)
		any |= fn(session_peer(se));
	return srv_peers(fn) | any;
}

/* How long poll may sleep: until the next deadline, or -1. */
static int
poll_timeout(long long now)
{
	long long deadline = next_deadline();

	return deadline < 0 ? -1 : deadline <= now ? 0 :
	    (int)(deadline - now);
}

static void
run(void)
{
	struct session *se;
	long long now;
	int timeout, n;
	bool trim;

	grow_pollfds();
	for (;;) {
		if (host_active())
			host_tick();
		before_poll();
		/*
		 * A client whose output failed is ended by the next turn's
		 * first step (host_tick): poll, with nothing of it to watch,
		 * could wait for ever.
		 */
		if (flush_all())
			continue;
		SESSION_EACH(se)
			dispatch_resume(se);
		/* A probe ends once none of its servers is starting. */
		if (probing && !wb.stopping && !probe_waiting()) {
			exit_status = probe_report(probe_json);
			begin_shutdown("the probe is done");
		}
		now = now_ms();
		/* A shared workbench ends its linger after the last session. */
		if (host_active() && !wb.stopping && host_expired(now))
			begin_shutdown("no session for shareLingerMs");
		/* Servers still exiting are the guardian's (proc_hand_over). */
		if (wb.stopping && ((clients_written() && hhost_written() &&
		    proc_hand_over()) ||
		    now >= stop_at))
			break;
		build_pollfds();
		timeout = poll_timeout(now);
		/* After a second of quiet, large buffers are given back. */
		trim = (timeout < 0 || timeout > TRIM_IDLE_MS) &&
		    each_peer(peer_bloated);
		if (trim)
			timeout = TRIM_IDLE_MS;
		if ((n = poll(pfd, (nfds_t)npfd, timeout)) < 0 &&
		    errno != EINTR) {
			wb_log_error("poll: %s", strerror(errno));
			stop_why = "poll failed";
			break;
		}
		if (n == 0 && trim)
			each_peer(peer_trim);
		loop_tick();
		dispatch(loop_ms());
	}
	hhost_end();
	if (host_active())
		host_close(stop_why);
	proc_kill_all();
	reap();
	guard_end();
	catalog_close();
}

/*
 * Command line.
 */
static void
usage(FILE *f)
{
	fprintf(f, "usage: " WB_NAME " [-c FILE] [--mode proxy|dynamic] "
	    "[--listen HOST:PORT] [--check]\n"
	    "       [-v] [-V|--version] [-h|--help]\n"
	    "       " WB_NAME " [-c FILE] [--mode MODE] --status [--json]\n"
	    "       " WB_NAME " [-c FILE] --probe [--json] [--capabilities JSON] "
	    "[TOOLBOX ...]\n");
}

static void
help(void)
{
	usage(stdout);
	printf("\nA stdio MCP server that groups other stdio MCP servers "
	    "into toolboxes.\n\n"
	    "  -c, --config FILE  configuration file (default: "
	    "$WORKBENCH_CONFIG,\n"
	    "                     else ./workbench-config.json)\n"
	    "      --mode MODE    proxy (meta-tools only) or dynamic (also "
	    "list opened\n"
	    "                     tools natively); overrides toolMode\n"
	    "      --listen HOST:PORT\n"
	    "                     serve MCP over Streamable HTTP at "
	    "http://HOST:PORT/mcp\n"
	    "                     instead of stdio (overrides \"listen\")\n"
	    "      --check        validate the configuration, list its "
	    "toolboxes, exit\n"
	    "      --probe        start the servers of the toolboxes named "
	    "(default: all),\n"
	    "                     report each one's state, tools and start "
	    "time, exit\n"
	    "      --status       say whether a shared workbench serves "
	    "this configuration:\n"
	    "                     its sessions and servers (exit 1: none "
	    "does)\n"
	    "      --json         --probe's report or --status as JSON\n"
	    "      --capabilities JSON\n"
	    "                     the client capabilities --probe declares "
	    "(default:\n"
	    "                     roots, sampling and elicitation)\n"
	    "  -v, --verbose      log at debug: each message routed, each "
	    "server process\n"
	    "                     started and stopped (overrides logLevel)\n"
	    "  -V, --version      print the version and exit\n"
	    "  -h, --help         print this help and exit\n\n"
	    "Exit status: 0 success, 1 invalid configuration (--probe: a "
	    "server failed),\n2 usage error, 3 cannot start, 4 the shared "
	    "workbench died or stopped.\n"
	    "See mcp-workbench(1).\n");
}

static void
print_check(const struct cfg *c)
{
	const struct cfg_toolbox *b;
	int i, k;

	if (c->http_problems != NULL)
		fprintf(stderr, "%s%s: warning: --listen would refuse this "
		    "configuration (the lines above); stdio sessions are "
		    "served\n", c->http_problems, c->path);
	printf("%s: OK, %d toolbox%s, mode %s\n", c->path, c->nboxes,
	    c->nboxes == 1 ? "" : "es", wb.mode == MODE_DYNAMIC ? "dynamic" :
	    "proxy");
	if (c->share)
		printf("shared: sessions share servers, linger %d ms, "
		    "directory %s\n", c->share_linger_ms, c->share_dir != NULL ?
		    c->share_dir : "$XDG_RUNTIME_DIR/" WB_NAME " (else /tmp/"
		    WB_NAME "-UID)");
	for (i = 0; i < c->nboxes; i++) {
		b = &c->boxes[i];
		printf("%s (%d server%s)%s%s\n", b->name, b->nservers,
		    b->nservers == 1 ? "" : "s", b->description[0] != '\0' ?
		    ": " : "", b->description);
		for (k = 0; k < b->nservers; k++)
			printf("  %s: %s%s\n", b->servers[k].name,
			    b->servers[k].command, c->share &&
			    !b->servers[k].share ? " (one per session)" : "");
	}
}

/* What the command line asks for. */
struct options {
	const char	*path;
	const char	*mode;
	bool		 check;
	bool		 probe;
	bool		 json;
	bool		 status;
	const char	*caps;		/* --capabilities */
	const char	*listen;	/* --listen */
	int		 verbose;	/* -v, as often as given */
};

static int
usage_error(const char *what)
{
	fprintf(stderr, WB_NAME ": %s\n", what);
	usage(stderr);
	return WB_EXIT_USAGE;
}

/* Parse the command line; returns an exit status, or -1 to go on. */
static int
parse_options(int argc, char *argv[], struct options *o)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "mode", required_argument, NULL, 'm' },
		{ "check", no_argument, NULL, 'k' },
		{ "probe", no_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "status", no_argument, NULL, 's' },
		{ "capabilities", required_argument, NULL, 'C' },
		{ "listen", required_argument, NULL, 'L' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int ch;

	while ((ch = getopt_long(argc, argv, "c:vVh", longopts, NULL)) != -1) {
		if (ch == 'c')
			o->path = optarg;
		else if (ch == 'm')
			o->mode = optarg;
		else if (ch == 'k')
			o->check = true;
		else if (ch == 'p')
			o->probe = true;
		else if (ch == 'j')
			o->json = true;
		else if (ch == 's')
			o->status = true;
		else if (ch == 'C')
			o->caps = optarg;
		else if (ch == 'L')
			o->listen = optarg;
		else if (ch == 'v')
			o->verbose++;
		else if (ch == 'V') {
			printf(WB_NAME " %s\n", wb_version);
			return 0;
		} else if (ch == 'h') {
			help();
			return 0;
		} else {
			usage(stderr);
			return WB_EXIT_USAGE;
		}
	}
	if ((optind < argc || o->caps != NULL) && !o->probe)
		return usage_error(optind < argc ? "unexpected argument" :
		    "--capabilities goes with --probe");
	if (o->json && !o->probe && !o->status)
		return usage_error("--json goes with --probe or --status");
	if (o->status && (o->probe || o->check || o->listen != NULL))
		return usage_error("--status goes with -c, --mode and --json "
		    "only");
	if (o->mode != NULL && strcmp(o->mode, "proxy") != 0 &&
	    strcmp(o->mode, "dynamic") != 0)
		return usage_error("--mode takes proxy or dynamic");
	if (o->probe && o->check)
		return usage_error("--probe and --check do not go together");
	if (o->listen != NULL && (o->probe || o->check))
		return usage_error(o->probe ? "--listen and --probe do not go "
		    "together" : "--listen and --check do not go together");
	return -1;
}

/*
 * Why the configuration file cannot be read, and where its path came
 * from; for a missing file -c did not name, how to name one.
 */
static void
config_unreadable(const char *path, const char *origin, bool given, int err)
{
	struct stat st;
	char why[64];

	if (err == ENOENT && lstat(path, &st) == 0)
		snprintf(why, sizeof(why), "is a symbolic link to a file that "
		    "does not exist");
	else if (err == ENOENT)
		snprintf(why, sizeof(why), "does not exist");
	else if (err == EFBIG)
		snprintf(why, sizeof(why), "cannot be read: larger than %d "
		    "MiB", CFG_MAX_FILE >> 20);
	else
		snprintf(why, sizeof(why), "cannot be read: %s",
		    strerror(err));
	fprintf(stderr, WB_NAME ": no configuration: %s (%s) %s%s\n", path,
	    origin, why, err == ENOENT && !given ? "; name one with -c FILE" :
	    "");
	if (err == ENOENT && !given)
		usage(stderr);
}

/*
 * Load the configuration: -c FILE, else $WORKBENCH_CONFIG, else the
 * default.
 */
static bool
load_config(const char *path)
{
	const char *origin = "given with -c";
	bool given = path != NULL;
	int r;

	if (!given && (path = getenv("WORKBENCH_CONFIG")) != NULL)
		origin = "from WORKBENCH_CONFIG";
	else if (!given) {
		path = "workbench-config.json";
		origin = "the default: no -c FILE was given and "
		    "WORKBENCH_CONFIG is not set";
	}
	if ((r = cfg_load(&wb.cfg, path, stderr)) == 0)
		return true;
	if (r < 0)
		config_unreadable(path, origin, given, errno);
	else
		fprintf(stderr, WB_NAME ": %s: configuration is invalid\n",
		    path);
	return false;
}

/*
 * Whether this build has what the configuration asks for ("listen",
 * "share"); a build that leaves one out says so and names the build.
 */
static bool
build_has(const struct cfg *c)
{
	const char *why;

	if (c->listen != NULL && (why = hhost_left_out()) != NULL)
		fprintf(stderr, WB_NAME ": %s: \"listen\": %s\n", c->path, why);
	else if (c->share && (why = host_left_out()) != NULL)
		fprintf(stderr, WB_NAME ": %s: \"share\": true: %s\n", c->path,
		    why);
	else
		return true;
	return false;
}

/* Serve the sessions that come to the shared workbench until it ends. */
static void
serve_shared(void)
{
	dispatch_init();
	run();
}

/*
 * Serve the client on stdin and stdout until it leaves; or with listen,
 * HTTP clients until a signal (stdin and stdout are no one's then).
 */
static int
serve(const char *listen)
{
	struct buf err = { 0 };
	struct session *se;

	dispatch_init();
	if (listen != NULL && !hhost_start(listen, &err)) {
		fprintf(stderr, WB_NAME ": cannot listen: %s\n", buf_cstr(&err));
		buf_free(&err);
		return WB_EXIT_START;
	}
	if (listen == NULL) {
		se = dispatch_open(STDIN_FILENO, STDOUT_FILENO);
		wb_log_debug("session %lu opened: stdio", session_serial(se));
	}
	set_std_nonblock();
	run();
	restore_std_fds();
	return exit_status;
}

int
main(int argc, char *argv[])
{
	struct options o = { NULL, NULL, false, false, false, false, NULL, NULL,
	    0 };
	const char *serving = NULL, *listen;
	int r, ready;

	guard_std_fds();
	if ((ready = host_serve_args(&argc, &argv, &serving)) == -2)
		return WB_EXIT_USAGE;
	if ((r = parse_options(argc, argv, &o)) >= 0)
		return r;
	if (o.listen != NULL && hhost_left_out() != NULL) {
		fprintf(stderr, WB_NAME ": --listen: %s\n", hhost_left_out());
		return WB_EXIT_USAGE;
	}
	if (!load_config(o.path))
		return WB_EXIT_CONFIG;
	if (!build_has(&wb.cfg))
		return WB_EXIT_CONFIG;
	/* -v is debug, the most there is: more of them say no more. */
	wb_log_level(o.verbose > 0 ? WB_DEBUG : wb.cfg.log_level);
	wb.mode = o.mode != NULL ? (strcmp(o.mode, "dynamic") == 0 ?
	    MODE_DYNAMIC : MODE_PROXY) : wb.cfg.mode;
	if (o.check) {
		print_check(&wb.cfg);
		return 0;
	}
	listen = o.listen != NULL ? o.listen : wb.cfg.listen;
	if (listen != NULL && !cfg_http_usable(&wb.cfg, stderr))
		return WB_EXIT_CONFIG;
	if (o.status)
		return host_status(o.json);
	/*
	 * A front: the session is served by the shared workbench.  A
	 * listening workbench is a host of sessions itself and joins none.
	 */
	if (wb.cfg.share && ready < 0 && !o.probe && listen == NULL &&
	    (r = host_front(argv[0])) >= 0)
		return r;
	if ((sigfd = proc_signals()) < 0) {
		fprintf(stderr, WB_NAME ": cannot set up signals: %s\n",
		    strerror(errno));
		return WB_EXIT_START;
	}
	box_init();
	if (ready >= 0) {
		if (!host_listen(serving, ready))
			return WB_EXIT_START;
		serve_shared();
	} else if (!o.probe)
		return serve(listen);
	else if (!probe_start(argv + optind, argc - optind, o.caps))
		return WB_EXIT_USAGE;
	else {
		probing = true;
		probe_json = o.json;
		run();
	}
	return exit_status;
}
