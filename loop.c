/*
 * loop.c: the one poll() loop.  The descriptors registered stay in one
 * pollfd table between turns; a registration removed is only marked,
 * and the table is closed up once the turn's handlers have run, so that
 * a handler may remove any registration while the loop walks the table.
 * Timers are a binary heap on their times.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "loop.h"

#define LOOP_STEPS	16
#define TRIM_IDLE_MS	1000		/* Quiet this long: give memory back. */

struct entry {
	struct loop_io	*owner;		/* NULL: removed this turn. */
	int		 fd;
	loop_io_fn	*fn;
	void		*arg;
};

struct heap_entry {
	struct loop_timer *owner;
	loop_timer_fn	*fn;
	void		*arg;
};

static struct pollfd *pfd;
static struct entry *ent;
static int nent, capent;
static bool removed;			/* Entries wait to be closed up. */

static struct heap_entry *heap;
static int nheap, capheap;

static const struct loop_step *steps[LOOP_STEPS];
static int nsteps;

static bool again;			/* Another turn at once. */
static bool stopping;
static const char *stop_why;
static long long stop_at;
static long long stop_grace;		/* How long shutdown may take. */

/*
 * Descriptors.
 */
void
loop_io_set(struct loop_io *io, int fd, int events, loop_io_fn *fn,
    void *arg)
{
	int i = io->slot - 1;

	if (i < 0) {
		if (nent == capent) {
			capent = capent == 0 ? 16 : capent * 2;
			pfd = xrealloc(pfd, (size_t)capent * sizeof(*pfd));
			ent = xrealloc(ent, (size_t)capent * sizeof(*ent));
		}
		i = nent++;
		io->slot = i + 1;
		ent[i].owner = io;
	}
	ent[i].fd = fd;
	ent[i].fn = fn;
	ent[i].arg = arg;
	pfd[i].revents = 0;
	loop_io_events(io, events);
}

/* LOOP_OFF leaves the descriptor out of poll(): poll skips fd -1. */
void
loop_io_events(struct loop_io *io, int events)
{
	struct pollfd *p;

	if (io->slot == 0)
		return;
	p = &pfd[io->slot - 1];
	p->fd = events == LOOP_OFF ? -1 : ent[io->slot - 1].fd;
	p->events = events == LOOP_OFF ? 0 : (short)events;
}

void
loop_io_del(struct loop_io *io)
{
	int i = io->slot - 1;

	if (i < 0)
		return;
	ent[i].owner = NULL;
	pfd[i].fd = -1;
	pfd[i].revents = 0;
	io->slot = 0;
	removed = true;
}

bool
loop_io_on(const struct loop_io *io)
{
	return io->slot > 0;
}

/* Close up the entries removed: each one moved tells its owner. */
static void
compact(void)
{
	int i, k = 0;

	for (i = 0; i < nent; i++) {
		if (ent[i].owner == NULL)
			continue;
		if (k != i) {
			ent[k] = ent[i];
			pfd[k] = pfd[i];
			ent[k].owner->slot = k + 1;
		}
		k++;
	}
	nent = k;
	removed = false;
}

/* Hand each descriptor that poll() reported to its handler. */
static void
dispatch(int ready)
{
	int i;

	for (i = 0; i < nent && ready > 0; i++) {
		if (pfd[i].revents == 0)
			continue;
		ready--;
		if (ent[i].owner != NULL)
			ent[i].fn(ent[i].arg, pfd[i].fd, pfd[i].revents);
	}
}

/*
 * Timers: a min-heap on at; each entry's owner knows its place.
 */
static bool
heap_less(int a, int b)
{
	return heap[a].owner->at < heap[b].owner->at;
}

static void
heap_swap(int a, int b)
{
	struct heap_entry t = heap[a];

	heap[a] = heap[b];
	heap[b] = t;
	heap[a].owner->slot = a + 1;
	heap[b].owner->slot = b + 1;
}

/* Restore the heap's order around i, which may have moved either way. */
static void
heap_fix(int i)
{
	int c;

	while (i > 0 && heap_less(i, (i - 1) / 2)) {
		heap_swap(i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
	for (;;) {
		c = 2 * i + 1;
		if (c >= nheap)
			break;
		if (c + 1 < nheap && heap_less(c + 1, c))
			c++;
		if (!heap_less(c, i))
			break;
		heap_swap(i, c);
		i = c;
	}
}

void
loop_timer_set(struct loop_timer *t, long long at, loop_timer_fn *fn,
    void *arg)
{
	if (at < 0) {
		loop_timer_del(t);
		return;
	}
	if (t->slot == 0) {
		if (nheap == capheap) {
			capheap = capheap == 0 ? 16 : capheap * 2;
			heap = xrealloc(heap, (size_t)capheap * sizeof(*heap));
		}
		t->slot = ++nheap;
		heap[nheap - 1].owner = t;
	}
	t->at = at;
	heap[t->slot - 1].fn = fn;
	heap[t->slot - 1].arg = arg;
	heap_fix(t->slot - 1);
}

void
loop_timer_del(struct loop_timer *t)
{
	int i = t->slot - 1;

	if (i < 0)
		return;
	t->slot = 0;
	t->at = -1;
	if (i != --nheap) {
		heap[i] = heap[nheap];
		heap[i].owner->slot = i + 1;
		heap_fix(i);
	}
}

/* Run the timers due by now; one set again for now waits a turn. */
static void
timers_fire(long long now)
{
	struct loop_timer *t;
	loop_timer_fn *fn;
	void *arg;
	int n = nheap;

	while (nheap > 0 && heap[0].owner->at <= now && n-- > 0) {
		t = heap[0].owner;
		fn = heap[0].fn;
		arg = heap[0].arg;
		loop_timer_del(t);
		fn(arg);
	}
}

/*
 * Steps.
 */
/* Kept in the order of phase, then of registration. */
void
loop_step_add(const struct loop_step *s)
{
	int i;

	if (nsteps == LOOP_STEPS)
		abort();
	for (i = nsteps; i > 0 && steps[i - 1]->phase > s->phase; i--)
		steps[i] = steps[i - 1];
	steps[i] = s;
	nsteps++;
}

void
loop_again(void)
{
	again = true;
}

bool
loop_stopping(void)
{
	return stopping;
}

const char *
loop_stop_why(void)
{
	return stop_why;
}

/* The workbench begins to stop, for why; each step's shutdown runs. */
void
loop_stop(const char *why)
{
	int i;

	if (stopping)
		return;
	stopping = true;
	stop_why = why;
	stop_at = now_ms() + stop_grace;
	for (i = 0; i < nsteps; i++)
		if (steps[i]->shutdown != NULL)
			steps[i]->shutdown();
}

/* Has every step finished what it must do before the workbench ends? */
static bool
all_finished(void)
{
	int i;

	for (i = 0; i < nsteps; i++)
		if (steps[i]->finished != NULL && !steps[i]->finished())
			return false;
	return true;
}

/* Does any step hold memory it could give back (trim: give it)? */
static bool
quiet(bool trim)
{
	bool any = false;
	int i;

	for (i = 0; i < nsteps; i++)
		if (steps[i]->quiet != NULL)
			any |= steps[i]->quiet(trim);
	return any;
}

/* How long poll() may sleep: until the nearest timer, or for ever. */
static int
poll_timeout(long long now)
{
	long long at = nheap > 0 ? heap[0].owner->at : -1;

	if (stopping && (at < 0 || stop_at < at))
		at = stop_at;
	if (again || (at >= 0 && at <= now))
		return 0;
	if (at < 0)
		return -1;
	return at - now > INT_MAX ? INT_MAX : (int)(at - now);
}

/*
 * Run until the workbench has stopped: -1 if poll() failed.  After a
 * second of quiet, large buffers are given back.
 */
int
loop_run(long long grace)
{
	int i, n, timeout, status = 0;
	bool trim;

	stop_grace = grace;
	for (;;) {
		again = false;
		for (i = 0; i < nsteps; i++)
			if (steps[i]->before_poll != NULL)
				steps[i]->before_poll();
		if (stopping && (all_finished() || now_ms() >= stop_at))
			break;
		timeout = poll_timeout(now_ms());
		trim = (timeout < 0 || timeout > TRIM_IDLE_MS) && quiet(false);
		if (trim)
			timeout = TRIM_IDLE_MS;
		if ((n = poll(pfd, (nfds_t)nent, timeout)) < 0 &&
		    errno != EINTR) {
			wb_log_error("poll: %s", strerror(errno));
			stop_why = "poll failed";
			status = -1;
			break;
		}
		if (n == 0 && trim)
			quiet(true);
		loop_tick();
		if (n > 0)
			dispatch(n);
		if (removed)
			compact();
		timers_fire(loop_ms());
	}
	for (i = 0; i < nsteps; i++)
		if (steps[i]->end != NULL)
			steps[i]->end();
	return status;
}
