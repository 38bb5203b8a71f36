/*
 * http.h: HTTP/1.1 framing for MCP's Streamable HTTP transport (layer
 * 3-4, beside the peers): a listening socket, its connections, a request
 * parser with hard limits, responses as JSON or as Server-Sent Events.
 * It knows nothing of sessions or JSON-RPC: the MCP layer above gets
 * checked requests through struct http_ops and answers them with the
 * http_respond and http_stream functions.  The limits and the protocol
 * notes are at the top of http.c.
 *
 * Needs util.c (struct buf, xmalloc, the clock, wb_log) and nothing else.
 */
#ifndef HTTP_H
#define HTTP_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct buf;

#define HTTP_HEAD_MAX		(16 * 1024)	/* Request line + fields. */
#define HTTP_FIELDS_MAX		64		/* Field lines of a head. */
#define HTTP_CHUNK_LINE_MAX	256		/* A chunk-size line. */

/*
 * Where to listen: "HOST:PORT", "[V6]:PORT" or "localhost:PORT", numeric
 * only (no resolver at startup or after).
 */
struct http_addr {
	struct sockaddr_storage	 ss;
	socklen_t		 len;
	bool			 loopback;
	char			 text[64];	/* As given, for messages. */
};

int	 http_addr_parse(const char *, struct http_addr *, struct buf *);
bool	 http_sockaddr_loopback(const struct sockaddr *);

/*
 * The request parser, fed the connection's whole input buffer each time
 * more has come; it remembers how far it looked, so each byte is looked at
 * once.  A chunked body is decoded in place, right after the head.
 */
enum http_method {
	HTTP_GET, HTTP_POST, HTTP_DELETE, HTTP_HEAD_M, HTTP_OPTIONS,
	HTTP_OTHER
};

/* The fields the MCP layer reads; each at most once in a request. */
enum http_hdr {
	HTTP_H_HOST, HTTP_H_CONTENT_TYPE, HTTP_H_ORIGIN, HTTP_H_AUTHORIZATION,
	HTTP_H_SESSION, HTTP_H_VERSION, HTTP_H_LAST_EVENT_ID,
	HTTP_H_MCP_METHOD, HTTP_H_MCP_NAME, HTTP_H_CONTENT_LENGTH,
	HTTP_H_TRANSFER_ENCODING, HTTP_H_EXPECT,
	HTTP_H_N
};

struct http_field {			/* Offsets into the buffer. */
	uint16_t	 name, namelen;
	uint16_t	 value, valuelen;
};

#define HTTP_MORE	0	/* http_parse: more input is needed; */
#define HTTP_HEADER	1	/* the head is complete, the body next; */
#define HTTP_DONE	2	/* the request is complete. */
				/* Otherwise an HTTP error status. */
struct http_parser {
	int		 phase;
	int		 hs;		/* Head scan state. */
	size_t		 start;		/* After empty lines before the head. */
	size_t		 scanned;	/* Bytes of the buffer looked at. */
	size_t		 headlen;	/* With start; 0 before the end. */
	int		 mlen;		/* The method's length so far. */
	enum http_method method;
	uint16_t	 target, targetlen;
	int		 minor;		/* HTTP/1.minor */
	int		 nfields;
	struct http_field fields[HTTP_FIELDS_MAX];
	int16_t		 hdr[HTTP_H_N];	/* Index into fields, or -1. */
	long long	 length;	/* Content-Length, or -1. */
	bool		 chunked;
	bool		 keep_alive;
	bool		 expect;	/* Expect: 100-continue */
	/* The body. */
	size_t		 raw;		/* Input taken, encoded. */
	size_t		 bodylen;	/* Decoded, at headlen. */
	int		 cs;		/* Chunk state. */
	unsigned long long chunk;	/* Bytes left of this chunk. */
	size_t		 line;		/* Bytes of a chunk or trailer line. */
};

struct http_str {
	const char	*p;		/* NULL when absent. */
	size_t		 n;
};

/* A complete request, valid until it is answered. */
struct http_request {
	enum http_method	 method;
	struct http_str		 target;
	struct http_str		 path;		/* The target less its query. */
	int			 minor;
	struct http_str		 h[HTTP_H_N];
	const char		*buf;		/* For http_field(). */
	const struct http_field	*fields;
	int			 nfields;
	const char		*body;
	size_t			 bodylen;
};

void	 http_parser_reset(struct http_parser *);
int	 http_parse(struct http_parser *, char *, size_t *, size_t);
void	 http_request_of(const struct http_parser *, const char *,
	    struct http_request *);
int	 http_field(const struct http_request *, const char *, int,
	    struct http_str *);
bool	 http_accepts(const struct http_request *, const char *);

/*
 * The words of HTTP that its server and its client (remote_http.c) both
 * read, in http_word.c: a span of a text, a name or token in any case,
 * RFC 9110's tchar, a hex digit, a token in a comma-separated list
 * (Connection), a media type's essence.
 */
struct http_str	 http_str_at(const char *, size_t, size_t);
bool	 http_ieq(const char *, size_t, const char *);
bool	 http_tchar(unsigned char);
int	 http_hexval(unsigned char);
bool	 http_has_token(const char *, size_t, const char *);
bool	 http_essence_is(const char *, size_t, const char *);
bool	 http_media_is(const struct http_str *, const char *);

/*
 * The server: limits (0 takes the default of http.c's table) and rules.
 */
struct http_config {
	size_t		 max_body;	/* maxMessageBytes: 413 past it. */
	int		 max_conns;	/* maxConnections: 503 past it. */
	int		 request_ms;	/* To send a whole request. */
	int		 idle_ms;	/* Keep-alive between requests. */
	int		 send_ms;	/* Output that does not move. */
	int		 linger_ms;	/* Reading after a last answer. */
	size_t		 out_limit;	/* A stream's queue: closed past it. */
	const char	*path;		/* The endpoint, "/mcp". */
	const char	*token;		/* httpToken, or NULL for none. */
	const char *const *origins;	/* allowedOrigins, NULL-ended. */
	const char *const *hosts;	/* allowedHosts, NULL-ended. */
	bool		 check_host;	/* Host must name loopback. */
	bool		 same_user;	/* Serve only our uid's sockets. */
};

/* The rules a request must pass; http_check applies them in order. */
const char *http_origin_listed(const struct http_str *,
	    const char *const *);
bool	 http_origin_ok(const struct http_str *, const char *const *);
bool	 http_host_ok(const struct http_str *, const char *const *);
bool	 http_token_ok(const struct http_str *, const char *);
int	 http_check(const struct http_request *, const struct http_config *);

struct http_server;
struct http_conn;

/*
 * Upcalls to the MCP layer.  request: a checked, complete request; the
 * connection reads nothing more until it is answered (http_respond,
 * http_stream_begin ... http_stream_end, or http_close), now or later.
 * closed: a connection with a request or stream not yet answered went
 * away (the client left, a timeout, its queue overflowed); the pointer
 * is dead after it.  drained: a stream's queue fell below the low mark
 * after being above the high one: its producers may go on.  None is
 * called from inside a function the MCP layer calls.
 */
struct http_ops {
	void	(*request)(void *, struct http_conn *,
		    const struct http_request *);
	void	(*closed)(void *, const struct http_conn *);
	void	(*drained)(void *, struct http_conn *);
};

struct http_server *http_start(const struct http_config *,
	    const struct http_addr *, const struct http_ops *, void *,
	    struct buf *);
void	 http_stop(struct http_server *);
void	 http_quiesce(struct http_server *);
bool	 http_written(const struct http_server *);
int	 http_port(const struct http_server *);
int	 http_nconns(const struct http_server *);

/* The loop's steps, each turn, in this order (see http.c). */
typedef void http_watch_fn(void *, int, short, void *);
void	 http_prepare(struct http_server *);
void	 http_flush(struct http_server *);
void	 http_watch(struct http_server *, http_watch_fn *, void *);
long long http_deadline(const struct http_server *);
void	 http_event(struct http_server *, void *, int, short);
void	 http_timeouts(struct http_server *, long long);

/* Answers. */
int	 http_add_header(struct http_conn *, const char *, const char *);
void	 http_respond(struct http_conn *, int, const char *, const char *,
	    size_t);
void	 http_respond_error(struct http_conn *, int, int, const char *);
int	 http_stream_begin(struct http_conn *);
int	 http_stream_event(struct http_conn *, const char *, const char *,
	    size_t);
int	 http_stream_comment(struct http_conn *, const char *);
void	 http_stream_end(struct http_conn *);
void	 http_close(struct http_conn *);
size_t	 http_queued(const struct http_conn *);
bool	 http_full(const struct http_conn *);
void	*http_data(const struct http_conn *);
void	 http_set_data(struct http_conn *, void *);

#endif
