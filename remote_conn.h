/*
 * remote_conn.h: what remote.c (a session: its stream, responses, the
 * queue and the owner's calls) and remote_conn.c (a connection's bytes:
 * connecting, TLS, the request written, reads, timers) share.  For those
 * two files alone.  Includes remote_int.h.
 */
#ifndef REMOTE_CONN_H
#define REMOTE_CONN_H

#include <sys/socket.h>

#include "loop.h"
#include "remote.h"
#include "remote_int.h"

#define MAX_ADDRS	4
#define READ_CHUNK	(64 * 1024)
#define READS_MAX	16		/* Reads of one event (fairness). */
#define IDLE_MS		30000		/* A kept-alive connection. */
#define SEND_MS		30000		/* A request the server won't take. */
#define DELETE_MS	2000		/* The DELETE at the end, in all. */
#define RETRY_MS	1000		/* The GET stream opened again. */
#define RETRY_MAX	5		/* Times in a row, without an event. */
#define DISCARD_MAX	(64 * 1024)	/* A body read and dropped. */
#define ANSWERED_MS	2000		/* A POST's stream after its answer. */
#define VERSION_MAX	31
#define WHY_MAX		(URL_HOST_MAX + HRESP_LOCATION_MAX + 128)

enum role { ROLE_POST, ROLE_STREAM, ROLE_DELETE };

enum cstate {
	C_FREE, C_CONNECT, C_TLS, C_SEND, C_HEAD, C_BODY, C_IDLE
};

enum bodymode {
	B_DISCARD,			/* Read and dropped. */
	B_JSON,				/* A message. */
	B_SSE,				/* Messages. */
	B_ERROR				/* Why the server refused a line. */
};

struct rconn {
	struct remote		*r;
	int			 fd;
	unsigned		 gen;		/* Changes at each reset. */
	enum cstate		 st;
	enum role		 role;
	enum bodymode		 mode;
	bool			 reused;	/* Kept from an earlier one. */
	bool			 got;		/* A byte of the response. */
	bool			 answered;	/* Its stream gave the answer. */
	size_t			 idat, idlen;	/* The request's id in line. */
	int			 tries;		/* Addresses tried. */
	short			 tls_want;
	size_t			 discarded;
	int			 ecode;		/* A refusal's JSON-RPC code. */
	struct tls		*tls;
	struct loop_io		 io;
	struct loop_timer	 timer;
	char			 why[160];	/* A failure to report. */
	struct buf		 out;
	size_t			 outoff;
	struct buf		 in;
	struct buf		 line;		/* The line POSTed. */
	struct buf		 body;		/* A JSON body. */
	struct hresp		 resp;
	struct sse		 sse;
};

struct remote {
	enum remote_type	 type;
	struct url		 url;
	char			 label[URL_HOST_MAX + 16];
	struct buf		 host;		/* Host field. */
	struct buf		 extra;		/* Configured fields. */
	struct sockaddr_storage	 addrs[MAX_ADDRS];
	socklen_t		 alen[MAX_ADDRS];
	int			 naddr;
	int			 good;		/* The address that worked. */
	int			 connect_ms;
	int			 stall_ms;
	const struct remote_ops	*ops;
	void			*ctx;
	char			 session[HRESP_SID_MAX + 1];
	char			 version[VERSION_MAX + 1];
	char			 endpoint[URL_MAX + 1];	/* HTTP+SSE's. */
	char			 last_id[SSE_ID_MAX + 1];	/* Its stream's. */
	bool			 have_endpoint;
	bool			 ready;
	bool			 no_stream;	/* 405, or given up. */
	bool			 failed;
	bool			 closing;
	bool			 doomed;
	int			 busy;		/* Handlers running. */
	int			 retries;
	struct loop_timer	 retry;
	struct buf		 pending;	/* size_t length, bytes; ... */
	size_t			 pendoff;
	struct rconn		 conns[1 + REMOTE_POOL];
};

/* remote_conn.c: a connection's life and bytes. */
void	 conn_reset(struct rconn *);
void	 conn_trim(struct rconn *);
void	 conn_deadline(struct rconn *, long long);
void	 conn_events(struct rconn *);
void	 conn_defer(struct rconn *, const char *);
void	 conn_send(struct rconn *);
void	 conn_start(struct rconn *, enum role);
void	 conn_open(struct rconn *, enum role);
void	 conn_connected(struct rconn *);
void	 conn_handshake(struct rconn *);
void	 conn_io(void *, int, short);
void	 conn_timer(void *);
int	 remote_resolve(struct remote *, struct buf *);
bool	 remote_visible(const char *, size_t);

/* remote.c: the session, told by a connection's handlers. */
void	 remote_enter(struct remote *);
void	 remote_leave(struct remote *);
bool	 remote_hears(const struct remote *);
void	 remote_doom(struct remote *);
void	 remote_pump(struct remote *);
void	 conn_lost(struct rconn *, const char *);
bool	 conn_parse(struct rconn *);
void	 conn_done(struct rconn *);

#endif /* REMOTE_CONN_H */
