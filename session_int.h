/*
 * session_int.h: layer 4, private to session.c and pace.c: what a
 * session is made of.  Everyone else holds a struct session * and goes
 * through session.h.  Includes session.h.
 */
#ifndef SESSION_INT_H
#define SESSION_INT_H

#include "session.h"

/*
 * Who owns a session's queue (pace.c moves it): no one, and every message
 * goes in, in turn; a message passed on as it arrives (pace_own), until
 * its line ends (pace_release); or the paced reply first in line, until
 * it is made (pace_next) or the client is gone (pace_drop).  Whoever owns
 * it, the others wait in the held queue.
 */
enum queue_owner {
	QUEUE_OPEN,
	QUEUE_OWNED,		/* By a message passed on as it arrives. */
	QUEUE_PACED		/* By the paced reply line[0], being made. */
};

/* A paced reply: steps that each write a piece of it. */
struct pacer {
	bool	(*step)(struct session *, void *);	/* False once done. */
	void	(*release)(void *);
	void	 *ctx;
	size_t	  after;		/* Held bytes that go before it. */
};

struct session {
	struct session		*next;		/* The loop's list. */
	struct session		*pnext;		/* Those with bytes to write, */
	bool			 pending;	/* this one among them. */
	struct loop_io		 in_io;		/* A pipe's, with the loop. */
	struct loop_io		 out_io;
	bool			 unread;	/* Its input is read no more. */
	bool			 want;		/* Its input is to be read. */
	bool			 parked;	/* Its transport watches it. */
	long long		 heard;		/* Its input last read, loop_ms. */
	struct loop_timer	 park_timer;	/* When it may be parked. */
	unsigned long		 serial;	/* Its number, in the log. */
	struct session		*hnext;		/* Those that can hear now, */
	struct session		*hprev;
	bool			 hearing;	/* this one among them. */
	const struct session_io	*io;		/* What carries its bytes, */
	void			*carrier;	/* with its data. */
	struct peer		 peer;		/* The pipe: rfd, wfd, queues. */

	/* Its era: a 2025 session from initialize, or modern requests. */
	bool			 initialized;
	bool			 was_modern;	/* A modern request came. */
	int			 level;		/* logging/setLevel's; -1: none. */
	char			*protocol;
	struct buf		 caps;		/* What servers are told. */
	unsigned		 can;		/* enum client_cap */
	struct era		 era;		/* The modern request handled. */
	bool			 modern_reply;	/* The next reply's era. */

	/* What it sees: its open toolboxes, what it was told is listed. */
	unsigned char		*open;		/* By toolbox index. */
	int			 nopen;
	unsigned long		 listed[SESSION_LISTS];

	/* Who writes its queue (pace.c). */
	struct buf		 held;		/* After the owner's line. */
	enum queue_owner	 owner;
	bool			 owner_writes;	/* The paced reply writes now. */
	struct pacer		*line;		/* line[0] owns it when made; */
	int			 nline;		/* the others wait their turn. */
};

void	 session_mark(struct session *);

#endif /* SESSION_INT_H */
