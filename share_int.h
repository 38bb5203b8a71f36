/*
 * share_int.h: what share.c and front.c share and no one else sees: the
 * message types, the limits of the wire, and a few helpers.
 */
#ifndef SHARE_INT_H
#define SHARE_INT_H

#include <stdint.h>

#define SHARE_PROTO		1	/* The wire's version. */
#define SHARE_HDR		8	/* length:4 type:2 version:2 */
#define SHARE_HELLO_MAX		(1024 * 1024)	/* A hello's body. */
#define SHARE_ENV_MAX		16384	/* Variables in a hello. */
#define SHARE_OPT_MAX		32	/* Options in a hello. */
#define SHARE_REASON_MAX	512	/* A refusal's text. */
#define SHARE_STATUS_MAX	(4 * 1024 * 1024)	/* A status answer. */
#define SHARE_HANDSHAKE_MS	10000	/* Accept to GO, on the daemon. */
#define SHARE_ANSWER_MS		5000	/* The front waits for an answer. */
#define SHARE_START_MS		10000	/* The front waits for a listener. */
#define SHARE_LOCK_MS		30000	/* The front waits for the lock. */
#define SHARE_LOG_MAX		(1024 * 1024)	/* Then .log goes to .old. */

enum share_type {
	MSG_HELLO = 1,		/* front: fields; fds 0-2 for a session */
	MSG_WELCOME = 2,	/* daemon: send GO to begin */
	MSG_REFUSE = 3,		/* daemon: why not, as text */
	MSG_GO = 4,		/* front: the stdio is yours */
	MSG_STATUS = 5,		/* daemon: JSON */
	MSG_END = 6,		/* daemon: one byte, the exit status */
	MSG_PARK = 7		/* daemon: SHARE_WAKE_LEN bytes, a fd */
};

static inline uint32_t
share_get32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
}

static inline unsigned
share_get16(const unsigned char *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

int	 share_lock_open(const struct share_dir *, const char *, struct buf *);
bool	 share_lock_current(const struct share_dir *, const char *, int);
void	 share_prune(const struct share_dir *, const char *);
int	 share_log_open(const struct share_dir *, const char *, struct buf *);
bool	 share_peer_ours(int, pid_t *, struct buf *);
void	 share_file(struct buf *, const struct share_dir *, const char *,
	    const char *);

#endif /* SHARE_INT_H */
