/*
 * session.h: layer 4, a client session as a value.  A session is one
 * client's conversation: what carries its bytes, its output queue and
 * the replies written into it (session.c), who may write that queue
 * while a long message owns it (pace.c), its era and capabilities, and
 * which toolboxes it opened.  Everything kept for a session above this
 * layer (calls, relayed requests, parked calls, waiters, subscriptions)
 * keeps its struct session * and is routed by it.  Includes era.h,
 * peer.h, jsonrpc.h and those below.
 */
#ifndef SESSION_H
#define SESSION_H

#include "loop.h"
#include "era.h"
#include "peer.h"
#include "jsonrpc.h"

struct session;

/*
 * A transport of client sessions (redis's ConnectionType): stdio, a
 * shared workbench's fronts (both over pipes) and HTTP.  A transport
 * opens a session (dispatch_open, dispatch_open_by), watches what
 * carries it with the loop and hands its lines to dispatch_line; flush
 * writes what the queue holds as far as the client takes it (0, or -1
 * once the client is gone), wide readies it for a long line (may be
 * NULL), and left is told when the client left (gone: it cannot even
 * be written to), for the transport to end the session.  Pipes are
 * written by session_pipe_flush and session_pipe_wide; another
 * transport takes the queue's lines itself, its own data kept with the
 * session (session_carrier).  park (may be NULL) is asked to watch a
 * pipe's input that stayed quiet for SESSION_PARK_MS, so that the loop
 * polls it no more; true when it took it (session_wake gives it back).
 */
struct session_io {
	const char	*name;
	int		(*flush)(struct session *);
	void		(*wide)(struct session *);
	void		(*left)(struct session *, bool);
	bool		(*park)(struct session *);
};

#define SESSION_PARK_MS	1000	/* Quiet input, then parked. */

int	 session_pipe_flush(struct session *);
void	 session_pipe_wide(struct session *);
void	 session_left(struct session *, bool);

/* The sessions, in the order they came. */
struct session *session_new(int, int, const struct session_io *, void *);
struct session *session_new_by(const struct session_io *, void *);
void	*session_carrier(const struct session *);
unsigned long session_serial(const struct session *);
void	 session_free(struct session *);
struct session *session_first(void);
struct session *session_next(const struct session *);
#define SESSION_EACH(se) \
	for ((se) = session_first(); (se) != NULL; (se) = session_next(se))

/*
 * The sessions that can hear a message that answers nothing now (a
 * pipe's always; another transport's while its client has a stream
 * open): a fan-out walks these alone, so that sessions that cannot
 * receive cost it nothing and keep nothing.
 */
void	 session_hear(struct session *, bool);
bool	 session_hearing(const struct session *);
struct session *session_first_hearing(void);
struct session *session_next_hearing(const struct session *);
#define SESSION_HEARING(se) \
	for ((se) = session_first_hearing(); (se) != NULL; \
	    (se) = session_next_hearing(se))

/*
 * A pipe's descriptors with the loop: its input is watched by the
 * handler the transport gives, wanted or not (while not: only for its
 * hang-up); its output while bytes wait (the loop then flushes).  The
 * handler says when it read (session_heard): input quiet for
 * SESSION_PARK_MS is parked with a transport that can watch it.
 */
void	 session_watch_input(struct session *, loop_io_fn *, void *);
void	 session_want_input(struct session *, bool);
void	 session_stop_input(struct session *);
void	 session_heard(struct session *);
void	 session_wake(struct session *);
bool	 session_parked(const struct session *);

/*
 * The sessions with bytes to write or a paced reply under way, the only
 * ones the loop looks at before it polls: each is flushed, and one whose
 * client cannot take it (or that overrun says is too far behind) has
 * its queue dropped and its transport told (session_left).
 */
void	 sessions_flush(bool (*)(struct session *));
bool	 sessions_behind(bool *);
bool	 sessions_written(void);
int	 sessions_count(void);
struct peer *session_peer(struct session *);
int	 session_flush(struct session *);
size_t	 session_queued(const struct session *);
bool	 session_full(const struct session *);
bool	 session_written(const struct session *);
void	 session_drop(struct session *);
void	 session_pump(void);
bool	 sessions_pacing(void);

/* Its queue: a line as it is, or a reply. */
struct buf *session_out(struct session *);
void	 session_send_line(struct session *, const char *, size_t);

struct buf *reply_begin(struct session *, const char *, size_t);
void	 reply_end(struct session *);
void	 reply_end_as(struct session *, const char *);
void	 reply_era(struct session *, bool);
void	 reply_raw(struct session *, const char *, size_t, const char *);
void	 reply_error(struct session *, const char *, size_t, int,
	    const char *);
void	 reply_error_data(struct session *, const char *, size_t, int,
	    const char *, const char *, size_t);
void	 reply_cache_hints(struct session *, struct buf *, int);
void	 reply_text(struct session *, const char *, size_t, const char *,
	    bool);

/*
 * A JSON object written in pieces: put writes the piece at *at (0 first)
 * to out and moves *at on, false once the object is complete; release,
 * if not NULL, frees arg after the last.
 */
struct pieces {
	bool	(*put)(struct buf *, const void *, size_t *);
	void	(*release)(void *);
	void	 *arg;
};

void	 reply_structured_by(struct session *, const char *, size_t,
	    const struct pieces *);
void	 reply_structured(struct session *, const char *, size_t,
	    const struct buf *);

/* Its era: initialize's, or the modern request being handled. */
void	 session_initialize(struct session *, const char *,
	    const struct json *, int);
bool	 session_legacy(const struct session *);
const char *session_protocol(const struct session *);
const char *session_era_name(const struct session *);
void	 session_set_level(struct session *, int);
int	 session_level(const struct session *);
const struct buf *session_caps(const struct session *);
const struct buf *session_legacy_caps(const struct session *);
void	 session_assume(struct session *, const struct buf *);
bool	 session_has(const struct session *, enum client_cap);
const struct era *session_era(const struct session *);
struct era *session_era_slot(struct session *);
void	 session_modern_begin(struct session *);
void	 session_request_end(struct session *);

/* What it sees: toolboxes it opened, hashes of what it was told. */
enum { SESSION_TOOLS, SESSION_PROMPTS, SESSION_RESOURCES, SESSION_LISTS };

bool	 session_box_open(const struct session *, int);
void	 session_open_box(struct session *, int);
unsigned long *session_listed(struct session *);

/*
 * pace.c: who writes into a session's queue: one long message at a time
 * owns it (a stream, a paced reply), the others wait held behind it.
 */
bool	 pace_owned(const struct session *);
void	 pace_own(struct session *);
void	 pace_release(struct session *);
struct buf *pace_queue(struct session *);
size_t	 pace_held_bytes(const struct session *);
bool	 pace_holds_much(const struct session *);
void	 pace_reply(struct session *, bool (*)(struct session *, void *),
	    void (*)(void *), void *);
void	 pace_run(struct session *);
bool	 pace_active(const struct session *);
void	 pace_drop(struct session *);

#endif /* SESSION_H */
