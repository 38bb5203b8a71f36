/*
 * http_host.c: MCP over Streamable HTTP (--listen): the HTTP layer's
 * requests (http.h) made sessions of the core, each HTTP client's
 * session a session exactly like a stdio one, sharing the servers.
 *
 * A 2025 client's initialize makes a session with an Mcp-Session-Id
 * (128 random bits); its later requests name it (404 once it has ended,
 * 400 without one), DELETE ends it, GET opens its stream of the messages
 * that answer no POST.  A 2026-07-28 request stands alone: it gets a
 * session of its own, ended with its answer (a requestState it was
 * answered with keeps it for the retry, as long as the state lives).
 *
 * What a session writes for its client goes out through its transport,
 * each line to the POST or stream it belongs to (http_carry.c).
 *
 * Sessions begin and end only in the loop's step before poll() or in the
 * HTTP layer's upcalls, never while a session's lines are being carried:
 * a session to end is marked and closed by hhost_before_poll.
 */
#include <stdlib.h>
#include <string.h>

#include "workbench.h"
#include "http_host_int.h"
#include "mcp.h"

#define SESSIONS_MAX	1024		/* 2025 sessions at one time. */

static struct http_server *hs_server;
static struct http_config hs_cfg;
static struct hsess *hsessions;
static unsigned char *stateless_open;	/* By toolbox: opened statelessly. */
static bool stateless_changed;		/* A stateless request was answered. */
static bool posts_gone;			/* Some session's hsess.gone. */
static struct json hj;			/* A request's body. */

static const struct loop_step hhost_step, hhost_io_step;

/*
 * Sessions.
 */
static bool
hsess_idle(const struct hsess *hs)
{
	return !hs->ending && hs->posts == NULL && hs->get == NULL;
}

/*
 * Room for one more of a kind (2025 sessions, or stateless ones kept for
 * a retry): past max, the one idle longest ends (its client starts
 * again on the 404, as the transport says it must).  False when none of
 * them is idle.
 */
bool
hsess_room(bool legacy, int max)
{
	struct hsess *hs, *oldest = NULL;
	int n = 0;

	for (hs = hsessions; hs != NULL; hs = hs->next) {
		if (hs->ending || (hs->sid[0] != '\0') != legacy ||
		    (!legacy && hs->state == NULL))
			continue;
		n++;
		if (hsess_idle(hs) && (oldest == NULL || hs->last < oldest->last))
			oldest = hs;
	}
	if (n < max)
		return true;
	if (oldest == NULL)
		return false;
	wb_log_warn("http: %d %s sessions: the one idle longest ends", n,
	    legacy ? "2025" : "2026-07-28 (kept for a retry)");
	oldest->ending = true;
	return true;
}

static struct hsess *
hsess_new(bool legacy)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char r[SID_LEN / 2];
	struct hsess *hs, **p;
	int i;

	if (legacy && (!hsess_room(true, SESSIONS_MAX) ||
	    !wb_random(r, sizeof(r))))
		return NULL;
	hs = xcalloc(1, sizeof(*hs));
	for (i = 0; legacy && i < SID_LEN / 2; i++) {
		hs->sid[2 * i] = hex[r[i] >> 4];
		hs->sid[2 * i + 1] = hex[r[i] & 15];
	}
	hs->last = loop_ms();
	hs->se = dispatch_open_by(&hcarry_io, hs);
	wb_log_debug("session %lu opened: HTTP, %s", session_serial(hs->se),
	    legacy ? "a 2025 session" : "a 2026-07-28 request");
	for (i = 0; !legacy && i < wb.cfg.nboxes; i++)
		if (stateless_open[i])
			session_open_box(hs->se, i);
	for (p = &hsessions; *p != NULL; p = &(*p)->next)
		;
	*p = hs;
	return hs;
}

/* Compared in full whatever matches, so that time tells nothing. */
static bool
sid_equal(const char *sid, const struct http_str *h)
{
	unsigned char d = 0;
	size_t i;

	if (h->n != SID_LEN || sid[0] == '\0')
		return false;
	for (i = 0; i < SID_LEN; i++)
		d |= (unsigned char)(sid[i] ^ h->p[i]);
	return d == 0;
}

static struct hsess *
hsess_find(const struct http_str *h)
{
	struct hsess *hs;

	for (hs = hsessions; hs != NULL; hs = hs->next)
		if (!hs->ending && sid_equal(hs->sid, h))
			return hs;
	return NULL;
}

/* The stateless session that gave this requestState, for its retry. */
static struct hsess *
hsess_of_state(const char *raw, size_t n)
{
	struct hsess *hs;

	for (hs = hsessions; hs != NULL; hs = hs->next)
		if (!hs->ending && hs->state != NULL && hs->posts == NULL &&
		    hs->statelen == n && memcmp(hs->state, raw, n) == 0)
			return hs;
	return NULL;
}

void
hpost_free(struct hsess *hs, struct hpost *po)
{
	struct hpost **p;

	for (p = &hs->posts; *p != NULL && *p != po; p = &(*p)->next)
		;
	if (*p != NULL)
		*p = po->next;
	if (hs->cur == po)
		hs->cur = NULL;
	free(po->id);
	free(po->token);
	buf_free(&po->held);
	free(po);
	hs->last = loop_ms();
	/* A stateless session lives for its request (or its retry). */
	if (hs->sid[0] == '\0' && hs->posts == NULL && hs->state == NULL)
		hs->ending = true;
	stateless_changed |= hs->sid[0] == '\0';
	hsess_hear(hs);
}

/*
 * A POST whose request will not be answered gets its error, under its
 * id: as JSON with status, or as its stream's last event (the status
 * went with the stream's first), so that its client is not left with a
 * stream that ends without an answer.
 */
static void
post_fail(struct hpost *po, int status, const char *why)
{
	struct buf m = { 0 };

	if (po->conn == NULL)
		return;
	rpc_put_error(&m, po->id, po->idlen, RPC_SERVER_ERROR, why);
	buf_puts(&m, "}}");
	if (!po->streaming)
		http_respond(po->conn, status, "application/json", m.data,
		    m.len);
	else if (http_stream_event(po->conn, NULL, m.data, m.len) == 0)
		http_stream_end(po->conn);
	buf_free(&m);
}

/*
 * End a session: its client hears no more (its POSTs are answered with
 * why, its stream ends); the core drops it in hhost_before_poll.
 */
static void
hsess_end(struct hsess *hs, int status, const char *why)
{
	while (hs->posts != NULL) {
		post_fail(hs->posts, status, why);
		hpost_free(hs, hs->posts);
	}
	if (hs->get != NULL)
		http_stream_end(hs->get);
	hs->get = NULL;
	hs->ending = true;
	hsess_hear(hs);
}

/*
 * 2026-07-28 requests have no session to keep what they opened: over
 * HTTP they share one view of the open toolboxes (what any of them
 * opened, each sees, a subscriptions/listen stream too), as the requests
 * of one client on standard input do.
 */
static void
stateless_sync(void)
{
	struct hsess *hs;
	bool opened;
	int i;

	stateless_changed = false;
	for (hs = hsessions; hs != NULL; hs = hs->next)
		for (i = 0; hs->sid[0] == '\0' && i < wb.cfg.nboxes; i++)
			stateless_open[i] |= session_box_open(hs->se, i);
	for (hs = hsessions; hs != NULL; hs = hs->next) {
		opened = false;
		for (i = 0; hs->sid[0] == '\0' && i < wb.cfg.nboxes; i++)
			if (stateless_open[i] && !session_box_open(hs->se, i)) {
				session_open_box(hs->se, i);
				opened = true;
			}
		/* A listen stream hears of it. */
		if (opened)
			dyn_notify(hs->se);
	}
}

/* The sessions marked to end go, here where no one is using them. */
static void
hsess_reap(void)
{
	struct hsess **p = &hsessions, *hs;

	while ((hs = *p) != NULL) {
		if (!hs->ending) {
			p = &hs->next;
			continue;
		}
		*p = hs->next;
		hsess_end(hs, 404, "Session ended");
		dispatch_close(hs->se);
		buf_free(&hs->part);
		buf_free(&hs->backlog);
		free(hs->state);
		free(hs);
	}
}

/*
 * A POST's connection went (its client left, or it was closed past its
 * limit): its request is cancelled before the next poll (cancel_gone),
 * not here, where the session may be in the middle of its lines.
 */
void
hpost_gone(struct hsess *hs, struct hpost *po)
{
	po->conn = NULL;
	hs->gone = posts_gone = true;
	hsess_hear(hs);
}

/* A value's raw text, or NULL when there is none (i < 0). */
const char *
hraw_of(const struct json *j, int i, size_t *n)
{
	*n = 0;
	return i < 0 ? NULL : json_raw(j, i, n);
}

/*
 * Requests.
 */
/* What a POST's body is, read once. */
struct body {
	int		 parsed;	/* json_parse's verdict. */
	bool		 object;	/* One JSON object. */
	bool		 request;	/* A method and an id. */
	bool		 initialize;
	bool		 modern;	/* Its _meta names a version. */
	const char	*id;
	size_t		 idlen;
	const char	*token;		/* _meta.progressToken */
	size_t		 toklen;
	const char	*state;		/* params.requestState */
	size_t		 statelen;
};

/*
 * The body as JSON: what its _meta and params say (the tokens of hj).
 * Only a body that names one of them is tokenized here; the core reads
 * each message again whatever this finds.
 */
static void
body_parse(const struct http_request *r, struct body *b)
{
	int params, meta, id;

	if ((b->parsed = json_parse(&hj, r->body, r->bodylen)) != JSON_OK)
		return;
	b->object = true;
	id = json_get(&hj, 0, "id");
	b->id = rpc_valid_id(&hj, id) ? hraw_of(&hj, id, &b->idlen) : NULL;
	b->request = json_is(&hj, json_get(&hj, 0, "method"), JSMN_STRING) &&
	    b->id != NULL;
	params = json_get(&hj, 0, "params");
	meta = json_get(&hj, params, "_meta");
	b->token = hraw_of(&hj, json_get(&hj, meta, "progressToken"),
	    &b->toklen);
	b->modern = json_get(&hj, meta, ERA_KEY "protocolVersion") >= 0;
	b->state = hraw_of(&hj, json_get(&hj, params, "requestState"),
	    &b->statelen);
}

/*
 * What the body is.  Most are a call with none of what body_parse looks
 * for: the scan of the top level (rpc_scan) is enough for them.
 */
static void
body_read(const struct http_request *r, struct body *b)
{
	static const char *const hints[] = { "\"_meta\"", "\"requestState\"",
	    NULL };
	struct rpc_top top;
	int i;

	memset(b, 0, sizeof(*b));
	b->initialize = r->bodylen < 65536 && memmem(r->body, r->bodylen,
	    MCP_QUOTED(MCP_INITIALIZE), sizeof(MCP_QUOTED(MCP_INITIALIZE)) - 1)
	    != NULL;
	for (i = 0; hints[i] != NULL; i++)
		if (memmem(r->body, r->bodylen, hints[i], strlen(hints[i])))
			break;
	if (hints[i] != NULL || rpc_scan(r->body, r->bodylen, &top) != 0) {
		body_parse(r, b);
		b->initialize = b->object && json_eq(&hj, json_get(&hj, 0,
		    "method"), MCP_INITIALIZE);
		return;
	}
	b->parsed = JSON_OK;
	b->object = true;
	if (top.id != NULL && rpc_raw_id(top.id, top.idlen)) {
		b->id = top.id;
		b->idlen = top.idlen;
	}
	b->request = top.method != NULL && top.method[0] == '"' &&
	    b->id != NULL;
	b->initialize = b->initialize && b->request &&
	    strncmp(top.method, MCP_QUOTED(MCP_INITIALIZE),
	    sizeof(MCP_QUOTED(MCP_INITIALIZE)) - 1) == 0;
}

/*
 * Hand the body to the core as one line: breaks are white space there.
 * The line is made in one buffer, kept between requests unless large.
 */
static void
dispatch_body(struct hsess *hs, struct hpost *po, const char *body,
    size_t n)
{
	static struct buf line;
	size_t i;

	line.len = 0;
	buf_put(&line, body, n);
	buf_cstr(&line);
	for (i = 0; i < line.len; i++)
		if (line.data[i] == '\n' || line.data[i] == '\r')
			line.data[i] = ' ';
	(void)hcarry_flush(hs->se);
	hs->cur = po;
	dispatch_line(hs->se, line.data, line.len);
	(void)hcarry_flush(hs->se);
	hs->cur = NULL;
	if (line.cap > LINE_KEEP)
		buf_free(&line);
}

static bool
held_before(const struct hsess *hs, const struct hpost *po)
{
	const struct hpost *q;

	for (q = hs->posts; q != po; q = q->next)
		if (q->held.len > 0)
			return true;
	return false;
}

/* A request of the session: its answer is owed to this connection. */
static void
post_request(struct hsess *hs, struct http_conn *c,
    const struct http_request *r, const struct body *b)
{
	struct hpost *po = xcalloc(1, sizeof(*po)), **p;

	po->conn = c;
	po->id = xstrndup(b->id, b->idlen);
	po->idlen = b->idlen;
	if (b->token != NULL) {
		po->token = xstrndup(b->token, b->toklen);
		po->toklen = b->toklen;
	}
	po->sse = http_accepts(r, "text/event-stream");
	http_set_data(c, hs);
	for (p = &hs->posts; *p != NULL; p = &(*p)->next)
		;
	*p = po;
	hs->last = loop_ms();
	hsess_hear(hs);
	/* Behind a held one, or while the core holds requests: it waits. */
	if (held_before(hs, po) || dispatch_busy(hs->se)) {
		buf_put(&po->held, r->body, r->bodylen);
		if (po->held.len == 0)
			buf_putc(&po->held, ' ');
		return;
	}
	dispatch_body(hs, po, r->body, r->bodylen);
}

/* The requests that waited for the core, in the order they came. */
static void
resume_held(void)
{
	struct hsess *hs;
	struct hpost *po;
	struct buf body;

	for (hs = hsessions; hs != NULL; hs = hs->next) {
		while (!hs->ending && !loop_stopping() &&
		    (po = hs->posts) != NULL) {
			while (po != NULL && po->held.len == 0)
				po = po->next;
			if (po == NULL || dispatch_busy(hs->se))
				break;
			body = po->held;
			memset(&po->held, 0, sizeof(po->held));
			hsess_hear(hs);
			dispatch_body(hs, po, body.data, body.len);
			buf_free(&body);
		}
	}
}

/* Is the header's version one spoken, when there is one? */
static bool
version_ok(const struct http_str *v)
{
	char text[16];

	if (v->p == NULL)
		return true;
	if (v->n >= sizeof(text))
		return false;
	memcpy(text, v->p, v->n);
	text[v->n] = '\0';
	return era_legacy_supported(text) ||
	    strcmp(text, WB_PROTOCOL_MODERN) == 0;
}

/* A POST without a session: initialize, or a stateless request. */
static void
post_alone(struct http_conn *c, const struct http_request *r,
    const struct body *b)
{
	const struct http_str *v = &r->h[HTTP_H_VERSION];
	struct hsess *hs;

	if (!b->request) {
		if (b->object && b->id == NULL)
			http_respond(c, 202, NULL, NULL, 0);
		else
			http_respond_error(c, 400, RPC_SERVER_ERROR,
			    "Bad Request: Mcp-Session-Id header is required");
		return;
	}
	if (b->initialize) {
		if ((hs = hsess_new(true)) == NULL) {
			http_respond_error(c, 503, RPC_SERVER_ERROR, "Service "
			    "Unavailable: too many HTTP sessions");
			return;
		}
		http_add_header(c, "Mcp-Session-Id", hs->sid);
	} else if (!b->modern && !(v->p != NULL && v->n ==
	    strlen(WB_PROTOCOL_MODERN) && memcmp(v->p, WB_PROTOCOL_MODERN,
	    v->n) == 0)) {
		http_respond_error(c, 400, RPC_SERVER_ERROR, "Bad Request: "
		    "Mcp-Session-Id header is required (send initialize "
		    "first, or a " WB_PROTOCOL_MODERN " request with its "
		    "_meta)");
		return;
	} else if (b->state != NULL &&
	    (hs = hsess_of_state(b->state, b->statelen)) != NULL) {
		/* The retry: the session's state is spent. */
		free(hs->state);
		hs->state = NULL;
	} else
		hs = hsess_new(false);
	post_request(hs, c, r, b);
}

static void
on_post(struct http_conn *c, const struct http_request *r)
{
	const struct http_str *sid = &r->h[HTTP_H_SESSION];
	struct hsess *hs = NULL;
	struct body b;

	body_read(r, &b);
	if (b.parsed == JSON_SYNTAX)
		http_respond_error(c, 400, RPC_PARSE_ERROR,
		    "Parse error: the body is not valid JSON");
	else if (!b.object)
		http_respond_error(c, 400, RPC_INVALID_REQUEST,
		    b.parsed == JSON_NOTOBJ ?
		    "Invalid Request: expected one JSON-RPC message (a JSON "
		    "object; batches are not supported)" : "Invalid Request: "
		    "too large or too deeply nested");
	else if (sid->p == NULL)
		post_alone(c, r, &b);
	else if ((hs = hsess_find(sid)) == NULL)
		http_respond_error(c, 404, RPC_SESSION_NOT_FOUND,
		    "Session not found");
	else if (b.request && hpost_by_id(hs, b.id, b.idlen) != NULL)
		/* Its answer could not be told from the other's. */
		http_respond_error(c, 400, RPC_INVALID_REQUEST,
		    "Invalid Request: a request with this id is in flight in "
		    "this session");
	else if (b.request)
		post_request(hs, c, r, &b);
	else {
		/* A notification, or an answer to a server's request. */
		hs->last = loop_ms();
		dispatch_body(hs, NULL, r->body, r->bodylen);
		http_respond(c, 202, NULL, NULL, 0);
	}
	json_release(&hj);
}

/* GET: the session's stream; a newer one replaces the one before. */
static void
on_get(struct http_conn *c, const struct http_request *r, struct hsess *hs)
{
	const char *line, *nl, *end;

	if (!http_accepts(r, "text/event-stream")) {
		http_respond_error(c, 406, RPC_SERVER_ERROR,
		    "Not Acceptable: a GET stream needs Accept: "
		    "text/event-stream");
		return;
	}
	if (hs->get != NULL)
		http_stream_end(hs->get);
	hs->get = NULL;
	if (http_stream_begin(c) != 0)
		return;
	hs->get = c;
	http_set_data(c, hs);
	hsess_hear(hs);
	if (hs->backlog.len == 0)
		return;
	line = hs->backlog.data;
	end = line + hs->backlog.len;
	for (; line < end && hs->get != NULL; line = nl + 1) {
		nl = memchr(line, '\n', (size_t)(end - line));
		hsess_to_get(hs, line, (size_t)(nl - line));
	}
	buf_free(&hs->backlog);
}

static void
on_request(void *ctx, struct http_conn *c, const struct http_request *r)
{
	const struct http_str *sid = &r->h[HTTP_H_SESSION];
	struct hsess *hs;

	(void)ctx;
	if (loop_stopping())
		http_respond_error(c, 503, RPC_SERVER_ERROR,
		    "Service Unavailable: shutting down");
	else if (r->method != HTTP_POST && r->method != HTTP_GET &&
	    r->method != HTTP_DELETE)
		http_respond_error(c, 405, RPC_SERVER_ERROR,
		    "Method Not Allowed");
	else if (!version_ok(&r->h[HTTP_H_VERSION]))
		http_respond_error(c, 400, RPC_SERVER_ERROR,
		    "Bad Request: unsupported MCP-Protocol-Version");
	else if (r->method == HTTP_POST)
		on_post(c, r);
	else if (sid->p == NULL && r->method == HTTP_GET) {
		/* A stateless client has no stream to open. */
		http_respond_error(c, 405, RPC_SERVER_ERROR,
		    "Method Not Allowed: no session (GET needs an "
		    "Mcp-Session-Id)");
	} else if (sid->p == NULL)
		http_respond_error(c, 400, RPC_SERVER_ERROR, "Bad Request: "
		    "Mcp-Session-Id header is required");
	else if ((hs = hsess_find(sid)) == NULL)
		http_respond_error(c, 404, RPC_SESSION_NOT_FOUND,
		    "Session not found");
	else if (r->method == HTTP_GET)
		on_get(c, r, hs);
	else {
		hsess_end(hs, 404, "Session ended (DELETE)");
		http_respond(c, 200, NULL, NULL, 0);
	}
}

/*
 * A connection went with its request unanswered: the request is
 * cancelled at its server, as the client's notifications/cancelled would
 * be (a stateless session ends, and with it its calls).
 */
static void
cancel_post(struct hsess *hs, struct hpost *po)
{
	struct buf m = { 0 };

	if (hs->sid[0] == '\0' || po->held.len > 0) {
		hpost_free(hs, po);
		hs->ending |= hs->sid[0] == '\0';
		return;
	}
	rpc_put_notification(&m, MCP_NOTE_CANCELLED);
	buf_puts(&m, ",\"params\":{\"requestId\":");
	buf_put(&m, po->id, po->idlen);
	buf_puts(&m, ",\"reason\":\"the HTTP client closed its "
	    "connection\"}}");
	hpost_free(hs, po);
	dispatch_body(hs, NULL, m.data, m.len);
	buf_free(&m);
}

static void
on_closed(void *ctx, const struct http_conn *c)
{
	struct hsess *hs;
	struct hpost *po;

	(void)ctx;
	for (hs = hsessions; hs != NULL; hs = hs->next) {
		if (hs->get == c) {
			hs->get = NULL;
			hs->last = loop_ms();
			hsess_hear(hs);
		}
		for (po = hs->posts; po != NULL; po = po->next)
			if (po->conn == c)
				hpost_gone(hs, po);
	}
}

/* The requests whose connections went are cancelled (hpost_gone). */
static void
cancel_gone(void)
{
	struct hsess *hs;
	struct hpost *po;

	posts_gone = false;
	for (hs = hsessions; hs != NULL; hs = hs->next) {
		while (hs->gone) {
			for (po = hs->posts; po != NULL && po->conn != NULL;
			    po = po->next)
				;
			if (po != NULL)
				cancel_post(hs, po);
			else
				hs->gone = false;
		}
	}
}

static const struct http_ops host_ops = { on_request, on_closed, NULL };

/*
 * The loop's steps (workbench.c).
 */
bool
hhost_start(const char *listen, struct buf *err)
{
	struct http_addr addr;

	if (http_addr_parse(listen, &addr, err) != 0)
		return false;
	if (!addr.loopback && wb.cfg.http_token == NULL) {
		buf_printf(err, "--listen %s is not a loopback address: set "
		    "\"httpToken\" (for example \"${MCP_WORKBENCH_TOKEN}\") so "
		    "that clients must send Authorization: Bearer TOKEN",
		    addr.text);
		return false;
	}
	stateless_open = xcalloc((size_t)wb.cfg.nboxes + 1, 1);
	hs_cfg.max_body = wb.cfg.max_message;
	hs_cfg.max_conns = wb.cfg.max_conns;
	hs_cfg.path = "/mcp";
	hs_cfg.token = wb.cfg.http_token;
	hs_cfg.origins = (const char *const *)wb.cfg.origins;
	hs_cfg.hosts = (const char *const *)wb.cfg.hosts;
	hs_cfg.check_host = addr.loopback;
	hs_cfg.same_user = addr.loopback && wb.cfg.http_token == NULL;
	if ((hs_server = http_start(&hs_cfg, &addr, &host_ops, NULL,
	    err)) == NULL)
		return false;
	/* The port as bound: the one given may be 0 (any). */
	loop_step_add(&hhost_step);
	loop_step_add(&hhost_io_step);
	wb_log_info("serving MCP over Streamable HTTP at http://%.*s:%d/mcp",
	    (int)(strrchr(addr.text, ':') - addr.text), addr.text,
	    http_port(hs_server));
	return true;
}

/* HTTP is in this build (no_http.c says otherwise). */
const char *
hhost_left_out(void)
{
	return NULL;
}

bool
hhost_serving(void)
{
	return hs_server != NULL;
}

int
hhost_port(void)
{
	return hs_server != NULL ? http_port(hs_server) : -1;
}

/* Idle sessions expire: no request, no stream, for the timeout. */
static long long
hsess_expiry(const struct hsess *hs)
{
	if (hs->ending || hs->posts != NULL || hs->get != NULL)
		return -1;
	if (hs->sid[0] == '\0')
		return hs->last + wb.cfg.state_ttl_ms;
	if (wb.cfg.http_session_ms == 0)
		return -1;
	return hs->last + wb.cfg.http_session_ms;
}

static void
hhost_before_poll(void)
{
	if (hs_server == NULL)
		return;
	if (posts_gone)
		cancel_gone();
	if (stateless_changed)
		stateless_sync();
	hsess_reap();
	resume_held();
	http_prepare(hs_server);
}

static void
hhost_flush(void)
{
	if (hs_server != NULL)
		http_flush(hs_server);
}


static long long
hhost_deadline(void)
{
	struct hsess *hs;
	long long t, d;

	if (hs_server == NULL)
		return -1;
	t = http_deadline(hs_server);
	for (hs = hsessions; hs != NULL; hs = hs->next)
		if ((d = hsess_expiry(hs)) >= 0 && (t < 0 || d < t))
			t = d;
	return t;
}


static void
hhost_timeouts(long long now)
{
	struct hsess *hs;
	long long d;

	if (hs_server == NULL)
		return;
	http_timeouts(hs_server, now);
	for (hs = hsessions; hs != NULL; hs = hs->next)
		if ((d = hsess_expiry(hs)) >= 0 && now >= d) {
			if (hs->sid[0] != '\0')
				wb_log_info("http: session %.8s expired after "
				    "%d ms idle", hs->sid,
				    wb.cfg.http_session_ms);
			hs->ending = true;
		}
}

/* SIGTERM: no new connection; every session ends, its client told. */
static void
hhost_shutdown(void)
{
	struct hsess *hs;

	if (hs_server == NULL)
		return;
	http_quiesce(hs_server);
	for (hs = hsessions; hs != NULL; hs = hs->next)
		hsess_end(hs, 503, "Service Unavailable: shutting down");
}

static bool
hhost_written(void)
{
	return hs_server == NULL || http_written(hs_server);
}

static void
hhost_end(void)
{
	hsess_reap();
	http_stop(hs_server);
	hs_server = NULL;
	json_release(&hj);
	hcarry_end();
	free(stateless_open);
	stateless_open = NULL;
}

/*
 * http.c keeps its own table of connections and lists them anew each
 * turn (http_watch); here each descriptor it lists is kept with the
 * loop, and one it no longer lists leaves.  Entries are by descriptor
 * number, each made once, so that a turn allocates nothing; hfds lists
 * the descriptors kept.
 */
struct hwatch {
	struct loop_io	 io;
	void		*tag;		/* http_event's. */
	unsigned	 turn;		/* When it was listed last. */
};

static struct hwatch **hw;		/* By descriptor. */
static int nhw;
static int *hfds, nhfds;
static unsigned hturn;
static struct loop_timer htimer;

static void
on_http_fd(void *arg, int fd, short revents)
{
	(void)arg;
	http_event(hs_server, hw[fd]->tag, fd, revents);
}

static void
watch_one(void *arg, int fd, short events, void *tag)
{
	(void)arg;
	if (fd >= nhw) {
		hw = xrealloc(hw, (size_t)(fd + 1) * sizeof(*hw));
		memset(hw + nhw, 0, (size_t)(fd + 1 - nhw) * sizeof(*hw));
		hfds = xrealloc(hfds, (size_t)(fd + 1) * sizeof(*hfds));
		nhw = fd + 1;
	}
	if (hw[fd] == NULL)
		hw[fd] = xcalloc(1, sizeof(*hw[fd]));
	if (!loop_io_on(&hw[fd]->io))
		hfds[nhfds++] = fd;
	hw[fd]->tag = tag;
	hw[fd]->turn = hturn;
	loop_io_set(&hw[fd]->io, fd, events, on_http_fd, NULL);
}

static void
on_http_timer(void *arg)
{
	(void)arg;
	hhost_timeouts(loop_ms());
}

/* After the clients were written: the connections written, watched. */
static void
hhost_io(void)
{
	int i, fd;

	hhost_flush();
	hturn++;
	if (hs_server != NULL)
		http_watch(hs_server, watch_one, NULL);
	for (i = 0; i < nhfds;) {
		fd = hfds[i];
		if (hw[fd]->turn == hturn) {
			i++;
			continue;
		}
		loop_io_del(&hw[fd]->io);
		hfds[i] = hfds[--nhfds];
	}
	loop_timer_set(&htimer, hhost_deadline(), on_http_timer, NULL);
}

static void
hhost_loop_end(void)
{
	int fd;

	hhost_end();
	for (fd = 0; fd < nhw; fd++)
		if (hw[fd] != NULL) {
			loop_io_del(&hw[fd]->io);
			free(hw[fd]);
		}
	free(hw);
	free(hfds);
	hw = NULL;
	hfds = NULL;
	nhw = nhfds = 0;
	loop_timer_del(&htimer);
}

static const struct loop_step hhost_step = {
	LOOP_ACCEPT, hhost_before_poll, hhost_shutdown, hhost_written,
	hhost_loop_end, NULL
};

static const struct loop_step hhost_io_step = {
	LOOP_SEND, hhost_io, NULL, NULL, NULL, NULL
};
