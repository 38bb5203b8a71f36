/*
 * peer.h: layer 3, non-blocking line I/O with one peer (a client on its
 * two descriptors, or a server on its stdout and stdin): whole lines
 * read and handed over, long ones streamed or dropped, output queued and
 * written as the peer takes it.  Includes util.h.
 */
#ifndef PEER_H
#define PEER_H

#include "util.h"

#define HIGH_WATER		(4u * 1024 * 1024)	/* Stop reading. */
#define PUMP_BYTES		4096	/* Lines handled between writes. */

enum peer_mode {			/* What the line being read gets: */
	PEER_LINES,			/* handed over whole at its newline; */
	PEER_WHOLE,			/* the same, declined for streaming; */
	PEER_STREAM,			/* passed on as it arrives; */
	PEER_SKIP,			/* its rest dropped unreported; */
	PEER_DROP			/* too long: counted, then reported. */
};

struct peer {
	int		 rfd;
	int		 wfd;
	struct buf	 in;
	struct buf	 out;
	size_t		 outoff;	/* Bytes of out already written. */
	size_t		 scanned;	/* Bytes of in searched for '\n'. */
	enum peer_mode	 mode;
	size_t		 dropped;	/* PEER_DROP: the line's bytes. */
	char		*dropped_id;	/* Its id, when one was found. */
	char		 tail[64];	/* Its last bytes. */
	size_t		 taillen;
	bool		 eof;
	bool		 reading;	/* Its lines are being handled, */
	bool		 closed;	/* and it was closed meanwhile, */
	bool		 gave;		/* or gave its buffer away. */
	int		 pipe_was[2];	/* rfd's, wfd's size (peer_widen) */
};

/* The pipe of a long line (peer_widen). */
#define PIPE_WIDE	(1024 * 1024)
/* A line this long without its newline yet is offered to ops->stream. */
#define STREAM_MIN	(256u * 1024)
#define PEER_NOSTREAM	((size_t)-1)	/* ops->stream: keep it whole */
#define PEER_DISCARD	((size_t)-2)	/* ops->stream: drop the rest */

struct peer_ops {
	void	(*line)(void *, char *, size_t);
	void	(*oversize)(void *, size_t, const char *);
	bool	(*busy)(void *);	/* Hold further lines?  May be NULL. */
	/*
	 * Pass on part of a line: the bytes so far (all of the line but its
	 * newline when end).  Returns how many it took, which the peer
	 * drops, or PEER_NOSTREAM / PEER_DISCARD; or it calls peer_overlong
	 * and the rest is counted as a line too long.  May be NULL.
	 */
	size_t	(*stream)(void *, char *, size_t, bool);
	/*
	 * Write what the lines so far queued, every PUMP_BYTES of a long run
	 * of them, so that the next process starts on them while we go on.
	 * May be NULL.
	 */
	void	(*pump)(void);
};

ssize_t	 peer_read(struct peer *, size_t, const struct peer_ops *, void *);
void	 peer_input(struct peer *, size_t, const struct peer_ops *, void *);
int	 peer_flush(struct peer *);
void	 peer_widen(struct peer *, int, bool);
void	 peer_drop_output(struct peer *);
void	 peer_skip_line(struct peer *);
char	*peer_give_line(struct peer *, const char *, size_t);
void	 peer_overlong(struct peer *, size_t, const char *);
size_t	 peer_queued(const struct peer *);
bool	 peer_trim(struct peer *);
bool	 peer_bloated(struct peer *);
void	 peer_close(struct peer *);

#endif /* PEER_H */
