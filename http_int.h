/*
 * http_int.h: what http.c and http_out.c share of a connection and of
 * the server; no one outside the HTTP framing includes it.
 */
#ifndef HTTP_INT_H
#define HTTP_INT_H

#include <sys/types.h>

#define DEF_MAX_BODY	WB_MAX_MESSAGE
#define DEF_MAX_CONNS	64
#define DEF_REQUEST_MS	10000
#define DEF_IDLE_MS	60000
#define DEF_SEND_MS	30000
#define DEF_LINGER_MS	2000
#define OUT_HIGH	(1024 * 1024)	/* A stream is full, */
#define OUT_LOW		(256 * 1024)	/* and drained again. */
#define READ_FIRST	2000		/* Into a buffer of 4 KiB. */
#define READ_CHUNK	(16 * 1024)
#define HDRS_MAX	2048		/* Headers added to one answer. */
#define ACCEPT_PAUSE_MS	1000		/* Out of descriptors: wait. */

enum cstate {
	C_READ,			/* Reading a request. */
	C_BUSY,			/* The MCP layer has it. */
	C_STREAM,		/* Its answer is a stream. */
	C_DONE,			/* Its answer is queued whole. */
	C_LINGER		/* Written, shut; reading what comes. */
};

struct http_conn {
	struct http_server	*srv;
	int			 fd;
	enum cstate		 st;
	bool			 dead;		/* Closed; freed later. */
	bool			 keep;		/* Kept after this answer. */
	bool			 idle;		/* Between requests. */
	bool			 chunked;	/* The stream is. */
	bool			 high;		/* drained() owed. */
	bool			 again;		/* A pipelined request waits. */
	long long		 deadline;	/* Of C_READ or C_LINGER. */
	long long		 moved;		/* Output last written. */
	struct buf		 in;
	struct buf		 out;
	size_t			 outoff;
	struct buf		 hdrs;		/* http_add_header's. */
	void			*data;
	const char		*cors;		/* A listed Origin, or NULL. */
	struct http_parser	 p;
};

struct http_server {
	struct http_config	 cfg;
	const struct http_ops	*ops;
	void			*ctx;
	int			 fd;
	int			 port;
	long long		 paused;	/* No accept before. */
	struct http_conn	**conns;
	int			 n, cap;
	int			 live;		/* Not dead. */
	int			 idle;		/* Of them, between requests. */
};

int	 http_listen_open(const struct http_addr *, int *, struct buf *);
int	 http_peer_uid(int, uid_t *);
void	 http_conn_kill(struct http_conn *);
void	 http_refuse(struct http_conn *, int);
void	 http_preflight(struct http_conn *);

#endif
