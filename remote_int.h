/*
 * remote_int.h: the pieces of the remote client (remote.c) that are
 * values without I/O, shared by its files and driven alone by the unit
 * and fuzz tests: a URL (remote_http.c), the HTTP/1.1 client's request
 * writer and response parser (remote_http.c), the Server-Sent Events
 * parser (remote_sse.c), and TLS through the system's library loaded at
 * run time (remote_tls.c).  Everything they read from a peer is bounded.
 */
#ifndef REMOTE_INT_H
#define REMOTE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "util.h"

/*
 * A URL: http or https, a host (a name, an IPv4 address or a bracketed
 * IPv6 one, kept without its brackets), a port, and the target (path and
 * query; the fragment is dropped).  No user information: credentials go
 * in headers.
 */
#define URL_MAX		2048		/* A whole URL, and a target. */
#define URL_HOST_MAX	253		/* A DNS name. */

struct url {
	bool		 tls;		/* https */
	bool		 v6;		/* The host is an IPv6 literal. */
	int		 port;
	char		 host[URL_HOST_MAX + 1];
	char		 target[URL_MAX + 1];
};

int	 url_parse(const char *, size_t, struct url *, struct buf *);
bool	 url_same_origin(const struct url *, const struct url *);
int	 url_resolve(const struct url *, const char *, size_t, char *,
	    struct buf *);
void	 url_authority(const struct url *, struct buf *);

/*
 * The response parser.  The head is parsed once it is whole (at most
 * HTTP_HEAD_MAX bytes and HTTP_FIELDS_MAX fields); what the client needs
 * of it is copied out, so nothing points into the input afterwards.  The
 * body is decoded as it comes (chunked, Content-Length, or to the end of
 * the connection) and handed on in spans: an event stream never ends.
 */
#define HRESP_SID_MAX		256	/* An Mcp-Session-Id. */
#define HRESP_LOCATION_MAX	200	/* A redirect's, quoted in errors. */

enum {
	HR_ERROR = -1,			/* why says what. */
	HR_MORE = 0,			/* More input is needed. */
	HR_HEAD,			/* The head is complete. */
	HR_INTERIM,			/* A 1xx head: skip it, parse on. */
	HR_DONE,			/* The body is complete. */
	HR_STOP				/* The data handler said stop. */
};

struct hresp {
	int		 phase;
	int		 status;
	int		 minor;
	bool		 no_body;	/* HEAD, 204, 304. */
	bool		 chunked;
	bool		 close;		/* The connection ends after. */
	bool		 to_eof;	/* The body ends with the connection. */
	bool		 sse;		/* text/event-stream */
	bool		 json;		/* application/json */
	long long	 length;	/* Content-Length, or -1. */
	unsigned long long left;	/* Of the body or of this chunk. */
	size_t		 scanned;	/* Head bytes looked at. */
	int		 cs;		/* Chunk state. */
	size_t		 line;		/* Bytes of a chunk or trailer line. */
	size_t		 trailer;	/* Bytes of trailers. */
	char		 session[HRESP_SID_MAX + 1];	/* "" when none. */
	char		 location[HRESP_LOCATION_MAX + 1];
};

typedef bool hresp_data_fn(void *, char *, size_t);

void	 hresp_reset(struct hresp *, bool);
int	 hresp_head(struct hresp *, const char *, size_t, size_t *,
	    const char **);
int	 hresp_body(struct hresp *, char *, size_t, size_t *,
	    hresp_data_fn *, void *, const char **);
int	 hresp_eof(const struct hresp *, const char **);

/* A request's head, for the writer. */
struct hreq {
	const char	*method;
	const char	*target;
	const char	*host;		/* With the port when not the default. */
	const char	*accept;	/* NULL: none. */
	const char	*content_type;	/* NULL: none. */
	long long	 length;	/* Content-Length, or -1: none. */
	const char	*session;	/* Mcp-Session-Id, or NULL. */
	const char	*version;	/* MCP-Protocol-Version, or NULL. */
	const char	*last_id;	/* Last-Event-ID, or NULL. */
	const char	*extra;		/* "Name: value\r\n"..., or NULL. */
	const char	*more;		/* The same, of this message. */
};

void	 hreq_write(struct buf *, const struct hreq *);
void	 hreq_mcp_value(struct buf *, const char *, size_t);
int	 hreq_header_ok(const char *, const char *, struct buf *);

/*
 * The Server-Sent Events parser (the HTML standard's "event stream
 * interpretation"): lines end in CRLF, LF or CR; "event", "data" (lines
 * joined with LF), "id" and "retry" fields; comments; a leading BOM.  An
 * event whose data passes max is dropped and reported with data NULL and
 * its size.  The handler returns false to stop the parse (its owner went
 * away); the data it is given may be changed in place.
 */
#define SSE_TYPE_MAX	64
#define SSE_ID_MAX	256

typedef bool sse_event_fn(void *, const char *, char *, size_t);

struct sse {
	size_t		 max;
	struct buf	 line;
	struct buf	 data;
	bool		 cr;		/* The last byte was a CR. */
	bool		 started;	/* Past a BOM. */
	bool		 skip;		/* The rest of a line too long. */
	bool		 over;		/* This event is dropped. */
	bool		 badtype;	/* Its type is too long. */
	int		 bom;		/* Bytes of a BOM seen. */
	size_t		 overlen;
	size_t		 typelen;
	char		 type[SSE_TYPE_MAX + 1];
	char		 id[SSE_ID_MAX + 1];
	long		 retry;		/* ms, or -1: none said. */
};

void	 sse_init(struct sse *, size_t);
void	 sse_reset(struct sse *);
void	 sse_free(struct sse *);
bool	 sse_feed(struct sse *, const char *, size_t, sse_event_fn *,
	    void *);

/*
 * TLS: libssl.so.3 opened at run time (tls_load), never linked.  A
 * connection's handshake, reads and writes are non-blocking: each says
 * which event (POLLIN or POLLOUT) it waits for.
 */
enum { TLS_OK = 0, TLS_WANT = 1, TLS_FAIL = -1 };

struct tls;

int	 tls_load(struct buf *);
struct tls *tls_new(int, const char *, bool, struct buf *);
int	 tls_handshake(struct tls *, short *, struct buf *);
ssize_t	 tls_read(struct tls *, void *, size_t, short *);
ssize_t	 tls_write(struct tls *, const void *, size_t, short *);
void	 tls_free(struct tls *);

#endif /* REMOTE_INT_H */
