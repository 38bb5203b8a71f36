/*
 * loop.c: the one poll() loop.  Each registration keeps a slot of the
 * table of entries for its life; poll() is given an array made from the
 * table, remade only when the set of descriptors polled changed (one
 * added, removed, turned on or off), so that a turn where nothing came
 * or went costs nothing here.  A slot freed while handlers run is used
 * again only once the array is remade, so that a handler may remove any
 * registration while the loop walks the array.  Lazy descriptors, which
 * only tell of a peer's end, are at the array's end and polled once a
 * second while the loop is busy.  Timers are a binary heap on times.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "loop.h"

#define LOOP_STEPS	16
#define TRIM_IDLE_MS	1000		/* Quiet this long: give memory back. */
#define LAZY_MS		1000		/* Lazy descriptors, when busy. */

struct entry {
	struct loop_io	*owner;		/* NULL: free. */
	int		 fd;
	int		 events;	/* LOOP_OFF: not polled. */
	bool		 lazy;
	int		 at;		/* In the array, or -1. */
	loop_io_fn	*fn;
	void		*arg;
};

struct heap_entry {
	struct loop_timer *owner;
	loop_timer_fn	*fn;
	void		*arg;
};

static struct entry *ent;		/* By slot. */
static int nent, capent;
static int *spare, nspare, nfreed;	/* Free slots; [nspare, nfreed) */
					/* are free once the array is remade. */
static struct pollfd *pfd;		/* What poll() is given: */
static int *pslot;			/* each one's slot, */
static int npfd, nbusy, cappfd;		/* those polled every turn first. */
static bool changed;			/* The array must be made again. */
static long long lazy_due;

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
static int
slot_new(void)
{
	int i;

	if (nspare > 0) {
		i = spare[--nspare];
		spare[nspare] = spare[--nfreed];
		return i;
	}
	if (nent == capent) {
		capent = capent == 0 ? 16 : capent * 2;
		ent = xrealloc(ent, (size_t)capent * sizeof(*ent));
		spare = xrealloc(spare, (size_t)capent * sizeof(*spare));
	}
	return nent++;
}

void
loop_io_set(struct loop_io *io, int fd, int events, loop_io_fn *fn,
    void *arg)
{
	struct entry *e;

	if (io->slot == 0) {
		io->slot = slot_new() + 1;
		e = &ent[io->slot - 1];
		memset(e, 0, sizeof(*e));
		e->owner = io;
		e->at = -1;
		e->events = LOOP_OFF;
	}
	e = &ent[io->slot - 1];
	if (e->fd != fd && e->at >= 0) {
		pfd[e->at].fd = fd;
		pfd[e->at].revents = 0;
	}
	e->fd = fd;
	e->fn = fn;
	e->arg = arg;
	loop_io_events(io, events);
}

/* On or off changes what poll() is given; events alone, in place. */
void
loop_io_events(struct loop_io *io, int events)
{
	struct entry *e;

	if (io->slot == 0)
		return;
	e = &ent[io->slot - 1];
	e->events = events;
	if ((events != LOOP_OFF) != (e->at >= 0))
		changed = true;
	else if (e->at >= 0)
		pfd[e->at].events = (short)events;
}

/*
 * Polled once a second while the loop is busy, and whenever it sleeps
 * after that: for a descriptor that only tells that a peer went away.
 */
void
loop_io_lazy(struct loop_io *io)
{
	if (io->slot == 0)
		return;
	ent[io->slot - 1].lazy = true;
	changed = true;
}

void
loop_io_del(struct loop_io *io)
{
	int i = io->slot - 1;

	if (i < 0)
		return;
	ent[i].owner = NULL;
	if (ent[i].at >= 0)
		changed = true;
	io->slot = 0;
	/* Free once the array no longer names it. */
	spare[nfreed++] = i;
}

bool
loop_io_on(const struct loop_io *io)
{
	return io->slot > 0;
}

static void
put(int i)
{
	if (npfd == cappfd) {
		cappfd = cappfd == 0 ? 16 : cappfd * 2;
		pfd = xrealloc(pfd, (size_t)cappfd * sizeof(*pfd));
		pslot = xrealloc(pslot, (size_t)cappfd * sizeof(*pslot));
	}
	pfd[npfd].fd = ent[i].fd;
	pfd[npfd].events = (short)ent[i].events;
	pfd[npfd].revents = 0;
	pslot[npfd] = i;
	ent[i].at = npfd++;
}

/* The array poll() is given: the busy descriptors, then the lazy. */
static void
remake(void)
{
	int i, lazy;

	npfd = 0;
	for (i = 0; i < nent; i++)
		ent[i].at = -1;
	for (lazy = 0; lazy < 2; lazy++) {
		for (i = 0; i < nent; i++)
			if (ent[i].owner != NULL && ent[i].lazy == lazy &&
			    ent[i].events != LOOP_OFF)
				put(i);
		if (lazy == 0)
			nbusy = npfd;
	}
	nspare = nfreed;
	changed = false;
}

/* Hand each descriptor that poll() reported to its handler. */
static void
dispatch(int ready, int n)
{
	struct entry *e;
	int i;

	for (i = 0; i < n && ready > 0; i++) {
		if (pfd[i].revents == 0)
			continue;
		ready--;
		e = &ent[pslot[i]];
		if (e->owner != NULL)
			e->fn(e->arg, pfd[i].fd, pfd[i].revents);
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

bool
loop_timer_on(const struct loop_timer *t)
{
	return t->slot > 0;
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
 * How many of the array to poll: the lazy descriptors too once a second
 * (and so whenever the loop sleeps after a busy second).  Without them,
 * the sleep ends when they are due.
 */
static int
poll_count(long long now, int *timeout)
{
	if (npfd == nbusy || now >= lazy_due)
		return npfd;
	if (*timeout < 0 || *timeout > lazy_due - now)
		*timeout = (int)(lazy_due - now);
	return nbusy;
}

/* One poll(): false if it failed. */
static bool
poll_once(void)
{
	long long now = now_ms();
	int n, ready, timeout = poll_timeout(now);
	bool trim;

	trim = (timeout < 0 || timeout > TRIM_IDLE_MS) && quiet(false);
	if (trim)
		timeout = TRIM_IDLE_MS;
	if (changed)
		remake();
	n = poll_count(now, &timeout);
	if ((ready = poll(pfd, (nfds_t)n, timeout)) < 0 && errno != EINTR) {
		wb_log_error("poll: %s", strerror(errno));
		stop_why = "poll failed";
		return false;
	}
	loop_tick();
	if (n > nbusy)
		lazy_due = loop_ms() + LAZY_MS;
	if (ready == 0 && trim)
		quiet(true);
	if (ready > 0)
		dispatch(ready, n);
	timers_fire(loop_ms());
	return true;
}

/*
 * Run until the workbench has stopped: -1 if poll() failed.  After a
 * second of quiet, large buffers are given back.
 */
int
loop_run(long long grace)
{
	int i, status = 0;

	stop_grace = grace;
	for (;;) {
		again = false;
		for (i = 0; i < nsteps; i++)
			if (steps[i]->before_poll != NULL)
				steps[i]->before_poll();
		if (stopping && (all_finished() || now_ms() >= stop_at))
			break;
		if (!poll_once()) {
			status = -1;
			break;
		}
	}
	for (i = 0; i < nsteps; i++)
		if (steps[i]->end != NULL)
			steps[i]->end();
	return status;
}
