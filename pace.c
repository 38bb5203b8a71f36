/*
 * pace.c: who writes into the client's queue.  A long message may own it
 * until its line ends: a server's result passed on as it arrives
 * (stream.c), or a long answer of ours, made a piece at a time as the
 * client takes it (a paced reply).  Meanwhile every other message for the
 * client waits in the held queue (client_out()) and goes after it.  A
 * paced reply thus never waits whole in our memory, however slowly the
 * client reads.
 */
#include <stdlib.h>
#include <string.h>

#include "workbench.h"

/* A paced reply is made while the client's queue holds less than this. */
#define PACE_QUEUE	(128u * 1024)

static struct buf held;		/* For the client, after the owner's. */
static bool owned;		/* The queue belongs to one message. */
static bool owner_writes;	/* The paced reply writes it just now. */

/* The paced reply, if any: steps that each write a piece of it. */
static struct pacer {
	bool	(*step)(void *);	/* False once it is complete. */
	void	(*release)(void *);
	void	 *ctx;
} pacer;

/*
 * Where a message for the client goes: its queue, or while a message owns
 * that (and is not the one writing), the held queue.
 */
struct buf *
client_out(void)
{
	return owned && !owner_writes ? &held : client_queue();
}

/* Is the queue owned?  Then no other message may take it. */
bool
client_owned(void)
{
	return owned;
}

void
client_own(void)
{
	owned = true;
}

/* The owner's line ended: what was held goes to the client. */
void
client_release(void)
{
	owned = false;
	buf_put(client_queue(), held.data, held.len);
	held.len = 0;
}

size_t
client_held(void)
{
	return held.len;
}

bool
client_holds_much(void)
{
	return held.len > HIGH_WATER;
}

static void
pace_end(void)
{
	pacer.release(pacer.ctx);
	memset(&pacer, 0, sizeof(pacer));
	client_release();
}

/* One step of the paced reply, into the client's queue. */
static bool
pace_step(void)
{
	bool more;

	owner_writes = true;
	more = pacer.step(pacer.ctx);
	owner_writes = false;
	if (!more)
		pace_end();
	return more;
}

/*
 * Make a reply by steps: each writes the next piece of it to client_out()
 * and says whether more is to come; release frees ctx at the end.  While
 * another message owns the queue, the whole reply is made at once into
 * the held queue, after it.
 */
void
pace_reply(bool (*step)(void *), void (*release)(void *), void *ctx)
{
	if (owned) {
		while (step(ctx))
			;
		release(ctx);
		return;
	}
	client_own();
	pacer.step = step;
	pacer.release = release;
	pacer.ctx = ctx;
	pace_run();
}

/* More of the paced reply, as far as the client's queue has room. */
void
pace_run(void)
{
	while (pacer.step != NULL && peer_queued(client_peer()) < PACE_QUEUE)
		(void)pace_step();
	/* A long reply is under way. */
	if (pacer.step != NULL)
		peer_widen(client_peer(), client_peer()->wfd, true);
}

bool
pace_active(void)
{
	return pacer.step != NULL;
}

/*
 * The rest of the paced reply, now: what it reads is about to change
 * (a server's list), or the session is ending.
 */
void
pace_finish(void)
{
	while (pacer.step != NULL && pace_step())
		;
}

/* The client is gone: nothing more of the reply is made. */
void
pace_drop(void)
{
	if (pacer.step != NULL)
		pace_end();
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
structured_step(void *ctx)
{
	struct structured *r = ctx;
	struct buf *out = client_out();
	bool more;

	switch (r->phase) {
	case S_HEAD:
		buf_puts(reply_begin(r->cid, r->cidlen),
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
		reply_era(r->modern);
		reply_end();
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
reply_structured_by(const char *id, size_t idlen, const struct pieces *obj)
{
	struct structured *r = xcalloc(1, sizeof(*r));

	r->cid = id != NULL ? xstrndup(id, idlen) : NULL;
	r->cidlen = idlen;
	r->modern = reply_take_era();
	r->obj = *obj;
	pace_reply(structured_step, structured_release, r);
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
reply_structured(const char *id, size_t idlen, const struct buf *obj)
{
	struct buf *copy = xcalloc(1, sizeof(*copy));
	struct pieces p = { put_whole, free_whole, copy };

	buf_put(copy, obj->data, obj->len);
	reply_structured_by(id, idlen, &p);
}
