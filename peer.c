/*
 * peer.c: non-blocking line I/O with one peer (the client, or a server).
 *
 * Input is read in chunks and every complete line is handed to the peer's
 * ops at once.  What happens to the line being read is the peer's input
 * mode, one at a time: whole lines; a line passed on as it arrives
 * (streamed); the rest of a line skipped; or a line too long, counted and
 * reported at its end.  Output is a queue of whole lines written as the
 * peer takes them.
 *
 * A handler may close its own peer (a server fails on a line it sent).
 * The close then waits until the handler returns: the input buffer the
 * handler reads from stays valid, and the reader stops there.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "peer.h"
#include "jsonrpc.h"

#define READ_CHUNK	(64 * 1024)

/* How a pass over the input stopped, or that it goes on. */
enum step {
	STEP_MORE,		/* Go on. */
	STEP_WAIT,		/* The rest of the input is incomplete. */
	STEP_HELD		/* ops->busy: lines wait in the buffer. */
};

/* One pass over a peer's input. */
struct reader {
	struct peer		*p;
	const struct peer_ops	*ops;
	void			*ctx;
	size_t			 max;
	size_t			 pos;		/* Handled input before this. */
	size_t			 pumped;	/* Where ops->pump last ran. */
};

/* Where the line at from ends (its newline), or NULL. */
static char *
line_end(const struct peer *p, size_t from)
{
	return memchr(p->in.data + from, '\n', p->in.len - from);
}

/* What has come of the line at pos: its length, and its newline or NULL. */
static size_t
line_part(const struct reader *r, char **nl)
{
	*nl = line_end(r->p, r->pos);
	return (*nl != NULL ? (size_t)(*nl - r->p->in.data) : r->p->in.len) -
	    r->pos;
}

/* Strip '\r' and a leading BOM, skip empty lines, hand over the rest. */
static void
peer_line(struct reader *r, char *line, size_t n)
{
	if (n > 0 && line[n - 1] == '\r')
		n--;
	if (n >= 3 && memcmp(line, "\xef\xbb\xbf", 3) == 0) {
		line += 3;
		n -= 3;
	}
	if (n > 0)
		r->ops->line(r->ctx, line, n);
}

/* Keep the last bytes of a line being dropped: its id may be there. */
static void
keep_tail(struct peer *p, const char *s, size_t n)
{
	size_t keep = sizeof(p->tail);

	if (n >= keep) {
		memcpy(p->tail, s + n - keep, keep);
		p->taillen = keep;
		return;
	}
	if (p->taillen + n > keep) {
		memmove(p->tail, p->tail + p->taillen + n - keep, keep - n);
		p->taillen = keep - n;
	}
	memcpy(p->tail + p->taillen, s, n);
	p->taillen += n;
}

/*
 * Begin dropping a line too long, of which s[0, n) has come: remember
 * its id if its start shows one.
 */
static void
drop_start(struct peer *p, const char *s, size_t n)
{
	const char *id;
	size_t idlen;

	free(p->dropped_id);
	p->dropped_id = NULL;
	p->taillen = 0;
	if (rpc_scan_id(s, n, &id, &idlen) == 0)
		p->dropped_id = xstrndup(id, idlen);
	keep_tail(p, s, n);
	p->dropped = n;
	p->mode = PEER_DROP;
}

/*
 * The end of a dropped line: report it, with the id from its start or,
 * as the TypeScript SDK writes it, from its end.
 */
static void
drop_end(struct reader *r)
{
	struct peer *p = r->p;
	const char *id;
	size_t idlen;

	if (p->dropped_id == NULL && rpc_scan_id_tail(p->tail, p->taillen,
	    &id, &idlen) == 0)
		p->dropped_id = xstrndup(id, idlen);
	p->mode = PEER_LINES;
	r->ops->oversize(r->ctx, p->dropped, p->dropped_id);
	free(p->dropped_id);
	p->dropped_id = NULL;
	p->dropped = 0;
	p->taillen = 0;
}

/* The next line ends at nl (or is not complete): the input goes on there. */
static enum step
line_done(struct reader *r, const char *nl)
{
	if (nl == NULL) {
		r->pos = r->p->in.len;
		return STEP_WAIT;
	}
	r->p->scanned = r->pos = (size_t)(nl - r->p->in.data) + 1;
	r->p->mode = PEER_LINES;
	return STEP_MORE;
}

static enum step
step_skip(struct reader *r)
{
	return line_done(r, line_end(r->p, r->pos));
}

/* Count a dropped line's bytes; at its end, report it. */
static enum step
step_drop(struct reader *r)
{
	struct peer *p = r->p;
	char *nl;
	size_t n = line_part(r, &nl);

	keep_tail(p, p->in.data + r->pos, n);
	p->dropped += n;
	if (nl != NULL)
		drop_end(r);
	return line_done(r, nl);
}

/*
 * Give a streamed line what has come of it: ops->stream takes what it
 * can pass on now, or declines the rest (skipped), or finds the line too
 * long (peer_overlong: dropped from here on).
 */
static enum step
step_stream(struct reader *r)
{
	struct peer *p = r->p;
	char *nl;
	size_t n = line_part(r, &nl);
	size_t took = r->ops->stream(r->ctx, p->in.data + r->pos, n,
	    nl != NULL);

	if (p->closed || p->mode == PEER_DROP)
		return STEP_MORE;
	if (took == PEER_DISCARD || took == PEER_NOSTREAM) {
		p->mode = PEER_SKIP;
		return step_skip(r);
	}
	if (nl != NULL)
		return line_done(r, nl);
	r->pos += took;
	return STEP_WAIT;
}

/* The next whole line, unless the reader is busy. */
static enum step
step_line(struct reader *r)
{
	struct peer *p = r->p;
	char *nl = line_end(p, p->scanned);
	size_t n;

	if (nl == NULL)
		return STEP_WAIT;
	if (r->ops->busy != NULL && r->ops->busy(r->ctx))
		return STEP_HELD;
	n = (size_t)(nl - p->in.data) - r->pos;
	if (n > r->max) {
		drop_start(p, p->in.data + r->pos, n);
		drop_end(r);
	} else
		peer_line(r, p->in.data + r->pos, n);
	if (p->gave) {
		/* The line went with the buffer: the rest is in a fresh one. */
		p->gave = false;
		p->mode = PEER_LINES;
		r->pos = r->pumped = p->scanned = 0;
		return STEP_MORE;
	}
	(void)line_done(r, nl);
	/* A long run of lines is no convoy: what they queued goes now. */
	if (r->ops->pump != NULL && r->pos - r->pumped >= PUMP_BYTES) {
		r->ops->pump();
		r->pumped = r->pos;
	}
	return STEP_MORE;
}

static enum step
step(struct reader *r)
{
	switch (r->p->mode) {
	case PEER_SKIP:
		return step_skip(r);
	case PEER_DROP:
		return step_drop(r);
	case PEER_STREAM:
		return step_stream(r);
	default:
		return step_line(r);
	}
}

/*
 * What is left is part of a line.  Past STREAM_MIN it is offered to
 * ops->stream, once; past max it is dropped instead of kept.
 */
static void
partial_line(struct reader *r)
{
	struct peer *p = r->p;
	size_t took;

	if (p->mode == PEER_LINES && r->ops->stream != NULL &&
	    p->in.len >= STREAM_MIN && p->in.len <= r->max) {
		took = r->ops->stream(r->ctx, p->in.data, p->in.len, false);
		if (p->closed)
			return;
		if (took == PEER_NOSTREAM || took == PEER_DISCARD)
			p->mode = PEER_WHOLE;
		else {
			p->mode = PEER_STREAM;
			buf_consume(&p->in, took);
			p->scanned = p->in.len;
		}
	}
	if ((p->mode == PEER_LINES || p->mode == PEER_WHOLE) &&
	    p->in.len > r->max) {
		drop_start(p, p->in.data, p->in.len);
		p->in.len = p->scanned = 0;
	}
}

static void
take_input(struct reader *r)
{
	struct peer *p = r->p;
	enum step s = STEP_MORE;

	while (!p->closed && (s = step(r)) == STEP_MORE)
		;
	if (p->closed)
		return;
	buf_consume(&p->in, r->pos);
	p->scanned = s == STEP_HELD ? 0 : p->in.len;
	if (s != STEP_HELD)
		partial_line(r);
}

static void
peer_release(struct peer *p)
{
	buf_free(&p->in);
	buf_free(&p->out);
	free(p->dropped_id);
	p->dropped_id = NULL;
	p->scanned = p->dropped = p->outoff = p->taillen = 0;
	p->mode = PEER_LINES;
	p->eof = p->closed = p->gave = false;
	p->pipe_was[0] = p->pipe_was[1] = 0;
}

/*
 * Hand the complete lines in the input to ops, while ops->busy (if any)
 * says we may: what is left waits in the buffer for the next call.  A
 * line longer than max is never kept whole.  With ops->stream, a line
 * that passes STREAM_MIN before its newline may be passed on as it
 * arrives.  With ops->pump, what the first lines of a chunk queued goes
 * out while the rest are handled.
 */
void
peer_input(struct peer *p, size_t max, const struct peer_ops *ops, void *ctx)
{
	struct reader r = { p, ops, ctx, max, 0, 0 };

	p->reading = true;
	take_input(&r);
	p->reading = false;
	if (p->closed)
		peer_release(p);
}

/*
 * Read what the peer has (one chunk) and handle the complete lines.
 * Returns the bytes read, 0 at end of file, -1 with errno on error
 * (EAGAIN included).
 */
ssize_t
peer_read(struct peer *p, size_t max, const struct peer_ops *ops, void *ctx)
{
	ssize_t n;

	buf_reserve(&p->in, READ_CHUNK);
	do
		n = read(p->rfd, p->in.data + p->in.len, READ_CHUNK);
	while (n < 0 && errno == EINTR);
	if (n == 0)
		p->eof = true;
	if (n <= 0)
		return n;
	p->in.len += (size_t)n;
	peer_input(p, max, ops, ctx);
	/* A long line is being read whole or passed on: more is coming. */
	peer_widen(p, p->rfd, p->mode == PEER_WHOLE ||
	    p->mode == PEER_STREAM);
	return n;
}

/*
 * While a long line passes through fd, one of the peer's, its pipe is
 * PIPE_WIDE, so that the line takes fewer writes and wake-ups on either
 * side; after it, the pipe gets its size back, since a user's pipes share
 * one allowance (pipe-user-pages-soft) and many servers could use it up.
 * A pipe as wide already is left alone.  Not every descriptor is a pipe,
 * nor may every user enlarge one (pipe-max-size): it is only tried, once
 * per line.  A pipe that holds more than its old size cannot get it back
 * yet: that is tried again.
 */
void
peer_widen(struct peer *p, int fd, bool wide)
{
	int *was = &p->pipe_was[fd == p->rfd ? 0 : 1];

	if (fd < 0 || (*was != 0) == wide)
		return;
#ifdef F_SETPIPE_SZ
	if (wide) {
		*was = fcntl(fd, F_GETPIPE_SZ);
		if (*was <= 0 || *was >= PIPE_WIDE ||
		    fcntl(fd, F_SETPIPE_SZ, PIPE_WIDE) < 0)
			*was = -1;	/* Not widened: nothing to give back. */
		return;
	}
	if (*was > 0 && fcntl(fd, F_SETPIPE_SZ, *was) < 0 && errno == EBUSY)
		return;
#endif
	*was = wide ? -1 : 0;
}

/*
 * The handler of the line line[0, n) keeps it beyond its return: the peer
 * gives up its input buffer, which holds the line, and returns it (the
 * caller frees it); the input after the line moves to a fresh buffer.  A
 * large line is kept so without a copy, and without two buffers as large
 * at once.  NULL when the line is not in the peer's input (the caller
 * copies it): not being handled, or repaired into another buffer; or when
 * the buffer is much larger than the line (a long line before it made it
 * so), which should not stay held for the line's sake.
 */
char *
peer_give_line(struct peer *p, const char *line, size_t n)
{
	char *data = p->in.data;
	const char *end = line + n, *nl;
	size_t at = (size_t)((uintptr_t)line - (uintptr_t)data);
	struct buf rest = { 0 };

	if (!p->reading || p->gave || data == NULL || at >= p->in.len ||
	    n > p->in.len - at)
		return NULL;
	/* A block much larger than the line is not kept for it: copied. */
	if (p->in.cap / 4 > n + READ_CHUNK)
		return NULL;
	/* After line[n] may come the '\r' the handler was not shown. */
	nl = memchr(end, '\n', p->in.len - at - n);
	if (nl == NULL)
		return NULL;
	buf_reserve(&rest, READ_CHUNK);
	buf_put(&rest, nl + 1, (size_t)(data + p->in.len - (nl + 1)));
	p->in = rest;
	p->gave = true;
	return data;
}

/* The line being streamed broke off: the rest of it is skipped. */
void
peer_skip_line(struct peer *p)
{
	if (p->mode == PEER_STREAM)
		p->mode = PEER_SKIP;
}

/*
 * The line being streamed is too long: so_far bytes of it went, the rest
 * is counted and dropped, then reported to ops->oversize with id.
 */
void
peer_overlong(struct peer *p, size_t so_far, const char *id)
{
	p->mode = PEER_DROP;
	p->dropped = so_far;
	p->taillen = 0;
	free(p->dropped_id);
	p->dropped_id = id != NULL ? xstrdup(id) : NULL;
}

/*
 * Write as much queued output as the peer takes now.  Returns 0, or -1
 * with errno when the peer is gone (EPIPE) or broken.
 */
int
peer_flush(struct peer *p)
{
	ssize_t n;

	while (p->outoff < p->out.len) {
		n = write(p->wfd, p->out.data + p->outoff,
		    p->out.len - p->outoff);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n < 0)
			return -1;
		p->outoff += (size_t)n;
	}
	if (p->outoff == p->out.len)
		p->out.len = p->outoff = 0;
	else if (p->outoff > p->out.len / 2) {
		buf_consume(&p->out, p->outoff);
		p->outoff = 0;
	}
	return 0;
}

/* Nothing more can be written: what is queued is dropped. */
void
peer_drop_output(struct peer *p)
{
	p->out.len = p->outoff = 0;
}

size_t
peer_queued(const struct peer *p)
{
	return p->out.len - p->outoff;
}

/*
 * Give back what large messages left behind.  Called when the loop is
 * idle, not after each message, so a stream of large results reuses its
 * buffers instead of faulting in fresh pages every time.
 */
bool
peer_trim(struct peer *p)
{
	size_t in = p->in.cap, out = p->out.cap;

	if (p->outoff == 0)
		buf_shrink(&p->out);
	buf_shrink(&p->in);
	return p->in.cap != in || p->out.cap != out;
}

/* Does the peer hold more buffer than it would after a trim? */
bool
peer_bloated(struct peer *p)
{
	return p->in.cap > BUF_KEEP || p->out.cap > BUF_KEEP;
}

/*
 * Forget the peer's buffers and state.  While its input is being handled
 * this waits until the handler returns (peer_input), and no further line
 * is handed over.
 */
void
peer_close(struct peer *p)
{
	if (p->reading)
		p->closed = true;
	else
		peer_release(p);
}
