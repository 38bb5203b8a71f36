/*
 * share_host.c: the shared workbench, wired into the workbench.  With
 * "share": true the process a client starts is a front: it joins the
 * user's shared workbench of this binary, configuration and instance
 * (starting it when none listens), hands over its stdio and waits
 * (host_front).  The shared workbench is the same binary started with
 * SHARE_OPT_SERVE: it runs the loop of workbench.c with one session per
 * front (the host_* steps the loop calls), routes what the log says
 * about a server to the sessions using it, lingers after the last
 * session, and answers --status (status_json; share_status.c asks).
 * The transport itself is share.h's.
 *
 * A shared workbench serves one binary, configuration text and tool
 * mode (the identity).  Within it a server process is shared by the
 * sessions for which it runs alike: each session's configuration is
 * expanded in its own environment, and each server of it is bound to
 * the instance of the same key (instance_key: the expanded
 * configuration, the working directory, the environment it sees), made
 * for it when there is none.  A server process never serves a session
 * it was not configured for.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "workbench.h"
#include "share_host_int.h"

extern char **environ;

#define HOST_SESSIONS_MAX	256	/* A shared workbench's sessions. */
#define HOST_ERR_MAX	(256 * 1024)	/* A session's stderr queue. */
#define HOST_FIRST_MS	10000	/* The wait for the first session. */
#define HOST_OPT_LOG	"logLevel="	/* The hello's: a session's level. */

/* A session of a front, as the shared workbench serves it. */
struct guest {
	struct share_hello	*h;
	struct session		*se;
	struct buf		 err;		/* For its stderr, escaped. */
	size_t			 dropped;	/* What its stderr lost. */
	bool			 leaving;	/* Its client left. */
	bool			 gone;		/* Its front or output died. */
	bool			 ending;	/* On the list of those. */
	struct loop_io		 life_io;	/* Its front's lifeline. */
	struct loop_io		 err_io;	/* Its stderr, while lines wait. */
	enum wb_level		 level;		/* Of its log: its front's. */
	int			 slot;		/* In slots; -1: none. */
	uint32_t		 parks;		/* Its last park's number. */
	struct guest		*next;
	struct guest		*enext;		/* Those leaving. */
};

static struct share_server *host;
static struct guest *guests;
static struct guest *ending;		/* Those whose client left. */
static struct guest *slots[HOST_SESSIONS_MAX];	/* By a wake's slot. */
static int wake_fd[2] = { -1, -1 };	/* Every parked front's wake. */
static struct loop_io wake_io;
static uint32_t nparks;			/* Parks so far: a wake's number. */
static struct loop_io sock_io[SHARE_POLLFDS];	/* Handshakes, socket. */
static struct pollfd sock_pfd[SHARE_POLLFDS];
static struct loop_timer host_timer;
static long long host_since;
static int linger_ms;
static const struct server *about_srv;	/* What the log is about now. */
static const struct session *about_se;
static unsigned char host_key[SHARE_KEY_LEN];	/* The directory's. */
static char *host_text;			/* The configuration, as read. */
static size_t host_len;
static unsigned long long nguests;	/* Sessions so far: their numbers. */
static long long log_checked;		/* When the log's size was. */
static char *first_cwd;			/* Where the first instances run. */

static bool	host_sink(enum wb_level, const void *, const char *, size_t);
static const struct loop_step host_step;
static void	key_first(void);

/*
 * The identity.
 */

/* The environment a server would get, in a stable order. */
static void
feed_env(struct siphash *h, const struct cfg_server *cs)
{
	char **env = proc_child_env(cs);
	size_t n, i;

	for (n = 0; env[n] != NULL; n++)
		;
	qsort(env, n, sizeof(*env), strp_cmp);
	for (i = 0; i < n; i++)
		sip_update(h, env[i], strlen(env[i]) + 1);
	free(env);
}

/*
 * An instance's key: what the server runs with for a session (its
 * expanded configuration, the working directory it runs in, the
 * environment it sees), and for a server kept to one session
 * ("share": false) that session's number.  Keyed: nothing of it can be
 * read without the directory's key, and it stays in memory.
 */
static void
instance_key(const unsigned char *key, const struct cfg_server *cs,
    const char *cwd, unsigned long long session, unsigned char *out)
{
	unsigned char tag[SIP_TAG];
	struct siphash h;

	sip_init(&h, key);
	cfg_server_digest(cs, key, tag);
	sip_update(&h, tag, sizeof(tag));
	cwd = cs->cwd != NULL ? cs->cwd : cwd;
	sip_update(&h, cwd, strlen(cwd) + 1);
	feed_env(&h, cs);
	if (!cs->share)
		sip_update(&h, &session, sizeof(session));
	sip_final(&h, out);
}

/* Does a server run in the session's working directory? */
static bool
needs_cwd(void)
{
	int i, k;

	for (i = 0; i < wb.cfg.nboxes; i++)
		for (k = 0; k < wb.cfg.boxes[i].nservers; k++)
			if (wb.cfg.boxes[i].servers[k].cwd == NULL)
				return true;
	return false;
}

/* The tool mode, a part of the identity. */
const char *
host_mode_name(void)
{
	return wb.mode == MODE_DYNAMIC ? "dynamic" : "proxy";
}

/*
 * The directory and the identity of this session, and the text it is
 * of (the caller's to free): 0, or -1 with why.  The configuration's
 * text is read again: the identity is of the text the shared workbench
 * will read, which checks it (host_listen).
 */
static int
identify_text(struct share_dir *d, struct share_id *id, char **textp,
    size_t *lenp, struct buf *why)
{
	unsigned char exe[SHARE_ID_LEN];
	struct buf text = { 0 };

	if (share_dir_open(d, wb.cfg.share_dir, why) < 0)
		return -1;
	if (share_exe_digest(exe, why) < 0 ||
	    (*textp = file_read(wb.cfg.path, CFG_MAX_FILE, lenp)) == NULL) {
		if (why->len == 0)
			buf_printf(why, "cannot read %s: %s", wb.cfg.path,
			    strerror(errno));
		share_dir_close(d);
		return -1;
	}
	buf_put(&text, *textp, *lenp);
	buf_putc(&text, '\0');
	buf_printf(&text, "mode %s", host_mode_name());
	share_identity(id, d->key, wb_version, exe, text.data, text.len);
	memcpy(host_key, d->key, SHARE_KEY_LEN);
	buf_free(&text);
	return 0;
}

/* The same, for a caller that needs no text (the front, --status). */
int
host_identify(struct share_dir *d, struct share_id *id, struct buf *why)
{
	char *t = NULL;
	size_t len = 0;
	int r = identify_text(d, id, &t, &len, why);

	free(t);
	return r;
}

/*
 * The front.
 */

/*
 * Join the shared workbench and wait for the session's end: the exit
 * status, or -1 (after one line saying why) to serve the session here.
 */
int
host_front(const char *argv0)
{
	struct share_front f;
	struct share_dir d;
	struct share_id id;
	struct buf why = { 0 };
	char *abs = NULL, *argv[6], level[32], *opts[2] = { level, NULL };
	int r = -1;

	if (host_identify(&d, &id, &why) < 0)
		goto alone;
	if ((abs = realpath(wb.cfg.path, NULL)) == NULL)
		buf_printf(&why, "%s: %s", wb.cfg.path, strerror(errno));
	else {
		argv[0] = (char *)argv0;
		argv[1] = (char *)"-c";
		argv[2] = abs;
		argv[3] = (char *)"--mode";
		argv[4] = (char *)host_mode_name();
		argv[5] = NULL;
		snprintf(level, sizeof(level), HOST_OPT_LOG "%s",
		    wb_level_names[wb_log_level_get()]);
		r = share_join(&d, &id, argv, opts, &f, &why);
	}
	share_dir_close(&d);
	free(abs);
	if (r == 0) {
		buf_free(&why);
		return share_wait(&f);
	}
alone:
	wb_log_warn("not sharing: %s; this session runs on its own",
	    buf_cstr(&why));
	wb_log_flush();
	buf_free(&why);
	return -1;
}

/*
 * --status: the shared workbench's answer (share_status.c asks for it).
 */

static const char *
state_name(enum srv_state st)
{
	switch (st) {
	case SRV_IDLE:
		return "idle";
	case SRV_STARTING:
		return "starting";
	case SRV_READY:
	case SRV_RELISTING:
		return "ready";
	case SRV_STOPPED:
		return "stopped";
	default:
		return "failed";
	}
}

static int
sessions_of(const struct server *s)
{
	struct guest *g;
	int n = 0;

	for (g = guests; g != NULL; g = g->next)
		n += box_uses(g->se, s);
	return n;
}

static void
status_session(struct buf *b, const struct guest *g, long long now)
{
	const char *era = session_era_name(g->se);
	int i, n = 0;

	buf_printf(b, "{\"pid\":%ld,\"era\":", (long)g->h->pid);
	if (era != NULL)
		json_put_cstr(b, era);
	else
		buf_puts(b, "null");
	buf_puts(b, ",\"open\":[");
	for (i = 0; i < wb.cfg.nboxes; i++)
		if (session_box_open(g->se, i)) {
			if (n++ > 0)
				buf_putc(b, ',');
			json_put_cstr(b, wb.cfg.boxes[i].name);
		}
	buf_printf(b, "],\"since_ms\":%lld,\"calls\":%d,\"parked\":%s}",
	    now - g->h->since, srv_session_calls(g->se),
	    session_parked(g->se) ? "true" : "false");
}

static void
status_server(struct buf *b, const struct server *s)
{
	buf_puts(b, "{\"toolbox\":");
	json_put_cstr(b, wb.cfg.boxes[srv_box(s)].name);
	buf_puts(b, ",\"server\":");
	json_put_cstr(b, srv_name(s));
	if (srv_pid(s) > 0)
		buf_printf(b, ",\"pid\":%ld", (long)srv_pid(s));
	else
		buf_puts(b, ",\"pid\":null");
	if (srv_url(s) != NULL) {
		buf_puts(b, ",\"url\":");
		json_put_cstr(b, srv_url(s));
	}
	/*
	 * What tells copies apart; never the env (values stay here).  A
	 * first instance runs where the shared workbench began.
	 */
	if (srv_cwd(s) != NULL || first_cwd != NULL) {
		buf_puts(b, ",\"cwd\":");
		json_put_cstr(b, srv_cwd(s) != NULL ? srv_cwd(s) : first_cwd);
	}
	buf_printf(b, ",\"state\":\"%s\",\"sessions\":%d,\"calls\":%lld}",
	    state_name(srv_state(s)), sessions_of(s), srv_calls(s));
}

/* The shared workbench's answer to --status: one JSON object. */
static void
status_json(struct buf *b, void *arg)
{
	long long now = now_ms();
	const struct server *s;
	struct guest *g;
	int n = 0;

	(void)arg;
	buf_printf(b, "{\"pid\":%ld,\"uptime_ms\":%lld,\"config\":",
	    (long)getpid(), now - host_since);
	json_put_cstr(b, wb.cfg.path);
	buf_printf(b, ",\"mode\":\"%s\",\"version\":", host_mode_name());
	json_put_cstr(b, wb_version);
	buf_puts(b, ",\"sessions\":[");
	for (g = guests; g != NULL; g = g->next) {
		if (n++ > 0)
			buf_putc(b, ',');
		status_session(b, g, now);
	}
	buf_puts(b, "],\"servers\":[");
	n = 0;
	SRV_EACH(s) {
		if (n++ > 0)
			buf_putc(b, ',');
		status_server(b, s);
	}
	buf_puts(b, "]}");
}

/*
 * The shared workbench.
 */

/* Sharing is in this build (no_share.c says otherwise). */
const char *
host_left_out(void)
{
	return NULL;
}

/*
 * Is this the shared workbench's command line (SHARE_OPT_SERVE HEX
 * SHARE_OPT_READY FD, then a workbench's options)?  The ready pipe,
 * with argv moved past ours and hex set; -1 when not; -2 when the
 * descriptor is not a pipe.
 */
int
host_serve_args(int *argc, char ***argv, const char **hex)
{
	char **av = *argv;
	int fd;

	if (*argc < 5 || strcmp(av[1], SHARE_OPT_SERVE) != 0 ||
	    strcmp(av[3], SHARE_OPT_READY) != 0)
		return -1;
	if ((fd = share_ready_fd(av[4])) < 0) {
		fprintf(stderr, WB_NAME ": %s %s: not a pipe\n",
		    SHARE_OPT_READY, av[4]);
		return -2;
	}
#ifdef PR_SET_NAME
	/* What ps, top and pgrep show: not "exe" (we ran /proc/self/exe). */
	prctl(PR_SET_NAME, WB_NAME);
#endif
	*hex = av[2];
	av[4] = av[0];
	*argv = av + 4;
	*argc -= 4;
	return fd;
}

/*
 * Start serving: the identity the front computed (hex) checked against
 * ours, then listen; the front learns either on ready.  True once
 * listening.
 */
bool
host_listen(const char *hex, int ready)
{
	struct buf why = { 0 };
	struct share_dir d;
	struct share_id id;

	if (identify_text(&d, &id, &host_text, &host_len, &why) == 0) {
		if (!share_id_is(&id, hex))
			buf_puts(&why, "the configuration or the environment "
			    "changed since the front read it");
		else
			host = share_listen(&d, &id, HOST_SESSIONS_MAX,
			    status_json, NULL, &why);
		share_dir_close(&d);
	}
	if (host == NULL) {
		wb_log_error("will not serve: %s", buf_cstr(&why));
		share_ready(ready, buf_cstr(&why));
		buf_free(&why);
		return false;
	}
	buf_free(&why);
	host_since = now_ms();
	linger_ms = wb.cfg.share_linger_ms;
	wb.shared = true;
	key_first();
	/* Nothing runs in the front's directory: do not pin it. */
	if (!needs_cwd() && chdir("/") < 0)
		wb_log_warn("cannot leave the front's directory: %s",
		    strerror(errno));
	wb_log_info("shared workbench %ld (" WB_NAME " %s) started: serves %s",
	    (long)getpid(), wb_version, wb.cfg.path);
	wb_log_sink(host_sink);
	srv_about_by(host_about);
	loop_step_add(&host_step);
	share_ready(ready, NULL);
	return true;
}

/*
 * The servers first made run in our environment and directory (those
 * of the front that started us): sessions alike use them.
 */
static void
key_first(void)
{
	unsigned char key[SIP_TAG];
	const struct cfg_server *cs;
	char cwd[PATH_MAX];
	int i, k, n = 0;

	if (getcwd(cwd, sizeof(cwd)) == NULL)
		return;	/* Every session gets instances of its own. */
	first_cwd = xstrdup(cwd);
	for (i = 0; i < wb.cfg.nboxes; i++)
		for (k = 0; k < wb.cfg.boxes[i].nservers; k++, n++) {
			cs = &wb.cfg.boxes[i].servers[k];
			if (!cs->share)
				continue;
			instance_key(host_key, cs, cwd, 0, key);
			srv_key_first(n, key);
		}
}

/*
 * Bind a new session to its instances: the configuration expanded in
 * its environment (as its front expanded it), each server keyed with
 * the session's directory and environment.  False when it cannot be.
 */
static bool
guest_bind(struct guest *g)
{
	char **ours = environ;
	unsigned char key[SIP_TAG];
	struct cfg_server *cs;
	struct cfg c;
	FILE *err;
	int i, k, n = 0, bad;

	if ((err = fopen("/dev/null", "we")) == NULL)
		return false;
	environ = g->h->env;
	bad = cfg_parse(&c, wb.cfg.path, host_text, host_len, err);
	fclose(err);
	for (i = 0; bad == 0 && i < c.nboxes; i++)
		for (k = 0; k < c.boxes[i].nservers; k++, n++) {
			cs = &c.boxes[i].servers[k];
			cs->base_env = g->h->env;
			instance_key(host_key, cs, g->h->cwd, nguests, key);
			if (cs->cwd == NULL) {
				cs->cwd = xstrdup(g->h->cwd);
				cs->cwd_raw = xstrdup(g->h->cwd);
			}
			srv_bind(g->se, n, key, cs);
			cs->base_env = NULL;
		}
	environ = ours;
	cfg_free(&c);
	return bad == 0 && n == srv_configured();
}

bool
host_active(void)
{
	return host != NULL;
}

/* The lines of the log about what is being handled: set by the loop. */
void
host_about(const struct server *s, const struct session *se)
{
	about_srv = s;
	about_se = se;
}

/* A line for a guest's stderr, bounded: what it cannot hold is counted. */
static void
err_put(struct guest *g, const char *line, size_t n)
{
	if (g->err.len + n > HOST_ERR_MAX) {
		g->dropped += n;
		return;
	}
	if (g->dropped > 0 && g->err.len + 96 < HOST_ERR_MAX) {
		buf_printf(&g->err, WB_NAME ": %zu bytes of log dropped "
		    "(stderr is not being read)\n", g->dropped);
		g->dropped = 0;
	}
	buf_put(&g->err, line, n);
	loop_io_events(&g->err_io, POLLOUT);
}

/*
 * The log's sink: a line for a session (who) goes to that session, one
 * about a server to the sessions that have its toolbox open, one about
 * a session to that session, each at the level its front asked for;
 * the rest (and what no session uses) to our own log.
 */
static bool
host_sink(enum wb_level level, const void *who, const char *line, size_t n)
{
	struct guest *g;
	bool taken = false;

	if (who == NULL && about_srv == NULL && about_se == NULL)
		return false;
	for (g = guests; g != NULL; g = g->next) {
		if (who != NULL ? g->se != who : g->se != about_se &&
		    (about_srv == NULL || !box_uses(g->se, about_srv)))
			continue;
		if (level <= g->level)
			err_put(g, line, n);
		taken = true;
	}
	return taken;
}

/*
 * The level of a session's log: its front's (-v, or "logLevel" as that
 * front read it), given with the hello; our own when it gave none.
 */
static enum wb_level
guest_level(const struct share_hello *h)
{
	size_t i, k, len = strlen(HOST_OPT_LOG);

	for (i = 0; i < h->nopt; i++) {
		if (strncmp(h->opt[i], HOST_OPT_LOG, len) != 0)
			continue;
		for (k = 0; wb_level_names[k] != NULL; k++)
			if (strcmp(h->opt[i] + len, wb_level_names[k]) == 0)
				return (enum wb_level)k;
	}
	return wb_log_level_get();
}

/* The most verbose level a session asks for: lines up to it are made. */
static void
guests_reach(void)
{
	enum wb_level most = WB_ERROR;
	struct guest *g;

	for (g = guests; g != NULL; g = g->next)
		if (g->level > most)
			most = g->level;
	wb_log_reaches(most);
}

static void
err_flush(struct guest *g)
{
	/* No one reads it: what it would say is dropped. */
	if (fd_write_some(g->h->fd[2], &g->err, false) < 0)
		g->err.len = 0;
	if (g->err.len == 0)
		loop_io_events(&g->err_io, LOOP_OFF);
}

/* Its client left (gone: its front or output died): it ends soon. */
static void
guest_leaving(struct guest *g, bool gone)
{
	g->leaving = true;
	g->gone |= gone;
	if (g->ending)
		return;
	g->ending = true;
	g->enext = ending;
	ending = g;
}

/* The front transport: a session over the pipes its front handed over. */
static void
front_left(struct session *se, bool gone)
{
	guest_leaving(session_carrier(se), gone);
}

/*
 * Parking (session.c): a quiet session's front watches its client's
 * input, and writes the wake it was given (its slot and park number)
 * to the one pipe every parked front shares, whose reading end alone
 * is polled here.  A wake that names no session parked now is one
 * that came late, or a stray: nothing.
 */
static void
wake_one(const unsigned char *w)
{
	uint32_t slot, parks;
	struct guest *g;

	memcpy(&slot, w, sizeof(slot));
	memcpy(&parks, w + sizeof(slot), sizeof(parks));
	if (slot < HOST_SESSIONS_MAX && (g = slots[slot]) != NULL &&
	    g->parks == parks)
		session_wake(g->se);
}

static void
on_wake(void *arg, int fd, short revents)
{
	static unsigned char in[SHARE_WAKE_LEN * 64];
	static size_t have;
	size_t i;
	ssize_t n;
	int reads;

	(void)arg;
	(void)revents;
	for (reads = 0; reads < 8; reads++) {
		if ((n = read(fd, in + have, sizeof(in) - have)) <= 0)
			break;
		have += (size_t)n;
		for (i = 0; i + SHARE_WAKE_LEN <= have; i += SHARE_WAKE_LEN)
			wake_one(in + i);
		memmove(in, in + i, have - i);
		have -= i;
	}
}

static bool
wake_open(void)
{
	static bool warned;

	if (wake_fd[0] >= 0)
		return true;
	if (pipe2(wake_fd, O_CLOEXEC | O_NONBLOCK) < 0) {
		if (!warned)
			wb_log_warn("quiet sessions stay watched here: no pipe "
			    "for their fronts to wake us: %s", strerror(errno));
		warned = true;
		wake_fd[0] = wake_fd[1] = -1;
		return false;
	}
	loop_io_set(&wake_io, wake_fd[0], POLLIN, on_wake, NULL);
	return true;
}

static void
wake_close(void)
{
	loop_io_del(&wake_io);
	if (wake_fd[0] >= 0) {
		close(wake_fd[0]);
		close(wake_fd[1]);
	}
	wake_fd[0] = wake_fd[1] = -1;
}

static bool
front_park(struct session *se)
{
	struct guest *g = session_carrier(se);
	unsigned char w[SHARE_WAKE_LEN];
	uint32_t slot = (uint32_t)g->slot;
	int r;

	if (g->slot < 0 || g->leaving || !wake_open())
		return false;
	/* Numbered across guests: a late wake of a slot's last guest is
	 * not this one's. */
	g->parks = ++nparks;
	memcpy(w, &slot, sizeof(slot));
	memcpy(w + sizeof(slot), &g->parks, sizeof(g->parks));
	if ((r = share_session_park(g->h, wake_fd[1], w)) < 0)
		guest_leaving(g, true);
	return r > 0;
}

static const struct session_io front_io = { "front", session_pipe_flush,
    session_pipe_wide, front_left, front_park };

/* The front's lifeline: readable when the front died or said bye. */
static void
on_lifeline(void *arg, int fd, short revents)
{
	struct guest *g = arg;

	(void)fd;
	(void)revents;
	if (share_session_gone(g->h))
		guest_leaving(g, true);
}

static void
on_err(void *arg, int fd, short revents)
{
	(void)fd;
	(void)revents;
	err_flush(arg);
}

static void
guest_new(struct share_hello *h)
{
	struct guest *g = xcalloc(1, sizeof(*g)), **p;

	g->h = h;
	g->se = dispatch_open(h->fd[0], h->fd[1], &front_io, g);
	g->level = guest_level(h);
	/* Only its front's end comes there: a second late is soon enough. */
	loop_io_set(&g->life_io, h->sock, POLLIN, on_lifeline, g);
	loop_io_lazy(&g->life_io);
	loop_io_set(&g->err_io, h->fd[2], LOOP_OFF, on_err, g);
	for (g->slot = 0; g->slot < HOST_SESSIONS_MAX && slots[g->slot];)
		g->slot++;
	if (g->slot < HOST_SESSIONS_MAX)
		slots[g->slot] = g;
	else
		g->slot = -1;
	nguests++;
	for (p = &guests; *p != NULL; p = &(*p)->next)
		;
	*p = g;
	guests_reach();
	wb_log_info("session of pid %ld began", (long)h->pid);
	wb_log_debug_for(g->se, "session %lu opened: the front of pid %ld",
	    session_serial(g->se), (long)h->pid);
	if (!guest_bind(g)) {
		host_about(NULL, g->se);
		wb_log_error("the configuration does not expand in this "
		    "session's environment as it did in its front's; the "
		    "session ends");
		host_about(NULL, NULL);
		guest_leaving(g, true);
	}
}

/* A guest's end: its session closed, its front told, it goes. */
static void
guest_end(struct guest *g)
{
	struct guest **p;

	for (p = &guests; *p != g; p = &(*p)->next)
		;
	*p = g->next;
	if (g->slot >= 0)
		slots[g->slot] = NULL;
	err_flush(g);
	wb_log_info("session of pid %ld ended%s", (long)g->h->pid,
	    g->gone ? ": its front or its output is gone" : "");
	loop_io_del(&g->life_io);
	loop_io_del(&g->err_io);
	dispatch_close(g->se);
	share_session_end(host, g->h, 0);
	buf_free(&g->err);
	free(g);
	guests_reach();
}

/*
 * A session whose client left ends once its answers are written, one
 * whose front is gone at once: its calls cancelled at their servers,
 * its front told.  Only those leaving are looked at.
 */
static void
end_leaving(void)
{
	struct guest **p = &ending, *g;

	while ((g = *p) != NULL) {
		if (!g->gone && !session_written(g->se)) {
			p = &g->enext;
			continue;
		}
		*p = g->enext;
		guest_end(g);
	}
}

/* The socket's and the handshakes' descriptors, each with the loop. */
static void
on_sock(void *arg, int fd, short revents)
{
	struct pollfd *p = arg;
	struct pollfd one = { fd, p->events, revents };
	struct share_hello *h;

	share_server_events(host, &one, 1, loop_ms());
	while ((h = share_server_take(host)) != NULL)
		guest_new(h);
}

static void
watch_sock(void)
{
	int n, i;

	n = share_server_pollfds(host, sock_pfd, SHARE_POLLFDS);
	for (i = 0; i < SHARE_POLLFDS; i++)
		if (i < n)
			loop_io_set(&sock_io[i], sock_pfd[i].fd,
			    sock_pfd[i].events, on_sock, &sock_pfd[i]);
		else
			loop_io_del(&sock_io[i]);
}

/*
 * When the shared workbench exits: shareLingerMs after the last session
 * left, or 0 while sessions are there.  Before the first came, it waits
 * for it at least HOST_FIRST_MS: the front that started it connects
 * once it listens, whatever shareLingerMs says.
 */
static long long
linger_end(void)
{
	return share_server_linger(host, nguests == 0 &&
	    linger_ms < HOST_FIRST_MS ? HOST_FIRST_MS : linger_ms);
}

/* When the loop must wake for us: the handshakes, the linger. */
static long long
host_deadline(void)
{
	long long linger = linger_end(), d;

	d = earliest(share_server_deadline(host), linger);

	return d > 0 ? d : -1;
}

/* Has the linger after the last session passed? */
static bool
host_expired(long long now)
{
	long long linger = linger_end();

	return linger != 0 && now >= linger;
}

/*
 * The end: every session still there ends, the socket goes.  One whose
 * client is still there is cut short (the shared workbench was stopped):
 * its front exits as when it dies, saying it stopped.
 */
static void
host_close(const char *why)
{
	struct guest *g;
	int n = 0;

	wb_log_sink(NULL);
	for (g = guests; g != NULL; g = g->next)
		n++;
	wb_log_info("shared workbench %ld stops: %s; %d session%s still there",
	    (long)getpid(), why != NULL ? why : "it was stopped", n,
	    n == 1 ? "" : "s");
	while ((g = guests) != NULL) {
		guests = g->next;
		err_flush(g);
		share_session_end(host, g->h, g->leaving || g->gone ? 0 :
		    SHARE_EXIT_LOST);
		loop_io_del(&g->life_io);
		loop_io_del(&g->err_io);
		if (g->slot >= 0)
			slots[g->slot] = NULL;
		buf_free(&g->err);
		free(g);
	}
	ending = NULL;
	wake_close();
	share_server_close(host);
	host = NULL;
}

static void
on_host_timer(void *arg)
{
	struct share_hello *h;

	(void)arg;
	share_server_events(host, NULL, 0, loop_ms());
	while ((h = share_server_take(host)) != NULL)
		guest_new(h);
}

/*
 * The shared workbench's step, first of the turn: the sessions whose
 * client left end, the log's size is looked at once a second, and after
 * the last session the linger ends the workbench.
 */
static void
host_before_poll(void)
{
	long long now = loop_ms();

	end_leaving();
	if (now >= log_checked + 1000) {
		log_checked = now;
		share_server_log(host);
	}
	if (!loop_stopping() && host_expired(now_ms()))
		loop_stop("no session for shareLingerMs");
	watch_sock();
	loop_timer_set(&host_timer, host_deadline(), on_host_timer, NULL);
}

static void
host_end(void)
{
	int i;

	for (i = 0; i < SHARE_POLLFDS; i++)
		loop_io_del(&sock_io[i]);
	loop_timer_del(&host_timer);
	host_close(loop_stop_why());
}

static const struct loop_step host_step = {
	LOOP_ACCEPT, host_before_poll, NULL, NULL, host_end, NULL
};
