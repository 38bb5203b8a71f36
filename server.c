/*
 * server.c: one downstream server's life, as a state machine:
 *
 *	IDLE or FAILED or STOPPED --start--> STARTING (initialize, then
 *	    its lists: tools, and the prompts, resources and templates it
 *	    declared) --lists complete--> READY
 *	READY --a list_changed--> RELISTING (calls go on against the old
 *	    lists) --lists complete, or failed--> READY
 *	any --exit, timeout, protocol error--> FAILED (an automatic start
 *	    waits a backoff; open_toolbox starts it at once)
 *	READY --idleTimeoutMs without traffic, or shutdown--> STOPPED
 *
 * Its first requests, and the era they find, are handshake.c's (enum
 * handshake).  While it starts, its tools may be known from the
 * catalogue (catalog.c).
 *
 * Its lines are read here and handed to call.c (answers), relay.c (its
 * requests and notifications) and stream.c (a large result as it comes);
 * what is written to it, its exit and its timers are in server_io.c.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server_int.h"
#include "mcp.h"

/*
 * Automatic restarts back off: none after a first failure, then
 * BACKOFF_FIRST_MS doubling per failure in a row up to BACKOFF_MAX_MS;
 * a server that ran BACKOFF_RESET_MS counts from the start again.
 */
#define BACKOFF_FIRST_MS	250
#define BACKOFF_MAX_MS		30000
#define BACKOFF_RESET_MS	60000

static struct json j;			/* The server line being handled. */
static struct server **servers;	/* All, box by box, */
static int nservers, capservers;	/* then instances made later. */
static int nconfigured;			/* The first, as configured. */
static struct srv_upcalls up;		/* What the layer above is told. */
static bool changed;			/* Lists changed, or a server settled. */
static bool reclaim_due;		/* A session left, or a server stopped. */

static void	srv_line(void *, char *, size_t);
static void	srv_oversize(void *, size_t, const char *);

const struct peer_ops srv_ops = { srv_line, srv_oversize, NULL,
    stream_feed, srv_pump };

static void
srv_init(struct server *s, int n, int box, const struct cfg_server *cfg)
{
	struct buf label = { 0 };

	s->n = n;
	s->box = box;
	s->boxcfg = &wb.cfg.boxes[box];
	s->cfg = cfg;
	handshake_init(s);
	buf_printf(&label, "%s/%s", s->boxcfg->name, cfg->name);
	s->label = buf_cstr(&label);
	s->proc.io.rfd = s->proc.io.wfd = s->proc.errfd = -1;
	s->proc.execfd = -1;
}

static void
srv_append(struct server *s)
{
	if (nservers == capservers) {
		capservers = capservers > 0 ? capservers * 2 : 16;
		servers = xrealloc(servers, (size_t)capservers *
		    sizeof(*servers));
	}
	s->at = nservers;
	servers[nservers++] = s;
}

/*
 * Every configured server, box by box, so that walking them is a loop:
 * the instances a session uses unless it was given others (srv_bind).
 */
void
srv_init_all(void)
{
	struct server *s;
	int i, k, n = 0;

	for (i = 0; i < wb.cfg.nboxes; i++)
		for (k = 0; k < wb.cfg.boxes[i].nservers; k++) {
			s = xcalloc(1, sizeof(*s));
			srv_init(s, n++, i, &wb.cfg.boxes[i].servers[k]);
			srv_append(s);
		}
	nconfigured = n;
}

/* The n-th server in configuration order, as first made. */
struct server *
srv_at(int n)
{
	return servers[n];
}

struct server *
srv_first(void)
{
	return nservers > 0 ? servers[0] : NULL;
}

struct server *
srv_next(const struct server *s)
{
	return s->at + 1 < nservers ? servers[s->at + 1] : NULL;
}

/*
 * Instances.  A shared workbench's sessions may differ in what a server
 * runs with (the environment it sees, the directory it runs in), or the
 * configuration keeps a server to one session ("share": false): each
 * session is bound to an instance of each configured server, found by
 * its key (a keyed digest of what it runs with) or made for it.
 */
struct binding {
	const struct session	*se;
	struct server		**inst;	/* By configured index. */
	struct binding		*next;
};

static struct binding *bindings;

static struct binding *
binding_of(const struct session *se)
{
	struct binding *b;

	for (b = bindings; b != NULL && b->se != se; b = b->next)
		;
	return b;
}

/* The instance of configured server n that the session uses. */
struct server *
srv_for(const struct session *se, int n)
{
	const struct binding *b = se != NULL ? binding_of(se) : NULL;

	return b != NULL ? b->inst[n] : servers[n];
}

/* Is s the instance its session uses of its configured server? */
bool
srv_used_by(const struct server *s, const struct session *se)
{
	return srv_for(se, s->n) == s;
}

/*
 * Does the session use s: its instance, its toolbox open or being opened
 * (the box layer knows which)?  What a server says that answers no one
 * goes to these sessions alone, over HTTP as in a shared workbench.
 */
bool
srv_uses(const struct session *se, const struct server *s)
{
	if (up.uses != NULL)
		return up.uses(se, s);
	return srv_used_by(s, se);
}

/* How many servers are configured. */
int
srv_configured(void)
{
	return nconfigured;
}

/* The configuration index of a server (its place in srv_at). */
int
srv_index(const struct server *s)
{
	return s->n;
}

/*
 * Bind the session to the instance of configured server n with this
 * key, made from cs (copied) when none has it.  A key of NULL is the
 * first instance's.
 */
void
srv_bind(const struct session *se, int n, const unsigned char *key,
    const struct cfg_server *cs)
{
	struct binding *b = binding_of(se);
	struct server *s = NULL;
	int i;

	if (b == NULL) {
		b = xcalloc(1, sizeof(*b));
		b->se = se;
		b->inst = xcalloc((size_t)nconfigured, sizeof(*b->inst));
		for (i = 0; i < nconfigured; i++)
			b->inst[i] = servers[i];
		b->next = bindings;
		bindings = b;
	}
	if (key == NULL)
		return;
	for (i = 0; i < nservers && s == NULL; i++)
		if (servers[i]->n == n && servers[i]->keyed &&
		    memcmp(servers[i]->key, key, SIP_TAG) == 0)
			s = servers[i];
	if (s == NULL) {
		s = xcalloc(1, sizeof(*s));
		s->own = cfg_server_dup(cs);
		srv_init(s, n, servers[n]->box, s->own);
		memcpy(s->key, key, SIP_TAG);
		s->keyed = true;
		srv_append(s);
	}
	b->inst[n] = s;
	s->unused_at = 0;
}

/* Key the first instance of n: sessions with this key use it. */
void
srv_key_first(int n, const unsigned char *key)
{
	memcpy(servers[n]->key, key, SIP_TAG);
	servers[n]->keyed = true;
}

/* How many sessions are bound to s. */
int
srv_sessions(const struct server *s)
{
	const struct binding *b;
	int k = 0;

	for (b = bindings; b != NULL; b = b->next)
		k += b->inst[s->n] == s;
	return k;
}

/*
 * An instance made for sessions that all left, and down, goes (unless
 * a paced reply may still read its lists: then at a later turn).  One
 * of a server kept to its session ("share": false) is stopped when that
 * session goes.
 */
static void
srv_free(struct server *s)
{
	int i;

	srv_unwatch(s);
	list_stop(s);
	list_release(s);
	ghosts_clear(s);
	free(s->ghosts);
	proc_close(&s->proc);
	free(s->req);
	free(s->label);
	free(s->error);
	buf_free(&s->told);
	cfg_server_free(s->own);
	for (i = s->at + 1; i < nservers; i++) {
		servers[i - 1] = servers[i];
		servers[i - 1]->at = i - 1;
	}
	nservers--;
	free(s);
}

static bool
srv_unused(const struct server *s)
{
	return s->own != NULL && srv_sessions(s) == 0 && s->nreq == 0 &&
	    (s->proc.pid == 0 || s->proc.reaped) && s->proc.io.rfd < 0 &&
	    s->proc.errfd < 0 && (s->state == SRV_IDLE ||
	    s->state == SRV_STOPPED || s->state == SRV_FAILED);
}

/* Once a session left or a server stopped; again while one is unused. */
void
srv_reclaim(bool pacing)
{
	bool left = false;
	int i;

	if (!reclaim_due)
		return;
	for (i = nservers - 1; i >= nconfigured; i--) {
		if (servers[i]->own != NULL && !servers[i]->own->share &&
		    srv_sessions(servers[i]) == 0 &&
		    srv_state(servers[i]) != SRV_STOPPED &&
		    srv_state(servers[i]) != SRV_IDLE &&
		    srv_state(servers[i]) != SRV_FAILED)
			srv_stop(servers[i]);
		if (!pacing && srv_unused(servers[i]))
			srv_free(servers[i]);
		else if (srv_sessions(servers[i]) == 0)
			left = true;
	}
	reclaim_due = left;
}

static void
srv_unbind(const struct session *se)
{
	struct binding **p, *b;
	int i;

	for (p = &bindings; *p != NULL && (*p)->se != se; p = &(*p)->next)
		;
	if ((b = *p) == NULL)
		return;
	*p = b->next;
	reclaim_due = true;
	/* An instance no session uses lingers, then stops (server_io.c). */
	for (i = 0; i < nconfigured; i++)
		if (srv_sessions(b->inst[i]) == 0)
			b->inst[i]->unused_at = loop_ms();
	free(b->inst);
	free(b);
}

void
srv_upcalls(const struct srv_upcalls *u)
{
	up = *u;
}

/*
 * Is the entry of this kind shown to the client as an object of ours,
 * and which (listing.c)?  Asked of the layer above.
 */
bool
srv_renames(enum list_kind k)
{
	return up.renames != NULL && up.renames(k);
}

char *
srv_native(const struct server *s, enum list_kind k, const struct json *jj,
    int t, const char *key)
{
	return up.native != NULL ? up.native(s, k, jj, t, key) : NULL;
}

/* Does the session use s: its toolbox open, or being opened? */
bool
srv_in_use_by(const struct server *s, const struct session *se)
{
	return up.uses != NULL ? up.uses(se, s) : srv_used_by(s, se);
}

/* A server said that a resource changed (relay.c). */
void
srv_updated(const struct server *s, const struct json *jj, const char *line,
    size_t n)
{
	if (up.updated != NULL)
		up.updated(s, jj, line, n);
}

/*
 * Did a list change, or a starting server become ready or fail, since
 * the last asked?  The loop asks before it polls (box.h: box_before_poll)
 * and the toolboxes waiting are answered, the client told of changes.
 */
bool
srv_take_changed(void)
{
	bool c = changed;

	changed = false;
	return c;
}

/*
 * A warning about what the server wrote, which it can repeat at will (a
 * line that is not JSON, an answer to nothing, a bad list entry): a few,
 * then a count per interval (struct ratelog), so that a server writing
 * garbage cannot fill the client's log.
 */
void
srv_warn(struct server *s, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	/* Past the level asked for, not counted either: nothing to say. */
	if (WB_WARN > wb_log_reach ||
	    !ratelog_allow(&s->warned, loop_ms(), s->label))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	wb_log_warn("%s: %s", s->label, msg);
}

/*
 * What it is, for the layers above, to whom struct server is opaque.
 */
const char *
srv_label(const struct server *s)
{
	return s->label;
}

const char *
srv_name(const struct server *s)
{
	return s->cfg->name;
}

/* The directory it runs in, when set (an instance's: its session's). */
const char *
srv_cwd(const struct server *s)
{
	return s->cfg->cwd;
}

/* A remote server's URL as written (never expanded); NULL: a process. */
const char *
srv_url(const struct server *s)
{
	return s->cfg->url != NULL ? s->cfg->command : NULL;
}

/* Its toolbox's index in the configuration (and in box.h's toolboxes). */
int
srv_box(const struct server *s)
{
	return s->box;
}

enum srv_state
srv_state(const struct server *s)
{
	return s->state;
}

/* Why it failed, or NULL. */
const char *
srv_error(const struct server *s)
{
	return s->error;
}

/* What it declared it offers (enum srv_cap). */
unsigned
srv_caps(const struct server *s)
{
	return s->caps;
}

/* Its process while one runs, else 0. */
pid_t
srv_pid(const struct server *s)
{
	return s->proc.reaped ? 0 : s->proc.pid;
}

/* The calls it was given so far (--status). */
long long
srv_calls(const struct server *s)
{
	return s->ncalls;
}

/* The session's calls in flight, on every server (--status). */
int
srv_session_calls(const struct session *se)
{
	const struct server *s;
	int i, n = 0;

	for (s = srv_first(); s != NULL; s = srv_next(s))
		for (i = 0; i < s->nreq; i++)
			n += s->req[i].sess == se && req_is_call(&s->req[i]);
	return n;
}

/* From its start to ready, the last time it started. */
long long
srv_ready_ms(const struct server *s)
{
	return s->ready_ms;
}

/* Are its tools those of its catalogue entry (it has not listed yet)? */
bool
srv_catalogued(const struct server *s)
{
	return s->catalog == CATALOG_ENTRY || s->catalog == CATALOG_OTHER;
}

/* Does it take calls now? */
bool
srv_serving(const struct server *s)
{
	return s->state == SRV_READY || s->state == SRV_RELISTING;
}

/* Are its tools known: it serves, or starts with its catalogue entry? */
bool
srv_known(const struct server *s)
{
	return srv_serving(s) || (srv_catalogued(s) &&
	    s->state == SRV_STARTING);
}

/*
 * Start and stop.
 */
/* Start its process; a modern request (modern) wants it probed so. */
static void
srv_start(struct server *s, bool modern)
{
	struct buf why = { 0 };
	long long now = now_ms();

	if (s->state == SRV_STOPPED && !loop_stopping())
		wb_log_info("%s: starting again (it was stopped while idle)",
		    s->label);
	s->started_at = s->active_at = now;
	if ((s->cfg->url != NULL ? srv_remote_open(s, &why) :
	    proc_spawn(&s->proc, s->cfg, &why)) < 0) {
		srv_fail(s, buf_cstr(&why));
		buf_free(&why);
		return;
	}
	if (s->remote == NULL)	/* Its command's name, never its arguments. */
		wb_log_debug("%s: process %ld started: %s", s->label,
		    (long)s->proc.pid, strrchr(s->cfg->command, '/') != NULL ?
		    strrchr(s->cfg->command, '/') + 1 : s->cfg->command);
	s->state = SRV_STARTING;
	srv_live(s);
	s->caps = 0;		/* Until this process's initialize says. */
	s->deadline = now + s->cfg->init_timeout_ms;
	s->drained_at = now;
	handshake_open(s, modern);
}

/*
 * Is an automatic start to wait for the backoff?  Then why says how long,
 * and why it failed.
 */
bool
srv_backing_off(const struct server *s, long long now, struct buf *why)
{
	if (s->state != SRV_FAILED || now >= s->retry_at)
		return false;
	if (why != NULL)
		buf_printf(why, "not started again yet after %d failures in a "
		    "row; the next try is in %lld ms (open_toolbox tries at "
		    "once). Last error: %s", s->failures, s->retry_at - now,
		    s->error != NULL ? s->error : "none");
	return true;
}

/* Has it no process, and none on the way? */
static bool
srv_down(const struct server *s)
{
	return s->state == SRV_IDLE || s->state == SRV_FAILED ||
	    s->state == SRV_STOPPED;
}

/*
 * What a shared workbench can deliver, told to every server it starts:
 * which session a request of the server's is for is known only when it
 * comes (relay.c), so it is told all, and a request for what the
 * calling session did not declare is refused then.
 */
static const struct buf *
deliverable(void)
{
	static const char all[] = "{\"roots\":{\"listChanged\":true},"
	    "\"sampling\":{},\"elicitation\":{}}";
	static struct buf caps;
	struct json jj = { 0 };

	if (caps.len == 0 && json_parse(&jj, all, sizeof(all) - 1) ==
	    JSON_OK)
		(void)era_caps(&jj, 0, &caps);
	free(jj.tok);
	return &caps;
}

/*
 * The capabilities a server started now for a request of se is told:
 * what se's client can answer, or in a shared workbench what any can.
 * Its lists, and so its catalogue entry, are for those.
 */
const struct buf *
srv_told_for(const struct session *se)
{
	return wb.shared ? deliverable() : session_caps(se);
}

/*
 * A start for the request a session is handling: the server is told what
 * that request's client can answer, and the version its session spoke,
 * at initialize or in a modern request's _meta, however long its start
 * takes and whatever the workbench handles meanwhile (a start again after
 * an exit on server/discover included).
 */
static void
srv_start_for(struct server *s, const struct session *se)
{
	const struct buf *caps = srv_told_for(se);

	s->told.len = 0;
	buf_put(&s->told, caps->data, caps->len);
	snprintf(s->protocol, sizeof(s->protocol), "%s",
	    session_protocol(se));
	srv_start(s, session_era(se) != NULL);
}

/* A call needs the server: start it unless it is backing off. */
void
srv_ensure(struct server *s, struct session *se)
{
	if (srv_down(s) && !srv_backing_off(s, now_ms(), NULL))
		srv_start_for(s, se);
}

/* open_toolbox asks for the server: it starts at once, backoff or not. */
void
srv_open(struct server *s, struct session *se)
{
	if (srv_down(s))
		srv_start_for(s, se);
}

/*
 * A session is gone: what the servers hold for it goes, the stream of
 * its result first, then the requests it was asked, its calls, its
 * parked calls.
 */
void
srv_session_gone(struct session *se)
{
	stream_session_gone(se);
	relay_session_gone(se);
	call_session_gone(se);
	bridge_session_gone(se);
	srv_unbind(se);
}

/*
 * A failure in a row makes the next automatic start wait longer; one
 * after a long run counts as the first.
 */
static void
note_failure(struct server *s, long long now)
{
	long long wait = 0;
	int i;

	if (now - s->started_at >= BACKOFF_RESET_MS)
		s->failures = 0;
	s->failures++;
	for (i = 1; i < s->failures && wait < BACKOFF_MAX_MS; i++)
		wait = wait == 0 ? BACKOFF_FIRST_MS : wait * 2;
	s->retry_at = now + (wait < BACKOFF_MAX_MS ? wait : BACKOFF_MAX_MS);
}

/* Close our ends and give the process group to the escalation. */
static void
srv_stop_process(struct server *s)
{
	reclaim_due = true;
	ratelog_flush(&s->warned, loop_ms(), s->label, true);
	ratelog_flush(&s->proc.errlog, loop_ms(), s->label, true);
	stream_abort(s, "the server was stopped");
	/* One reaped was said to have ended (srv_exited). */
	if (s->proc.pid > 0 && !s->proc.reaped)
		wb_log_debug("%s: process %ld stopped: its input closed",
		    s->label, (long)s->proc.pid);
	if (s->proc.pid > 0)
		proc_retire(s->proc.pid, s->proc.reaped);
	s->proc.pid = 0;
	s->proc.reaped = false;
	s->eof_at = 0;
	proc_close(&s->proc);
	srv_remote_close(s);
	ghosts_clear(s);
	handshake_over(s);
}

void
srv_stop(struct server *s)
{
	srv_stop_process(s);
	s->state = SRV_STOPPED;
}

/*
 * Some legacy servers exit on a request before initialize: one that ends
 * while auto probes it is legacy, and starts again so, not failing.
 */
bool
srv_probe_ended(struct server *s, const char *reason)
{
	if (s->state != SRV_STARTING || !handshake_ended(s))
		return false;
	wb_log_info("%s: %s after server/discover; starting it again as a "
	    "2025-era server", s->label, reason);
	srv_stop_process(s);
	srv_start(s, false);
	return true;
}

/*
 * The server failed to start, or died: answer everything waiting on it
 * and end its process.  It may be started again later.
 */
void
srv_fail(struct server *s, const char *reason)
{
	struct buf why = { 0 };

	/* What it was warned for comes before why it failed. */
	ratelog_flush(&s->warned, loop_ms(), s->label, true);
	ratelog_flush(&s->proc.errlog, loop_ms(), s->label, true);
	catalog_failed(s);
	stream_abort(s, reason);
	buf_puts(&why, reason);
	proc_tail(&s->proc, &why);
	free(s->error);
	s->error = xstrdup(buf_cstr(&why));
	buf_free(&why);
	wb_log_error("%s: %s", s->label, s->error);
	srv_stop_process(s);
	s->state = SRV_FAILED;
	note_failure(s, now_ms());
	call_fail_all(s, s->error);
	list_stop(s);
	relay_forget(s, 0);
	changed = true;
}

/*
 * Its lists (listing.c fetches them).  A list is complete, or failed
 * without failing the server: once none is being fetched, a starting
 * server takes calls, a relisting one is ready again, and the client
 * hears of what it now lists.
 */
void
srv_listed(struct server *s)
{
	/* Lists fetched together (resources and templates) tell once. */
	if (list_paging(s))
		return;
	catalog_store(s);
	if (s->state == SRV_STARTING) {
		handshake_over(s);
		s->ready_ms = now_ms() - s->started_at;
		if (srv_modern(s) && s->listens)
			srv_send_listen(s);
		s->state = SRV_READY;
		free(s->error);
		s->error = NULL;
		call_send_waiting(s);
	} else if (s->state == SRV_RELISTING)
		s->state = SRV_READY;
	changed = true;
}

/*
 * What it says.
 */
static void
on_response(struct server *s, int id, const char *line, size_t n)
{
	struct request r;
	long long v;
	int i;

	if (!json_get_int(&j, id, &v) || v <= 0 || (i = req_find(s, v)) < 0) {
		/* Answers to cancelled or timed-out calls end here quietly. */
		if (!json_get_int(&j, id, &v) || v <= 0 || v > s->next_id)
			srv_warn(s, "dropping an answer to a request it was "
			    "not sent");
		else
			ghost_answered(s, v);
		return;
	}
	req_take(s, i, &r);
	if (req_is_call(&r))
		call_answered(s, &r, &j, line, n);
	else if (r.kind == REQ_INIT || r.kind == REQ_DISCOVER)
		handshake_answer(s, r.kind, &j);
	else if (r.kind == REQ_LIST)
		list_answered(s, r.list, &j, line, n);
	req_free(&r);
}

static void
srv_line(void *ctx, char *line, size_t n)
{
	struct server *s = ctx;
	struct buf fixed = { 0 };
	int id, method;

	s->active_at = loop_ms();
	if (!utf8_valid(line, n)) {
		/* Invalid bytes become U+FFFD, so the client gets valid JSON. */
		utf8_repair(&fixed, line, n);
		srv_line(ctx, fixed.data, fixed.len);
		buf_free(&fixed);
		return;
	}
	if (list_page(s, line, n) || call_pass_result(s, line, n))
		return;
	if (json_parse(&j, line, n) != JSON_OK) {
		srv_warn(s, "ignoring a line that is not a JSON-RPC message "
		    "(%zu bytes)", n);
		return;
	}
	id = json_get(&j, 0, "id");
	method = json_get(&j, 0, "method");
	if (json_is(&j, method, JSMN_STRING) && rpc_valid_id(&j, id))
		relay_request(s, &j, id, method, line, n);
	else if (json_is(&j, method, JSMN_STRING)) {
		if (!list_changed(s, &j, method))
			relay_notification(s, &j, method, line, n);
	} else if (id >= 0)
		on_response(s, id, line, n);
	json_release(&j);
}

static void
srv_oversize(void *ctx, size_t size, const char *id)
{
	struct server *s = ctx;
	struct buf why = { 0 };
	long long v;
	int i;

	wb_log_warn("%s: dropped a message of %zu bytes (limit %zu)", s->label,
	    size, wb.cfg.max_message);
	if (id == NULL || (v = strtoll(id, NULL, 10)) <= 0)
		return;
	if ((i = req_find(s, v)) < 0) {
		ghost_answered(s, v);
		return;
	}
	buf_printf(&why, "the result is %zu bytes, more than the %zu-byte "
	    "limit (maxMessageBytes)", size, wb.cfg.max_message);
	if (req_is_call(&s->req[i]))
		call_error(s, &s->req[i], buf_cstr(&why));
	else if (s->req[i].kind == REQ_LIST && !list_fatal(s,
	    s->req[i].list)) {
		list_abandon(s, s->req[i].list);
		list_warn(s, s->req[i].list, buf_cstr(&why),
		    s->state == SRV_STARTING);
		req_remove(s, i);
		srv_listed(s);
	} else
		srv_fail(s, buf_cstr(&why));
	if ((i = req_find(s, v)) >= 0)
		req_remove(s, i);
	buf_free(&why);
}

/* Shutdown: every server running is stopped. */
void
srv_stop_all(void)
{
	struct server *s;

	SRV_EACH(s)
		if (s->proc.pid > 0 || s->remote != NULL)
			srv_stop(s);
}
