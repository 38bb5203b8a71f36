/*
 * http_parse.c: the HTTP/1.1 request parser (RFC 9112).  No I/O: it is
 * given the connection's input buffer and says how far a request has come
 * (the fuzz target drives it alone); the rules a request must then pass
 * are in http_rules.c.
 *
 * Everything here is attacker-controlled.  The head is scanned byte by
 * byte as it arrives, once: a control character, a bare CR or LF, or a
 * method that is not a token fails at once, so garbage gets its 400
 * without waiting for a timeout.  Once its empty line has come, the head
 * (at most HTTP_HEAD_MAX bytes) is split into lines and fields in one
 * pass.  A chunked body is decoded in place: the decoded bytes are never
 * ahead of the encoded ones, so they are moved down over the chunk sizes,
 * and the body ends up whole right after the head, as a Content-Length
 * body is.  No recursion; the only memory is the parser struct.
 *
 * Strictness, to leave no room for request smuggling behind a proxy: lines
 * end in CRLF; obs-fold, whitespace before a field's colon, Content-Length
 * with Transfer-Encoding, a repeated Content-Length (even with the same
 * value) or Host are each a 400; a transfer coding other than chunked
 * alone is a 501.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "util.h"
#include "http.h"
#include "http_int.h"

#define METHOD_MAX	20	/* Longer is no method of ours: 400. */

enum { PH_HEAD, PH_BODY, PH_DONE };

/* Head scan states. */
enum {
	HS_PRE,			/* Before the request line (empty lines). */
	HS_PRE_CR,
	HS_LINE,		/* In a line. */
	HS_CR,			/* A line's CR. */
	HS_LF,			/* At the start of a line. */
	HS_LF_CR		/* The CR of the empty line. */
};

/* Chunk states. */
enum {
	CS_SIZE, CS_EXT, CS_SIZE_LF, CS_DATA, CS_DATA_CR, CS_DATA_LF,
	CS_TRAILER, CS_TRAILER_LINE, CS_TRAILER_LF, CS_END_LF
};

/* The fields of enum http_hdr, lower case. */
static const char *const hdr_names[HTTP_H_N] = {
	"host", "content-type", "origin", "authorization", "mcp-session-id",
	"mcp-protocol-version", "last-event-id", "mcp-method", "mcp-name",
	"content-length", "transfer-encoding", "expect"
};

void
http_parser_reset(struct http_parser *p)
{
	int i;

	memset(p, 0, sizeof(*p));
	p->hs = HS_PRE;
	p->length = -1;
	for (i = 0; i < HTTP_H_N; i++)
		p->hdr[i] = -1;
}

/* One byte of the request line's method: a token up to its space. */
static int
method_byte(struct http_parser *p, unsigned char c)
{
	if (c == ' ' && p->mlen > 0) {
		p->mlen = -1;
		return 0;
	}
	if (!http_tchar(c) || ++p->mlen > METHOD_MAX)
		return 400;
	return 0;
}

/*
 * The byte c at i after a CR of the head, which must be its LF: the end
 * of an empty line before the request, of a line, or of the head.
 * HTTP_MORE to go on, else what scan_head returns.
 */
static int
after_cr(struct http_parser *p, unsigned char c, size_t i)
{
	if (c != '\n')
		return 400;
	switch (p->hs) {
	case HS_PRE_CR:
		/* Empty lines before a request are allowed, a few. */
		if (i >= HTTP_HEAD_MAX)
			return 400;
		p->start = i + 1;
		p->hs = HS_PRE;
		return HTTP_MORE;
	case HS_CR:
		if (p->mlen >= 0)
			return 400;
		p->hs = HS_LF;
		return HTTP_MORE;
	default:		/* HS_LF_CR */
		p->scanned = p->headlen = i + 1;
		return HTTP_HEADER;
	}
}

/* Look at the head's new bytes: its end, or a reason to stop now. */
static int
scan_head(struct http_parser *p, const char *b, size_t len)
{
	unsigned char c;
	size_t i;
	int r;

	for (i = p->scanned; i < len; i++) {
		c = (unsigned char)b[i];
		if (i - p->start >= HTTP_HEAD_MAX)
			return 431;
		switch (p->hs) {
		case HS_PRE:
			if (c == '\r') {
				p->hs = HS_PRE_CR;
				continue;
			}
			p->hs = HS_LINE;
			break;
		case HS_PRE_CR:
		case HS_CR:
		case HS_LF_CR:
			if ((r = after_cr(p, c, i)) != HTTP_MORE)
				return r;
			continue;
		case HS_LF:
			if (c == '\r') {
				p->hs = HS_LF_CR;
				continue;
			}
			p->hs = HS_LINE;
			break;
		default:
			if (c == '\r') {
				p->hs = HS_CR;
				continue;
			}
			break;
		}
		/* A byte of a line: no bare LF, no control but HT. */
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return 400;
		if (p->mlen >= 0 && method_byte(p, c) != 0)
			return 400;
	}
	p->scanned = len;
	return HTTP_MORE;
}

static enum http_method
method_of(const char *s, size_t n)
{
	static const char *const names[] = {
		"GET", "POST", "DELETE", "HEAD", "OPTIONS"
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == n && memcmp(s, names[i], n) == 0)
			return (enum http_method)i;
	return HTTP_OTHER;
}

/* "HTTP/1.1" or "HTTP/1.0"; 505 for another version, 400 for none. */
static int
version_of(struct http_parser *p, const char *s, size_t n)
{
	if (n != 8 || memcmp(s, "HTTP/", 5) != 0 || s[6] != '.' ||
	    s[5] < '0' || s[5] > '9' || s[7] < '0' || s[7] > '9')
		return 400;
	if (s[5] != '1' || (s[7] != '0' && s[7] != '1'))
		return 505;
	p->minor = s[7] - '0';
	return 0;
}

/* METHOD SP target SP version, each space single. */
static int
request_line(struct http_parser *p, const char *b, size_t at, size_t n)
{
	const char *s = b + at, *sp1, *sp2;
	size_t i;

	sp1 = memchr(s, ' ', n);
	if (sp1 == NULL)
		return 400;
	p->method = method_of(s, (size_t)(sp1 - s));
	sp2 = memchr(sp1 + 1, ' ', n - (size_t)(sp1 + 1 - s));
	if (sp2 == NULL || sp2 == sp1 + 1)
		return 400;
	p->target = (uint16_t)(sp1 + 1 - b);
	p->targetlen = (uint16_t)(sp2 - sp1 - 1);
	for (i = 0; i < p->targetlen; i++)
		if ((unsigned char)b[p->target + i] > 0x7e)
			return 400;
	return version_of(p, sp2 + 1, n - (size_t)(sp2 + 1 - s));
}

static int
known_field(const char *s, size_t n)
{
	int i;

	for (i = 0; i < HTTP_H_N; i++)
		if (http_ieq(s, n, hdr_names[i]))
			return i;
	return -1;
}

/* name ":" OWS value OWS */
static int
field_line(struct http_parser *p, const char *b, size_t at, size_t n,
    bool *close)
{
	const char *s = b + at, *colon;
	size_t i, v, e;
	struct http_field *f;
	int k;

	if ((colon = memchr(s, ':', n)) == NULL || colon == s)
		return 400;
	for (i = 0; s + i < colon; i++)
		if (!http_tchar((unsigned char)s[i]))
			return 400;	/* obs-fold, or space before ':'. */
	if (p->nfields == HTTP_FIELDS_MAX)
		return 431;
	for (v = i + 1; v < n && (s[v] == ' ' || s[v] == '\t'); v++)
		continue;
	for (e = n; e > v && (s[e - 1] == ' ' || s[e - 1] == '\t'); e--)
		continue;
	f = &p->fields[p->nfields];
	f->name = (uint16_t)at;
	f->namelen = (uint16_t)i;
	f->value = (uint16_t)(at + v);
	f->valuelen = (uint16_t)(e - v);
	if ((k = known_field(s, i)) >= 0) {
		if (p->hdr[k] >= 0)
			return 400;	/* Two of a field that is one. */
		p->hdr[k] = (int16_t)p->nfields;
	} else if (http_ieq(s, i, "connection") &&
	    http_has_token(s + v, e - v, "close"))
		*close = true;
	p->nfields++;
	return 0;
}

/* Content-Length: digits only. */
static int
content_length(struct http_parser *p, const char *s, size_t n)
{
	long long v = 0;
	size_t i;

	if (n == 0)
		return 400;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return 400;
		if (v > (1LL << 50))
			return 413;
		v = v * 10 + (s[i] - '0');
	}
	p->length = v;
	return 0;
}

static const char *
value(const struct http_parser *p, const char *b, enum http_hdr h,
    size_t *n)
{
	const struct http_field *f;

	if (p->hdr[h] < 0)
		return NULL;
	f = &p->fields[p->hdr[h]];
	*n = f->valuelen;
	return b + f->value;
}

/* How the body is framed (RFC 9112 6.3), and what else the fields say. */
static int
framing(struct http_parser *p, const char *b, size_t max, bool close)
{
	const char *te, *cl, *ex;
	size_t ten = 0, cln = 0, exn = 0;
	int r;

	p->keep_alive = p->minor == 1 && !close;
	if (p->minor == 1 && p->hdr[HTTP_H_HOST] < 0)
		return 400;
	te = value(p, b, HTTP_H_TRANSFER_ENCODING, &ten);
	cl = value(p, b, HTTP_H_CONTENT_LENGTH, &cln);
	if (te != NULL) {
		if (cl != NULL || p->minor == 0)
			return 400;
		if (!http_ieq(te, ten, "chunked"))
			return 501;
		p->chunked = true;
	} else if (cl != NULL) {
		if ((r = content_length(p, cl, cln)) != 0)
			return r;
	} else if (p->method == HTTP_POST)
		return 411;
	else
		p->length = 0;
	if (p->length > 0 && (unsigned long long)p->length > max)
		return 413;
	if ((ex = value(p, b, HTTP_H_EXPECT, &exn)) != NULL) {
		if (!http_ieq(ex, exn, "100-continue"))
			return 417;
		p->expect = p->minor == 1;
	}
	return 0;
}

/* The whole head, once its end has come: every line is CRLF-ended. */
static int
parse_head(struct http_parser *p, const char *b, size_t max)
{
	size_t at = p->start, end = p->headlen - 2, n;
	const char *cr;
	bool close = false;
	int r;

	for (;;) {
		cr = memchr(b + at, '\r', end - at + 1);
		n = (size_t)(cr - (b + at));
		if (at == p->start)
			r = request_line(p, b, at, n);
		else if (n == 0)
			break;
		else
			r = field_line(p, b, at, n, &close);
		if (r != 0)
			return r;
		at += n + 2;
	}
	return framing(p, b, max, close);
}

/* A chunk-size line's byte: hex digits, maybe ";ext", CRLF. */
static int
chunk_size_byte(struct http_parser *p, unsigned char c, size_t max)
{
	int h;

	if (++p->line > HTTP_CHUNK_LINE_MAX)
		return 400;
	if (p->cs == CS_SIZE && (h = http_hexval(c)) >= 0) {
		p->chunk = p->chunk * 16 + (unsigned)h;
		if (p->chunk > max)
			return 413;
		return 0;
	}
	if (p->line == 1)
		return 400;	/* No digit. */
	if (c == '\r') {
		p->cs = CS_SIZE_LF;
		return 0;
	}
	if (c == ';' || p->cs == CS_EXT) {
		/* Extensions are skipped, but must be text. */
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return 400;
		p->cs = CS_EXT;
		return 0;
	}
	return 400;
}

/* After a chunk-size line: data, or the trailer after the last chunk. */
static int
chunk_start(struct http_parser *p, size_t max)
{
	p->line = 0;
	if (p->chunk == 0) {
		p->cs = CS_TRAILER;
		return 0;
	}
	if (p->bodylen + p->chunk > max)
		return 413;
	p->cs = CS_DATA;
	return 0;
}

/*
 * Trailer fields are read and dropped; their bytes count as a head's.
 * Each line is a field line, held to the head's rules: it begins with a
 * name (not a bare LF, a control or obs-fold, which a lenient proxy
 * before us could take as the end of the body), has no control but HT,
 * and ends in CRLF.
 */
static int
trailer_byte(struct http_parser *p, unsigned char c)
{
	if (++p->line > HTTP_HEAD_MAX)
		return 431;
	switch (p->cs) {
	case CS_TRAILER:
		if (c == '\r')
			p->cs = CS_END_LF;
		else if (http_tchar(c))
			p->cs = CS_TRAILER_LINE;
		else
			return 400;
		return 0;
	case CS_TRAILER_LINE:
		if (c == '\r')
			p->cs = CS_TRAILER_LF;
		else if ((c < 0x20 && c != '\t') || c == 0x7f)
			return 400;
		return 0;
	case CS_TRAILER_LF:
		if (c != '\n')
			return 400;
		p->cs = CS_TRAILER;
		return 0;
	default:		/* CS_END_LF */
		if (c != '\n')
			return 400;
		p->phase = PH_DONE;
		return 0;
	}
}

/*
 * A byte of the framing (not of a chunk's data): its size line, the
 * CRLF after its data, the trailer.  0, or the status to answer with.
 */
static int
chunk_byte(struct http_parser *p, unsigned char c, size_t max)
{
	switch (p->cs) {
	case CS_SIZE:
	case CS_EXT:
		return chunk_size_byte(p, c, max);
	case CS_SIZE_LF:
		return c == '\n' ? chunk_start(p, max) : 400;
	case CS_DATA_CR:
		if (c != '\r')
			return 400;
		p->cs = CS_DATA_LF;
		return 0;
	case CS_DATA_LF:
		if (c != '\n')
			return 400;
		p->cs = CS_SIZE;
		p->line = 0;
		return 0;
	default:
		return trailer_byte(p, c);
	}
}

/* Decode the chunks that have come, in place. */
static int
parse_chunked(struct http_parser *p, char *b, size_t *len, size_t max)
{
	size_t at = p->headlen + p->raw, take;
	unsigned char c;
	int r = 0;

	while (at < *len && r == 0 && p->phase != PH_DONE) {
		if (p->cs == CS_DATA) {
			take = *len - at;
			if (take > p->chunk)
				take = (size_t)p->chunk;
			memmove(b + p->headlen + p->bodylen, b + at, take);
			p->bodylen += take;
			p->chunk -= take;
			at += take;
			if (p->chunk == 0)
				p->cs = CS_DATA_CR;
			continue;
		}
		c = (unsigned char)b[at++];
		r = chunk_byte(p, c, max);
	}
	/*
	 * Drop the chunk framing taken so far: what is left of the input
	 * moves down to the end of the decoded body, so that the buffer holds
	 * no more than the head, the body and one read.
	 */
	memmove(b + p->headlen + p->bodylen, b + at, *len - at);
	*len -= at - (p->headlen + p->bodylen);
	p->raw = p->bodylen;
	if (r != 0)
		return r;
	return p->phase == PH_DONE ? HTTP_DONE : HTTP_MORE;
}

static int
parse_length(struct http_parser *p, size_t len)
{
	size_t have = len - (p->headlen + p->raw);
	size_t need = (size_t)p->length - p->bodylen;

	if (have > need)
		have = need;
	p->raw += have;
	p->bodylen += have;
	if (p->bodylen < (size_t)p->length)
		return HTTP_MORE;
	p->phase = PH_DONE;
	return HTTP_DONE;
}

/*
 * b[0, *len) is the connection's input from the request's first byte;
 * each call is given all of it again, with more at the end.  A chunked
 * body is decoded in place and its framing cut out, which shortens *len.
 * max is the largest body.  Returns HTTP_MORE, HTTP_HEADER once (the
 * caller checks the head before it reads a body), HTTP_DONE, or an error
 * status, after which the connection cannot be read further.  A complete
 * request takes headlen + raw bytes of the buffer; the rest is the next's.
 */
int
http_parse(struct http_parser *p, char *b, size_t *len, size_t max)
{
	int r;

	switch (p->phase) {
	case PH_HEAD:
		if ((r = scan_head(p, b, *len)) != HTTP_HEADER)
			return r;
		if ((r = parse_head(p, b, max)) != 0)
			return r;
		p->phase = PH_BODY;
		return HTTP_HEADER;
	case PH_BODY:
		if (p->chunked)
			return parse_chunked(p, b, len, max);
		return parse_length(p, *len);
	default:
		return HTTP_DONE;
	}
}

/* The length of an absolute target's "http://" or "https://", or 0. */
static size_t
scheme_len(const char *t, size_t n)
{
	static const char *const schemes[] = { "http://", "https://" };
	size_t i, k;

	for (i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++) {
		k = strlen(schemes[i]);
		if (n >= k && strncasecmp(t, schemes[i], k) == 0)
			return k;
	}
	return 0;
}

void
http_request_of(const struct http_parser *p, const char *b,
    struct http_request *r)
{
	const char *q, *t;
	size_t n, scheme, end;
	int i;

	memset(r, 0, sizeof(*r));
	r->method = p->method;
	r->minor = p->minor;
	r->target = http_str_at(b, p->target, p->targetlen);
	for (i = 0; i < HTTP_H_N; i++)
		if (p->hdr[i] >= 0)
			r->h[i] = http_str_at(b, p->fields[p->hdr[i]].value,
			    p->fields[p->hdr[i]].valuelen);
	t = r->target.p;
	n = r->target.n;
	scheme = scheme_len(t, n);
	/*
	 * The absolute form (a proxy's) names the path after the authority,
	 * and its authority is the host: the Host field is then ignored
	 * (RFC 9112, 3.2.2), so the rules check the one that counts.
	 */
	if (scheme > 0) {
		q = memchr(t + scheme, '/', n - scheme);
		end = q != NULL ? (size_t)(q - t) : n;
		r->h[HTTP_H_HOST].p = t + scheme;
		r->h[HTTP_H_HOST].n = end - scheme;
		t += end;
		n -= end;
	}
	if ((q = memchr(t, '?', n)) != NULL)
		n = (size_t)(q - t);
	r->path.p = t;
	r->path.n = n;
	r->buf = b;
	r->fields = p->fields;
	r->nfields = p->nfields;
	r->body = b + p->headlen;
	r->bodylen = p->bodylen;
}
