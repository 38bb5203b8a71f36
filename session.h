/*
 * session.h: layer 4, the client's session: its era and capabilities,
 * its output queue and the replies written into it (session.c), and
 * who may write that queue while a long message owns it (pace.c).
 * Includes era.h and peer.h and those below.
 */
#ifndef SESSION_H
#define SESSION_H

#include "era.h"
#include "peer.h"
#include "rpc.h"

void	 client_open(int, int);
struct peer *client_peer(void);
bool	 client_full(void);
void	 client_pump(void);
struct buf *client_queue(void);
struct buf *client_out(void);
void	 client_send_line(const char *, size_t);
struct buf *reply_begin(const char *, size_t);
void	 reply_end(void);
void	 reply_end_as(const char *);
void	 reply_era(bool);
void	 reply_error(const char *, size_t, int, const char *);
void	 reply_error_data(const char *, size_t, int, const char *,
	    const char *, size_t);
void	 reply_cache_hints(struct buf *, int);
void	 reply_raw(const char *, size_t, const char *);
void	 reply_text(const char *, size_t, const char *, bool);

bool	 reply_take_era(void);

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

void	 reply_structured_by(const char *, size_t, const struct pieces *);
void	 reply_structured(const char *, size_t, const struct buf *);

const char *client_protocol(void);
bool	 client_session(void);
const struct buf *client_caps(void);
void	 client_assume(const struct buf *);
const struct buf *client_session_caps(void);
bool	 client_has(enum client_cap);
const struct era *client_era(void);

/* What dispatch.c sets as it handles a request. */
struct era *client_era_slot(void);
void	 client_modern_begin(void);
void	 client_request_end(void);
void	 client_initialize(const char *, const struct json *, int);

/*
 * pace.c: who writes into the client's queue: one long message at a time
 * owns it (a stream, a paced reply), the others wait held behind it.
 */
struct buf *pace_held(void);
bool	 pace_owned(void);
void	 pace_own(void);
void	 pace_release(void);
size_t	 pace_held_bytes(void);
bool	 pace_holds_much(void);
void	 pace_reply(bool (*)(void *), void (*)(void *), void *);
void	 pace_run(void);
bool	 pace_active(void);
bool	 pace_making(void);
void	 pace_drop(void);

#endif /* SESSION_H */
