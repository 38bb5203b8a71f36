/*
 * remote.h: layer 3, an MCP server reached over HTTP instead of pipes:
 * one session over Streamable HTTP (2025-03-26 and later) or the older
 * HTTP+SSE transport (2024-11-05), on http or https (remote_tls.c).  It
 * carries newline-free JSON-RPC lines both ways, as a server's pipes do,
 * and knows nothing of what they say; all its I/O is registered with the
 * loop (loop.h).  Includes util.h.
 *
 * The owner sends lines with remote_send (queued, never blocking) and
 * hears through struct remote_ops, called only from the loop's handlers,
 * never from inside a remote_* call:
 *  - message: a JSON-RPC message from the server, as one line without
 *    its newline (an answer, a request or a notification);
 *  - refused: a line sent that the server did not take (an HTTP error,
 *    a body too large, a connection lost before its answer began): the
 *    owner answers its id, if it has one, with an error saying why (and
 *    the JSON-RPC error code the server's body gave, or 0);
 *  - session_lost: the server no longer knows our Mcp-Session-Id (a
 *    404): lines in flight will not be answered; the owner initializes
 *    again on the same remote (the next lines go without the old id);
 *  - failed: the server cannot be reached, or its stream ended (the
 *    older transport), said once with why; nothing is heard after it
 *    and remote_send refuses.  The owner calls remote_close and opens it
 *    again later (with backoff).
 * remote_close may be called from inside any of them.
 *
 * Bounds: 1 + REMOTE_POOL sockets a remote, REMOTE_QUEUE_MAX bytes of
 * lines waiting, a message (a JSON body or an event) of WB_MAX_MESSAGE;
 * connect_ms for a connection and its TLS handshake, stall_ms for a
 * head or a JSON body that does not move (an event stream may rest).
 */
#ifndef REMOTE_H
#define REMOTE_H

#include "util.h"

enum remote_type {
	REMOTE_HTTP,			/* Streamable HTTP. */
	REMOTE_SSE			/* HTTP+SSE, 2024-11-05. */
};

struct remote_header {
	const char	*name;
	const char	*value;		/* Never logged: it may be a key. */
};

struct remote_config {
	const char			*url;
	enum remote_type		 type;
	const struct remote_header	*headers;
	int				 nheaders;
	int				 connect_ms;	/* 0: the default. */
	int				 stall_ms;	/* 0: the default. */
};

struct remote_ops {
	void	(*message)(void *, char *, size_t);
	void	(*refused)(void *, const char *, size_t, int, const char *);
	void	(*session_lost)(void *);
	void	(*failed)(void *, const char *);
};

#define REMOTE_CONNECT_MS	10000	/* Connect and TLS handshake. */
#define REMOTE_STALL_MS		60000	/* A head or JSON body not moving. */
#define REMOTE_POOL		4	/* Connections for POSTs. */
#define REMOTE_QUEUE_MAX	(64u * 1024 * 1024)	/* Lines waiting. */

struct remote;

int	 remote_check(const struct remote_config *, struct buf *);
struct remote *remote_open(const struct remote_config *,
	    const struct remote_ops *, void *, struct buf *);
int	 remote_send(struct remote *, const char *, size_t);
void	 remote_ready(struct remote *, const char *);
void	 remote_close(struct remote *);
const char *remote_session(const struct remote *);
int	 remote_closing(void);

#endif /* REMOTE_H */
