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

#define MAX_ADDRS	4
#define READ_CHUNK	(64 * 1024)
#define READS_MAX	16		/* Reads of one event (fairness). */
#define IDLE_MS		30000		/* A kept-alive connection. */
#define SEND_MS		30000		/* A request the server won't take. */
#define DELETE_MS	2000		/* The DELETE at the end, in all. */
#define RETRY_MS	1000		/* The GET stream opened again. */
#define RETRY_MAX	5		/* Times in a row, without an event. */
#define DISCARD_MAX	(64 * 1024)	/* A body read and dropped. */
#define ANSWERED_MS	2000		/* A POST's stream after its answer. */
#define VERSION_MAX	31
#define WHY_MAX		(URL_HOST_MAX + HRESP_LOCATION_MAX + 128)

enum role { ROLE_POST, ROLE_STREAM, ROLE_DELETE };

enum cstate {
	C_FREE, C_CONNECT, C_TLS, C_SEND, C_HEAD, C_BODY, C_IDLE
};

enum bodymode {
	B_DISCARD,			/* Read and dropped. */
	B_JSON,				/* A message. */
	B_SSE,				/* Messages. */
	B_ERROR				/* Why the server refused a line. */
};

struct rconn {
	struct remote		*r;
	int			 fd;
	unsigned		 gen;		/* Changes at each reset. */
	enum cstate		 st;
	enum role		 role;
	enum bodymode		 mode;
	bool			 reused;	/* Kept from an earlier one. */
	bool			 got;		/* A byte of the response. */
	bool			 answered;	/* Its stream gave the answer. */
	size_t			 idat, idlen;	/* The request's id in line. */
	int			 tries;		/* Addresses tried. */
	short			 tls_want;
	size_t			 discarded;
	struct tls		*tls;
	struct loop_io		 io;
	struct loop_timer	 timer;
	char			 why[160];	/* A failure to report. */
	struct buf		 out;
	size_t			 outoff;
	struct buf		 in;
	struct buf		 line;		/* The line POSTed. */
	struct buf		 body;		/* A JSON body. */
	struct hresp		 resp;
	struct sse		 sse;
};

struct remote {
	enum remote_type	 type;
	struct url		 url;
	char			 label[URL_HOST_MAX + 16];
	struct buf		 host;		/* Host field. */
	struct buf		 extra;		/* Configured fields. */
	struct sockaddr_storage	 addrs[MAX_ADDRS];
	socklen_t		 alen[MAX_ADDRS];
	int			 naddr;
	int			 good;		/* The address that worked. */
	int			 connect_ms;
	int			 stall_ms;
	const struct remote_ops	*ops;
	void			*ctx;
	char			 session[HRESP_SID_MAX + 1];
	char			 version[VERSION_MAX + 1];
	char			 endpoint[URL_MAX + 1];	/* HTTP+SSE's. */
	char			 last_id[SSE_ID_MAX + 1];	/* Its stream's. */
	bool			 have_endpoint;
	bool			 ready;
	bool			 no_stream;	/* 405, or given up. */
	bool			 failed;
	bool			 closing;
	bool			 doomed;
	int			 busy;		/* Handlers running. */
	int			 retries;
	struct loop_timer	 retry;
	struct buf		 pending;	/* size_t length, bytes; ... */
	size_t			 pendoff;
	struct rconn		 conns[1 + REMOTE_POOL];
};

static int nclosing;			/* Remotes ending with a DELETE. */

static void	 conn_io(void *, int, short);
static void	 conn_timer(void *);
static void	 conn_start(struct rconn *, enum role);
static void	 conn_open(struct rconn *, enum role);
static void	 pump(struct remote *);

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

static void
enter(struct remote *r)
{
	r->busy++;
}

/* The last handler out frees a remote that is done. */
static void
leave(struct remote *r)
{
	if (--r->busy == 0 && r->doomed)
		rfree(r);
}

/* Whether the owner still hears (not failed, not closed). */
static bool
hears(const struct remote *r)
{
	return !r->failed && !r->closing;
}

static void
doom(struct remote *r)
{
	if (r->doomed)
		return;
	if (r->closing && r->conns[0].role == ROLE_DELETE)
		nclosing--;
	r->doomed = true;
	if (r->busy == 0)
		rfree(r);
}

/*
 * A connection's life.
 */
static void
conn_reset(struct rconn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	loop_io_del(&c->io);
	loop_timer_del(&c->timer);
	tls_free(c->tls);
	c->tls = NULL;
	c->gen++;
	c->st = C_FREE;
	c->reused = c->got = c->answered = false;
	c->tls_want = 0;
	c->why[0] = '\0';
	/* Lengths only: a handler up the stack may still hold the bytes. */
	c->out.len = c->outoff = 0;
	c->in.len = 0;
	c->line.len = 0;
	c->body.len = 0;
	sse_reset(&c->sse);
}

/* Give back the memory of a large message, out of any handler's way. */
static void
conn_trim(struct rconn *c)
{
	if (c->st == C_FREE || c->st == C_IDLE) {
		buf_shrink(&c->in);
		buf_shrink(&c->out);
		buf_shrink(&c->line);
		buf_shrink(&c->body);
	}
}

/* The deadline of what the connection does now; the DELETE has one. */
static void
conn_deadline(struct rconn *c, long long ms)
{
	if (c->role == ROLE_DELETE)
		return;
	if (ms < 0)
		loop_timer_del(&c->timer);
	else
		loop_timer_set(&c->timer, loop_ms() + ms, conn_timer, c);
}

static void
conn_events(struct rconn *c)
{
	short base = 0;

	switch (c->st) {
	case C_CONNECT:
	case C_SEND:
		base = POLLOUT;
		break;
	case C_HEAD:
	case C_BODY:
	case C_IDLE:
		base = POLLIN;
		break;
	default:
		break;
	}
	loop_io_events(&c->io, base | c->tls_want);
}

/* A failure found where no upcall may be made: reported by the timer. */
static void
conn_defer(struct rconn *c, const char *why)
{
	snprintf(c->why, sizeof(c->why), "%s", why);
	loop_timer_set(&c->timer, 0, conn_timer, c);
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
	if (n == 0 || !hears(r))
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

	if (!hears(r))
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

	if (hears(r) && c->line.len > 0)
		r->ops->refused(r->ctx, c->line.data, c->line.len, why);
}

static void
lose_session(struct remote *r)
{
	if (!hears(r))
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

	if (hears(r) && r->ready && !r->no_stream &&
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
	if (!hears(r) || r->no_stream)
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
static void
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
		doom(r);
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
		pump(r);
		return;
	}
	if (c->st == C_CONNECT || c->st == C_TLS) {
		remote_fail(r, line);
		return;
	}
	gen = c->gen;
	refuse(c, line);
	if (c->gen != gen || !hears(r))
		return;
	conn_reset(c);
	pump(r);
}

/*
 * Requests.
 */

/* What a message's headers are read from (json_shape's slots). */
enum { S_METHOD, S_NAME, S_URI, S_TASK, S_PARAMS, S_VERSION, S_META, S_N };

static const struct field meta_fields[] = {
	FIELD(ERA_KEY "protocolVersion", S_VERSION, NULL, false),
	FIELD_END
};
static const struct field params_fields[] = {
	FIELD("name", S_NAME, NULL, false),
	FIELD("uri", S_URI, NULL, false),
	FIELD("taskId", S_TASK, NULL, false),
	FIELD("_meta", S_META, meta_fields, false),
	FIELD_END
};
static const struct field top_fields[] = {
	FIELD("method", S_METHOD, NULL, false),
	FIELD("params", S_PARAMS, params_fields, false),
	FIELD_END
};

/* Mcp-Name mirrors this field of these methods' params. */
static const struct {
	const char	*method;
	int		 slot;
} name_of[] = {
	{ MCP_TOOLS_CALL, S_NAME }, { MCP_PROMPTS_GET, S_NAME },
	{ MCP_RESOURCES_READ, S_URI }, { "tasks/get", S_TASK },
	{ "tasks/update", S_TASK }, { "tasks/cancel", S_TASK }
};

/* Is s[0, n) visible ASCII alone (a token-like header value)? */
static bool
visible(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x21 || (unsigned char)s[i] > 0x7e)
			return false;
	return true;
}

/* "Name: value" of a JSON string span; false when it is not one. */
static bool
put_header(struct buf *h, const char *name, const struct span *v)
{
	static struct buf s;		/* Kept: a header a time. */

	if (v->p == NULL || json_span_str(v, &s) == NULL ||
	    memchr(s.data, '\0', s.len) != NULL)
		return false;
	buf_printf(h, "%s: ", name);
	hreq_mcp_value(h, s.data, s.len);
	buf_puts(h, "\r\n");
	return true;
}

/*
 * The headers the 2026-07-28 transport reads from a message (SEP-2243):
 * Mcp-Method, Mcp-Name for the methods that name something, and the
 * protocol version of a modern request's _meta, which is then its
 * MCP-Protocol-Version (into version).  A 2025 server passes them over.
 */
static void
message_headers(const struct rconn *c, struct buf *h, char *version,
    size_t size)
{
	static struct buf v;
	struct span out[S_N];
	size_t i;

	memset(out, 0, sizeof(out));
	if (!json_shape(c->line.data, c->line.len, top_fields, out, S_N) ||
	    !put_header(h, "Mcp-Method", &out[S_METHOD]))
		return;
	for (i = 0; i < sizeof(name_of) / sizeof(name_of[0]); i++)
		if (json_span_is(&out[S_METHOD], name_of[i].method)) {
			(void)put_header(h, "Mcp-Name", &out[name_of[i].slot]);
			break;
		}
	if (json_span_str(&out[S_VERSION], &v) != NULL && v.len > 0 &&
	    v.len < size && visible(v.data, v.len))
		memcpy(version, v.data, v.len + 1);
}

static void
conn_request(struct rconn *c)
{
	static struct buf more;
	struct remote *r = c->r;
	struct hreq q;
	char version[VERSION_MAX + 1];
	bool http = r->type == REMOTE_HTTP;

	memset(&q, 0, sizeof(q));
	q.host = r->host.data;
	q.extra = r->extra.len > 0 ? r->extra.data : NULL;
	q.length = -1;
	q.target = r->url.target;
	if (http && r->session[0] != '\0')
		q.session = r->session;
	if (http && r->version[0] != '\0')
		q.version = r->version;
	switch (c->role) {
	case ROLE_POST:
		q.method = "POST";
		q.accept = "application/json, text/event-stream";
		q.content_type = "application/json";
		q.length = (long long)c->line.len;
		if (!http) {
			q.target = r->endpoint;
			break;
		}
		more.len = 0;
		version[0] = '\0';
		message_headers(c, &more, version, sizeof(version));
		q.more = more.len > 0 ? buf_cstr(&more) : NULL;
		if (version[0] != '\0')
			q.version = version;
		break;
	case ROLE_STREAM:
		q.method = "GET";
		q.accept = "text/event-stream";
		if (http && r->last_id[0] != '\0')
			q.last_id = r->last_id;
		break;
	default:
		q.method = "DELETE";
		break;
	}
	c->out.len = c->outoff = 0;
	hreq_write(&c->out, &q);
	if (c->role == ROLE_POST)
		buf_put(&c->out, c->line.data, c->line.len);
}

/* Connected (and through TLS): send the request. */
static void
conn_send(struct rconn *c)
{
	struct rpc_top top;

	/* A request's id, to know its answer on an event stream. */
	c->idlen = 0;
	if (c->role == ROLE_POST && rpc_scan(c->line.data, c->line.len,
	    &top) == 0 && top.id != NULL && top.method != NULL) {
		c->idat = (size_t)(top.id - c->line.data);
		c->idlen = top.idlen;
	}
	c->st = C_SEND;
	c->got = c->answered = false;
	hresp_reset(&c->resp, false);
	conn_request(c);
	conn_deadline(c, SEND_MS);
	conn_events(c);
}

static void
conn_start(struct rconn *c, enum role role)
{
	struct remote *r = c->r;
	const struct sockaddr *sa;
	int one = 1, i;

	/* From the address that worked last, then the others in turn. */
	c->role = role;
	i = (r->good + c->tries) % r->naddr;
	sa = (const struct sockaddr *)&r->addrs[i];
	c->st = C_CONNECT;
	if (role == ROLE_STREAM)
		sse_reset(&c->sse);
	if ((c->fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, IPPROTO_TCP)) < 0) {
		conn_defer(c, strerror(errno));
		return;
	}
	(void)setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	loop_io_set(&c->io, c->fd, POLLOUT, conn_io, c);
	conn_deadline(c, r->connect_ms);
	if (connect(c->fd, sa, r->alen[i]) < 0 && errno != EINPROGRESS)
		conn_defer(c, strerror(errno));
}

/* A new connection for role, trying each address in turn. */
static void
conn_open(struct rconn *c, enum role role)
{
	c->tries = 0;
	conn_start(c, role);
}

/* The socket connected: TLS, or the request at once. */
static void
conn_connected(struct rconn *c)
{
	struct remote *r = c->r;
	struct buf why = { 0 };

	r->good = (r->good + c->tries) % r->naddr;
	if (!r->url.tls) {
		conn_send(c);
		return;
	}
	c->st = C_TLS;		/* No other address would do better. */
	if ((c->tls = tls_new(c->fd, r->url.host, r->url.v6, &why)) == NULL) {
		conn_lost(c, buf_cstr(&why));
		buf_free(&why);
		return;
	}
	c->tls_want = POLLOUT;
	conn_events(c);
}

static void
conn_handshake(struct rconn *c)
{
	struct buf why = { 0 };
	short ev = 0;

	switch (tls_handshake(c->tls, &ev, &why)) {
	case TLS_OK:
		c->tls_want = 0;
		conn_send(c);
		break;
	case TLS_WANT:
		c->tls_want = ev;
		conn_events(c);
		break;
	default:
		conn_lost(c, buf_cstr(&why));
		break;
	}
	buf_free(&why);
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
	int t;

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
	pump(r);
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
	return c->gen == gen && hears(r);
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
static void
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
		doom(r);
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
	if (c->resp.close || !hears(r)) {
		conn_reset(c);
	} else {
		c->st = C_IDLE;
		c->reused = true;
		conn_deadline(c, IDLE_MS);
		conn_events(c);
	}
	pump(r);
}

/* Parse what has come; false when the connection was reset meanwhile. */
static bool
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
 * I/O.
 */
static ssize_t
conn_read(struct rconn *c, void *p, size_t n)
{
	if (c->tls != NULL)
		return tls_read(c->tls, p, n, &c->tls_want);
	return recv(c->fd, p, n, MSG_DONTWAIT);
}

static ssize_t
conn_write(struct rconn *c, const void *p, size_t n)
{
	if (c->tls != NULL)
		return tls_write(c->tls, p, n, &c->tls_want);
	return send(c->fd, p, n, MSG_DONTWAIT | MSG_NOSIGNAL);
}

/* Write what the socket takes; the whole request sent: read. */
static void
conn_flush(struct rconn *c)
{
	ssize_t n;

	c->tls_want = 0;
	while (c->outoff < c->out.len) {
		n = conn_write(c, c->out.data + c->outoff,
		    c->out.len - c->outoff);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			conn_events(c);
			return;
		}
		if (n <= 0) {
			conn_lost(c, strerror(errno));
			return;
		}
		c->outoff += (size_t)n;
		conn_deadline(c, SEND_MS);
	}
	c->st = C_HEAD;
	conn_deadline(c, -1);	/* An answer may take the call's time. */
	conn_events(c);
}

/* Read what has come and parse it, a bounded number of times. */
static void
conn_input(struct rconn *c)
{
	const char *why = "the connection ended";
	unsigned gen = c->gen;
	ssize_t n;
	int i;

	c->tls_want = 0;
	/*
	 * Bounded for fairness; poll() says when there is more.  (TLS too:
	 * our read takes a whole record, so OpenSSL keeps none back.)
	 */
	for (i = 0; i < READS_MAX; i++) {
		buf_reserve(&c->in, READ_CHUNK);
		n = conn_read(c, c->in.data + c->in.len, READ_CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n < 0) {
			conn_lost(c, strerror(errno));
			return;
		}
		if (n == 0) {
			if (c->st == C_IDLE) {
				conn_reset(c);
				return;
			}
			if (hresp_eof(&c->resp, &why) == HR_DONE &&
			    c->in.len == 0)
				conn_done(c);
			else
				conn_lost(c, c->st == C_HEAD && !c->got ?
				    "the server closed the connection" : why);
			return;
		}
		if (c->st == C_IDLE) {
			conn_reset(c);	/* Nothing was asked. */
			return;
		}
		c->in.len += (size_t)n;
		c->got = true;
		if (c->mode != B_SSE || c->st == C_HEAD)
			conn_deadline(c, c->r->stall_ms);
		if (!conn_parse(c) || c->gen != gen)
			return;
	}
	conn_events(c);
}

static void
conn_io(void *arg, int fd, short rev)
{
	struct rconn *c = arg;
	struct remote *r = c->r;
	int err = 0;
	socklen_t len = sizeof(err);

	(void)fd;
	enter(r);
	switch (c->st) {
	case C_CONNECT:
		if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
			err = errno;
		if (err != 0)
			conn_lost(c, strerror(err));
		else if (rev & (POLLOUT | POLLHUP | POLLERR))
			conn_connected(c);
		break;
	case C_TLS:
		conn_handshake(c);
		break;
	case C_SEND:
		conn_flush(c);
		break;
	case C_HEAD:
	case C_BODY:
	case C_IDLE:
		conn_input(c);
		break;
	default:
		break;
	}
	conn_trim(c);
	leave(r);
}

static void
conn_timer(void *arg)
{
	struct rconn *c = arg;
	struct remote *r = c->r;
	char why[sizeof(c->why) + 32];

	enter(r);
	if (c->why[0] != '\0') {
		snprintf(why, sizeof(why), "%s", c->why);
		c->why[0] = '\0';
		conn_lost(c, why);
	} else if (c->st == C_IDLE)
		conn_reset(c);
	else if (c->role == ROLE_DELETE)
		doom(r);
	else if (c->st == C_CONNECT || c->st == C_TLS)
		conn_lost(c, c->st == C_CONNECT ? "connect timed out" :
		    "the TLS handshake timed out");
	else if (c->st == C_SEND)
		conn_lost(c, "the server does not take our request");
	else if (c->role == ROLE_STREAM && r->type == REMOTE_SSE &&
	    !r->have_endpoint)
		conn_lost(c, "no endpoint event on its stream");
	else if (c->st == C_BODY && c->answered) {
		conn_reset(c);		/* Answered; the rest is not ours. */
		pump(r);
	} else if (c->st == C_HEAD || c->st == C_BODY)
		conn_lost(c, "the response stalled");
	conn_trim(c);
	leave(r);
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

static void
pump(struct remote *r)
{
	struct rconn *c;
	size_t n;

	if (!hears(r) || (r->type == REMOTE_SSE && !r->have_endpoint))
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

/* The addresses of the URL's host: numeric at once, or the resolver. */
static int
resolve(struct remote *r, struct buf *err)
{
	struct addrinfo hints, *res, *ai;
	char port[8];
	int e;

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
	snprintf(port, sizeof(port), "%d", r->url.port);
	e = getaddrinfo(r->url.host, port, &hints, &res);
	if (e == EAI_NONAME && !r->url.v6) {
		/* A name: this blocks (see the top of the file). */
		hints.ai_flags = AI_NUMERICSERV | AI_ADDRCONFIG;
		e = getaddrinfo(r->url.host, port, &hints, &res);
	}
	if (e != 0) {
		buf_printf(err, "%s: %s", r->label, gai_strerror(e));
		return -1;
	}
	for (ai = res; ai != NULL && r->naddr < MAX_ADDRS; ai = ai->ai_next) {
		if ((ai->ai_family != AF_INET && ai->ai_family != AF_INET6) ||
		    ai->ai_addrlen > sizeof(r->addrs[0]))
			continue;
		memcpy(&r->addrs[r->naddr], ai->ai_addr, ai->ai_addrlen);
		r->alen[r->naddr++] = ai->ai_addrlen;
	}
	freeaddrinfo(res);
	if (r->naddr == 0) {
		buf_printf(err, "%s: no address", r->label);
		return -1;
	}
	return 0;
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
	if (resolve(r, err) < 0) {
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
	if (!hears(r) || n == 0 || r->pending.len - r->pendoff + n >
	    REMOTE_QUEUE_MAX) {
		errno = hears(r) ? ENOBUFS : EPIPE;
		return -1;
	}
	buf_put(&r->pending, &n, sizeof(n));
	buf_put(&r->pending, line, n);
	pump(r);
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

	if (!hears(r) || r->type != REMOTE_HTTP || n > VERSION_MAX ||
	    !visible(version, n))
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
		doom(r);
		return;
	}
	nclosing++;
	r->conns[0].role = ROLE_DELETE;
	loop_timer_set(&r->conns[0].timer, loop_ms() + DELETE_MS, conn_timer,
	    &r->conns[0]);
	conn_open(&r->conns[0], ROLE_DELETE);
}
