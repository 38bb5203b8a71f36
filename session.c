/*
 * session.c: a client session as a value: what carries its bytes, its
 * output queue and the replies written into it, and what initialize or
 * a modern request's _meta set up (protocol, capabilities, the era of
 * the request being handled), and the toolboxes it opened.  The stdio
 * loop makes one; a shared workbench or HTTP will make many, each with
 * its own transport (struct session_io).
 */
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "session_int.h"

static struct session *sessions;	/* In the order they came. */
static struct session *hearing;	/* Those that can hear now. */
static struct session *pending;	/* Those with bytes to write. */
static int nsessions;
static unsigned long marks;		/* Sessions put on the list. */

/* The loop wakes for a pipe's output: the step before poll writes it. */
static void
out_ready(void *arg, int fd, short revents)
{
	(void)arg;
	(void)fd;
	(void)revents;
}

/*
 * Pipes (stdio and a shared workbench's fronts): a peer over two
 * descriptors, the client's stdin and stdout.
 */
int
session_pipe_flush(struct session *se)
{
	return peer_flush(&se->peer);
}

/* A long line begins: the pipe is widened for it (peer_widen). */
void
session_pipe_wide(struct session *se)
{
	peer_widen(&se->peer, se->peer.wfd, true);
}

/* Its client left: its transport ends it. */
void
session_left(struct session *se, bool gone)
{
	wb_log_debug_for(se, "session %lu: its client left%s", se->serial,
	    gone ? ", its output gone" : "");
	se->io->left(se, gone);
}

/*
 * A session whose client reads rfd and writes wfd (either may be -1:
 * --probe makes one with neither, to hold what its servers are told).
 */
struct session *
session_new(int rfd, int wfd, const struct session_io *io, void *carrier)
{
	struct session *se = session_new_by(io, carrier);

	se->peer.rfd = rfd;
	se->peer.wfd = wfd;
	if (wfd >= 0)
		loop_io_set(&se->out_io, wfd, LOOP_OFF, out_ready, se);
	session_hear(se, true);
	return se;
}

/*
 * A session whose bytes io carries (HTTP): the loop polls nothing of
 * it; io's flush takes the queue's lines whenever the loop writes.
 */
struct session *
session_new_by(const struct session_io *io, void *carrier)
{
	static unsigned long serial;
	struct session *se = xcalloc(1, sizeof(*se)), **p;

	se->serial = ++serial;
	se->io = io;
	se->carrier = carrier;
	se->level = -1;
	se->peer.rfd = se->peer.wfd = -1;
	for (p = &sessions; *p != NULL; p = &(*p)->next)
		;
	*p = se;
	nsessions++;
	return se;
}

/* Its number, 1 for the first: what the log calls it. */
unsigned long
session_serial(const struct session *se)
{
	return se->serial;
}

/* What the transport keeps with the session (session_new_by). */
void *
session_carrier(const struct session *se)
{
	return se->carrier;
}

/*
 * The session is gone: what it owns goes with it.  What the layers above
 * keep for it (calls, relayed requests, waiters, subscriptions) they drop
 * first (dispatch_close), so that nothing points here afterwards.
 */
void
session_free(struct session *se)
{
	struct session **p;

	for (p = &sessions; *p != NULL && *p != se; p = &(*p)->next)
		;
	if (*p != NULL)
		*p = se->next;
	nsessions--;
	for (p = &pending; *p != NULL && *p != se; p = &(*p)->pnext)
		;
	if (*p != NULL)
		*p = se->pnext;
	loop_io_del(&se->in_io);
	loop_io_del(&se->out_io);
	loop_timer_del(&se->park_timer);
	session_hear(se, false);
	pace_drop(se);
	free(se->line);
	buf_free(&se->held);
	peer_close(&se->peer);
	free(se->protocol);
	buf_free(&se->caps);
	buf_free(&se->era.caps);
	free(se->open);
	free(se);
}

/* Whether it can hear now: in the list of those that can, or out. */
void
session_hear(struct session *se, bool on)
{
	if (se->hearing == on)
		return;
	se->hearing = on;
	if (on) {
		se->hprev = NULL;
		se->hnext = hearing;
		if (hearing != NULL)
			hearing->hprev = se;
		hearing = se;
		return;
	}
	if (se->hprev != NULL)
		se->hprev->hnext = se->hnext;
	else
		hearing = se->hnext;
	if (se->hnext != NULL)
		se->hnext->hprev = se->hprev;
	/*
	 * se->hnext is left as it was: a fan-out at se when its transport
	 * takes it out (a stream that failed as it was written) goes on.
	 */
}

bool
session_hearing(const struct session *se)
{
	return se->hearing;
}

struct session *
session_first_hearing(void)
{
	return hearing;
}

struct session *
session_next_hearing(const struct session *se)
{
	return se->hnext;
}

struct session *
session_first(void)
{
	return sessions;
}

struct session *
session_next(const struct session *se)
{
	return se->next;
}

/*
 * The transport, for the loop.
 */
static void	park_due(void *);

void
session_watch_input(struct session *se, loop_io_fn *fn, void *arg)
{
	if (se->peer.rfd < 0)
		return;
	loop_io_set(&se->in_io, se->peer.rfd, POLLIN, fn, arg);
	se->want = true;
	session_heard(se);
}

/* What the loop is to watch of its input. */
static void
input_events(struct session *se)
{
	if (se->unread || se->parked)
		return;
	loop_io_events(&se->in_io, se->peer.eof ? LOOP_OFF :
	    se->want ? POLLIN : 0);
}

/* Read it or not; once it ended, it is not watched at all. */
void
session_want_input(struct session *se, bool on)
{
	se->want = on;
	input_events(se);
}

/* Not read any more, nor watched: the workbench stops, or it leaves. */
void
session_stop_input(struct session *se)
{
	se->unread = true;
	se->parked = false;
	loop_io_events(&se->in_io, LOOP_OFF);
	loop_timer_del(&se->park_timer);
}

/*
 * Parking.  A hundred idle sessions would make every poll() visit a
 * hundred descriptors.  So an input quiet for SESSION_PARK_MS, read and
 * wanted, is handed to its transport to watch (a shared workbench's
 * front polls its client's pipe and wakes us through one descriptor
 * for them all), and the loop polls it no more until session_wake.
 * One timer a session, moved on once a quiet period, never a scan.
 */
void
session_heard(struct session *se)
{
	se->heard = loop_ms();
	if (se->io->park != NULL && !se->unread &&
	    !loop_timer_on(&se->park_timer))
		loop_timer_set(&se->park_timer, se->heard + SESSION_PARK_MS,
		    park_due, se);
}

static void
park_due(void *arg)
{
	struct session *se = arg;
	long long due = se->heard + SESSION_PARK_MS;

	if (se->unread || se->parked || se->peer.eof)
		return;
	if (loop_ms() < due || !se->want || se->peer.in.len > 0 ||
	    !se->io->park(se)) {
		if (due <= loop_ms())
			due = loop_ms() + SESSION_PARK_MS;
		loop_timer_set(&se->park_timer, due, park_due, se);
		return;
	}
	se->parked = true;
	loop_io_events(&se->in_io, LOOP_OFF);
	wb_log_debug_for(se, "session %lu: quiet, its input parked",
	    se->serial);
}

/* Its transport saw its input move: the loop watches it again. */
void
session_wake(struct session *se)
{
	if (!se->parked)
		return;
	se->parked = false;
	input_events(se);
	session_heard(se);
}

bool
session_parked(const struct session *se)
{
	return se->parked;
}

/* It has bytes to write, or will have: the step before poll looks. */
void
session_mark(struct session *se)
{
	if (se->pending)
		return;
	marks++;
	se->pending = true;
	se->pnext = pending;
	pending = se;
}

/*
 * Nothing waits for its client: all written, no paced reply, nothing
 * held behind a long message that owns the queue.
 */
static bool
session_settled(const struct session *se)
{
	return session_written(se) && se->owner == QUEUE_OPEN &&
	    se->held.len == 0;
}

/*
 * Write what waits for each client; a session whose output fails, or
 * that overrun says is too far behind, has its queue dropped and its
 * transport told (session_left).  A session all written leaves the list; one still behind
 * stays, its pipe watched for room.
 */
void
sessions_flush(bool (*overrun)(struct session *))
{
	struct session **p = &pending, *se, *failed = NULL;
	unsigned long before = marks;

	while ((se = *p) != NULL) {
		if (session_flush(se) < 0 || overrun(se)) {
			session_drop(se);
			loop_io_events(&se->out_io, LOOP_OFF);
		} else {
			loop_io_events(&se->out_io, peer_queued(&se->peer) >
			    0 ? POLLOUT : LOOP_OFF);
			if (!session_settled(se)) {
				p = &se->pnext;
				continue;
			}
			se = NULL;
		}
		/* Off the list: written, or failed (told below). */
		(*p)->pending = false;
		*p = (*p)->pnext;
		if (se != NULL) {
			se->pnext = failed;
			failed = se;
		}
	}
	/*
	 * Marked meanwhile, at the list's head: written next turn, now; and
	 * the transports of those that failed end them in the next.
	 */
	if (marks != before || failed != NULL)
		loop_again();
	for (se = failed; se != NULL; se = failed) {
		failed = se->pnext;
		se->pnext = NULL;
		session_left(se, true);
	}
}

/*
 * Is every session so far behind that the servers are not read (and
 * held: does any hold much behind a long message)?  Only a session with
 * bytes waiting can be.
 */
bool
sessions_behind(bool *held)
{
	struct session *se;
	int behind = 0;

	*held = false;
	for (se = pending; se != NULL; se = se->pnext) {
		behind += peer_queued(&se->peer) > HIGH_WATER;
		*held |= pace_holds_much(se);
	}
	return nsessions > 0 && behind == nsessions;
}

/* Has every client been given all there is for it? */
bool
sessions_written(void)
{
	struct session *se;

	for (se = pending; se != NULL; se = se->pnext)
		if (!session_written(se))
			return false;
	return true;
}

int
sessions_count(void)
{
	return nsessions;
}

struct peer *
session_peer(struct session *se)
{
	return &se->peer;
}

/* Write its queue, and while a paced reply drains it at once, more. */
int
session_flush(struct session *se)
{
	int r;

	do {
		pace_run(se);
		r = se->io->flush(se);
	} while (r == 0 && se->owner == QUEUE_PACED &&
	    peer_queued(&se->peer) == 0);
	return r;
}

/* What waits in its queue for the client to take. */
size_t
session_queued(const struct session *se)
{
	return peer_queued(&se->peer);
}

/* Is the client so far behind that what it asks for next must wait? */
bool
session_full(const struct session *se)
{
	return peer_queued(&se->peer) > HIGH_WATER || pace_holds_much(se);
}

/* Has the client been given all there is for it? */
bool
session_written(const struct session *se)
{
	return peer_queued(&se->peer) == 0 && !pace_active(se);
}

/* The client is gone, or there is none (--probe): nothing goes out. */
void
session_drop(struct session *se)
{
	pace_drop(se);
	peer_drop_output(&se->peer);
}

/*
 * Between lines (peer_ops.pump): a session's queue is written once it
 * holds PUMP_BYTES; its errors are left to the loop.
 */
void
session_pump(void)
{
	struct session *se;

	for (se = pending; se != NULL; se = se->pnext)
		if (peer_queued(&se->peer) >= PUMP_BYTES)
			(void)se->io->flush(se);
}

/* Is a paced reply of any session in line?  (listing.c keeps lists.) */
bool
sessions_pacing(void)
{
	struct session *se;

	for (se = pending; se != NULL; se = se->pnext)
		if (pace_active(se))
			return true;
	return false;
}

/*
 * The queue.
 */
/*
 * Where a message for the client goes: its queue, or while a long message
 * owns that, the held queue behind it.
 */
struct buf *
session_out(struct session *se)
{
	session_mark(se);
	return se->owner != QUEUE_OPEN && !se->owner_writes ? &se->held :
	    &se->peer.out;
}

/* A line from a server that goes to the client as it is. */
void
session_send_line(struct session *se, const char *line, size_t n)
{
	struct buf *b = session_out(se);

	buf_put(b, line, n);
	buf_putc(b, '\n');
}

struct buf *
reply_begin(struct session *se, const char *id, size_t idlen)
{
	struct buf *b = session_out(se);

	rpc_put_result(b, id, idlen);
	return b;
}

/*
 * Which era the next reply answers, when it is not the request being
 * handled: a reply made later, to a request kept (a call, a waiter).
 */
void
reply_era(struct session *se, bool modern)
{
	se->modern_reply = modern;
}

/* The era of a reply made later (a paced one): it is taken now. */
static bool
reply_take_era(struct session *se)
{
	bool modern = se->modern_reply;

	se->modern_reply = se->era.modern;
	return modern;
}

/*
 * The end of a result.  A modern one gets its resultType (type) and
 * serverInfo last, inside the result object just written.
 */
void
reply_end_as(struct session *se, const char *type)
{
	struct buf *b = session_out(se);

	if (se->modern_reply) {
		/* Its start may be out already (a paced reply): not empty. */
		b->len--;
		if (b->len == 0 || b->data[b->len - 1] != '{')
			buf_putc(b, ',');
		buf_printf(b, "\"resultType\":\"%s\",", type);
		era_put_server_info(b);
		buf_putc(b, '}');
	}
	se->modern_reply = se->era.modern;
	buf_puts(b, "}\n");
}

void
reply_end(struct session *se)
{
	reply_end_as(se, "complete");
}

/*
 * A modern list result says how long it may be kept, for this client
 * alone (the instructions name its toolboxes).
 */
void
reply_cache_hints(struct session *se, struct buf *b, int ttl_ms)
{
	if (se->era.modern)
		buf_printf(b, ",\"ttlMs\":%d,\"cacheScope\":\"private\"",
		    ttl_ms);
}

void
reply_raw(struct session *se, const char *id, size_t idlen,
    const char *result)
{
	buf_puts(reply_begin(se, id, idlen), result);
	reply_end(se);
}

/* An error; data, when not NULL, is a JSON value as written. */
void
reply_error_data(struct session *se, const char *id, size_t idlen,
    int code, const char *msg, const char *data, size_t dlen)
{
	struct buf *b = session_out(se);

	rpc_put_error(b, id, idlen, code, msg);
	if (data != NULL) {
		buf_puts(b, ",\"data\":");
		buf_put(b, data, dlen);
	}
	buf_puts(b, "}}\n");
	se->modern_reply = se->era.modern;
}

void
reply_error(struct session *se, const char *id, size_t idlen, int code,
    const char *msg)
{
	reply_error_data(se, id, idlen, code, msg, NULL, 0);
}

/* A tool result holding one text. */
void
reply_text(struct session *se, const char *id, size_t idlen,
    const char *text, bool error)
{
	struct buf *b = reply_begin(se, id, idlen);

	buf_puts(b, "{\"content\":[{\"type\":\"text\",\"text\":");
	json_put_cstr(b, text);
	buf_puts(b, error ? "}],\"isError\":true}" : "}]}");
	reply_end(se);
}

/*
 * A tool result whose JSON object is given as text and as itself, made
 * as the client reads it: the object is written twice, by put, a piece
 * at a time (see struct pieces).
 */
enum structured_phase { S_HEAD, S_TEXT, S_OBJECT };

struct structured {
	char			*cid;		/* The client's id, raw. */
	size_t			 cidlen;
	bool			 modern;	/* The era of the request. */
	struct pieces		 obj;
	size_t			 at;		/* The next piece's place. */
	enum structured_phase	 phase;
	struct buf		 raw;		/* A piece, before escaping. */
};

static bool
structured_step(struct session *se, void *ctx)
{
	struct structured *r = ctx;
	struct buf *out = session_out(se);
	bool more;

	switch (r->phase) {
	case S_HEAD:
		buf_puts(reply_begin(se, r->cid, r->cidlen),
		    "{\"content\":[{\"type\":\"text\",\"text\":\"");
		r->phase = S_TEXT;
		return true;
	case S_TEXT:
		more = r->obj.put(&r->raw, r->obj.arg, &r->at);
		json_put_chars(out, r->raw.data, r->raw.len);
		r->raw.len = 0;
		if (!more) {
			buf_puts(out, "\"}],\"structuredContent\":");
			r->phase = S_OBJECT;
			r->at = 0;
		}
		return true;
	case S_OBJECT:
		if (r->obj.put(out, r->obj.arg, &r->at))
			return true;
		buf_putc(out, '}');
		reply_era(se, r->modern);
		reply_end(se);
		return false;
	}
	return false;
}

static void
structured_release(void *ctx)
{
	struct structured *r = ctx;

	if (r->obj.release != NULL)
		r->obj.release(r->obj.arg);
	free(r->cid);
	buf_free(&r->raw);
	free(r);
}

void
reply_structured_by(struct session *se, const char *id, size_t idlen,
    const struct pieces *obj)
{
	struct structured *r = xcalloc(1, sizeof(*r));

	r->cid = id != NULL ? xstrndup(id, idlen) : NULL;
	r->cidlen = idlen;
	r->modern = reply_take_era(se);
	r->obj = *obj;
	pace_reply(se, structured_step, structured_release, r);
}

/* An object made already, in one piece (a copy is written). */
static bool
put_whole(struct buf *out, const void *arg, size_t *at)
{
	const struct buf *b = arg;

	buf_put(out, b->data, b->len);
	(void)at;
	return false;
}

static void
free_whole(void *arg)
{
	buf_free(arg);
	free(arg);
}

void
reply_structured(struct session *se, const char *id, size_t idlen,
    const struct buf *obj)
{
	struct buf *copy = xcalloc(1, sizeof(*copy));
	struct pieces p = { put_whole, free_whole, copy };

	buf_put(copy, obj->data, obj->len);
	reply_structured_by(se, id, idlen, &p);
}

/*
 * Its era.
 */
/*
 * initialize: the version asked for (or the latest, when it is not one
 * we speak) and the capabilities of j's token caps.
 */
void
session_initialize(struct session *se, const char *version,
    const struct json *j, int caps_tok)
{
	se->protocol = xstrdup(era_legacy_supported(version) ? version :
	    WB_PROTOCOL_LATEST);
	se->can = era_caps(j, caps_tok, &se->caps);
	se->initialized = true;
}

/* Has a 2025 session been set up with initialize? */
bool
session_legacy(const struct session *se)
{
	return se->initialized;
}

const char *
session_protocol(const struct session *se)
{
	return se->protocol != NULL ? se->protocol : WB_PROTOCOL_LATEST;
}

/*
 * What the client can answer, as servers are told it: while a modern
 * request is handled, what that request declared; otherwise what
 * initialize declared.  A server keeps what it was told at its start
 * (srv_start_for), whatever is handled when it is sent later.
 */
const struct buf *
session_caps(const struct session *se)
{
	return se->era.modern ? &se->era.caps : &se->caps;
}

/* What the 2025 session declared, whatever request is being handled. */
const struct buf *
session_legacy_caps(const struct session *se)
{
	return &se->caps;
}

/*
 * --probe has no client: its servers are told the capabilities members
 * (as era_caps makes them), so that they list what they offer a client
 * that has them.  No one is there to answer: can stays empty, and their
 * requests for them are refused.
 */
void
session_assume(struct session *se, const struct buf *members)
{
	se->caps.len = 0;
	buf_put(&se->caps, members->data, members->len);
}

bool
session_has(const struct session *se, enum client_cap c)
{
	return ((se->era.modern ? se->era.can : se->can) & c) != 0;
}

/* The modern request being handled, or NULL (a 2025 one, or none). */
const struct era *
session_era(const struct session *se)
{
	return se->era.modern ? &se->era : NULL;
}

/* Where era_check writes what a modern request's _meta says. */
struct era *
session_era_slot(struct session *se)
{
	return &se->era;
}

/* The request being handled is modern: so are its replies. */
void
session_modern_begin(struct session *se)
{
	se->modern_reply = true;
	se->was_modern = true;
}

/* The log level it set (era_level's rank), or -1. */
void
session_set_level(struct session *se, int level)
{
	se->level = level;
}

int
session_level(const struct session *se)
{
	return se->level;
}

/* The era it spoke last: initialize's version, the modern one, or NULL. */
const char *
session_era_name(const struct session *se)
{
	if (se->initialized)
		return session_protocol(se);
	return se->was_modern ? WB_PROTOCOL_MODERN : NULL;
}

/* The request is handled: what comes next is of the session's era. */
void
session_request_end(struct session *se)
{
	se->era.modern = se->modern_reply = false;
}

/*
 * What it sees.
 */
bool
session_box_open(const struct session *se, int box)
{
	return box < se->nopen && se->open[box];
}

void
session_open_box(struct session *se, int box)
{
	if (box >= se->nopen) {
		se->open = xrealloc(se->open, (size_t)box + 1);
		memset(se->open + se->nopen, 0, (size_t)(box + 1 - se->nopen));
		se->nopen = box + 1;
	}
	se->open[box] = 1;
}

/*
 * Hashes of what it was last told its lists hold (SESSION_TOOLS and
 * the rest), so that it hears of each change once (box layer).
 */
unsigned long *
session_listed(struct session *se)
{
	return se->listed;
}
