/*
 * remote_http.c: the HTTP/1.1 client's words (RFC 9110, 9112): a URL,
 * a request's head, and a response parsed as it arrives.  No I/O; the
 * unit tests and the fuzz target drive it alone.
 *
 * Everything in a response is attacker-controlled.  The head is bounded
 * (HTTP_HEAD_MAX bytes, HTTP_FIELDS_MAX fields), its lines may end in
 * CRLF or LF (RFC 9112 2.2 lets a recipient take a bare LF), and nothing
 * else: a control character, obs-fold, a field name that is not a
 * token, Transfer-Encoding with Content-Length, two Content-Lengths or a
 * coding other than chunked are each the end of the connection, so that
 * a body is never framed two ways.  Only the fields the client needs are
 * copied out; header values are never logged (a server may echo
 * secrets).
 */
#include <arpa/inet.h>
#include <string.h>
#include <strings.h>

#include "util.h"
#include "http.h"
#include "remote_int.h"

/*
 * URLs.
 */
static int
url_fail(struct buf *err, const char *why)
{
	buf_puts(err, why);
	return -1;
}

/* The characters a target may hold as sent: visible ASCII. */
static bool
target_ok(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f)
			return false;
	return true;
}

/* A host name or IPv4 address: RFC 3986 unreserved characters. */
static bool
regname_ok(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > URL_HOST_MAX)
		return false;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '-' ||
		    s[i] == '.' || s[i] == '_' || s[i] == '~'))
			return false;
	return true;
}

static int
url_port(const char *s, size_t n, struct url *u, struct buf *err)
{
	size_t i;
	long v = 0;

	if (n == 0)
		return 0;		/* "host:" is the default port. */
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9' || i >= 5)
			return url_fail(err, "a bad port in the URL");
		v = v * 10 + (s[i] - '0');
	}
	if (v < 1 || v > 65535)
		return url_fail(err, "a bad port in the URL");
	u->port = (int)v;
	return 0;
}

/* host, [v6] or either with ":port". */
static int
url_host(const char *s, size_t n, struct url *u, struct buf *err)
{
	const char *end, *colon;
	struct in6_addr a6;

	if (n > 0 && s[0] == '[') {
		if ((end = memchr(s, ']', n)) == NULL ||
		    (size_t)(end - s - 1) >= sizeof(u->host))
			return url_fail(err, "a bad IPv6 address in the URL");
		memcpy(u->host, s + 1, (size_t)(end - s - 1));
		u->host[end - s - 1] = '\0';
		if (inet_pton(AF_INET6, u->host, &a6) != 1)
			return url_fail(err, "a bad IPv6 address in the URL");
		u->v6 = true;
		n -= (size_t)(end + 1 - s);
		s = end + 1;
		if (n > 0 && s[0] != ':')
			return url_fail(err, "a bad IPv6 address in the URL");
		return n > 0 ? url_port(s + 1, n - 1, u, err) : 0;
	}
	colon = memchr(s, ':', n);
	if (!regname_ok(s, colon != NULL ? (size_t)(colon - s) : n))
		return url_fail(err, "a bad host name in the URL");
	memcpy(u->host, s, colon != NULL ? (size_t)(colon - s) : n);
	u->host[colon != NULL ? (size_t)(colon - s) : n] = '\0';
	return colon != NULL ?
	    url_port(colon + 1, n - (size_t)(colon + 1 - s), u, err) : 0;
}

/*
 * Parse s[0, n) into u: 0, or -1 with why in err (the URL itself is not
 * quoted: a query may carry a key).
 */
int
url_parse(const char *s, size_t n, struct url *u, struct buf *err)
{
	size_t scheme, i, a, pn;
	const char *hash;

	memset(u, 0, sizeof(*u));
	if (n > URL_MAX)
		return url_fail(err, "the URL is too long");
	if (n >= 7 && strncasecmp(s, "http://", 7) == 0)
		scheme = 7;
	else if (n >= 8 && strncasecmp(s, "https://", 8) == 0) {
		scheme = 8;
		u->tls = true;
	} else
		return url_fail(err, "only http:// and https:// URLs are "
		    "supported");
	u->port = u->tls ? 443 : 80;
	if ((hash = memchr(s, '#', n)) != NULL)
		n = (size_t)(hash - s);	/* The fragment is the client's. */
	for (i = scheme; i < n && s[i] != '/' && s[i] != '?'; i++)
		if (s[i] == '@')
			return url_fail(err, "user information in a URL is "
			    "not supported: give credentials in \"headers\"");
	a = i;
	if (a == scheme)
		return url_fail(err, "the URL has no host");
	if (url_host(s + scheme, a - scheme, u, err) < 0)
		return -1;
	pn = n - a;
	if (!target_ok(s + a, pn))
		return url_fail(err, "the URL's path holds spaces, controls "
		    "or non-ASCII bytes (percent-encode them)");
	if (pn == 0 || s[a] == '?')
		u->target[0] = '/';
	memcpy(u->target + strlen(u->target), s + a, pn);
	return 0;
}

/* Scheme, host (in any case) and port. */
bool
url_same_origin(const struct url *a, const struct url *b)
{
	return a->tls == b->tls && a->port == b->port &&
	    strcasecmp(a->host, b->host) == 0;
}

/*
 * The target of ref[0, n) (a URL, an absolute path or a relative one)
 * resolved against base, into target (URL_MAX + 1 bytes): 0, or -1 with
 * why when it is bad or of another origin (a server may not send our
 * requests, with their headers, elsewhere).
 */
int
url_resolve(const struct url *base, const char *ref, size_t n,
    char *target, struct buf *err)
{
	struct url u;
	const char *q, *slash;
	size_t dir;

	if (n > 4 && strncasecmp(ref, "http", 4) == 0 &&
	    memchr(ref, ':', n) != NULL) {
		if (url_parse(ref, n, &u, err) < 0)
			return -1;
		if (!url_same_origin(base, &u))
			return url_fail(err, "the endpoint is of another "
			    "origin");
		memcpy(target, u.target, strlen(u.target) + 1);
		return 0;
	}
	if ((q = memchr(ref, '#', n)) != NULL)
		n = (size_t)(q - ref);
	if (n == 0 || !target_ok(ref, n) || (n >= 2 && ref[0] == '/' &&
	    ref[1] == '/') || memchr(ref, ':', n) != NULL)
		return url_fail(err, "a bad endpoint");
	dir = 0;
	if (ref[0] != '/') {
		/* Relative: beside the base's last segment. */
		q = memchr(base->target, '?', strlen(base->target));
		for (slash = q != NULL ? q : base->target +
		    strlen(base->target); slash > base->target &&
		    slash[-1] != '/'; slash--)
			continue;
		dir = (size_t)(slash - base->target);
	}
	if (dir + n > URL_MAX)
		return url_fail(err, "the endpoint is too long");
	memcpy(target, base->target, dir);
	memcpy(target + dir, ref, n);
	target[dir + n] = '\0';
	return 0;
}

/* The Host field's value: the host, its brackets, a port not default. */
void
url_authority(const struct url *u, struct buf *b)
{
	if (u->v6)
		buf_printf(b, "[%s]", u->host);
	else
		buf_puts(b, u->host);
	if (u->port != (u->tls ? 443 : 80))
		buf_printf(b, ":%d", u->port);
}

/*
 * Requests.
 */

/*
 * A configured header: a token for a name, a value without controls but
 * HT (no CR or LF to smuggle a field in), and none the transport sets.
 */
int
hreq_header_ok(const char *name, const char *value, struct buf *err)
{
	static const char *const ours[] = {
		"host", "content-length", "transfer-encoding", "connection",
		"content-type", "accept", "mcp-session-id",
		"mcp-protocol-version", "last-event-id", "te", "upgrade",
		"expect", "keep-alive"
	};
	size_t i, n = strlen(name);

	for (i = 0; i < n; i++)
		if (!http_tchar((unsigned char)name[i]))
			break;
	if (n == 0 || i < n) {
		buf_puts(err, "a header name that is not a token");
		return -1;
	}
	for (i = 0; i < sizeof(ours) / sizeof(ours[0]); i++)
		if (http_ieq(name, n, ours[i])) {
			buf_printf(err, "header \"%s\" is the transport's "
			    "to set", ours[i]);
			return -1;
		}
	for (i = 0; value[i] != '\0'; i++)
		if (((unsigned char)value[i] < 0x20 && value[i] != '\t') ||
		    value[i] == 0x7f) {
			buf_printf(err, "header \"%s\" holds a control "
			    "character", name);
			return -1;
		}
	return 0;
}

void
hreq_write(struct buf *b, const struct hreq *q)
{
	buf_printf(b, "%s %s HTTP/1.1\r\nHost: %s\r\n"
	    "User-Agent: " WB_NAME "/%s\r\n", q->method, q->target, q->host,
	    wb_version);
	if (q->accept != NULL)
		buf_printf(b, "Accept: %s\r\n", q->accept);
	if (q->content_type != NULL)
		buf_printf(b, "Content-Type: %s\r\n", q->content_type);
	if (q->length >= 0)
		buf_printf(b, "Content-Length: %lld\r\n", q->length);
	if (q->session != NULL)
		buf_printf(b, "Mcp-Session-Id: %s\r\n", q->session);
	if (q->version != NULL)
		buf_printf(b, "MCP-Protocol-Version: %s\r\n", q->version);
	if (q->last_id != NULL)
		buf_printf(b, "Last-Event-ID: %s\r\n", q->last_id);
	if (q->more != NULL)
		buf_puts(b, q->more);
	if (q->extra != NULL)
		buf_puts(b, q->extra);
	buf_puts(b, "\r\n");
}

/*
 * A value of the 2026-07-28 transport's Mcp-Name (and Mcp-Method)
 * headers: the text itself when it is a plain field value (visible
 * ASCII, space and tab, none at either end), else its bytes in Base64
 * between "=?base64?" and "?=", as is one that looks like that already.
 */
void
hreq_mcp_value(struct buf *b, const char *s, size_t n)
{
	static const char b64[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *u = (const unsigned char *)s;
	unsigned long w;
	size_t i;
	bool plain = n > 0 && s[0] != ' ' && s[0] != '\t' &&
	    s[n - 1] != ' ' && s[n - 1] != '\t' && !(n >= 11 &&
	    memcmp(s, "=?base64?", 9) == 0 && memcmp(s + n - 2, "?=", 2) == 0);

	for (i = 0; plain && i < n; i++)
		plain = (u[i] >= 0x20 && u[i] < 0x7f) || u[i] == '\t';
	if (plain) {
		buf_put(b, s, n);
		return;
	}
	buf_puts(b, "=?base64?");
	for (i = 0; i < n; i += 3) {
		w = (unsigned long)u[i] << 16;
		if (i + 1 < n)
			w |= (unsigned long)u[i + 1] << 8;
		if (i + 2 < n)
			w |= u[i + 2];
		buf_putc(b, b64[w >> 18 & 63]);
		buf_putc(b, b64[w >> 12 & 63]);
		buf_putc(b, i + 1 < n ? b64[w >> 6 & 63] : '=');
		buf_putc(b, i + 2 < n ? b64[w & 63] : '=');
	}
	buf_puts(b, "?=");
}

/*
 * Responses.
 */
enum { PH_HEAD, PH_BODY, PH_DONE };

/* Chunk states. */
enum {
	CS_SIZE, CS_EXT, CS_SIZE_LF, CS_DATA, CS_DATA_CR, CS_DATA_LF,
	CS_TRAILER, CS_TRAILER_LINE
};

/* head_request: the response has no body whatever it says (HEAD). */
void
hresp_reset(struct hresp *p, bool head_request)
{
	memset(p, 0, sizeof(*p));
	p->length = -1;
	p->no_body = head_request;
}

static int
fail(const char **why, const char *what)
{
	*why = what;
	return HR_ERROR;
}

/* "HTTP/1.x SSS reason": the status, 100 to 599. */
static int
status_line(struct hresp *p, const char *s, size_t n, const char **why)
{
	size_t i;

	if (n < 12 || memcmp(s, "HTTP/1.", 7) != 0 ||
	    (s[7] != '0' && s[7] != '1') || s[8] != ' ' ||
	    (n > 12 && s[12] != ' '))
		return fail(why, "not an HTTP/1.x response");
	for (i = 9; i < 12; i++)
		if (s[i] < '0' || s[i] > '9')
			return fail(why, "not an HTTP/1.x response");
	p->minor = s[7] - '0';
	p->status = (s[9] - '0') * 100 + (s[10] - '0') * 10 + (s[11] - '0');
	if (p->status < 100 || p->status > 599)
		return fail(why, "a bad status code");
	p->close = p->minor == 0;
	return 0;
}

static int
content_length(struct hresp *p, const char *s, size_t n, const char **why)
{
	long long v = 0;
	size_t i;

	if (p->length >= 0 || n == 0)
		return fail(why, "a bad or repeated Content-Length");
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9' || v > (1LL << 50))
			return fail(why, "a bad Content-Length");
		v = v * 10 + (s[i] - '0');
	}
	p->length = v;
	return 0;
}

/* Copy a field's value out, when it is visible ASCII and fits. */
static int
copy_visible(char *to, size_t size, const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n >= size)
		return -1;
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x21 || (unsigned char)s[i] > 0x7e)
			return -1;
	memcpy(to, s, n);
	to[n] = '\0';
	return 0;
}

/* A field the client reads; others are checked and passed over. */
static int
field(struct hresp *p, const char *s, size_t nl, const char *v, size_t vn,
    bool *te, const char **why)
{
	if (http_ieq(s, nl, "content-length"))
		return content_length(p, v, vn, why);
	if (http_ieq(s, nl, "transfer-encoding")) {
		/* Only chunked, alone: nothing else frames our bodies. */
		if (*te || !http_ieq(v, vn, "chunked"))
			return fail(why, "a transfer coding other than "
			    "chunked");
		*te = p->chunked = true;
	} else if (http_ieq(s, nl, "connection")) {
		if (http_has_token(v, vn, "close"))
			p->close = true;
	} else if (http_ieq(s, nl, "content-type")) {
		p->sse = http_essence_is(v, vn, "text/event-stream");
		p->json = http_essence_is(v, vn, "application/json");
	} else if (http_ieq(s, nl, "mcp-session-id")) {
		if (p->session[0] != '\0' ||
		    copy_visible(p->session, sizeof(p->session), v, vn) < 0)
			return fail(why, "a bad Mcp-Session-Id");
	} else if (http_ieq(s, nl, "location")) {
		/* Quoted in an error: cut, and only visible ASCII. */
		if (vn > HRESP_LOCATION_MAX)
			vn = HRESP_LOCATION_MAX;
		if (copy_visible(p->location, sizeof(p->location), v, vn) < 0)
			strcpy(p->location, "(unreadable)");
	}
	return 0;
}

/* name ":" OWS value OWS, in s[0, n) without its line end. */
static int
field_line(struct hresp *p, const char *s, size_t n, bool *te,
    const char **why)
{
	size_t i, v, e;

	for (i = 0; i < n && s[i] != ':'; i++)
		if (!http_tchar((unsigned char)s[i]))
			return fail(why, "a bad header field");
	if (i == 0 || i == n)
		return fail(why, "a bad header field");
	for (v = i + 1; v < n && (s[v] == ' ' || s[v] == '\t'); v++)
		continue;
	for (e = n; e > v && (s[e - 1] == ' ' || s[e - 1] == '\t'); e--)
		continue;
	return field(p, s, i, s + v, e - v, te, why);
}

/* How the body is framed (RFC 9112 6.3). */
static int
framing(struct hresp *p, bool te, const char **why)
{
	if (te && p->length >= 0)
		return fail(why, "both Transfer-Encoding and Content-Length");
	if (p->status == 101)
		return fail(why, "an upgrade that was not asked for");
	if (p->no_body || p->status == 204 || p->status == 304 ||
	    p->status < 200) {
		p->no_body = true;
		p->chunked = false;
		p->length = 0;
	} else if (p->chunked)
		p->cs = CS_SIZE;
	else if (p->length >= 0)
		p->left = (unsigned long long)p->length;
	else
		p->to_eof = p->close = true;
	return 0;
}

/* Split the whole head b[0, n) into its lines. */
static int
parse_head(struct hresp *p, const char *b, size_t n, const char **why)
{
	const char *lf;
	size_t at = 0, len;
	bool te = false;
	int fields = 0, r;

	for (;;) {
		lf = memchr(b + at, '\n', n - at);
		len = (size_t)(lf - (b + at));
		if (len > 0 && b[at + len - 1] == '\r')
			len--;
		if (at == 0)
			r = status_line(p, b, len, why);
		else if (len == 0)
			break;
		else if (++fields > HTTP_FIELDS_MAX)
			r = fail(why, "too many header fields");
		else
			r = field_line(p, b + at, len, &te, why);
		if (r != 0)
			return r;
		at = (size_t)(lf + 1 - b);
	}
	return framing(p, te, why);
}

/*
 * b[0, n) is the input from the response's first byte, each call given
 * all of it again with more at the end.  Returns HR_MORE, HR_HEAD with
 * *used the head's length, HR_INTERIM for a 1xx head of *used bytes (the
 * caller drops them, resets and parses on), or HR_ERROR.
 */
int
hresp_head(struct hresp *p, const char *b, size_t n, size_t *used,
    const char **why)
{
	unsigned char c;
	size_t i;
	int r;

	for (i = p->scanned; i < n; i++) {
		if (i >= HTTP_HEAD_MAX)
			return fail(why, "a response head too large");
		c = (unsigned char)b[i];
		if (c == '\n') {
			/* An empty line (LF or CRLF) ends the head. */
			if (i >= 1 && (b[i - 1] == '\n' || (b[i - 1] == '\r' &&
			    i >= 2 && b[i - 2] == '\n')))
				break;
			if (i + 1 < n && (b[i + 1] == ' ' || b[i + 1] == '\t'))
				return fail(why, "a folded header line");
			continue;
		}
		if (c == '\r') {
			if (i + 1 < n && b[i + 1] != '\n')
				return fail(why, "a bare CR in the head");
			continue;
		}
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return fail(why, "a control character in the head");
		if (i == 0 && c != 'H')
			return fail(why, "not an HTTP/1.x response");
	}
	if (i >= n) {
		/* A CR or a line's start may be judged with the next byte. */
		p->scanned = n > 0 ? n - 1 : 0;
		return HR_MORE;
	}
	*used = i + 1;
	if ((r = parse_head(p, b, *used, why)) != 0)
		return r;
	p->phase = PH_BODY;
	if (p->status >= 100 && p->status < 200)
		return HR_INTERIM;
	if (p->no_body || (!p->chunked && !p->to_eof && p->left == 0))
		p->phase = PH_DONE;
	return HR_HEAD;
}

static int
chunk_size_byte(struct hresp *p, unsigned char c, const char **why)
{
	int h;

	if (++p->line > HTTP_CHUNK_LINE_MAX)
		return fail(why, "a chunk-size line too long");
	if (p->cs == CS_SIZE && (h = http_hexval(c)) >= 0) {
		if (p->left > (1ULL << 50))
			return fail(why, "a chunk too large");
		p->left = p->left * 16 + (unsigned)h;
		return 0;
	}
	if (p->line == 1)
		return fail(why, "a bad chunk size");
	if (c == '\n' || c == '\r') {
		p->cs = CS_SIZE_LF;
		if (c == '\n')
			goto start;
		return 0;
	}
	if ((c < 0x20 && c != '\t') || c == 0x7f)
		return fail(why, "a bad chunk size");
	p->cs = CS_EXT;		/* Extensions are passed over. */
	return 0;
start:
	p->line = 0;
	p->cs = p->left == 0 ? CS_TRAILER : CS_DATA;
	return 0;
}

/* Trailers are read and dropped, bounded as a head is. */
static int
trailer_byte(struct hresp *p, unsigned char c, const char **why)
{
	if (++p->trailer > HTTP_HEAD_MAX)
		return fail(why, "trailers too large");
	if (c == '\r')
		return 0;
	if (c == '\n') {
		if (p->cs == CS_TRAILER)
			p->phase = PH_DONE;	/* The empty line. */
		p->cs = CS_TRAILER;
		return 0;
	}
	if ((c < 0x20 && c != '\t') || c == 0x7f)
		return fail(why, "a control character in a trailer");
	p->cs = CS_TRAILER_LINE;
	return 0;
}

/* One byte of chunk framing. */
static int
chunk_byte(struct hresp *p, unsigned char c, const char **why)
{
	switch (p->cs) {
	case CS_SIZE:
	case CS_EXT:
		return chunk_size_byte(p, c, why);
	case CS_SIZE_LF:
		if (c != '\n')
			return fail(why, "a bad chunk size");
		p->line = 0;
		p->cs = p->left == 0 ? CS_TRAILER : CS_DATA;
		return 0;
	case CS_DATA_CR:
		if (c == '\r') {
			p->cs = CS_DATA_LF;
			return 0;
		}
		/* FALLTHROUGH */
	case CS_DATA_LF:
		if (c != '\n')
			return fail(why, "a chunk without its line end");
		p->cs = CS_SIZE;
		p->line = 0;
		return 0;
	default:
		return trailer_byte(p, c, why);
	}
}

/*
 * Body bytes b[0, n) (after the head): the data goes to fn in spans, in
 * place.  *used is what was taken: all of n but what follows the body
 * (set whatever the verdict).
 * Returns HR_MORE, HR_DONE, HR_STOP (fn returned false) or HR_ERROR.
 */
int
hresp_body(struct hresp *p, char *b, size_t n, size_t *used,
    hresp_data_fn *fn, void *arg, const char **why)
{
	size_t at = 0, take;
	int r;

	while (at < n && p->phase == PH_BODY) {
		if (!p->chunked || p->cs == CS_DATA) {
			take = n - at;
			if (!p->to_eof && take > p->left)
				take = (size_t)p->left;
			if (!p->to_eof)
				p->left -= take;
			at += take;
			if (p->chunked && p->left == 0)
				p->cs = CS_DATA_CR;
			else if (!p->chunked && !p->to_eof && p->left == 0)
				p->phase = PH_DONE;
			if (!fn(arg, b + at - take, take)) {
				*used = at;
				return HR_STOP;
			}
			continue;
		}
		if ((r = chunk_byte(p, (unsigned char)b[at++], why)) != 0) {
			*used = at;
			return r;
		}
	}
	*used = at;
	return p->phase == PH_DONE ? HR_DONE : HR_MORE;
}

/* The connection ended: the end of the body, or a body cut short. */
int
hresp_eof(const struct hresp *p, const char **why)
{
	if (p->phase == PH_DONE || (p->phase == PH_BODY && p->to_eof))
		return HR_DONE;
	return fail(why, p->phase == PH_HEAD ? "the connection ended before "
	    "a response" : "the connection ended in the body");
}
