/*
 * relay.c: what the servers and the client say to each other besides
 * calls and their answers.  A server's requests (sampling, elicitation,
 * roots) reach the client under fresh upstream ids when it declared the
 * capability; progress comes back with the client's own token; log
 * messages say which server they came from; the log level set by the
 * client reaches every server that declared logging.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server_int.h"
#include "mcp.h"

/*
 * A request to the client under our upstream id: a server's own, or a
 * question of a modern server's for a 2025 client's call (bridge.c).
 */
struct upreq {
	long long	 up;
	struct session	*sess;		/* Whom it was asked. */
	struct server	*srv;
	char		*sid;		/* The server's id, raw, */
	size_t		 sidlen;
	long long	 rid;		/* or the call it is for, */
	char		*key;		/* and its key in inputRequests. */
	size_t		 keylen;
};

static struct upreq *ups;
static int nups;

/*
 * In a shared workbench, the roots each 2025 session gave when asked
 * (at its start, and again when it says they changed): a server's
 * roots/list that no call attributes is answered from them when every
 * session using the server gave the same.  ROOTS_MAX bytes a session.
 */
#define ROOTS_MAX	(64 * 1024)
struct rootset {
	const struct session	*sess;
	char			*roots;	/* The raw array, or NULL: unknown. */
	size_t			 len;
};

static struct rootset *rootsets;
static int nrootsets;
static long long next_up;
static int log_level = -1;		/* The most verbose set, or -1. */

/*
 * At debug, a line for the session a server's message goes to (<-), or
 * whose answer goes back to the server (->): what it is, and the id
 * its sender gave and the one its receiver sees (each may be NULL),
 * bounded: a peer chose them.  Never what the message carries.
 */
static void
relay_debug(const struct server *s, const struct session *se, bool back,
    const struct span *what, const char *id, size_t idlen, const char *as,
    size_t aslen)
{
	wb_log_debug_for(se, "session %lu %s %s: " LOG_PEER_FMT "%s"
	    LOG_PEER_FMT "%s" LOG_PEER_FMT "%s", session_serial(se), back ?
	    "->" : "<-", s->label, LOG_PEER(what->p, what->n), id != NULL ?
	    " id " : "", LOG_PEER(id != NULL ? id : "", idlen), as != NULL ?
	    " (as " : "", LOG_PEER(as != NULL ? as : "", aslen), as != NULL ?
	    ")" : "");
}

/* A method's name as the peer wrote it, inside its quotes, for the log. */
static struct span
method_text(const struct json *j, int method)
{
	struct span m = { j->js + j->tok[method].start,
	    (size_t)(j->tok[method].end - j->tok[method].start) };

	return m;
}

/* A name of ours, for relay_debug. */
#define SPAN_OF(s)	(&(struct span){ (s), sizeof(s) - 1 })

static void
up_remove(int i)
{
	free(ups[i].sid);
	free(ups[i].key);
	ups[i] = ups[--nups];
}

/*
 * A server is gone (rid 0), or a call that asked: the client need not
 * answer what it was asked.
 */
void
relay_forget(const struct server *s, long long rid)
{
	struct buf *b;
	int i;

	for (i = nups - 1; i >= 0; i--) {
		if (ups[i].srv != s || (rid != 0 && ups[i].rid != rid))
			continue;
		b = session_out(ups[i].sess);
		rpc_put_notification(b, MCP_NOTE_CANCELLED);
		buf_printf(b, ",\"params\":{\"requestId\":%lld,"
		    "\"reason\":\"the server stopped\"}}\n", ups[i].up);
		up_remove(i);
	}
}

/* The session's roots entry, made when make and none is there. */
static struct rootset *
rootset_of(const struct session *se, bool make)
{
	int i;

	for (i = 0; i < nrootsets; i++)
		if (rootsets[i].sess == se)
			return &rootsets[i];
	if (!make)
		return NULL;
	rootsets = xrealloc(rootsets, ((size_t)nrootsets + 1) *
	    sizeof(*rootsets));
	memset(&rootsets[nrootsets], 0, sizeof(*rootsets));
	rootsets[nrootsets].sess = se;
	return &rootsets[nrootsets++];
}

static void
rootset_drop(const struct session *se)
{
	struct rootset *r = rootset_of(se, false);

	if (r == NULL)
		return;
	free(r->roots);
	*r = rootsets[--nrootsets];
}

/* Does the client owe the server an answer? */
bool
relay_pending(const struct server *s)
{
	int i;

	for (i = 0; i < nups; i++)
		if (ups[i].srv == s)
			return true;
	return false;
}

/*
 * The session a server's own request or notification is for: the one
 * whose calls are in progress on the server, or with none in progress,
 * the only session there is; NULL when that cannot be told (a 2025
 * server names no call in what it asks), and the request is refused.
 */
static struct session *
relay_session(const struct server *s, const char **why)
{
	struct session *se = NULL;
	int i;

	for (i = 0; i < s->nreq; i++) {
		if (!req_is_call(&s->req[i]) || !s->req[i].sent)
			continue;
		if (se != NULL && s->req[i].sess != se) {
			*why = "several sessions have calls in flight on this "
			    "server; a request cannot be attributed";
			return NULL;
		}
		se = s->req[i].sess;
	}
	if (se == NULL && (se = session_first()) != NULL &&
	    session_next(se) != NULL) {
		*why = "no call in flight on this server, and several "
		    "sessions: a request cannot be attributed";
		return NULL;
	}
	return se;
}

/* Is this server request one the client can answer? */
static bool
client_can_answer(const struct session *se, const struct json *j,
    int method)
{
	unsigned need = era_input_cap(j, method);

	return se != NULL && need != 0 && session_has(se, need);
}

static struct upreq *
up_add(struct server *s, struct session *se)
{
	struct upreq *u;

	ups = xrealloc(ups, ((size_t)nups + 1) * sizeof(*ups));
	u = &ups[nups++];
	memset(u, 0, sizeof(*u));
	u->up = ++next_up;
	u->sess = se;
	u->srv = s;
	return u;
}

/*
 * Ask a 2025 session of a shared workbench that declared roots for them,
 * for ourselves (an upreq of no server); what it knew before is
 * forgotten until it answers.
 */
void
relay_roots_ask(struct session *se)
{
	struct upreq *u;
	struct buf *b;
	int i;

	if (!wb.shared || !session_legacy(se) || !session_has(se, CAN_ROOTS))
		return;
	rootset_drop(se);
	for (i = nups - 1; i >= 0; i--)
		if (ups[i].sess == se && ups[i].srv == NULL)
			up_remove(i);
	u = up_add(NULL, se);
	b = session_out(se);
	rpc_put_request_raw(b, u->up, MCP_QUOTED(MCP_ROOTS_LIST),
	    sizeof(MCP_QUOTED(MCP_ROOTS_LIST)) - 1);
	buf_puts(b, "}\n");
}

/* The session's answer to relay_roots_ask: its roots, kept when sound. */
static void
roots_take(const struct session *se, const struct json *j)
{
	int t = json_path(j, 0, "result.roots");
	struct rootset *r;
	const char *raw;
	size_t len;

	if (!json_is(j, t, JSMN_ARRAY) ||
	    (raw = json_raw(j, t, &len)) == NULL || len > ROOTS_MAX)
		return;
	r = rootset_of(se, true);
	free(r->roots);
	r->roots = xstrndup(raw, len);
	r->len = len;
}

/*
 * Answer a server's roots/list that no call attributes, when every
 * session using the server gave its roots and they are the same; else
 * false, with why.
 */
static bool
roots_common(struct server *s, const char *id, size_t idlen,
    const char **why)
{
	const struct rootset *r, *first = NULL;
	struct session *se;

	SESSION_EACH(se) {
		if (!srv_in_use_by(s, se))
			continue;
		if ((r = rootset_of(se, false)) == NULL) {
			*why = "no call in flight on this server, and a session "
			    "using it has not given its roots";
			return false;
		}
		if (first != NULL && (first->len != r->len ||
		    memcmp(first->roots, r->roots, r->len) != 0)) {
			*why = "no call in flight on this server, and the "
			    "sessions using it declared different roots";
			return false;
		}
		first = r;
	}
	if (first == NULL)
		return false;
	rpc_put_result(&s->proc.io.out, id, idlen);
	buf_puts(&s->proc.io.out, "{\"roots\":");
	buf_put(&s->proc.io.out, first->roots, first->len);
	buf_puts(&s->proc.io.out, "}}\n");
	return true;
}

/* Pass a server's request to the client under a fresh upstream id. */
static void
up_send(struct server *s, struct session *se, const struct span *method,
    const char *sid, size_t sidlen, const char *line, size_t n)
{
	struct upreq *u = up_add(s, se);
	char up[24];

	u->sid = xstrndup(sid, sidlen);
	u->sidlen = sidlen;
	snprintf(up, sizeof(up), "%lld", u->up);
	relay_debug(s, se, false, method, sid, sidlen, up, strlen(up));
	rpc_splice_line(session_out(se), line, n, sid, sidlen, up, strlen(up));
}

/*
 * Ask the client one question of a modern server's InputRequiredResult
 * (the member at key: {"method", "params"}) for the call rid.
 */
void
relay_ask(struct server *s, long long rid, const struct json *j, int key)
{
	int i = req_find(s, rid);
	struct session *se = i >= 0 ? s->req[i].sess : NULL;
	struct upreq *u;
	struct buf *b;
	int params = json_get(j, key + 1, "params");
	const char *raw;
	char up[24];
	size_t len;

	if (se == NULL)
		return;		/* Not asked: the call waits for its timeout. */
	u = up_add(s, se);
	b = session_out(se);
	u->rid = rid;
	raw = json_raw(j, key, &len);
	u->key = xstrndup(raw, len);
	u->keylen = len;
	raw = json_raw(j, json_get(j, key + 1, "method"), &len);
	if (WB_DEBUG <= wb_log_reach) {
		snprintf(up, sizeof(up), "%lld", u->up);
		relay_debug(s, se, false, &(struct span){ raw, len }, u->key,
		    u->keylen, up, strlen(up));
	}
	rpc_put_request_raw(b, u->up, raw, len);
	if (json_is(j, params, JSMN_OBJECT)) {
		buf_puts(b, ",\"params\":");
		raw = json_raw(j, params, &len);
		buf_put(b, raw, len);
	}
	buf_puts(b, "}\n");
}

/* A server's request refused, with a JSON-RPC error. */
void
relay_refuse(struct server *s, const char *id, size_t idlen, int code,
    const char *msg)
{
	struct buf *b = &s->proc.io.out;

	wb_log_debug("%s: its request id " LOG_PEER_FMT " refused: %s",
	    s->label, LOG_PEER(id, idlen), msg);
	rpc_put_error(b, id, idlen, code, msg);
	buf_puts(b, "}}\n");
}

/*
 * A request from a server: ping is ours to answer; sampling, elicitation
 * and roots go to the client when it can answer them; the rest is
 * refused.
 */
void
relay_request(struct server *s, const struct json *j, int id, int method,
    const char *line, size_t n)
{
	struct buf *b = &s->proc.io.out;
	const char *why = "mcp-workbench cannot tell which client session "
	    "this request is for";
	struct session *se = relay_session(s, &why);
	struct span m;
	const char *raw;
	size_t len;

	if (bridge_server_request(s, j, id, method))
		return;
	raw = json_raw(j, id, &len);
	m = method_text(j, method);
	if (se == NULL && wb.shared && json_eq(j, method, MCP_ROOTS_LIST) &&
	    roots_common(s, raw, len, &why)) {
		wb_log_debug("%s: roots/list id " LOG_PEER_FMT " answered with "
		    "the roots its sessions gave", s->label, LOG_PEER(raw, len));
		return;
	}
	if (se == NULL && era_input_cap(j, method) != 0)
		relay_refuse(s, raw, len, RPC_INTERNAL_ERROR, why);
	else if (client_can_answer(se, j, method))
		up_send(s, se, &m, raw, len, line, n);
	else if (json_eq(j, method, MCP_PING)) {
		wb_log_debug("%s: ping id " LOG_PEER_FMT " answered here",
		    s->label, LOG_PEER(raw, len));
		rpc_put_result(b, raw, len);
		buf_puts(b, "{}}\n");
	} else if (wb.shared && era_input_cap(j, method) != 0)
		relay_refuse(s, raw, len, RPC_METHOD_NOT_FOUND,
		    "Method not found: the client of the calling session did "
		    "not declare this capability");
	else
		relay_refuse(s, raw, len, RPC_METHOD_NOT_FOUND,
		    "Method not found");
}

/* The client answers a server's request: back it goes, under its id. */
void
relay_answer(const struct session *se, const struct json *j, int id,
    const char *line, size_t n)
{
	struct upreq u;
	const char *raw;
	long long v;
	size_t len;
	int i;

	if (!json_get_int(j, id, &v))
		return;
	for (i = 0; i < nups && (ups[i].up != v || ups[i].sess != se); i++)
		;
	if (i == nups)
		return;
	/* Out of the table first: what it answers may forget others. */
	u = ups[i];
	ups[i] = ups[--nups];
	raw = json_raw(j, id, &len);
	if (u.srv != NULL)
		relay_debug(u.srv, se, true, SPAN_OF("answer to"), raw, len,
		    u.sid, u.sidlen);
	if (u.srv == NULL)
		roots_take(se, j);
	else if (u.key != NULL)
		bridge_client_answer(u.srv, u.rid, u.key, u.keylen, j);
	else if (srv_writable(u.srv))
		rpc_splice_line(&u.srv->proc.io.out, line, n, raw, len, u.sid,
		    u.sidlen);
	free(u.sid);
	free(u.key);
}

/* Progress for a call: the client's own token goes back in. */
static void
on_progress(struct server *s, const struct json *j, const char *line,
    size_t n)
{
	int t = json_path(j, 0, "params.progressToken"), i;
	const char *raw;
	long long v;
	size_t len;

	if (!json_get_int(j, t, &v) || (i = req_find_token(s, v)) < 0 ||
	    s->req[i].token == NULL)
		return;
	call_arm(s, &s->req[i], now_ms());
	raw = json_raw(j, t, &len);
	relay_debug(s, s->req[i].sess, false,
	    SPAN_OF(MCP_NOTE_PROGRESS " of the call"),
	    text_get(&s->req[i].cid), s->req[i].cid.len, NULL, 0);
	rpc_splice_line(session_out(s->req[i].sess), line, n, raw, len,
	    s->req[i].token, s->req[i].tokenlen);
}

/*
 * Does a session want a server's log message?  A 2025 session set its
 * level on the servers, and hears those it uses (srv_uses: its toolbox
 * open, over HTTP and shared as over stdio), no other.  A modern client hears a server only while a
 * request of its that gave a logLevel is in progress there, at that
 * level or above (a 2025 server cannot say which request a message is
 * about).
 */
static bool
log_wanted(const struct session *se, const struct server *s,
    const struct json *j, int params)
{
	int level = era_level(j, json_get(j, params, "level")), i;

	if (session_legacy(se))
		return level >= session_level(se) && srv_uses(se, s);
	for (i = 0; i < s->nreq; i++)
		if (req_is_call(&s->req[i]) && s->req[i].sess == se &&
		    s->req[i].modern && s->req[i].level >= 0 &&
		    level >= s->req[i].level)
			return true;
	return false;
}

/*
 * A log message, to each session that wants it: said which server it
 * came from when it did not.
 */
static void
on_log_message(struct server *s, const struct json *j, const char *line,
    size_t n)
{
	int params = json_get(j, 0, "params");
	struct buf logger = { 0 };
	struct session *se;
	const char *at;

	if (!json_is(j, params, JSMN_OBJECT))
		return;
	if (json_get(j, params, "logger") < 0) {
		json_put_key(&logger, "logger");
		json_put_cstr(&logger, s->label);
		if (j->tok[params].size > 0)
			buf_putc(&logger, ',');
	}
	at = j->js + j->tok[params].start + 1;
	/* Only those that can hear it: no work, no backlog for the rest. */
	SESSION_HEARING(se) {
		if (!log_wanted(se, s, j, params))
			continue;
		relay_debug(s, se, false, SPAN_OF(MCP_NOTE_MESSAGE), NULL, 0,
		    NULL, 0);
		if (logger.len == 0)
			session_send_line(se, line, n);
		else
			rpc_splice_line(session_out(se), line, n, at, 0,
			    logger.data, logger.len);
	}
	buf_free(&logger);
}

/* The server gave up on a request it sent the client: so do we. */
static void
on_server_cancel(const struct server *s, const struct json *j,
    const char *line, size_t n)
{
	int r = json_path(j, 0, "params.requestId"), i;
	const char *raw;
	char up[24];
	size_t len;

	if (r < 0)
		return;
	raw = json_raw(j, r, &len);
	for (i = 0; i < nups; i++)
		if (ups[i].srv == s && ups[i].sidlen == len &&
		    memcmp(ups[i].sid, raw, len) == 0)
			break;
	if (i == nups)
		return;
	snprintf(up, sizeof(up), "%lld", ups[i].up);
	relay_debug(s, ups[i].sess, false, SPAN_OF(MCP_NOTE_CANCELLED),
	    raw, len, up, strlen(up));
	rpc_splice_line(session_out(ups[i].sess), line, n, raw, len, up,
	    strlen(up));
	up_remove(i);
}

/*
 * A notification is relayed only as one: "jsonrpc":"2.0", no id, and no
 * member rpc_scan knows twice (the SDK client drops or misreads the rest).
 */
static bool
notification_well_formed(const char *line, size_t n)
{
	struct rpc_top top;

	return rpc_scan(line, n, &top) == 0 && top.v2 && top.id == NULL;
}

void
relay_notification(struct server *s, const struct json *j, int method,
    const char *line, size_t n)
{
	const char *why;
	struct session *se;

	if (!notification_well_formed(line, n))
		srv_warn(s, "dropping a notification that is not JSON-RPC "
		    "2.0 (\"jsonrpc\":\"2.0\", no id)");
	else if (json_eq(j, method, MCP_NOTE_PROGRESS))
		on_progress(s, j, line, n);
	else if (json_eq(j, method, MCP_NOTE_MESSAGE))
		on_log_message(s, j, line, n);
	else if (json_eq(j, method, MCP_NOTE_CANCELLED))
		on_server_cancel(s, j, line, n);
	else if (json_eq(j, method, MCP_NOTE_RESOURCES_UPDATED))
		srv_updated(s, j, line, n);
	else if (json_eq(j, method, MCP_NOTE_ELICITATION_COMPLETE) &&
	    (se = relay_session(s, &why)) != NULL &&
	    session_has(se, CAN_ELICIT)) {
		relay_debug(s, se, false,
		    SPAN_OF(MCP_NOTE_ELICITATION_COMPLETE), NULL, 0, NULL, 0);
		session_send_line(se, line, n);
	}
}

/* The log level the client set, for a server that declared logging. */
void
relay_send_level(struct server *s)
{
	struct buf p = { 0 };

	if ((s->caps & CAP_LOGGING) == 0 || log_level < 0 || srv_modern(s))
		return;
	buf_printf(&p, "{\"level\":\"%s\"}", era_level_name(log_level));
	srv_send(s, req_add(s, REQ_QUIET), MCP_LOGGING_SET_LEVEL, p.data,
	    p.len);
	buf_free(&p);
}

/* The most verbose level a session set, or -1. */
static int
most_verbose(void)
{
	struct session *se;
	int level = -1;

	SESSION_EACH(se)
		if (session_level(se) >= 0 && (level < 0 ||
		    session_level(se) < level))
			level = session_level(se);
	return level;
}

/*
 * A client set a level: the most verbose any session set goes to every
 * running server, and to those started later; each session is then
 * given what is at or above its own (log_wanted).
 */
void
relay_set_level(void)
{
	struct server *s;
	int level = most_verbose();

	if (level < 0)
		return;
	log_level = level;
	SRV_EACH(s)
		if (s->proc.pid > 0 || srv_writable(s))
			relay_send_level(s);	/* If initialized. */
}

/*
 * A session left: when it had asked for the most verbose level, the
 * servers are given the most verbose of those left.
 */
void
relay_level_gone(void)
{
	int level = most_verbose();

	if (level >= 0 && level != log_level)
		relay_set_level();
}

/*
 * A session is gone: what its client was asked needs no answer now.  A
 * server's own request is refused; a question for a call goes with the
 * call (call_session_gone).
 */
void
relay_session_gone(const struct session *se)
{
	int i;

	for (i = nups - 1; i >= 0; i--) {
		if (ups[i].sess != se)
			continue;
		if (ups[i].srv != NULL && ups[i].key == NULL &&
		    srv_writable(ups[i].srv))
			relay_refuse(ups[i].srv, ups[i].sid, ups[i].sidlen,
			    RPC_INTERNAL_ERROR, "the client session ended");
		up_remove(i);
	}
	rootset_drop(se);
}

/*
 * The client's roots changed: every ready server it uses is told, and
 * we ask for them anew.
 */
void
relay_roots_changed(struct session *se)
{
	struct server *s;

	relay_roots_ask(se);
	SRV_EACH(s)
		if (srv_serving(s) && !srv_modern(s) && srv_uses(se, s))
			srv_notify(s, MCP_NOTE_ROOTS_CHANGED);
}
