/*
 * http_carry.c: layer 7, the transport (struct session_io) of an HTTP
 * client's session (http_host.c): what the session writes for its
 * client, carried line by line to the connection it belongs to.
 *
 * hcarry_flush takes each line of the session's queue and sends it
 * where it belongs: an answer to the POST of its id, as JSON when
 * nothing went before it, else as the last event of that POST's stream;
 * progress to the POST of its token; log messages and server requests to
 * the latest POST still open (a call is in flight there); the rest (list
 * changes) to the GET stream (without one, a list change is kept for it,
 * once; nothing else).  Only a session that can hear is given a log
 * message at all (hsess_hear, SESSION_HEARING).  A line goes to its
 * connection even when that one's client is behind: the session's
 * queue never holds the servers back (they serve every session, and one
 * client that does not read would hold up all the others); the client's
 * connection is closed instead once its queue passes its hard limit.
 */
#include <stdlib.h>
#include <string.h>

#include "workbench.h"
#include "http_host_int.h"
#include "mcp.h"

#define PARKED_MAX	1024		/* Stateless ones kept for a retry. */
#define LIST_CHANGED_MAX 128		/* A list change kept for a GET, */
#define BACKLOG_MAX	(4 * LIST_CHANGED_MAX)	/* all of them. */

static struct json cj;			/* A line being carried. */

static bool
raw_equal(const char *a, size_t an, const char *b, size_t bn)
{
	return a != NULL && b != NULL && an == bn && memcmp(a, b, an) == 0;
}

/* The POST an answer of id answers; a null id, the one dispatched. */
struct hpost *
hpost_by_id(struct hsess *hs, const char *id, size_t n)
{
	struct hpost *po;

	if (id == NULL || (n == 4 && memcmp(id, "null", 4) == 0))
		return hs->cur;
	for (po = hs->posts; po != NULL; po = po->next)
		if (raw_equal(po->id, po->idlen, id, n))
			return po;
	return NULL;
}

/* The POST of a progress notification's token, or NULL. */
static struct hpost *
post_by_token(struct hsess *hs, const char *line, size_t n)
{
	struct hpost *po = NULL;
	const char *tok;
	size_t len;
	int params;

	if (json_parse(&cj, line, n) != JSON_OK)
		return NULL;
	params = json_get(&cj, 0, "params");
	if ((tok = hraw_of(&cj, json_get(&cj, params, "progressToken"),
	    &len)) != NULL)
		for (po = hs->posts; po != NULL; po = po->next)
			if (raw_equal(po->token, po->toklen, tok, len))
				break;
	json_release(&cj);
	return po;
}

/* The latest POST whose client takes a stream, or NULL. */
static struct hpost *
post_latest(struct hsess *hs)
{
	struct hpost *po, *last = NULL;

	for (po = hs->posts; po != NULL; po = po->next)
		if (po->sse && po->held.len == 0 && po->conn != NULL)
			last = po;
	return last;
}

/*
 * Can the session's client hear a message that answers nothing now: a
 * GET stream, or a POST whose client takes a stream?  The fan-outs (log
 * messages) skip the others, which then cost nothing and keep nothing.
 */
void
hsess_hear(struct hsess *hs)
{
	session_hear(hs->se, !hs->ending && (hs->get != NULL ||
	    post_latest(hs) != NULL));
}

static bool
method_is(const struct rpc_top *top, const char *m)
{
	size_t n = strlen(m);

	return strncmp(top->method, "\"", 1) == 0 &&
	    strncmp(top->method + 1, m, n) == 0 && top->method[n + 1] == '"';
}

/*
 * Where a message that answers nothing goes: progress to its POST; a log
 * message or a server request to the POST of the call in flight (the
 * latest one); a stateless session's everything to its one POST; the
 * rest to the GET stream (NULL).  *drop when it goes nowhere.
 */
static struct hpost *
post_for(struct hsess *hs, const char *line, size_t n,
    const struct rpc_top *top, bool *drop)
{
	struct hpost *po;

	*drop = false;
	if (method_is(top, MCP_NOTE_PROGRESS)) {
		po = post_by_token(hs, line, n);
		*drop = po == NULL || !po->sse || po->conn == NULL;
		return po;
	}
	if (hs->sid[0] == '\0') {
		po = hs->posts;
		*drop = po == NULL || !po->sse || po->conn == NULL;
		return po;
	}
	if (top->id != NULL || method_is(top, MCP_NOTE_MESSAGE))
		return post_latest(hs);
	return NULL;
}

/* A stateless answer that asks for input: its state keeps the session. */
static void
keep_state(struct hsess *hs, const char *line, size_t n)
{
	const char *st;
	size_t len;
	int v;

	if (hs->sid[0] != '\0' || memmem(line, n, "\"input_required\"",
	    16) == NULL || json_parse(&cj, line, n) != JSON_OK)
		return;
	v = json_get(&cj, json_get(&cj, 0, "result"), "requestState");
	if (json_is(&cj, v, JSMN_STRING) && (hs->state != NULL ||
	    hsess_room(false, PARKED_MAX)) && (st = hraw_of(&cj, v,
	    &len)) != NULL) {
		free(hs->state);
		hs->state = xstrndup(st, len);
		hs->statelen = len;
	}
	json_release(&cj);
}

static void
post_answer(struct hsess *hs, struct hpost *po, const char *line, size_t n)
{
	keep_state(hs, line, n);
	if (po->conn == NULL)
		;
	else if (!po->streaming)
		http_respond(po->conn, 200, "application/json", line, n);
	else if (http_stream_event(po->conn, NULL, line, n) == 0)
		http_stream_end(po->conn);
	hpost_free(hs, po);
}

static void
post_event(struct hsess *hs, struct hpost *po, const char *line, size_t n)
{
	if (po->conn == NULL)
		return;
	if ((!po->streaming && http_stream_begin(po->conn) != 0) ||
	    http_stream_event(po->conn, NULL, line, n) != 0) {
		hpost_gone(hs, po);
		return;
	}
	po->streaming = true;
}

/*
 * Whether a line for a GET stream not open is kept for it: a list change
 * the workbench wrote (the method itself, not a server's text that says
 * "/list_changed" somewhere), once each.
 */
static bool
keeps(const char *line, size_t n)
{
	static const char *const kept[] = { MCP_NOTE_TOOLS_CHANGED,
	    MCP_NOTE_PROMPTS_CHANGED, MCP_NOTE_RESOURCES_CHANGED, NULL };
	struct rpc_top top;
	int i;

	if (n > LIST_CHANGED_MAX || rpc_scan(line, n, &top) != 0 ||
	    top.method == NULL || top.id != NULL)
		return false;
	for (i = 0; kept[i] != NULL; i++)
		if (method_is(&top, kept[i]))
			return true;
	return false;
}

/*
 * A line for the GET stream.  Without one, a session keeps only the list
 * changes, once each (a GET about to open, as an SDK client's is just
 * after initialize, learns of them): a session that cannot receive keeps
 * no backlog, whatever its servers say and however many sessions there
 * are.
 */
void
hsess_to_get(struct hsess *hs, const char *line, size_t n)
{
	if (hs->get != NULL) {
		if (http_stream_event(hs->get, NULL, line, n) < 0) {
			hs->get = NULL;
			hsess_hear(hs);
		}
		return;
	}
	if (!keeps(line, n) || hs->backlog.len + n + 1 > BACKLOG_MAX ||
	    (hs->backlog.len > 0 && memmem(hs->backlog.data,
	    hs->backlog.len, line, n) != NULL))
		return;
	buf_put(&hs->backlog, line, n);
	buf_putc(&hs->backlog, '\n');
}

/*
 * Carry one line to its connection, whatever that connection holds: a
 * client that does not read must not hold up the others, as it would if
 * its lines stayed in the session's queue (the servers, which serve every
 * session, are not read while a session's queue is full).  Its own
 * connection's queue is bounded instead (http_stream_event: past
 * maxMessageBytes and 1 MiB it is closed, its request cancelled).
 */
static void
carry_line(struct hsess *hs, const char *line, size_t n)
{
	struct rpc_top top;
	struct hpost *po;
	bool drop;

	/* A result cut short: its call's error follows, under its id. */
	if (rpc_scan(line, n, &top) != 0)
		return;
	if (top.method == NULL) {
		if ((po = hpost_by_id(hs, top.id, top.idlen)) != NULL)
			post_answer(hs, po, line, n);
		return;
	}
	po = post_for(hs, line, n, &top, &drop);
	if (drop)
		return;
	if (po != NULL)
		post_event(hs, po, line, n);
	else
		hsess_to_get(hs, line, n);
}

/*
 * The session's transport: every whole line of its queue is carried; a
 * line begun is set aside whole (a large result is bounded by
 * maxMessageBytes), so that the queue drains and the servers are read.
 */
int
hcarry_flush(struct session *se)
{
	struct hsess *hs = session_carrier(se);
	struct peer *p = session_peer(se);
	char *line, *nl;
	size_t n;

	while (p->outoff < p->out.len) {
		line = p->out.data + p->outoff;
		n = p->out.len - p->outoff;
		if ((nl = memchr(line, '\n', n)) == NULL) {
			/* Taken too: the queue is emptied below. */
			buf_put(&hs->part, line, n);
			break;
		}
		n = (size_t)(nl - line);
		if (hs->part.len > 0) {
			buf_put(&hs->part, line, n);
			carry_line(hs, hs->part.data, hs->part.len);
			/* A large result's room is not kept for the next. */
			hs->part.len = 0;
			if (hs->part.cap > LINE_KEEP)
				buf_free(&hs->part);
		} else
			carry_line(hs, line, n);
		p->outoff += n + 1;
	}
	p->out.len = p->outoff = 0;
	return 0;
}

/*
 * An HTTP client leaves by DELETE or by its session's expiry, never by
 * its queue: hcarry_flush takes every line.
 */
static void
carry_left(struct session *se, bool gone)
{
	(void)se;
	(void)gone;
}

const struct session_io hcarry_io = { "http", hcarry_flush, NULL,
    carry_left, NULL };

/* The loop's end: what carrying kept goes. */
void
hcarry_end(void)
{
	json_release(&cj);
}
