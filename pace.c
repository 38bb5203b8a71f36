/*
 * pace.c: who writes into the client's queue.  A long message may own it
 * until its line ends: a server's result passed on as it arrives
 * (stream.c), or a long answer of ours, made a piece at a time as the
 * client takes it (a paced reply).  Meanwhile every other message for the
 * client waits in the held queue (session_out()) and goes after it; a
 * paced reply made meanwhile waits its turn in line with them.  A paced
 * reply thus never waits whole in our memory, however slowly the client
 * reads.
 */
#include <stdlib.h>
#include <string.h>

#include "session_int.h"

/* A paced reply is made while the client's queue holds less than this. */
#define PACE_QUEUE	(128u * 1024)
/*
 * More paced replies than this in line, and the client is not reading
 * them: what it asks for next waits (backpressure), as when HIGH_WATER
 * bytes are held, since each of them is owed in full.
 */
#define PACE_LINE_MAX	16

/* Is the queue owned?  Then no other message may take it. */
bool
pace_owned(const struct session *se)
{
	return se->owner != QUEUE_OPEN;
}

void
pace_own(struct session *se)
{
	se->owner = QUEUE_OWNED;
}

/* The queue itself, for the message that owns it meanwhile (stream.c). */
struct buf *
pace_queue(struct session *se)
{
	session_mark(se);
	return &se->peer.out;
}

/*
 * The owner's line ended: what was held before the next paced reply goes
 * to the client, and that reply, if any, owns the queue now.
 */
void
pace_release(struct session *se)
{
	size_t upto = se->nline > 0 ? se->line[0].after : se->held.len;
	int i;

	se->owner = QUEUE_OPEN;
	buf_put(&se->peer.out, se->held.data, upto);
	buf_consume(&se->held, upto);
	for (i = 0; i < se->nline; i++)
		se->line[i].after -= upto;
	if (se->nline > 0) {
		se->owner = QUEUE_PACED;
		if (se->io->wide != NULL)
			se->io->wide(se);
	}
}

size_t
pace_held_bytes(const struct session *se)
{
	return se->held.len;
}

bool
pace_holds_much(const struct session *se)
{
	return se->held.len > HIGH_WATER || se->nline > PACE_LINE_MAX;
}

/*
 * The reply first in line leaves it.  A reply may read the servers'
 * lists as it goes: those replaced meanwhile are kept while any reply is
 * in line (list_install), and go once none is (the loop's step before
 * poll).
 */
static void
pace_leave(struct session *se)
{
	struct pacer p = se->line[0];

	memmove(se->line, se->line + 1, (size_t)--se->nline *
	    sizeof(*se->line));
	p.release(p.ctx);
}

/* The reply being made is complete: the next one's turn. */
static void
pace_next(struct session *se)
{
	pace_leave(se);
	pace_release(se);
}

/* One step of the reply being made, into the client's queue. */
static void
pace_step(struct session *se)
{
	bool more;

	se->owner_writes = true;
	more = se->line[0].step(se, se->line[0].ctx);
	se->owner_writes = false;
	if (!more)
		pace_next(se);
}

/*
 * Make a reply by steps: each writes the next piece of it to session_out()
 * and says whether more is to come; release frees ctx at the end.  It
 * waits its turn behind what the client is owed already.
 */
void
pace_reply(struct session *se, bool (*step)(struct session *, void *),
    void (*release)(void *), void *ctx)
{
	int n = se->nline;

	/* The array grows by doubling: its size follows from the count. */
	if (n == 0 || (n >= 4 && (n & (n - 1)) == 0))
		se->line = xrealloc(se->line, (size_t)(n < 4 ? 4 : 2 * n) *
		    sizeof(*se->line));
	se->line[n].step = step;
	se->line[n].release = release;
	se->line[n].ctx = ctx;
	se->line[n].after = se->held.len;
	se->nline++;
	session_mark(se);
	if (se->owner == QUEUE_OPEN)
		pace_release(se);		/* Its turn is now. */
	pace_run(se);
}

/* More of the reply being made, as far as the client's queue has room. */
void
pace_run(struct session *se)
{
	while (se->owner == QUEUE_PACED && peer_queued(&se->peer) < PACE_QUEUE)
		pace_step(se);
}

/* Is a paced reply being made, or waiting its turn? */
bool
pace_active(const struct session *se)
{
	return se->nline > 0;
}

/* The client is gone: nothing more of any reply is made. */
void
pace_drop(struct session *se)
{
	while (se->nline > 0)
		pace_leave(se);
	if (se->owner == QUEUE_PACED)
		se->owner = QUEUE_OPEN;
	se->held.len = 0;
}
