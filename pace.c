/*
 * pace.c: who writes into the client's queue.  A long message may own it
 * until its line ends: a server's result passed on as it arrives
 * (stream.c), or a long answer of ours, made a piece at a time as the
 * client takes it (a paced reply).  Meanwhile every other message for the
 * client waits in the held queue (client_out()) and goes after it; a
 * paced reply made meanwhile waits its turn in line with them.  A paced
 * reply thus never waits whole in our memory, however slowly the client
 * reads.
 */
#include <stdlib.h>
#include <string.h>

#include "session.h"

/* A paced reply is made while the client's queue holds less than this. */
#define PACE_QUEUE	(128u * 1024)
/*
 * More paced replies than this in line, and the client is not reading
 * them: what it asks for next waits (backpressure), as when HIGH_WATER
 * bytes are held, since each of them is owed in full.
 */
#define PACE_LINE_MAX	16

/* A paced reply: steps that each write a piece of it. */
struct pacer {
	bool	(*step)(void *);	/* False once it is complete. */
	void	(*release)(void *);
	void	 *ctx;
	size_t	  after;		/* Held bytes that go before it. */
};

static struct buf held;		/* For the client, after the owner's. */
static bool owned;		/* The queue belongs to one message. */
static bool owner_writes;	/* The paced reply writes it just now. */
static struct pacer *line;	/* line[0] owns the queue when it is made; */
static int nline;		/* the others wait their turn. */
static bool making;		/* line[0] is being made. */

/*
 * Where a message for the client waits while a message owns the queue
 * (and is not the one writing): the held queue; else NULL.
 */
struct buf *
pace_held(void)
{
	return owned && !owner_writes ? &held : NULL;
}

/* Is the queue owned?  Then no other message may take it. */
bool
pace_owned(void)
{
	return owned;
}

void
pace_own(void)
{
	owned = true;
}

/*
 * The owner's line ended: what was held before the next paced reply goes
 * to the client, and that reply, if any, owns the queue now.
 */
void
pace_release(void)
{
	size_t upto = nline > 0 ? line[0].after : held.len;
	int i;

	owned = false;
	buf_put(client_queue(), held.data, upto);
	buf_consume(&held, upto);
	for (i = 0; i < nline; i++)
		line[i].after -= upto;
	if (nline > 0) {
		owned = making = true;
		peer_widen(client_peer(), client_peer()->wfd, true);
	}
}

size_t
pace_held_bytes(void)
{
	return held.len;
}

bool
pace_holds_much(void)
{
	return held.len > HIGH_WATER || nline > PACE_LINE_MAX;
}

/*
 * The reply first in line leaves it.  A reply may read the servers'
 * lists as it goes: those replaced meanwhile are kept while any reply is
 * in line (list_install), and go once none is (the loop's step before
 * poll).
 */
static void
pace_leave(void)
{
	struct pacer p = line[0];

	memmove(line, line + 1, (size_t)--nline * sizeof(*line));
	p.release(p.ctx);
}

/* The reply being made is complete: the next one's turn. */
static void
pace_next(void)
{
	pace_leave();
	making = false;
	pace_release();
}

/* One step of the reply being made, into the client's queue. */
static void
pace_step(void)
{
	bool more;

	owner_writes = true;
	more = line[0].step(line[0].ctx);
	owner_writes = false;
	if (!more)
		pace_next();
}

/*
 * Make a reply by steps: each writes the next piece of it to client_out()
 * and says whether more is to come; release frees ctx at the end.  It
 * waits its turn behind what the client is owed already.
 */
void
pace_reply(bool (*step)(void *), void (*release)(void *), void *ctx)
{
	/* The array grows by doubling: its size follows from the count. */
	if (nline == 0 || (nline >= 4 && (nline & (nline - 1)) == 0))
		line = xrealloc(line, (size_t)(nline < 4 ? 4 : 2 * nline) *
		    sizeof(*line));
	line[nline].step = step;
	line[nline].release = release;
	line[nline].ctx = ctx;
	line[nline++].after = held.len;
	if (!owned)
		pace_release();		/* Its turn is now. */
	pace_run();
}

/* More of the reply being made, as far as the client's queue has room. */
void
pace_run(void)
{
	while (making && peer_queued(client_peer()) < PACE_QUEUE)
		pace_step();
}

/* Is a paced reply being made, or waiting its turn? */
bool
pace_active(void)
{
	return nline > 0;
}

/* Is one being made now (not waiting behind another message)? */
bool
pace_making(void)
{
	return making;
}

/* The client is gone: nothing more of any reply is made. */
void
pace_drop(void)
{
	while (nline > 0)
		pace_leave();
	if (making)
		owned = false;
	making = false;
	held.len = 0;
}
