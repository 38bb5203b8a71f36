/*
 * stream.c: cut-through of large results.  A call's result that passes
 * STREAM_MIN before its newline is passed on as it arrives, checked as it
 * goes (jstream), instead of being held whole: a large result then costs
 * the client no extra wait and us no more memory than what the client has
 * not read yet.  The client's queue belongs to the stream until the line
 * ends (pace_own, pace.c); whatever else is for the client waits
 * behind it.  Should the result break off after part of it went out,
 * the client's line is ended where it is (one line the client cannot
 * parse) and the call fails.
 */
#include <stdlib.h>
#include <string.h>

#include "server_int.h"

/* A stream without a byte, or keeping others waiting, this long fails. */
#define STREAM_STALL_MS	5000

/*
 * The one result passed on as it arrives: only one at a time, since it
 * owns the client's queue until its line ends.
 */
static struct stream {
	struct jstream	 check;
	long long	 rid;		/* Our id, when it came first. */
	char		*cid;		/* The client's id for it, raw. */
	size_t		 cidlen;
	size_t		 total;		/* Bytes of the line passed on. */
	bool		 done;		/* The result's value is complete. */
	bool		 v2;		/* "jsonrpc":"2.0" came before it. */
	long long	 last_at;	/* When bytes last came. */
	long long	 held_at;	/* Since when others wait, or 0. */
	struct session	*sess;		/* Whose queue it owns. */
} st;
static struct server *streaming;	/* Whose result it is, or NULL. */

/* The line ended, or was cut: what was held goes to the client. */
static void
stream_finish(void)
{
	struct session *se = st.sess;

	free(st.cid);
	jstream_free(&st.check);
	memset(&st, 0, sizeof(st));
	jstream_init(&st.check, 0);
	streaming = NULL;
	pace_release(se);
}

/*
 * End a stream that broke off: the client's line ends where it is and the
 * rest of the server's is dropped.  Returns its call's index, or -1 when
 * the id was to come after the result: then nothing says which call it
 * was, and that call waits for its timeout or its server's failure.
 */
static int
stream_cut(struct server *s, const char *why)
{
	int i;

	buf_putc(pace_queue(st.sess), '\n');
	peer_skip_line(&s->proc.io);
	wb_log_error("%s: a result being passed on broke off after %zu "
	    "bytes: %s", s->label, st.total, why);
	i = st.rid > 0 ? req_find(s, st.rid) : -1;
	stream_finish();
	return i;
}

/* The same, and its call, if known, fails with why. */
void
stream_abort(struct server *s, const char *why)
{
	struct buf t = { 0 };
	int i;

	if (streaming != s || (i = stream_cut(s, why)) < 0)
		return;
	buf_printf(&t, "its result broke off after part of it was passed on "
	    "(%s)", why);
	call_error(s, &s->req[i], buf_cstr(&t));
	buf_free(&t);
	req_remove(s, i);
}

/*
 * Pass text[from, to) on, the end moved back to a whole UTF-8 character;
 * invalid bytes become U+FFFD.  Returns the new end: what the peer may
 * drop, the stream's check position moving with it.
 */
static size_t
stream_pass(const char *text, size_t from, size_t to)
{
	to = from + utf8_whole(text + from, to - from);
	if (utf8_valid(text + from, to - from))
		buf_put(pace_queue(st.sess), text + from, to - from);
	else
		utf8_repair(pace_queue(st.sess), text + from, to - from);
	st.check.pos -= to;
	st.total += to;
	st.last_at = now_ms();
	return to;
}

/*
 * With the id after the result, is this surely a call's answer, and
 * whose?  Only when all the server has in progress are calls, of one
 * session: an initialize or a tools/list page must be read whole, and
 * the answer's session known before its id comes.
 */
static struct session *
stream_may_answer_call(const struct server *s)
{
	struct session *se = NULL;
	int i;

	if (s->state != SRV_READY || s->nghosts > 0 ||
	    s->ghosts_lost)
		return NULL;
	for (i = 0; i < s->nreq; i++) {
		if (!s->req[i].sent)
			continue;
		/* Some results are read whole (call_reads_whole). */
		if (!req_for_client(&s->req[i]) ||
		    call_reads_whole(s, &s->req[i]) ||
		    (se != NULL && s->req[i].sess != se))
			return NULL;
		se = s->req[i].sess;
	}
	return se;
}

/*
 * The session a result whose head is top goes to: its call's (in *k, its
 * id in *v), or with the id to come the one that may be answered (*k
 * stays -1).  NULL when none, or when its queue is owned already.
 */
static struct session *
stream_target(struct server *s, const struct rpc_top *top, long long *v,
    int *k)
{
	struct session *se;

	if (top->id == NULL)
		se = stream_may_answer_call(s);
	else if (!rpc_int_id(top->id, top->idlen, v) ||
	    (*k = req_find(s, *v)) < 0 || !req_for_client(&s->req[*k]) ||
	    !s->req[*k].sent || call_reads_whole(s, &s->req[*k]))
		return NULL;
	else
		se = s->req[*k].sess;
	return se != NULL && !pace_owned(se) ? se : NULL;
}

/*
 * Should this line be streamed?  It must be an answer with "result" and,
 * before that, at most jsonrpc, an id of a call we sent and other members.
 * Then the start of the line goes out, the id replaced by the client's.
 */
static size_t
stream_start(struct server *s, const char *text, size_t n)
{
	struct rpc_top top = { 0 };
	struct session *se;
	size_t i = 0;
	long long v = 0;
	int k = -1, r;

	while (i < n && json_space(text[i]))
		i++;
	if (i >= n || text[i] != '{' ||
	    rpc_members(text, n, i + 1, true, true, &top) != 1 ||
	    top.method != NULL || top.error || text[top.at] != '{' ||
	    top.jsonrpc != top.v2)
		return PEER_NOSTREAM;
	if ((se = stream_target(s, &top, &v, &k)) == NULL)
		return PEER_NOSTREAM;
	if (!utf8_valid(text, top.at))
		return PEER_NOSTREAM;	/* Whole, it is repaired. */
	jstream_init(&st.check, top.at);
	if ((r = jstream_feed(&st.check, text, n)) == JSON_SYNTAX) {
		jstream_free(&st.check);
		return PEER_NOSTREAM;
	}
	st.done = r == JSON_OK;
	st.v2 = top.v2;
	streaming = s;
	st.sess = se;
	pace_own(se);
	if (k >= 0) {
		call_debug(s, &s->req[k], false, "a large result, passed on "
		    "as it comes");
		st.rid = v;
		st.cid = xstrndup(text_get(&s->req[k].cid),
		    s->req[k].cid.len);
		st.cidlen = s->req[k].cid.len;
		rpc_splice(pace_queue(st.sess), text, top.at, top.id, top.idlen,
		    st.cid, st.cidlen);
	} else
		buf_put(pace_queue(st.sess), text, top.at);
	st.total = 0;
	return stream_pass(text, top.at, st.check.pos);
}

/* More of the result: pass on what is checked, up to the result's end. */
static size_t
stream_more(struct server *s, const char *text, size_t n)
{
	long long now = now_ms();
	int i, r = JSON_OK;

	if (!st.done && (r = jstream_feed(&st.check, text, n)) ==
	    JSON_SYNTAX) {
		stream_abort(s, "it is not valid JSON");
		return PEER_DISCARD;
	}
	st.done = r == JSON_OK;
	/* It is working: on this call, or, with the id to come, one of them. */
	if (st.rid > 0 && (i = req_find(s, st.rid)) >= 0)
		call_arm(s, &s->req[i], now);
	else if (st.rid == 0)
		for (i = 0; i < s->nreq; i++)
			if (s->req[i].sent)
				call_arm(s, &s->req[i], now);
	return stream_pass(text, 0, st.check.pos);
}

/*
 * The id came after the result: the call it names, in progress or over
 * while the result passed (a ghost, forgotten here).  Its client id goes
 * in; returns the call's index, -1 for a ghost, or -2 for no call.
 */
static int
end_with_id(struct server *s, const struct rpc_top *top, const char *text,
    size_t n)
{
	const struct text *cid;
	long long v;
	int i, g = -1;

	if (!rpc_int_id(top->id, top->idlen, &v))
		v = 0;
	if ((i = req_find(s, v)) >= 0 && req_for_client(&s->req[i]))
		cid = &s->req[i].cid;
	else if ((g = ghost_find(s, v)) >= 0)
		cid = &s->ghosts[g].cid;
	else
		return -2;
	rpc_splice(pace_queue(st.sess), text, n, top->id, top->idlen,
	    text_get(cid), cid->len);
	if (g >= 0)
		ghost_remove(s, g);
	return g >= 0 ? -1 : i;
}

/*
 * The end of the line: the members after the result, which must close
 * the object; an id there says which call it was.
 */
static size_t
stream_end(struct server *s, const char *text, size_t n)
{
	struct rpc_top top = { 0 };
	size_t at;
	int i;

	if (n > 0 && text[n - 1] == '\r')
		n--;
	st.check.last = true;
	if ((at = stream_more(s, text, n)) == PEER_DISCARD)
		return PEER_DISCARD;
	/* "jsonrpc":"2.0" and the id each once: before the result or after. */
	if (!st.done || rpc_members(text + at, n - at, 0, false, false,
	    &top) != 0 || top.result || top.method != NULL || top.error ||
	    !utf8_valid(text + at, n - at) || top.jsonrpc == st.v2 ||
	    top.jsonrpc != top.v2 ||
	    (top.id != NULL) == (st.cid != NULL)) {
		stream_abort(s, "its end is not that of an answer");
		return PEER_DISCARD;
	}
	if (top.id == NULL) {
		buf_put(pace_queue(st.sess), text + at, n - at);
		i = req_find(s, st.rid);
	} else if ((i = end_with_id(s, &top, text + at, n - at)) == -2) {
		(void)stream_cut(s, "it answers no call in progress");
		return PEER_DISCARD;
	}
	buf_putc(pace_queue(st.sess), '\n');
	if (i >= 0 && top.id != NULL)	/* Said at its start otherwise. */
		call_debug(s, &s->req[i], false, "a large result, passed on "
		    "as it came");
	if (i >= 0)
		req_remove(s, i);
	stream_finish();
	return n;
}

/*
 * Past maxMessageBytes: the client's line ends here and the rest of the
 * server's is counted and dropped, as a line too long always is, so the
 * call fails (srv_oversize) naming the size once its end is known.
 */
static void
stream_oversize(struct server *s)
{
	struct buf id = { 0 };

	buf_putc(pace_queue(st.sess), '\n');
	if (st.rid > 0)
		buf_put_int(&id, st.rid);
	peer_overlong(&s->proc.io, st.total, id.len > 0 ?
	    buf_cstr(&id) : NULL);
	buf_free(&id);
	stream_finish();
}

/* A server's line offered as it arrives (peer_ops.stream). */
size_t
stream_feed(void *ctx, char *text, size_t n, bool end)
{
	struct server *s = ctx;

	if (streaming != s)
		return stream_start(s, text, n);
	if (st.total + n > wb.cfg.max_message) {
		stream_oversize(s);
		return 0;
	}
	return end ? stream_end(s, text, n) : stream_more(s, text, n);
}

/*
 * A stream must keep moving, and must not keep the client's other
 * messages waiting long: STREAM_STALL_MS without a byte of it, or with
 * others held back, ends it.  Neither clock runs while the client is the
 * slow one.
 */
void
stream_check(struct server *s, long long now)
{
	struct buf why = { 0 };

	if (streaming != s)
		return;
	if (session_queued(st.sess) > HIGH_WATER) {
		st.last_at = now;
		st.held_at = 0;
		return;
	}
	if (pace_held_bytes(st.sess) == 0)
		st.held_at = 0;
	else if (st.held_at == 0)
		st.held_at = now;
	if (now >= st.last_at + STREAM_STALL_MS)
		buf_printf(&why, "no more of it came for %d ms",
		    STREAM_STALL_MS);
	else if (st.held_at > 0 && now >= st.held_at + STREAM_STALL_MS)
		buf_printf(&why, "it kept the client's other messages waiting "
		    "for %d ms", STREAM_STALL_MS);
	else
		return;
	stream_abort(s, buf_cstr(&why));
	buf_free(&why);
}

/* Its deadline: a stall of either clock, or 0. */
long long
stream_deadline(const struct server *s)
{
	long long t;

	if (streaming != s)
		return 0;
	t = st.last_at + STREAM_STALL_MS;
	if (st.held_at > 0 && st.held_at + STREAM_STALL_MS < t)
		t = st.held_at + STREAM_STALL_MS;
	return t;
}

/* The server's output ended: the call fails with it, its exit says why. */
void
stream_output_ended(struct server *s)
{
	if (streaming == s)
		(void)stream_cut(s, "its output ended before the result did");
}

bool
stream_of(const struct server *s)
{
	return streaming == s;
}

/* The server whose answer streams, or NULL. */
struct server *
stream_server(void)
{
	return streaming;
}

/* Is the stream the answer to this call (its id came first)? */
bool
stream_of_call(const struct server *s, long long id)
{
	return streaming == s && st.rid == id;
}

/*
 * A session is gone while its result streams: the server's line is
 * dropped, and the call with it (call_session_gone).
 */
void
stream_session_gone(const struct session *se)
{
	struct server *s = streaming;

	if (s == NULL || st.sess != se)
		return;
	peer_skip_line(&s->proc.io);
	stream_finish();
}
