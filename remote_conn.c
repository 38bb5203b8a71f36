/*
 * remote_conn.c: a remote's connection, its bytes (remote_conn.h): the
 * addresses resolved once, a connection to one of them, TLS, the
 * request written (with the headers the 2026-07-28 transport reads from
 * its message), what comes read in bounded turns and handed to
 * remote.c's parser, and each connection's deadline.
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
#include "remote_conn.h"

/*
 * A connection's life.
 */
void
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
	c->ecode = 0;
	c->why[0] = '\0';
	/* Lengths only: a handler up the stack may still hold the bytes. */
	c->out.len = c->outoff = 0;
	c->in.len = 0;
	c->line.len = 0;
	c->body.len = 0;
	sse_reset(&c->sse);
}

/* Give back the memory of a large message, out of any handler's way. */
void
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
void
conn_deadline(struct rconn *c, long long ms)
{
	if (c->role == ROLE_DELETE)
		return;
	if (ms < 0)
		loop_timer_del(&c->timer);
	else
		loop_timer_set(&c->timer, loop_ms() + ms, conn_timer, c);
}

void
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
void
conn_defer(struct rconn *c, const char *why)
{
	snprintf(c->why, sizeof(c->why), "%s", why);
	loop_timer_set(&c->timer, 0, conn_timer, c);
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
bool
remote_visible(const char *s, size_t n)
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
	    v.len < size && remote_visible(v.data, v.len))
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
void
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

void
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
void
conn_open(struct rconn *c, enum role role)
{
	c->tries = 0;
	conn_start(c, role);
}

/* The socket connected: TLS, or the request at once. */
void
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

void
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

void
conn_io(void *arg, int fd, short rev)
{
	struct rconn *c = arg;
	struct remote *r = c->r;
	int err = 0;
	socklen_t len = sizeof(err);

	(void)fd;
	remote_enter(r);
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
	remote_leave(r);
}

void
conn_timer(void *arg)
{
	struct rconn *c = arg;
	struct remote *r = c->r;
	char why[sizeof(c->why) + 32];

	remote_enter(r);
	if (c->why[0] != '\0') {
		snprintf(why, sizeof(why), "%s", c->why);
		c->why[0] = '\0';
		conn_lost(c, why);
	} else if (c->st == C_IDLE)
		conn_reset(c);
	else if (c->role == ROLE_DELETE)
		remote_doom(r);
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
		remote_pump(r);
	} else if (c->st == C_HEAD || c->st == C_BODY)
		conn_lost(c, "the response stalled");
	conn_trim(c);
	remote_leave(r);
}

/* The addresses of the URL's host: numeric at once, or the resolver. */
int
remote_resolve(struct remote *r, struct buf *err)
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

