/*
 * remote.c: one MCP session with a server over HTTP, on the loop.
 *
 * Streamable HTTP (spec basic/transports, 2025-03-26 and later): each
 * line is POSTed (Accept: application/json, text/event-stream); a 202
 * takes a notification or an answer, a request is answered by a JSON
 * body or by an event stream of messages ending with its answer.  The
 * Mcp-Session-Id the server gives goes with every later request, and
 * MCP-Protocol-Version once the owner says initialize is done
 * (remote_ready), which also opens the GET stream of the server's own
 * messages (a 405 says it has none; one that ends is opened again, with
 * Last-Event-ID).  A 404 while we hold an id is the session lost.
 * remote_close ends the session with a DELETE.  A modern (2026-07-28)
 * request carries what its message names in headers too (Mcp-Method,
 * Mcp-Name, the MCP-Protocol-Version of its _meta; SEP-2243): such a
 * server refuses a request without them.
 *
 * HTTP+SSE (2024-11-05): a GET of the URL opens the stream; its first
 * "endpoint" event names where to POST (resolved against the URL, same
 * origin only: our headers go there); every message of the server comes
 * on that stream.  Its end is the end of the session.
 *
 * Connections: slot 0 carries the stream (or the DELETE's, at the end);
 * slots 1 to REMOTE_POOL carry POSTs, one request at a time each, kept
 * alive between them, so that a few requests are in flight at once; the
 * lines beyond wait in a queue of REMOTE_QUEUE_MAX bytes.  A POST's
 * event stream still open ANSWERED_MS after its answer is closed, so
 * that a server cannot hold the pool.  Everything a server sends is
 * bounded: a head (HTTP_HEAD_MAX), a JSON body or an event
 * (WB_MAX_MESSAGE), a body we do not read (DISCARD_MAX), and a head or
 * JSON body that stalls (stall_ms).  Header values are never logged,
 * nor is the URL's path (a key may ride in its query).
 *
 * Name resolution: getaddrinfo() blocks, so it runs once, in
 * remote_open, and every connection of that remote uses the addresses
 * it gave (a numeric host never waits).  The owner opens remotes when a
 * toolbox starts its servers: a slow resolver stalls the loop that once.
 *
 * A handler may be told of anything through remote_ops, and the owner
 * may close the remote from inside it: the connections are slots of the
 * remote (never freed while it lives), each with a generation that a
 * handler compares after every upcall, and the remote itself is freed
 * only once no handler of it runs (busy).
 */
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util.h"
#include "loop.h"
#include "json.h"
#include "jsonrpc.h"
#include "mcp.h"
#include "era.h"
#include "http.h"
#include "remote.h"
#include "remote_int.h"
#include "remote_conn.h"

static int nclosing;			/* Remotes ending with a DELETE. */

/*
 * The remote's life.
 */
static void
rfree(struct remote *r)
{
	struct rconn *c;
	int i;

	for (i = 0; i <= REMOTE_POOL; i++) {
		c = &r->conns[i];
		if (c->fd >= 0)
			close(c->fd);
		loop_io_del(&c->io);
		loop_timer_del(&c->timer);
		tls_free(c->tls);
		buf_free(&c->out);
		buf_free(&c->in);
		buf_free(&c->line);
		buf_free(&c->body);
		sse_free(&c->sse);
	}
	loop_timer_del(&r->retry);
	buf_free(&r->host);
	buf_free(&r->extra);
	buf_free(&r->pending);
	free(r);
}

void
remote_enter(struct remote *r)
{
	r->busy++;
}

/* The last handler out frees a remote that is done. */
void
remote_leave(struct remote *r)
{
	if (--r->busy == 0 && r->doomed)
		rfree(r);
}

/* Whether the owner still hears (not failed, not closed). */
bool
remote_hears(const struct remote *r)
{
	return !r->failed && !r->closing;
}

void
remote_doom(struct remote *r)
{
	if (r->doomed)
		return;
	if (r->closing && r->conns[0].role == ROLE_DELETE)
		nclosing--;
	r->doomed = true;
	if (r->busy == 0)
		rfree(r);
}

/* The owner hears a message: one line, whatever the server's spacing. */
static void
deliver(struct remote *r, char *p, size_t n)
{
	size_t i;

	while (n > 0 && (*p == ' ' || *p == '\t' || *p == '\r' ||
	    *p == '\n')) {
		p++;
		n--;
	}
	while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t' ||
	    p[n - 1] == '\r' || p[n - 1] == '\n'))
		n--;
	if (n == 0 || !remote_hears(r))
		return;
	/* JSON has no raw line end but between tokens: a space there. */
	for (i = 0; i < n; i++)
		if (p[i] == '\n' || p[i] == '\r')
			p[i] = ' ';
	r->ops->message(r->ctx, p, n);
}

static void
remote_fail(struct remote *r, const char *why)
{
	int i;

	if (!remote_hears(r))
		return;
	r->failed = true;
	for (i = 0; i <= REMOTE_POOL; i++)
		conn_reset(&r->conns[i]);
	loop_timer_del(&r->retry);
	r->pending.len = r->pendoff = 0;
	r->ops->failed(r->ctx, why);
}

static void
refuse(struct rconn *c, const char *why)
{
	struct remote *r = c->r;

	if (remote_hears(r) && c->line.len > 0)
		r->ops->refused(r->ctx, c->line.data, c->line.len, c->ecode,
		    why);
}

static void
lose_session(struct remote *r)
{
	if (!remote_hears(r))
		return;
	wb_log_info("remote %s: the server ended our session (404)", r->label);
	r->session[0] = '\0';
	r->version[0] = '\0';
	r->last_id[0] = '\0';
	r->ready = false;
	conn_reset(&r->conns[0]);
	loop_timer_del(&r->retry);
	r->ops->session_lost(r->ctx);
}

static void
stream_retry(void *arg)
{
	struct remote *r = arg;

	if (remote_hears(r) && r->ready && !r->no_stream &&
	    r->conns[0].st == C_FREE)
		conn_open(&r->conns[0], ROLE_STREAM);
}

/* The stream ended (or could not begin): what that means. */
static void
stream_ended(struct rconn *c, const char *why)
{
	struct remote *r = c->r;
	long ms = c->sse.retry >= 0 ? c->sse.retry : RETRY_MS;

	if (r->type == REMOTE_SSE) {
		remote_fail(r, why);
		return;
	}
	/* Opened again, it asks for what came after the last event. */
	if (c->sse.id[0] != '\0')
		memcpy(r->last_id, c->sse.id, sizeof(r->last_id));
	conn_reset(c);
	if (!remote_hears(r) || r->no_stream)
		return;
	if (++r->retries > RETRY_MAX) {
		wb_log_warn("remote %s: its stream of messages keeps ending (%s); "
		    "not opened again", r->label, why);
		r->no_stream = true;
		return;
	}
	ms = ms < 100 ? 100 : ms > 60000 ? 60000 : ms;
	loop_timer_set(&r->retry, loop_ms() + ms, stream_retry, r);
}

/*
 * The connection failed or ended before its response did: another
 * address, a retry of a request on a connection the server had closed
 * while idle, or the failure said to the owner.
 */
void
conn_lost(struct rconn *c, const char *why)
{
	struct remote *r = c->r;
	char line[sizeof(c->why) + URL_HOST_MAX + 32];
	unsigned gen;

	snprintf(line, sizeof(line), "%s: %s", r->label, why);
	if (c->st == C_CONNECT && ++c->tries < r->naddr) {
		/* The next address (localhost: ::1, then 127.0.0.1). */
		loop_io_del(&c->io);
		close(c->fd);
		c->fd = -1;
		conn_start(c, c->role);
		return;
	}
	if (c->role == ROLE_DELETE) {
		remote_doom(r);
		return;
	}
	if (c->role == ROLE_STREAM) {
		if (c->st == C_CONNECT || c->st == C_TLS)
			remote_fail(r, line);
		else
			stream_ended(c, line);
		return;
	}
	if (c->reused && !c->got && c->st != C_CONNECT && c->st != C_TLS) {
		/* Closed by the server while idle: the line goes again. */
		struct buf b = { 0 };

		buf_put(&b, &c->line.len, sizeof(size_t));
		buf_put(&b, c->line.data, c->line.len);
		buf_put(&b, r->pending.data + r->pendoff,
		    r->pending.len - r->pendoff);
		buf_free(&r->pending);
		r->pending = b;
		r->pendoff = 0;
		conn_reset(c);
		remote_pump(r);
		return;
	}
	if (c->st == C_CONNECT || c->st == C_TLS) {
		remote_fail(r, line);
		return;
	}
	gen = c->gen;
	refuse(c, line);
	if (c->gen != gen || !remote_hears(r))
		return;
	conn_reset(c);
	remote_pump(r);
}

/*
 * Responses.
 */
static bool
take_json(void *arg, char *p, size_t n)
{
	struct rconn *c = arg;

	if (c->body.len + n > WB_MAX_MESSAGE) {
		snprintf(c->why, sizeof(c->why), "a response body of more "
		    "than %u bytes", WB_MAX_MESSAGE);
		return false;
	}
	buf_put(&c->body, p, n);
	return true;
}

static bool
take_discard(void *arg, char *p, size_t n)
{
	struct rconn *c = arg;

	(void)p;
	if ((c->discarded += n) > DISCARD_MAX) {
		snprintf(c->why, sizeof(c->why), "an error body too long");
		return false;
	}
	return true;
}

/* An error's body, kept to quote (bounded as one dropped is). */
static bool
take_error(void *arg, char *p, size_t n)
{
	struct rconn *c = arg;

	if (!take_discard(arg, p, n))
		return false;
	buf_put(&c->body, p, n);
	return true;
}

/*
 * What the server said of a refused line: a JSON-RPC error's message,
 * cut and kept to printable ASCII (it is quoted to a client and a log).
 */
static void
error_text(struct rconn *c, char *why, size_t size)
{
	static struct json j;		/* Kept, as the readers keep theirs. */
	static struct buf s;
	const char *m;
	size_t i, at = strlen(why);
	long long code;
	int t;

	if (c->resp.json && json_parse(&j, c->body.data, c->body.len) ==
	    JSON_OK && json_get_int(&j, json_path(&j, 0, "error.code"),
	    &code) && code >= INT_MIN && code <= INT_MAX)
		c->ecode = (int)code;
	if (!c->resp.json || json_parse(&j, c->body.data, c->body.len) !=
	    JSON_OK || (t = json_path(&j, 0, "error.message")) < 0 ||
	    (m = json_str(&j, t, &s)) == NULL || *m == '\0') {
		json_release(&j);
		return;
	}
	if (at + 3 < size) {
		why[at++] = ':';
		why[at++] = ' ';
		for (i = 0; i < 160 && m[i] != '\0' && at + 1 < size; i++)
			why[at++] = m[i] >= 0x20 && m[i] < 0x7f ? m[i] : '?';
		why[at] = '\0';
	}
	json_release(&j);
	buf_shrink(&s);
}

/* The legacy stream's endpoint: where to POST from now on. */
static void
endpoint_event(struct remote *r, const char *p, size_t n)
{
	struct buf err = { 0 };

	if (url_resolve(&r->url, p, n, r->endpoint, &err) < 0) {
		remote_fail(r, buf_cstr(&err));
		buf_free(&err);
		return;
	}
	r->have_endpoint = true;
	conn_deadline(&r->conns[0], -1);
	remote_pump(r);
}

/* Is the message p[0, n) the answer to the request c posted? */
static bool
answers(const struct rconn *c, const char *p, size_t n)
{
	struct rpc_top top;

	return rpc_scan(p, n, &top) == 0 && top.method == NULL &&
	    (top.result || top.error) && top.id != NULL &&
	    top.idlen == c->idlen &&
	    memcmp(top.id, c->line.data + c->idat, c->idlen) == 0;
}

static bool
take_event(void *arg, const char *type, char *p, size_t n)
{
	struct rconn *c = arg;
	struct remote *r = c->r;
	unsigned gen = c->gen;

	if (p == NULL) {
		wb_log_warn("remote %s: an event of %zu bytes dropped (more than "
		    "%u)", r->label, n, WB_MAX_MESSAGE);
		if (c->role == ROLE_POST)
			refuse(c, "the server's answer was too large");
	} else if (strcmp(type, "message") == 0) {
		r->retries = 0;
		if (c->role == ROLE_POST && c->idlen > 0)
			c->answered = answers(c, p, n);
		deliver(r, p, n);
		/*
		 * The server SHOULD end the stream after the answer: one that
		 * does not gives its connection back to the pool soon.
		 */
		if (c->gen == gen && c->answered)
			conn_deadline(c, ANSWERED_MS);
	} else if (strcmp(type, "endpoint") == 0 && r->type == REMOTE_SSE &&
	    c->role == ROLE_STREAM)
		endpoint_event(r, p, n);
	return c->gen == gen && remote_hears(r);
}

static bool
take_sse(void *arg, char *p, size_t n)
{
	struct rconn *c = arg;

	return sse_feed(&c->sse, p, n, take_event, c);
}

/* What a status we do not take means, for a message. */
static void
status_why(struct rconn *c, char *why, size_t size)
{
	const struct hresp *h = &c->resp;

	if (h->status >= 300 && h->status < 400)
		snprintf(why, size, "%s: HTTP %d, redirected to %s "
		    "(redirects are not followed)", c->r->label, h->status,
		    h->location[0] != '\0' ? h->location : "(no Location)");
	else
		snprintf(why, size, "%s: HTTP %d%s", c->r->label, h->status,
		    h->status == 200 ? " without an event stream" : "");
}

/* The status of a POST's response: what its body is for. */
static void
post_head(struct rconn *c)
{
	struct remote *r = c->r;
	struct hresp *h = &c->resp;

	if (h->status == 404 && r->type == REMOTE_HTTP &&
	    r->session[0] != '\0') {
		lose_session(r);
		return;
	}
	if (h->status >= 200 && h->status < 300) {
		c->mode = h->sse ? B_SSE : h->json ? B_JSON : B_DISCARD;
		return;
	}
	/* Refused: said once the body, which may say why, has come. */
	c->mode = B_ERROR;
}

static void
stream_head(struct rconn *c)
{
	struct remote *r = c->r;
	struct hresp *h = &c->resp;
	char why[WHY_MAX];

	if (h->status == 200 && h->sse) {
		c->mode = B_SSE;
		return;
	}
	if (r->type == REMOTE_HTTP && h->status == 405) {
		r->no_stream = true;	/* The server offers none. */
		return;
	}
	if (r->type == REMOTE_HTTP && h->status == 404 &&
	    r->session[0] != '\0') {
		lose_session(r);
		return;
	}
	status_why(c, why, sizeof(why));
	if (r->type == REMOTE_SSE)
		remote_fail(r, why);
	else {
		wb_log_warn("remote %s: its stream of messages: %s", r->label, why);
		r->no_stream = true;
	}
}

/* A head has come: take the session, and see what the body is for. */
static void
conn_head(struct rconn *c)
{
	struct remote *r = c->r;

	c->st = C_BODY;
	c->mode = B_DISCARD;
	c->discarded = 0;
	c->body.len = 0;
	if (r->type == REMOTE_HTTP && c->resp.session[0] != '\0' &&
	    r->session[0] == '\0' && c->role == ROLE_POST)
		memcpy(r->session, c->resp.session, sizeof(r->session));
	if (c->role == ROLE_POST)
		post_head(c);
	else if (c->role == ROLE_STREAM)
		stream_head(c);
	/*
	 * An event stream may rest; a head or JSON body may not stall, nor
	 * may the older transport's stream before it names its endpoint.
	 */
	if (c->mode == B_SSE)
		conn_deadline(c, r->type == REMOTE_SSE && c->role ==
		    ROLE_STREAM && !r->have_endpoint ? r->connect_ms : -1);
}

/* The response is whole: its JSON body to the owner, the connection on. */
void
conn_done(struct rconn *c)
{
	struct remote *r = c->r;
	unsigned gen = c->gen;
	char why[WHY_MAX];

	if (c->mode == B_JSON && c->body.len > 0) {
		deliver(r, c->body.data, c->body.len);
		if (c->gen != gen)
			return;
	}
	if (c->mode == B_ERROR) {
		status_why(c, why, sizeof(why));
		error_text(c, why, sizeof(why));
		refuse(c, why);
		if (c->gen != gen)
			return;
	}
	if (c->role == ROLE_DELETE) {
		remote_doom(r);
		return;
	}
	if (c->role == ROLE_STREAM) {
		if (c->mode == B_SSE || r->type == REMOTE_SSE)
			stream_ended(c, "its stream of messages ended");
		else
			conn_reset(c);
		return;
	}
	c->line.len = 0;
	if (c->resp.close || !remote_hears(r)) {
		conn_reset(c);
	} else {
		c->st = C_IDLE;
		c->reused = true;
		conn_deadline(c, IDLE_MS);
		conn_events(c);
	}
	remote_pump(r);
}

/* Parse what has come; false when the connection was reset meanwhile. */
bool
conn_parse(struct rconn *c)
{
	const char *why = NULL;
	hresp_data_fn *fn;
	unsigned gen = c->gen;
	size_t used;
	int r;

	while (c->st == C_HEAD || c->st == C_BODY) {
		if (c->st == C_HEAD) {
			r = hresp_head(&c->resp, c->in.data, c->in.len, &used,
			    &why);
			if (r == HR_MORE)
				return true;
			if (r == HR_ERROR) {
				conn_lost(c, why);
				return false;
			}
			buf_consume(&c->in, used);
			if (r == HR_INTERIM) {
				hresp_reset(&c->resp, false);
				continue;
			}
			conn_head(c);
			if (c->gen != gen || c->st != C_BODY)
				return false;
		}
		fn = c->mode == B_SSE ? take_sse : c->mode == B_JSON ?
		    take_json : c->mode == B_ERROR ? take_error : take_discard;
		r = hresp_body(&c->resp, c->in.data, c->in.len, &used, fn, c,
		    &why);
		if (c->gen != gen)
			return false;
		buf_consume(&c->in, used);
		if (r == HR_STOP || r == HR_ERROR) {
			c->got = true;
			conn_lost(c, r == HR_ERROR ? why : c->why);
			return false;
		}
		if (r == HR_MORE)
			return true;
		conn_done(c);
		return false;
	}
	return true;
}

/*
 * The queue: lines wait for a connection of the pool.
 */
static struct rconn *
pool_take(struct remote *r)
{
	struct rconn *free_one = NULL;
	int i;

	for (i = 1; i <= REMOTE_POOL; i++) {
		if (r->conns[i].st == C_IDLE)
			return &r->conns[i];
		if (r->conns[i].st == C_FREE && free_one == NULL)
			free_one = &r->conns[i];
	}
	return free_one;
}

void
remote_pump(struct remote *r)
{
	struct rconn *c;
	size_t n;

	if (!remote_hears(r) || (r->type == REMOTE_SSE && !r->have_endpoint))
		return;
	while (r->pendoff < r->pending.len && (c = pool_take(r)) != NULL) {
		memcpy(&n, r->pending.data + r->pendoff, sizeof(n));
		c->line.len = 0;
		buf_put(&c->line, r->pending.data + r->pendoff + sizeof(n), n);
		r->pendoff += sizeof(n) + n;
		if (c->st == C_IDLE) {
			c->role = ROLE_POST;
			conn_send(c);
		} else
			conn_open(c, ROLE_POST);
	}
	/* What was taken goes, once it is most of the queue. */
	if (r->pendoff == r->pending.len) {
		r->pending.len = r->pendoff = 0;
		buf_shrink(&r->pending);
	} else if (r->pendoff > 64 * 1024 && r->pendoff > r->pending.len / 2) {
		buf_consume(&r->pending, r->pendoff);
		r->pendoff = 0;
	}
}

/*
 * What the owner calls.
 */

/* Is cfg one that remote_open can take?  (--check, the configuration.) */
int
remote_check(const struct remote_config *cfg, struct buf *err)
{
	struct url u;
	int i;

	if (url_parse(cfg->url, strlen(cfg->url), &u, err) < 0)
		return -1;
	for (i = 0; i < cfg->nheaders; i++)
		if (hreq_header_ok(cfg->headers[i].name,
		    cfg->headers[i].value, err) < 0)
			return -1;
	return u.tls ? tls_load(err) : 0;
}

static bool
finished(void)
{
	return nclosing == 0;
}

static const struct loop_step remote_step = {
	LOOP_SEND, NULL, NULL, finished, NULL, NULL
};

/*
 * A session with the server of cfg, on the loop: NULL with why in err
 * (a bad URL or header, no TLS library, a name that does not resolve).
 * Streamable HTTP waits for the first line (initialize); HTTP+SSE opens
 * its stream at once and holds lines until the endpoint is known.
 */
struct remote *
remote_open(const struct remote_config *cfg, const struct remote_ops *ops,
    void *ctx, struct buf *err)
{
	static bool stepped;
	struct remote *r;
	struct buf a = { 0 };
	int i;

	if (remote_check(cfg, err) < 0)
		return NULL;
	r = xcalloc(1, sizeof(*r));
	(void)url_parse(cfg->url, strlen(cfg->url), &r->url, err);
	url_authority(&r->url, &a);
	snprintf(r->label, sizeof(r->label), "%s", buf_cstr(&a));
	buf_free(&a);
	url_authority(&r->url, &r->host);
	buf_cstr(&r->host);
	for (i = 0; i < cfg->nheaders; i++)
		buf_printf(&r->extra, "%s: %s\r\n", cfg->headers[i].name,
		    cfg->headers[i].value);
	buf_cstr(&r->extra);
	r->type = cfg->type;
	r->ops = ops;
	r->ctx = ctx;
	r->connect_ms = cfg->connect_ms > 0 ? cfg->connect_ms :
	    REMOTE_CONNECT_MS;
	r->stall_ms = cfg->stall_ms > 0 ? cfg->stall_ms : REMOTE_STALL_MS;
	for (i = 0; i <= REMOTE_POOL; i++) {
		r->conns[i].r = r;
		r->conns[i].fd = -1;
		sse_init(&r->conns[i].sse, WB_MAX_MESSAGE);
	}
	if (remote_resolve(r, err) < 0) {
		rfree(r);
		return NULL;
	}
	if (!stepped) {
		loop_step_add(&remote_step);
		stepped = true;
	}
	if (r->type == REMOTE_SSE)
		conn_open(&r->conns[0], ROLE_STREAM);
	return r;
}

/*
 * Queue line[0, n) (one JSON-RPC message, no newline) to be POSTed: 0,
 * or -1 when the remote failed or closed, or its queue is full.
 */
int
remote_send(struct remote *r, const char *line, size_t n)
{
	while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
		n--;
	if (!remote_hears(r) || n == 0 || r->pending.len - r->pendoff + n >
	    REMOTE_QUEUE_MAX) {
		errno = remote_hears(r) ? ENOBUFS : EPIPE;
		return -1;
	}
	buf_put(&r->pending, &n, sizeof(n));
	buf_put(&r->pending, line, n);
	remote_pump(r);
	return 0;
}

/*
 * The session is initialized with protocol version (Streamable HTTP):
 * it goes with every request from now on, and the server's stream of
 * messages is opened.
 */
void
remote_ready(struct remote *r, const char *version)
{
	size_t n = strlen(version);

	if (!remote_hears(r) || r->type != REMOTE_HTTP || n > VERSION_MAX ||
	    !remote_visible(version, n))
		return;
	memcpy(r->version, version, n + 1);
	r->ready = true;
	r->retries = 0;
	if (!r->no_stream && r->conns[0].st == C_FREE)
		conn_open(&r->conns[0], ROLE_STREAM);
}

/* The session id the server gave, or NULL (for the owner's messages). */
const char *
remote_session(const struct remote *r)
{
	return r->session[0] != '\0' ? r->session : NULL;
}

/* Remotes still ending their sessions (the loop waits for them). */
int
remote_closing(void)
{
	return nclosing;
}

/*
 * End the session and free the remote: nothing is heard after this.  A
 * Streamable HTTP session is ended with a DELETE (for at most DELETE_MS),
 * after which the remote frees itself.
 */
void
remote_close(struct remote *r)
{
	bool del;
	int i;

	if (r == NULL || r->closing)
		return;
	del = r->type == REMOTE_HTTP && r->session[0] != '\0' && !r->failed;
	r->closing = true;
	for (i = 0; i <= REMOTE_POOL; i++)
		conn_reset(&r->conns[i]);
	loop_timer_del(&r->retry);
	r->pending.len = r->pendoff = 0;
	if (!del) {
		remote_doom(r);
		return;
	}
	nclosing++;
	r->conns[0].role = ROLE_DELETE;
	loop_timer_set(&r->conns[0].timer, loop_ms() + DELETE_MS, conn_timer,
	    &r->conns[0]);
	conn_open(&r->conns[0], ROLE_DELETE);
}
