/*
 * loop.h: layer 1, the one poll() loop and what registers with it.  A
 * subsystem that owns a descriptor registers it once, with the events
 * it wants, a handler and the handler's argument (redis's
 * aeCreateFileEvent), and changes the events as its state changes: a
 * turn costs what happened, not what exists.  Its timers wake it at a
 * time (a heap: the loop sleeps until the nearest).  Its steps run once
 * a turn before poll() (redis's beforeSleep), when the workbench begins
 * to stop, and at the end.  The loop knows no subsystem by name.
 * Includes util.h.
 */
#ifndef LOOP_H
#define LOOP_H

#include "util.h"

/*
 * A descriptor watched, kept by its owner (all zero: none yet, so that
 * a calloc'ed owner needs no set-up).  Events LOOP_OFF: registered
 * but not polled at all; 0: polled for its hang-up and errors alone.
 * The handler may change or remove any registration, its own included.
 * A lazy descriptor only tells that a peer went away: while the loop is
 * busy it is polled once a second, so that an idle peer costs poll()
 * nothing in most turns.
 */
typedef void loop_io_fn(void *, int, short);

struct loop_io {
	int		 slot;		/* In the loop's table, from 1; 0: none. */
};
#define LOOP_OFF	(-1)

void	 loop_io_set(struct loop_io *, int, int, loop_io_fn *, void *);
void	 loop_io_events(struct loop_io *, int);
void	 loop_io_lazy(struct loop_io *);
void	 loop_io_del(struct loop_io *);
bool	 loop_io_on(const struct loop_io *);

/* A time to be woken at, kept by its owner; at < 0 or del: none. */
typedef void loop_timer_fn(void *);

struct loop_timer {
	long long	 at;
	int		 slot;		/* In the loop's heap, from 1; 0: none. */
};

void	 loop_timer_set(struct loop_timer *, long long, loop_timer_fn *,
	    void *);
void	 loop_timer_del(struct loop_timer *);
bool	 loop_timer_on(const struct loop_timer *);

/*
 * A subsystem's steps; any may be NULL.  They run in the order of their
 * phase, and within a phase in the order of registration.  before_poll
 * runs once a turn, and must cost what happened since the last; it may ask for another turn at once (loop_again).  shutdown
 * runs once when the workbench begins to stop (loop_stop); the loop then
 * ends when every finished() is true, or at the grace's end.  end runs
 * after the loop, in the same order.  quiet is asked before a long
 * sleep whether it holds memory it could give back, and gives it back
 * when trim is true and the loop stayed quiet.
 */
enum loop_phase {
	LOOP_ACCEPT,		/* Transports: sessions begin and end. */
	LOOP_SERVE,		/* What lower layers asked for is answered. */
	LOOP_RECLAIM,		/* What no one uses any more goes. */
	LOOP_WRITE,		/* Every client's queue is written, */
	LOOP_SEND,		/* then every other queue, and watched; */
	LOOP_RESUME,		/* what waited for them goes on. */
	LOOP_LAST		/* Verdicts, and the log of the turn. */
};

struct loop_step {
	enum loop_phase	 phase;
	void	(*before_poll)(void);
	void	(*shutdown)(void);
	bool	(*finished)(void);
	void	(*end)(void);
	bool	(*quiet)(bool);
};

void	 loop_step_add(const struct loop_step *);
void	 loop_again(void);
void	 loop_stop(const char *);
bool	 loop_stopping(void);
const char *loop_stop_why(void);
int	 loop_run(long long);

#endif /* LOOP_H */
