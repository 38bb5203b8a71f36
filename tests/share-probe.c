/*
 * share-probe: share.c and front.c driven as the workbench will drive
 * them, for the end-to-end tests (tests/e2e/share.test.mjs).
 *
 *	share-probe front [-d DIR] [-l MS] [-o NAME=VALUE]... CONFIG
 *		A front: join the shared daemon of CONFIG's text (starting
 *		it when none listens), hand it stdin, stdout and stderr,
 *		wait, and exit with what share_wait says.  When it cannot
 *		join: "share-probe: not sharing: WHY" on stderr, then it
 *		serves the echo itself ("alone PID: LINE").
 *	share-probe status [-d DIR] CONFIG
 *		The daemon's JSON on stdout: exit 0; none runs: exit 1;
 *		an error: exit 2 with why.
 *	share-probe connect-as UID [-d DIR] CONFIG
 *		A status request from effective uid UID (the filesystem
 *		uid stays root's, to reach the socket): what the daemon
 *		does with another user.
 *	share-probe --share-serve HEX --share-ready FD daemon [-d DIR]
 *	    [-l MS] CONFIG
 *		The daemon, as a front starts it: it serves each session
 *		on the client's own pipes, line by line (no extra hop):
 *		"DPID echo LINE", or for "env NAME", "cwd", "opt", "pid",
 *		"stderr TEXT" and "exit N" what they say.  Its log (stderr)
 *		says what happens to sessions and connections.  With
 *		SHARE_PROBE_HOLD=FIFO in its environment, it reads FIFO to
 *		its end before it listens: a test holds it there to see
 *		the other fronts wait for the lock meanwhile.  With
 *		SHARE_PROBE_JOINED_HOLD=FIFO, a front reads FIFO to its
 *		end after it says it joined, before it waits: a test
 *		signals it there.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <time.h>
#include <unistd.h>

#include "../util.h"
#include "../json.h"
#include "../json_out.h"
#include "../jsonrpc.h"
#include "../peer.h"
#include "../proc.h"
#include "../config.h"
#include "../era.h"
#include "../store.h"
#include "../terms.h"
#include "../share.h"

#define MAX_SESSIONS	64
#define MAX_OPTS	8

struct psess {
	struct share_hello	*h;
	struct buf		 in;
	struct buf		 out;
	bool			 eof;
	int			 status;	/* To end with, after eof. */
	int			 base;		/* Its first pollfd. */
};

static const char *dir_arg;
static long long linger_ms = SHARE_LINGER_MS;
static char *opts[MAX_OPTS + 1];
static int nopts;
static struct psess sess[MAX_SESSIONS];
static int nsess;
static long long started;
static volatile sig_atomic_t stopped;

static void
usage(void)
{
	fprintf(stderr, "usage: share-probe front|status|connect-as UID "
	    "[-d DIR] [-l MS] [-o NAME=VALUE] CONFIG\n");
	exit(2);
}

/* The options after the mode; the config's path is what remains. */
static const char *
options(int argc, char **argv)
{
	int ch;

	while ((ch = getopt(argc, argv, "d:l:o:")) != -1) {
		if (ch == 'd')
			dir_arg = optarg;
		else if (ch == 'l')
			linger_ms = atoll(optarg);
		else if (ch == 'o' && nopts < MAX_OPTS)
			opts[nopts++] = optarg;
		else
			usage();
	}
	if (optind != argc - 1)
		usage();
	return argv[optind];
}

/* Directory, key and identity of config; exits 3 when they fail. */
static int
identify(const char *config, struct share_dir *d, struct share_id *id,
    struct buf *why)
{
	unsigned char exe[SHARE_ID_LEN];
	size_t len;
	char *text;

	if ((text = file_read(config, 1 << 20, &len)) == NULL) {
		buf_printf(why, "cannot read %s: %s", config, strerror(errno));
		return -1;
	}
	if (share_dir_open(d, dir_arg, why) < 0 ||
	    share_exe_digest(exe, why) < 0) {
		free(text);
		return -1;
	}
	share_identity(id, d->key, wb_version, exe, text, len);
	free(text);
	return 0;
}

static long long
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Unshared: the echo, served here. */
static int
alone(void)
{
	char line[4096];

	while (fgets(line, sizeof(line), stdin) != NULL) {
		printf("alone %ld: %s", (long)getpid(), line);
		fflush(stdout);
	}
	return 0;
}

/* Read path (a FIFO) to its end, when given. */
static void
hold(const char *path)
{
	char c;
	int fd;

	if (path == NULL || (fd = open(path, O_RDONLY)) < 0)
		return;
	while (read(fd, &c, 1) > 0)
		;
	close(fd);
}

static int
front(const char *config)
{
	struct share_front f;
	struct share_dir d;
	struct share_id id;
	struct buf why = { 0 };
	char *abs, *argv[8];
	char linger[32];
	long long t0 = now_us();
	int st;

	if (identify(config, &d, &id, &why) < 0)
		goto alone;
	if ((abs = realpath(config, NULL)) == NULL) {
		buf_printf(&why, "%s: %s", config, strerror(errno));
		goto alone;
	}
	snprintf(linger, sizeof(linger), "%lld", linger_ms);
	argv[0] = (char *)"share-probe";
	argv[1] = (char *)"daemon";
	argv[2] = (char *)"-d";
	argv[3] = d.path;
	argv[4] = (char *)"-l";
	argv[5] = linger;
	argv[6] = abs;
	argv[7] = NULL;
	st = share_join(&d, &id, argv, opts, &f, &why);
	free(abs);
	share_dir_close(&d);
	if (st < 0)
		goto alone;
	fprintf(stderr, "share-probe: front %ld joined daemon %ld%s in %lld "
	    "us\n", (long)getpid(), (long)f.daemon, f.started ?
	    " (started it)" : "", now_us() - t0);
	hold(getenv("SHARE_PROBE_JOINED_HOLD"));
	return share_wait(&f);
alone:
	fprintf(stderr, "share-probe: not sharing: %s\n", buf_cstr(&why));
	buf_free(&why);
	return alone();
}

static int
status(const char *config)
{
	struct share_dir d;
	struct share_id id;
	struct buf why = { 0 }, json = { 0 };
	int r;

	if (identify(config, &d, &id, &why) < 0) {
		fprintf(stderr, "share-probe: %s\n", buf_cstr(&why));
		return 2;
	}
	r = share_status(&d, &id, &json, &why);
	if (r == 0)
		printf("%s\n", buf_cstr(&json));
	else if (r > 0)
		fprintf(stderr, "share-probe: none runs\n");
	else
		fprintf(stderr, "share-probe: %s\n", buf_cstr(&why));
	share_dir_close(&d);
	buf_free(&why);
	buf_free(&json);
	return r < 0 ? 2 : r;
}

/*
 * The directory and identity as root, then another effective uid (the
 * filesystem uid stays root's, to reach the socket) for the request.
 */
static int
connect_as(const char *uid, const char *config)
{
	struct share_dir d;
	struct share_id id;
	struct buf why = { 0 }, json = { 0 };
	int r;

	if (identify(config, &d, &id, &why) < 0) {
		fprintf(stderr, "share-probe: %s\n", buf_cstr(&why));
		return 2;
	}
	if (setresuid((uid_t)-1, (uid_t)atol(uid), (uid_t)-1) < 0) {
		perror("share-probe: setresuid");
		return 3;
	}
	setfsuid(0);
	r = share_status(&d, &id, &json, &why);
	/* Root again: a leak checker's ptrace needs it at exit. */
	if (setresuid((uid_t)-1, 0, (uid_t)-1) < 0)
		perror("share-probe: setresuid back");
	if (r == 0)
		printf("%s\n", buf_cstr(&json));
	else
		fprintf(stderr, "share-probe: %s\n", r > 0 ? "none runs" :
		    buf_cstr(&why));
	share_dir_close(&d);
	buf_free(&why);
	buf_free(&json);
	return r < 0 ? 2 : r;
}

/*
 * The daemon.
 */

static void
on_stop(int sig)
{
	(void)sig;
	stopped = 1;
}

static const char *
env_get(const struct share_hello *h, const char *name)
{
	size_t i, n = strlen(name);

	for (i = 0; i < h->nenv; i++)
		if (strncmp(h->env[i], name, n) == 0 && h->env[i][n] == '=')
			return h->env[i] + n + 1;
	return NULL;
}

/* One line from the client of s: its answer. */
static void
answer(struct psess *s, char *line)
{
	const struct share_hello *h = s->h;
	struct buf *o = &s->out;
	const char *v;
	size_t i;

	buf_printf(o, "%ld ", (long)getpid());
	if (strncmp(line, "env ", 4) == 0) {
		v = env_get(h, line + 4);
		buf_printf(o, "env %s=%s", line + 4, v != NULL ? v : "(unset)");
	} else if (strcmp(line, "cwd") == 0)
		buf_printf(o, "cwd %s", h->cwd);
	else if (strcmp(line, "opt") == 0) {
		buf_puts(o, "opt");
		for (i = 0; i < h->nopt; i++)
			buf_printf(o, " %s", h->opt[i]);
	} else if (strcmp(line, "pid") == 0)
		buf_printf(o, "pid %ld", (long)h->pid);
	else if (strncmp(line, "stderr ", 7) == 0) {
		dprintf(h->fd[2], "%s\n", line + 7);
		buf_puts(o, "ok");
	} else if (strncmp(line, "exit ", 5) == 0) {
		s->eof = true;
		s->status = atoi(line + 5);
		buf_puts(o, "bye");
	} else
		buf_printf(o, "echo %s", line);
	buf_putc(o, '\n');
}

static void
session_read(struct psess *s)
{
	char *nl;
	ssize_t n;

	buf_reserve(&s->in, 4096);
	n = read(s->h->fd[0], s->in.data + s->in.len, 4096);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		s->eof = true;
		return;
	}
	s->in.len += (size_t)n;
	while (!s->eof && (nl = memchr(s->in.data, '\n', s->in.len)) != NULL) {
		*nl = '\0';
		answer(s, s->in.data);
		buf_consume(&s->in, (size_t)(nl - s->in.data) + 1);
	}
}

static bool
session_write(struct psess *s)
{
	ssize_t n;

	while (s->out.len > 0) {
		n = write(s->h->fd[1], s->out.data, s->out.len);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return true;
		if (n <= 0)
			return false;
		buf_consume(&s->out, (size_t)n);
	}
	return true;
}

static void
session_end(struct share_server *srv, int k, const char *why)
{
	struct psess *s = &sess[k];

	wb_log_info("session of pid %ld ended: %s", (long)s->h->pid, why);
	share_session_end(srv, s->h, s->status);
	buf_free(&s->in);
	buf_free(&s->out);
	sess[k] = sess[--nsess];
}

static void
status_json(struct buf *b, void *arg)
{
	long long now = now_ms();
	int i;

	(void)arg;
	buf_printf(b, "{\"pid\":%ld,\"uptimeMs\":%lld,\"sessions\":[",
	    (long)getpid(), now - started);
	for (i = 0; i < nsess; i++) {
		buf_printf(b, "%s{\"pid\":%ld,\"sinceMs\":%lld,\"cwd\":",
		    i > 0 ? "," : "", (long)sess[i].h->pid,
		    now - sess[i].h->since);
		json_put_cstr(b, sess[i].h->cwd);
		buf_putc(b, '}');
	}
	buf_puts(b, "],\"servers\":[]}");
}

/* Watch each session: stdin, stdout when there is output, lifeline. */
static int
session_pollfds(struct pollfd *pfd, int n)
{
	int i;

	for (i = 0; i < nsess; i++) {
		sess[i].base = n;
		pfd[n].fd = sess[i].eof ? -1 : sess[i].h->fd[0];
		pfd[n++].events = POLLIN;
		pfd[n].fd = sess[i].out.len > 0 ? sess[i].h->fd[1] : -1;
		pfd[n++].events = POLLOUT;
		pfd[n].fd = sess[i].h->sock;
		pfd[n++].events = POLLIN;
	}
	return n;
}

static void
session_events(struct share_server *srv, const struct pollfd *pfd)
{
	struct psess *s;
	int i;

	for (i = nsess - 1; i >= 0; i--) {
		s = &sess[i];
		if (pfd[s->base + 2].revents != 0 && share_session_gone(s->h)) {
			session_end(srv, i, "its front is gone");
			continue;
		}
		if (pfd[s->base].revents != 0)
			session_read(s);
		if (!session_write(s))
			session_end(srv, i, "its stdout is closed");
		else if (s->eof && s->out.len == 0)
			session_end(srv, i, s->status == 0 ? "its stdin is "
			    "closed" : "it asked to");
	}
}

static void
session_new(struct share_server *srv, struct share_hello *h)
{
	struct psess *s;

	if (nsess == MAX_SESSIONS) {
		share_session_end(srv, h, 1);
		return;
	}
	s = &sess[nsess++];
	memset(s, 0, sizeof(*s));
	s->h = h;
	wb_log_info("session of pid %ld began in %s", (long)h->pid, h->cwd);
	dprintf(h->fd[2], "share-probe daemon %ld: session of pid %ld "
	    "began\n", (long)getpid(), (long)h->pid);
}

static int
serve_loop(struct share_server *srv)
{
	struct pollfd pfd[SHARE_POLLFDS + 3 * MAX_SESSIONS];
	struct share_hello *h;
	long long now, due, linger;
	sigset_t none;
	struct timespec ts;
	int n, k;

	sigemptyset(&none);
	while (!stopped) {
		now = now_ms();
		if ((linger = share_server_linger(srv, linger_ms)) != 0 &&
		    now >= linger) {
			wb_log_info("no session for %lld ms: exiting",
			    linger_ms);
			break;
		}
		k = share_server_pollfds(srv, pfd, SHARE_POLLFDS);
		n = session_pollfds(pfd, k);
		due = earliest(share_server_deadline(srv), linger);
		if (due <= 0)
			due = -1;
		else {
			due = due > now ? due - now : 0;
			ts.tv_sec = (time_t)(due / 1000);
			ts.tv_nsec = (long)(due % 1000) * 1000000L;
		}
		if (ppoll(pfd, (nfds_t)n, due >= 0 ? &ts : NULL, &none) < 0)
			continue;
		now = now_ms();
		share_server_events(srv, pfd, k, now);
		session_events(srv, pfd);
		while ((h = share_server_take(srv)) != NULL)
			session_new(srv, h);
		share_server_log(srv);
		wb_log_flush();
	}
	while (nsess > 0)
		session_end(srv, nsess - 1, "the daemon exits");
	share_server_close(srv);
	return 0;
}

static int
daemon_main(int argc, char **argv)
{
	struct share_server *srv;
	struct share_dir d;
	struct share_id id;
	struct buf why = { 0 };
	struct sigaction sa;
	sigset_t block;
	const char *config;
	int ready;

	if (argc < 6 || strcmp(argv[3], SHARE_OPT_READY) != 0 ||
	    strcmp(argv[5], "daemon") != 0)
		usage();
	if ((ready = share_ready_fd(argv[4])) < 0) {
		fprintf(stderr, "share-probe: %s %s: not a pipe\n",
		    SHARE_OPT_READY, argv[4]);
		return 2;
	}
	optind = 6;
	config = options(argc, argv);
	started = now_ms();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	sa.sa_handler = on_stop;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigprocmask(SIG_BLOCK, &block, NULL);
	srv = NULL;
	hold(getenv("SHARE_PROBE_HOLD"));
	if (identify(config, &d, &id, &why) == 0) {
		if (!share_id_is(&id, argv[2]))
			buf_printf(&why, "the configuration changed since the "
			    "front read it");
		else
			srv = share_listen(&d, &id, MAX_SESSIONS, status_json,
			    NULL, &why);
		share_dir_close(&d);
	}
	if (srv == NULL) {
		wb_log_info("will not serve: %s", buf_cstr(&why));
		share_ready(ready, buf_cstr(&why));
		return 1;
	}
	wb_log_info("daemon %ld listens (%s.sock)", (long)getpid(), id.name);
	share_ready(ready, NULL);
	return serve_loop(srv);
}

int
main(int argc, char **argv)
{
	const char *config;
	int fd;

	/* A new pipe must never land on fds 0-2. */
	while ((fd = open("/dev/null", O_RDWR)) >= 0 && fd <= 2)
		;
	if (fd > 2)
		close(fd);
	if (argc > 2 && strcmp(argv[1], SHARE_OPT_SERVE) == 0)
		return daemon_main(argc, argv);
	if (argc < 2)
		usage();
	if (strcmp(argv[1], "connect-as") == 0 && argc > 2) {
		optind = 3;
		config = options(argc, argv);
		return connect_as(argv[2], config);
	}
	optind = 2;
	config = options(argc, argv);
	if (strcmp(argv[1], "front") == 0)
		return front(config);
	if (strcmp(argv[1], "status") == 0)
		return status(config);
	usage();
	return 2;
}
