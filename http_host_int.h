/*
 * http_host_int.h: layer 7, private to the HTTP host's two files: the
 * sessions and their POSTs (http_host.c, which makes, finds and ends
 * them and turns requests into their lines) and the transport that
 * carries each session's lines to its POSTs and stream (http_carry.c).
 */
#ifndef HTTP_HOST_INT_H
#define HTTP_HOST_INT_H

#include "workbench.h"
#include "http.h"

#define SID_LEN		32		/* Hex of 128 random bits. */
#define LINE_KEEP	(64 * 1024)	/* A line buffer kept up to this. */

struct hpost {				/* A POSTed request not answered. */
	struct hpost		*next;
	struct http_conn	*conn;		/* NULL: gone, to cancel. */
	char			*id;		/* Its id, raw. */
	size_t			 idlen;
	char			*token;		/* Its progressToken, raw. */
	size_t			 toklen;
	bool			 sse;		/* Its client takes a stream, */
	bool			 streaming;	/* and is given one. */
	struct buf		 held;		/* Its body, while it waits. */
};

struct hsess {
	struct hsess		*next;
	struct session		*se;
	char			 sid[SID_LEN + 1];	/* "": stateless. */
	struct http_conn	*get;		/* Its GET stream. */
	struct hpost		*posts;		/* In the order they came. */
	struct hpost		*cur;		/* The one being dispatched. */
	struct buf		 part;		/* A line begun in its queue. */
	struct buf		 backlog;	/* Lines for a GET to come. */
	char			*state;		/* A requestState it gave. */
	size_t			 statelen;
	long long		 last;		/* Its last request or stream. */
	bool			 ending;	/* Closed before the next poll. */
	bool			 gone;		/* A POST's connection went. */
};

/* http_host.c: the sessions and their POSTs. */
bool	 hsess_room(bool, int);
void	 hpost_free(struct hsess *, struct hpost *);
void	 hpost_gone(struct hsess *, struct hpost *);
const char *hraw_of(const struct json *, int, size_t *);

/* http_carry.c: their transport. */
extern const struct session_io hcarry_io;
int	 hcarry_flush(struct session *);
void	 hcarry_end(void);
void	 hsess_hear(struct hsess *);
struct hpost *hpost_by_id(struct hsess *, const char *, size_t);
void	 hsess_to_get(struct hsess *, const char *, size_t);

#endif /* HTTP_HOST_INT_H */
