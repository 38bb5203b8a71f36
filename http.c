/*
 * http.c: Streamable HTTP's framing, from the listening socket to the
 * bytes of each answer, run from the loop's one poll() like the peers.
 *
 * Limits (http_config; 0 takes the default), each tested:
 *
 *	what				default		past it
 *	request line + fields		16 KiB		431, closed
 *	field lines			64		431, closed
 *	a chunk-size line		256 B		400, closed
 *	body (maxMessageBytes)		16 MiB		413, closed; sent before
 *							the body when
 *							Content-Length says so
 *	one request, first byte to last	10 s		408, closed
 *	keep-alive between requests	60 s		closed
 *	first request after accept	10 s		closed
 *	output that does not move	30 s		closed
 *	connections (maxConnections)	64		the one idle longest
 *							closed; none idle: not
 *							accepted until one ends
 *							(the kernel's backlog)
 *	reading after a last answer	2 s		closed (lingering close)
 *	a stream's queue		1 MiB		http_full(); drained()
 *							after
 *	  hard				body + 1 MiB	closed
 *
 * What a connection holds when idle: its struct (776 bytes on x86-64), no
 * buffer; input and output are freed once a request is answered.
 *
 * Protocol notes.
 * - HTTP/1.1 and 1.0.  1.1 keeps the connection unless "Connection:
 *   close"; 1.0 is always closed after its answer.  Requests are taken
 *   one at a time: a pipelined request waits in the buffer until the one
 *   before has been answered and written.
 * - Bodies: Content-Length, or Transfer-Encoding: chunked (RFC 9112
 *   requires a server to read it; node's fetch and the SDKs send
 *   Content-Length, curl and Go send chunked for a streamed body).  A
 *   POST with neither is a 411.  Expect: 100-continue is answered with a
 *   100 once the head has passed every check (a body too large gets its
 *   413 instead); another expectation is a 417.
 * - Every refusal of the layer closes the connection after its answer
 *   (its framing, or its client, is not to be trusted further) and then
 *   reads for 2 s what the client still sends, so that its answer is not
 *   lost to a reset.  The MCP layer's own answers (404 for an unknown
 *   session, 400, 202) keep the connection.
 * - A stream is "200 text/event-stream", chunked over 1.1 (the
 *   connection is kept after the stream's end), ended by closing over
 *   1.0.  An event is "event: message", "id:" when given, "data:" and one
 *   JSON line; each event is one chunk, written as it comes (TCP_NODELAY).
 * - A client that leaves while its request is being answered (its end of
 *   the connection closed: POLLRDHUP) is reported to the MCP layer by
 *   closed(): in 2026-07-28 that is the request's cancellation.  A client
 *   that half-closes after its request is taken as gone.
 *
 * Backpressure: each stream has its queue.  Above the high mark
 * http_full() says so, and drained() says when the queue is back below the
 * low mark, for a caller whose producers serve that connection alone.  The
 * MCP layer does not wait on them: its servers serve every session, and a
 * client that does not read must not hold up the others.  A queue that
 * passes the hard limit closes that connection only: its events are lost
 * (a 2025 client reconnects its GET stream), no other connection waits for
 * it.
 *
 * How the MCP layer uses it.  request() hands over a request that passed
 * http_check().  A POST of a notification or a response: 202
 * (http_respond with no body).  A POST of a request whose answer comes
 * alone: http_respond(200, application/json).  One whose answer brings
 * progress, log messages or server requests first: http_stream_begin,
 * an http_stream_event per message, the answer last, http_stream_end.
 * A GET (2025-11-25): the session's long-lived stream of server messages,
 * begun at once and ended when the session ends.  Session ids, the
 * protocol version header and the JSON-RPC checks are the MCP layer's.
 *
 * A connection is closed at once (its descriptor) but freed only in
 * http_prepare, at the start of the next turn: a handler that closes its
 * own connection, or another one, leaves every pointer of this turn valid.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util.h"
#include "jsonrpc.h"
#include "http.h"
#include "http_int.h"

static void	conn_flush(struct http_conn *);

/*
 * Listen on a with the limits of cfg (its strings must outlive the
 * server).  A listener that is not on loopback needs a token: without one
 * anyone who reaches the port could run the toolboxes' servers.
 */
struct http_server *
http_start(const struct http_config *cfg, const struct http_addr *a,
    const struct http_ops *ops, void *ctx, struct buf *err)
{
	struct http_server *s;
	int fd, port;

	if (!a->loopback && (cfg->token == NULL || cfg->token[0] == '\0')) {
		buf_printf(err, "%s is not a loopback address: listening there "
		    "needs a token.  Set \"httpToken\": \"${MCP_WORKBENCH_TOKEN}\" "
		    "in the configuration and export MCP_WORKBENCH_TOKEN (a long "
		    "random string); clients send it as "
		    "'Authorization: Bearer TOKEN'", a->text);
		return NULL;
	}
	if ((fd = http_listen_open(a, &port, err)) < 0)
		return NULL;
	s = xcalloc(1, sizeof(*s));
	s->cfg = *cfg;
	if (s->cfg.max_body == 0)
		s->cfg.max_body = DEF_MAX_BODY;
	if (s->cfg.max_conns <= 0)
		s->cfg.max_conns = DEF_MAX_CONNS;
	if (s->cfg.request_ms <= 0)
		s->cfg.request_ms = DEF_REQUEST_MS;
	if (s->cfg.idle_ms <= 0)
		s->cfg.idle_ms = DEF_IDLE_MS;
	if (s->cfg.send_ms <= 0)
		s->cfg.send_ms = DEF_SEND_MS;
	if (s->cfg.linger_ms <= 0)
		s->cfg.linger_ms = DEF_LINGER_MS;
	if (s->cfg.out_limit == 0)
		s->cfg.out_limit = s->cfg.max_body + OUT_HIGH;
	if (s->cfg.path == NULL)
		s->cfg.path = "/mcp";
	s->ops = ops;
	s->ctx = ctx;
	s->fd = fd;
	s->port = port;
	return s;
}

int
http_port(const struct http_server *s)
{
	return s->port;
}

int
http_nconns(const struct http_server *s)
{
	return s->live;
}

/*
 * Connections.
 */
static struct http_conn *
conn_new(struct http_server *s, int fd)
{
	struct http_conn *c;
	int one = 1;

	/* Answers are written whole; an event must not wait for an ack. */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (s->n == s->cap) {
		s->cap = s->cap == 0 ? 16 : 2 * s->cap;
		s->conns = xrealloc(s->conns, (size_t)s->cap *
		    sizeof(*s->conns));
	}
	c = xcalloc(1, sizeof(*c));
	c->srv = s;
	c->fd = fd;
	c->keep = true;
	c->deadline = loop_ms() + s->cfg.request_ms;
	http_parser_reset(&c->p);
	s->conns[s->n++] = c;
	s->live++;
	return c;
}

/* Between requests or not: the idle ones are counted, to make room. */
static void
set_idle(struct http_conn *c, bool idle)
{
	if (c->idle != idle)
		c->srv->idle += idle ? 1 : -1;
	c->idle = idle;
}

/* Close now, free in http_prepare. */
void
http_conn_kill(struct http_conn *c)
{
	if (c->dead)
		return;
	close(c->fd);
	c->fd = -1;
	c->dead = true;
	set_idle(c, false);
	c->srv->live--;
}

/* The connection broke; the MCP layer hears of it if it held it. */
static void
conn_fail(struct http_conn *c)
{
	bool held = c->st == C_BUSY || c->st == C_STREAM;

	if (c->dead)
		return;
	http_conn_kill(c);
	if (held && c->srv->ops->closed != NULL)
		c->srv->ops->closed(c->srv->ctx, c);
}

static void
conn_free(struct http_conn *c)
{
	buf_free(&c->in);
	buf_free(&c->out);
	buf_free(&c->hdrs);
	free(c);
}

static size_t
in_cap(const struct http_server *s)
{
	return 2 * HTTP_HEAD_MAX + s->cfg.max_body + READ_CHUNK;
}

size_t
http_queued(const struct http_conn *c)
{
	return c->out.len - c->outoff;
}

bool
http_full(const struct http_conn *c)
{
	return c->dead || http_queued(c) > OUT_HIGH;
}

void *
http_data(const struct http_conn *c)
{
	return c->data;
}

void
http_set_data(struct http_conn *c, void *data)
{
	c->data = data;
}

/*
 * Input: a request's bytes, checked as they come.
 */

/* The head has come: the rules, then 100-continue if asked. */
static int
head_done(struct http_conn *c)
{
	struct http_server *s = c->srv;
	struct http_request r;
	int status;

	http_request_of(&c->p, c->in.data, &r);
	/* A listed origin's page reads every answer, refusals too. */
	c->cors = http_origin_listed(&r.h[HTTP_H_ORIGIN], s->cfg.origins);
	if ((status = http_check(&r, &s->cfg)) != 0) {
		http_refuse(c, status);
		return -1;
	}
	if (c->p.expect && c->in.len == c->p.headlen &&
	    (c->p.chunked || c->p.length > 0)) {
		c->moved = loop_ms();
		buf_puts(&c->out, "HTTP/1.1 100 Continue\r\n\r\n");
	}
	return 0;
}

/* The whole request goes up; nothing more is read until it is answered. */
static void
deliver(struct http_conn *c)
{
	struct http_request r;

	c->st = C_BUSY;
	c->keep = c->keep && c->p.keep_alive;
	if (c->p.method == HTTP_OPTIONS) {
		http_preflight(c);
		return;
	}
	http_request_of(&c->p, c->in.data, &r);
	c->srv->ops->request(c->srv->ctx, c, &r);
}

static void
conn_parse(struct http_conn *c)
{
	int r;

	for (;;) {
		r = http_parse(&c->p, c->in.data, &c->in.len,
		    c->srv->cfg.max_body);
		if (r == HTTP_MORE)
			return;
		if (r == HTTP_HEADER) {
			if (head_done(c) != 0)
				return;
			continue;
		}
		if (r == HTTP_DONE)
			deliver(c);
		else
			http_refuse(c, r);
		return;
	}
}

static void
conn_read(struct http_conn *c)
{
	size_t room, cap = in_cap(c->srv);
	ssize_t n;
	int reads;

	if (c->in.len >= cap) {
		/*
		 * Cannot happen: a request that fits the caps fits the buffer
		 * (the parser cuts a chunked body's framing out as it goes).
		 * Were it to, polling a buffer that takes nothing would spin.
		 */
		http_refuse(c, 413);
		return;
	}
	for (reads = 0; reads < 4 && c->in.len < cap; reads++) {
		/* A small first read: most requests are small. */
		room = c->in.cap == 0 ? READ_FIRST : READ_CHUNK;
		if (room > cap - c->in.len)
			room = cap - c->in.len;
		buf_reserve(&c->in, room);
		n = read(c->fd, c->in.data + c->in.len, room);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n <= 0) {
			/* Gone, between requests or in the middle of one. */
			conn_fail(c);
			return;
		}
		if (c->idle) {
			set_idle(c, false);
			c->deadline = loop_ms() + c->srv->cfg.request_ms;
		}
		c->in.len += (size_t)n;
		if ((size_t)n < room)
			break;
	}
	conn_parse(c);
}

/* Read and drop until the client has seen our last answer and closed. */
static void
linger_read(struct http_conn *c)
{
	char sink[4096];
	ssize_t n;
	int reads;

	for (reads = 0; reads < 16; reads++) {
		n = read(c->fd, sink, sizeof(sink));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0)
			break;
	}
	if (reads < 16)
		http_conn_kill(c);
}

static void
begin_linger(struct http_conn *c)
{
	(void)shutdown(c->fd, SHUT_WR);
	c->st = C_LINGER;
	c->deadline = loop_ms() + c->srv->cfg.linger_ms;
	buf_free(&c->in);
	buf_free(&c->out);
	c->outoff = 0;
}

/* An answer is written whole: the next request, or the end. */
static void
answered(struct http_conn *c)
{
	size_t used = c->p.headlen + c->p.raw;

	if (!c->keep) {
		begin_linger(c);
		return;
	}
	buf_consume(&c->in, used);
	http_parser_reset(&c->p);
	c->st = C_READ;
	c->chunked = false;
	c->data = NULL;
	c->cors = NULL;
	c->deadline = loop_ms();
	if (c->in.len > 0) {
		c->again = true;
		set_idle(c, false);
		c->deadline += c->srv->cfg.request_ms;
	} else {
		buf_free(&c->in);
		set_idle(c, true);
		c->deadline += c->srv->cfg.idle_ms;
	}
}

static void
conn_flush(struct http_conn *c)
{
	struct http_server *s = c->srv;
	ssize_t n;

	while (c->outoff < c->out.len) {
		n = send(c->fd, c->out.data + c->outoff, c->out.len - c->outoff,
		    MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n < 0) {
			conn_fail(c);
			return;
		}
		c->outoff += (size_t)n;
		c->moved = loop_ms();
	}
	if (c->outoff == c->out.len) {
		/* A quiet stream, like an idle connection, holds no buffer. */
		c->outoff = c->out.len = 0;
		buf_free(&c->out);
	} else if (c->outoff >= OUT_LOW) {
		buf_consume(&c->out, c->outoff);
		c->outoff = 0;
	}
	if (c->high && http_queued(c) < OUT_LOW) {
		c->high = false;
		if (s->ops->drained != NULL)
			s->ops->drained(s->ctx, c);
	}
	if (!c->dead && c->st == C_DONE && http_queued(c) == 0)
		answered(c);
}

/*
 * A loopback listener without a token serves the user who started it,
 * as the share socket does (SO_PEERCRED): a connection whose client
 * socket another uid owns, or whose owner cannot be found, is refused
 * (403), and never given a place another connection had to make.
 */
static bool
foreign(int fd)
{
	static unsigned long refused;
	uid_t uid;
	int r;

	if ((r = http_peer_uid(fd, &uid)) == 0 && uid == getuid())
		return false;
	if (refused++ % 1000 == 0)
		wb_log_warn("http: refused a connection of %s (%lu so far): "
		    "without httpToken only this user is served", r == 0 ?
		    "another user" : "an unknown user", refused);
	return true;
}

static void
refuse_foreign(struct http_conn *c)
{
	c->keep = false;
	http_respond_error(c, 403, RPC_SERVER_ERROR, "Forbidden: this listener "
	    "serves only the user who started it; set httpToken to serve "
	    "others");
}

/*
 * Accepting.  At max_conns the connection idle longest between requests
 * is closed to make room (its client opens another when it needs one);
 * with none idle, nothing is accepted until a connection ends: the
 * kernel's backlog holds the rest, so that a burst of well-behaved
 * clients (an SDK client opens a connection per call in flight) waits
 * rather than being refused, and memory stays bounded.  Out of
 * descriptors, the listener rests a while rather than wake the loop for
 * each failure.
 */
static struct http_conn *
idle_longest(const struct http_server *s)
{
	struct http_conn *c, *oldest = NULL;
	int i;

	for (i = 0; i < s->n; i++) {
		c = s->conns[i];
		if (!c->dead && c->idle && (oldest == NULL ||
		    c->deadline < oldest->deadline))
			oldest = c;
	}
	return oldest;
}

static void
srv_accept(struct http_server *s)
{
	struct http_conn *room = NULL;
	bool refuse;
	int i, fd;

	for (i = 0; i < 16; i++) {
		room = NULL;
		if (s->live >= s->cfg.max_conns &&
		    (room = idle_longest(s)) == NULL)
			return;
		fd = accept4(s->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EMFILE || errno == ENFILE ||
			    errno == ENOBUFS || errno == ENOMEM) {
				wb_log_error("http: cannot accept: %s; waiting "
				    "%d ms", strerror(errno), ACCEPT_PAUSE_MS);
				s->paused = loop_ms() + ACCEPT_PAUSE_MS;
			}
			return;
		}
		refuse = s->cfg.same_user && foreign(fd);
		/* No room is made for another user: closed, unanswered. */
		if (refuse && room != NULL) {
			close(fd);
			continue;
		}
		if (room != NULL)
			http_conn_kill(room);
		room = NULL;
		(void)conn_new(s, fd);
		if (refuse)
			refuse_foreign(s->conns[s->n - 1]);
	}
}

/*
 * The loop's steps.  http_prepare, before the descriptors are gathered:
 * free the connections closed during the last turn, and take up the
 * requests that waited in a buffer behind the one answered.
 */
void
http_prepare(struct http_server *s)
{
	struct http_conn *c;
	int i, j;

	for (i = j = 0; i < s->n; i++) {
		c = s->conns[i];
		if (!c->dead) {
			s->conns[j++] = c;
			continue;
		}
		conn_free(c);
	}
	s->n = j;
	for (i = 0; i < s->n; i++) {
		c = s->conns[i];
		if (c->again && !c->dead && c->st == C_READ) {
			c->again = false;
			conn_parse(c);
		}
	}
}

/* Write every queue that has something (the loop's flush step). */
void
http_flush(struct http_server *s)
{
	int i;

	for (i = 0; i < s->n; i++)
		if (!s->conns[i]->dead && http_queued(s->conns[i]) > 0)
			conn_flush(s->conns[i]);
}

/*
 * Each descriptor to poll, with its events and a tag for http_event.  A
 * connection whose request is with the MCP layer is not read (requests
 * are taken one at a time), but watched for its client leaving.
 */
void
http_watch(struct http_server *s, http_watch_fn *fn, void *arg)
{
	struct http_conn *c;
	short ev;
	int i;

	/* At the limit with none idle, the backlog holds new ones. */
	if (s->fd >= 0 && loop_ms() >= s->paused &&
	    (s->live < s->cfg.max_conns || s->idle > 0))
		fn(arg, s->fd, POLLIN, s);
	for (i = 0; i < s->n; i++) {
		c = s->conns[i];
		if (c->dead)
			continue;
		ev = 0;
		if (c->st == C_READ || c->st == C_LINGER)
			ev = POLLIN;
		else if (c->st == C_BUSY || c->st == C_STREAM)
			ev = POLLRDHUP;
		if (http_queued(c) > 0)
			ev |= POLLOUT;
		fn(arg, c->fd, ev, c);
	}
}

static long long
conn_deadline(const struct http_conn *c)
{
	long long t = -1;

	if (c->st == C_READ || c->st == C_LINGER)
		t = c->deadline;
	if (http_queued(c) > 0)
		t = earliest(t, c->moved + c->srv->cfg.send_ms);
	return t;
}

/*
 * The nearest deadline of the server, or -1.  A pipelined request that
 * waits in its buffer (answered() left it there) is due at once: only
 * http_prepare takes it up, and the poll before that must not sleep, or
 * the request would wait for another event, its own 408 at worst.
 */
long long
http_deadline(const struct http_server *s)
{
	const struct http_conn *c;
	long long t = -1;
	int i;

	if (s->paused > loop_ms())
		t = s->paused;
	for (i = 0; i < s->n; i++) {
		c = s->conns[i];
		if (!c->dead)
			t = earliest(t, c->again ? loop_ms() :
			    conn_deadline(c));
	}
	return t;
}

/* What poll said of a descriptor http_watch gave it. */
void
http_event(struct http_server *s, void *tag, int fd, short revents)
{
	struct http_conn *c = tag;

	if (tag == s) {
		srv_accept(s);
		return;
	}
	if (c->dead || c->fd != fd)
		return;
	if (revents & POLLOUT)
		conn_flush(c);
	if (c->dead)
		return;
	switch (c->st) {
	case C_READ:
		if (revents & (POLLIN | POLLHUP | POLLERR))
			conn_read(c);
		break;
	case C_LINGER:
		if (revents & (POLLIN | POLLHUP | POLLERR))
			linger_read(c);
		break;
	case C_BUSY:
	case C_STREAM:
		if (revents & (POLLRDHUP | POLLHUP | POLLERR))
			conn_fail(c);
		break;
	default:
		if (revents & (POLLHUP | POLLERR))
			conn_fail(c);
	}
}

/*
 * The timers.  A request that has not come whole in time is answered 408;
 * an idle connection, one that lingers, or one whose output has not moved
 * is closed.
 */
void
http_timeouts(struct http_server *s, long long now)
{
	struct http_conn *c;
	long long t;
	int i;

	for (i = 0; i < s->n; i++) {
		c = s->conns[i];
		if (c->dead || (t = conn_deadline(c)) < 0 || now < t)
			continue;
		if (http_queued(c) > 0 && now >= c->moved + s->cfg.send_ms)
			conn_fail(c);
		else if (c->st == C_READ && !c->idle && c->in.len > 0)
			http_refuse(c, 408);
		else
			http_conn_kill(c);
	}
}

/* Close everything, at the end: no upcall. */
void
http_stop(struct http_server *s)
{
	int i;

	if (s == NULL)
		return;
	for (i = 0; i < s->n; i++) {
		http_conn_kill(s->conns[i]);
		conn_free(s->conns[i]);
	}
	free(s->conns);
	if (s->fd >= 0)
		close(s->fd);
	free(s);
}

/*
 * Shutting down: no new connection (the listening socket closes at
 * once, so a client is refused rather than left waiting); the ones open
 * are answered and written.
 */
void
http_quiesce(struct http_server *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

/* Has every answer been written? */
bool
http_written(const struct http_server *s)
{
	int i;

	for (i = 0; i < s->n; i++)
		if (!s->conns[i]->dead && http_queued(s->conns[i]) > 0)
			return false;
	return true;
}
