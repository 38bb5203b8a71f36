/*
 * http_out.c: answers, whole or as a stream of Server-Sent Events, queued
 * on the connection's output (http.c writes it).  Nothing here writes to
 * a socket or calls the MCP layer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util.h"
#include "jsonrpc.h"
#include "http.h"
#include "http_int.h"

/*
 * Answers: the status line and the fields every answer has.
 */
static const char *
reason(int status)
{
	static const struct {
		int		 status;
		const char	*text;
	} r[] = {
		{ 100, "Continue" }, { 200, "OK" }, { 202, "Accepted" },
		{ 204, "No Content" }, { 400, "Bad Request" },
		{ 401, "Unauthorized" }, { 403, "Forbidden" },
		{ 404, "Not Found" }, { 405, "Method Not Allowed" },
		{ 409, "Conflict" },
		{ 406, "Not Acceptable" }, { 408, "Request Timeout" },
		{ 411, "Length Required" }, { 413, "Content Too Large" },
		{ 415, "Unsupported Media Type" },
		{ 417, "Expectation Failed" },
		{ 431, "Request Header Fields Too Large" },
		{ 500, "Internal Server Error" }, { 501, "Not Implemented" },
		{ 503, "Service Unavailable" },
		{ 505, "HTTP Version Not Supported" }
	};
	size_t i;

	for (i = 0; i < sizeof(r) / sizeof(r[0]); i++)
		if (r[i].status == status)
			return r[i].text;
	return "Status";
}

/* The Date field (RFC 9110 6.6.1), made once a second. */
static const char *
date_field(void)
{
	static const char days[] = "SunMonTueWedThuFriSat";
	static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
	static char text[48];
	static time_t made = -1;
	time_t now = time(NULL);
	struct tm tm;

	if (now != made && gmtime_r(&now, &tm) != NULL) {
		snprintf(text, sizeof(text), "Date: %.3s, %02d %.3s %04d "
		    "%02d:%02d:%02d GMT\r\n", days + 3 * tm.tm_wday, tm.tm_mday,
		    months + 3 * tm.tm_mon, tm.tm_year + 1900, tm.tm_hour,
		    tm.tm_min, tm.tm_sec);
		made = now;
	}
	return text;
}

static void
head_begin(struct http_conn *c, int status)
{
	struct buf *o = &c->out;

	if (http_queued(c) == 0)
		c->moved = loop_ms();	/* The send timer starts. */
	buf_printf(o, "HTTP/1.1 %d %s\r\n", status, reason(status));
	buf_puts(o, date_field());
	buf_put(o, c->hdrs.data, c->hdrs.len);
	c->hdrs.len = 0;
	if (c->cors != NULL)
		buf_printf(o, "Access-Control-Allow-Origin: %s\r\n"
		    "Access-Control-Expose-Headers: Mcp-Session-Id, "
		    "MCP-Protocol-Version, WWW-Authenticate\r\n"
		    "Vary: Origin\r\n", c->cors);
	if (status == 401)
		buf_puts(o, "WWW-Authenticate: Bearer\r\n");
	else if (status == 405)
		buf_puts(o, "Allow: GET, POST, DELETE\r\n");
	if (!c->keep)
		buf_puts(o, "Connection: close\r\n");
}

/*
 * A field for the next answer of c, such as Mcp-Session-Id: its name a
 * token, its value visible ASCII, spaces and tabs.  -1 when it is not.
 */
int
http_add_header(struct http_conn *c, const char *name, const char *value)
{
	size_t i;

	for (i = 0; name[i] != '\0'; i++)
		if (name[i] <= ' ' || name[i] >= 0x7f || name[i] == ':')
			return -1;
	for (i = 0; value[i] != '\0'; i++)
		if ((value[i] < ' ' && value[i] != '\t') || value[i] >= 0x7f)
			return -1;
	if (c->hdrs.len + strlen(name) + i + 4 > HDRS_MAX)
		return -1;
	buf_printf(&c->hdrs, "%s: %s\r\n", name, value);
	return 0;
}

/*
 * The answer to c's request, whole: status, type and body (no type and no
 * body for a 202).  The MCP layer calls this once per request it took.
 */
void
http_respond(struct http_conn *c, int status, const char *type,
    const char *body, size_t n)
{
	if (c->dead || (c->st != C_BUSY && c->st != C_READ))
		return;
	if (c->st == C_READ)
		c->keep = false;	/* Refused before its body was read. */
	head_begin(c, status);
	if (type != NULL)
		buf_printf(&c->out, "Content-Type: %s\r\n", type);
	if (status != 204) {
		buf_puts(&c->out, "Content-Length: ");
		buf_put_int(&c->out, (long long)n);
		buf_puts(&c->out, "\r\n");
	}
	buf_puts(&c->out, "\r\n");
	buf_put(&c->out, body, n);
	c->st = C_DONE;
}

/*
 * A CORS preflight from a listed origin (http_check let it through): the
 * methods and the fields MCP's requests use, for ten minutes.
 */
void
http_preflight(struct http_conn *c)
{
	head_begin(c, 204);
	buf_puts(&c->out, "Access-Control-Allow-Methods: GET, POST, DELETE\r\n"
	    "Access-Control-Allow-Headers: Content-Type, Accept, "
	    "Authorization, Mcp-Session-Id, MCP-Protocol-Version, "
	    "Last-Event-ID, Mcp-Method, Mcp-Name\r\n"
	    "Access-Control-Max-Age: 600\r\n\r\n");
	c->st = C_DONE;
}

/*
 * An error with a JSON-RPC error as its body, id null, as the transport
 * pages allow and the SDKs read.
 */
void
http_respond_error(struct http_conn *c, int status, int code,
    const char *message)
{
	struct buf b = { 0 };

	rpc_put_error(&b, NULL, 0, code, message);
	buf_puts(&b, "}}");
	http_respond(c, status, "application/json", b.data, b.len);
	buf_free(&b);
}

/* The layer's own refusals, before the MCP layer has seen a request. */
void
http_refuse(struct http_conn *c, int status)
{
	static const struct {
		int		 status;
		const char	*text;
	} m[] = {
		{ 400, "Bad Request: malformed HTTP request" },
		{ 401, "Unauthorized: send 'Authorization: Bearer TOKEN'" },
		{ 403, "Forbidden: this Origin or Host is not allowed" },
		{ 404, "Not Found: the MCP endpoint is another path" },
		{ 405, "Method Not Allowed: use POST, GET or DELETE" },
		{ 406, "Not Acceptable: accept application/json and "
		    "text/event-stream" },
		{ 408, "Request Timeout: the request came too slowly" },
		{ 411, "Length Required: a POST needs a body" },
		{ 413, "Content Too Large: the message is over "
		    "maxMessageBytes" },
		{ 415, "Unsupported Media Type: send application/json" },
		{ 417, "Expectation Failed: only 100-continue is known" },
		{ 431, "Request Header Fields Too Large" },
		{ 501, "Not Implemented: only the chunked transfer coding "
		    "is known" },
		{ 505, "HTTP Version Not Supported: use HTTP/1.1" }
	};
	size_t i;

	for (i = 0; i < sizeof(m) / sizeof(m[0]); i++)
		if (m[i].status == status)
			break;
	c->keep = false;
	c->hdrs.len = 0;
	http_respond_error(c, status, RPC_SERVER_ERROR,
	    i < sizeof(m) / sizeof(m[0]) ?
	    m[i].text : reason(status));
}

/*
 * Streams.  Over 1.1 each piece is one chunk: its size, CRLF, the piece,
 * CRLF.
 */
int
http_stream_begin(struct http_conn *c)
{
	if (c->dead || c->st != C_BUSY)
		return -1;
	c->chunked = c->p.minor == 1;
	if (!c->chunked)
		c->keep = false;
	head_begin(c, 200);
	buf_puts(&c->out, "Content-Type: text/event-stream\r\n"
	    "Cache-Control: no-cache\r\nX-Accel-Buffering: no\r\n");
	if (c->chunked)
		buf_puts(&c->out, "Transfer-Encoding: chunked\r\n");
	buf_puts(&c->out, "\r\n");
	c->st = C_STREAM;
	return 0;
}

static void
piece(struct http_conn *c, const char *const *parts, const size_t *lens,
    int n)
{
	size_t total = 0;
	int i;

	for (i = 0; i < n; i++)
		total += lens[i];
	if (http_queued(c) == 0)
		c->moved = loop_ms();
	if (c->chunked)
		buf_printf(&c->out, "%zx\r\n", total);
	for (i = 0; i < n; i++)
		buf_put(&c->out, parts[i], lens[i]);
	if (c->chunked)
		buf_puts(&c->out, "\r\n");
	if (http_queued(c) > OUT_HIGH)
		c->high = true;
}

/*
 * One event: a message (one JSON text, no line break in it), with an id
 * for resumption or NULL; a message NULL is the priming event, an id and
 * empty data.  -1 when the stream is gone or its queue is past the hard
 * limit: the connection is then closed, without closed().
 */
int
http_stream_event(struct http_conn *c, const char *id, const char *json,
    size_t n)
{
	const char *parts[7];
	size_t lens[7];
	int k = 0;

	if (c->dead || c->st != C_STREAM)
		return -1;
	if (http_queued(c) > c->srv->cfg.out_limit ||
	    (json != NULL && (memchr(json, '\n', n) != NULL ||
	    memchr(json, '\r', n) != NULL)) ||
	    (id != NULL && strpbrk(id, "\r\n") != NULL)) {
		http_conn_kill(c);
		return -1;
	}
#define PART(s, len)	(parts[k] = (s), lens[k++] = (len))
	if (json != NULL)
		PART("event: message\n", 15);
	if (id != NULL) {
		PART("id: ", 4);
		PART(id, strlen(id));
		PART("\n", 1);
	}
	PART("data: ", 6);
	if (json != NULL)
		PART(json, n);
	PART("\n\n", 2);
#undef PART
	piece(c, parts, lens, k);
	return 0;
}

/* A comment: keeps a quiet stream from being timed out on the way. */
int
http_stream_comment(struct http_conn *c, const char *text)
{
	const char *parts[3] = { ": ", text, "\n\n" };
	size_t lens[3];

	if (c->dead || c->st != C_STREAM || strpbrk(text, "\r\n") != NULL)
		return -1;
	lens[0] = 2;
	lens[1] = strlen(text);
	lens[2] = 2;
	piece(c, parts, lens, 3);
	return 0;
}

/* The end of the stream; over 1.1 the connection takes a next request. */
void
http_stream_end(struct http_conn *c)
{
	if (c->dead || c->st != C_STREAM)
		return;
	if (c->chunked)
		buf_puts(&c->out, "0\r\n\r\n");
	c->st = C_DONE;
}

/* The MCP layer is done with c, answered or not: no closed() follows. */
void
http_close(struct http_conn *c)
{
	http_conn_kill(c);
}
