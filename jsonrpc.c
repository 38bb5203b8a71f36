/*
 * jsonrpc.c: JSON only.  Tokenizing (jsmn) with the validation jsmn leaves
 * out, token lookup, string unescaping, the JSON emitter, the scan of a
 * JSON-RPC message's top level, and the splicing of ids.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* This file holds jsmn's implementation; the others see the header. */
#undef JSMN_HEADER
#include <jsmn.h>

#include "workbench.h"

/*
 * Token cap: 2 Mi tokens (40 MiB) is far more than any sane message needs,
 * yet bounds what a hostile line can make us allocate.  Arrays above
 * TOKEN_KEEP are given back after the message is handled.
 */
#define TOKEN_MIN	256
#define TOKEN_MAX	(2u * 1024 * 1024)
#define TOKEN_KEEP	4096

static size_t	check_value(const char *, size_t, size_t, size_t *, size_t *);
static size_t	string_stop(const char *, size_t, size_t);
static bool	raw_id_valid(const char *, size_t);

static bool
valid_number(const char *s, size_t n)
{
	size_t i = 0;

	if (i < n && s[i] == '-')
		i++;
	if (i < n && s[i] == '0')
		i++;
	else if (i < n && s[i] >= '1' && s[i] <= '9')
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++;
	else
		return false;
	if (i < n && s[i] == '.') {
		if (++i >= n || s[i] < '0' || s[i] > '9')
			return false;
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++;
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		if (i >= n || s[i] < '0' || s[i] > '9')
			return false;
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++;
	}
	return i == n;
}

static bool
valid_primitive(const char *s, size_t n)
{
	if ((n == 4 && memcmp(s, "true", 4) == 0) ||
	    (n == 5 && memcmp(s, "false", 5) == 0) ||
	    (n == 4 && memcmp(s, "null", 4) == 0))
		return true;
	return valid_number(s, n);
}

/* Digits, after an optional minus: an integer, once known to be JSON. */
static bool
raw_is_int(const char *s, size_t n)
{
	size_t k = (n > 0 && s[0] == '-');

	if (k == n)
		return false;
	for (; k < n; k++)
		if (s[k] < '0' || s[k] > '9')
			return false;
	return true;
}

static size_t
skip_space(const char *s, size_t i, size_t n)
{
	while (i < n && json_space(s[i]))
		i++;
	return i;
}

/* The end of s[0..n) without trailing white space. */
static size_t
back_space(const char *s, size_t n)
{
	while (n > 0 && json_space(s[n - 1]))
		n--;
	return n;
}

/*
 * Strict jsmn wants a delimiter after a primitive, so a whole text that is
 * one number or literal ("42") ends "partial".  It is valid JSON: give it
 * its one token.
 */
static bool
bare_primitive(struct json *j)
{
	size_t start = skip_space(j->js, 0, j->len);
	size_t end = start + back_space(j->js + start, j->len - start);
	if (end == start || !valid_primitive(j->js + start, end - start))
		return false;
	j->tok[0].type = JSMN_PRIMITIVE;
	j->tok[0].start = (int)start;
	j->tok[0].end = (int)end;
	j->tok[0].size = 0;
	j->tok[0].parent = -1;
	j->ntok = 1;
	return true;
}

/*
 * Tokenize any JSON value; grows the token array up to the cap.  jsmn
 * does not validate ({"a" "b"}, {"a":1,}, tru and raw control characters
 * pass), so the text is checked first, in one pass; and it closes a
 * bracket by walking parent links from the last token, which makes deep
 * nesting quadratic, so depth is bounded before jsmn sees it.
 */
int
json_parse_any(struct json *j, const char *js, size_t len)
{
	int r;

	return (r = json_check(j, js, len)) != JSON_OK ? r : json_tokenize(j);
}

/*
 * Check a whole text for json_tokenize: one JSON value, spaces around it.
 * JSON_OK, JSON_SYNTAX (with j->errpos) or JSON_TOODEEP.
 */
int
json_check(struct json *j, const char *js, size_t len)
{
	size_t end, depth;

	j->js = js;
	j->len = len;
	j->ntok = 0;
	j->errpos = 0;
	end = check_value(js, skip_space(js, 0, len), len, &j->errpos, &depth);
	if (end == 0 || skip_space(js, end, len) != len) {
		if (end != 0)
			j->errpos = end;
		return JSON_SYNTAX;
	}
	return depth > JSON_DEPTH_MAX ? JSON_TOODEEP : JSON_OK;
}

/* Tokenize the text json_check passed: JSON_OK, or JSON_TOOBIG. */
int
json_tokenize(struct json *j)
{
	const char *js = j->js;
	size_t len = j->len;
	jsmn_parser p;
	unsigned int cap;
	int r;

	if (j->cap == 0) {
		j->cap = TOKEN_MIN;
		j->tok = xmalloc(j->cap * sizeof(*j->tok));
	}
	jsmn_init(&p);
	while ((r = jsmn_parse(&p, js, len, j->tok, j->cap)) ==
	    JSMN_ERROR_NOMEM) {
		if (j->cap >= TOKEN_MAX)
			return JSON_TOOBIG;
		cap = j->cap * 4 > TOKEN_MAX ? TOKEN_MAX : j->cap * 4;
		j->tok = xrealloc(j->tok, cap * sizeof(*j->tok));
		j->cap = cap;
	}
	if (r == JSMN_ERROR_PART && bare_primitive(j))
		return JSON_OK;
	if (r <= 0) {
		j->errpos = p.pos;
		return JSON_SYNTAX;
	}
	j->ntok = r;
	return JSON_OK;
}

/* Tokenize one message: a single JSON object. */
int
json_parse(struct json *j, const char *js, size_t len)
{
	int r;

	if ((r = json_parse_any(j, js, len)) != JSON_OK)
		return r;
	return j->tok[0].type == JSMN_OBJECT ? JSON_OK : JSON_NOTOBJ;
}

/* Give back a token array that one large message made large. */
void
json_release(struct json *j)
{
	if (j->cap <= TOKEN_KEEP)
		return;
	free(j->tok);
	j->tok = NULL;
	j->cap = 0;
	j->ntok = 0;
}

/* The token after the subtree at i; no recursion, so depth is free. */
int
json_next(const struct json *j, int i)
{
	int end = j->tok[i].end;

	for (i++; i < j->ntok && j->tok[i].start < end; i++)
		;
	return i;
}

bool
json_is(const struct json *j, int i, jsmntype_t type)
{
	return i >= 0 && i < j->ntok && j->tok[i].type == type;
}

static bool
hex4(const char *s, unsigned long *v)
{
	int i, d;

	*v = 0;
	for (i = 0; i < 4; i++) {
		if (s[i] >= '0' && s[i] <= '9')
			d = s[i] - '0';
		else if (s[i] >= 'a' && s[i] <= 'f')
			d = s[i] - 'a' + 10;
		else if (s[i] >= 'A' && s[i] <= 'F')
			d = s[i] - 'A' + 10;
		else
			return false;
		*v = *v << 4 | (unsigned long)d;
	}
	return true;
}

/* Unescape string text s[0, n) (no quotes) into out, not NUL-terminated. */
static bool
unescape(const char *s, size_t n, struct buf *out)
{
	size_t k;
	unsigned long cp, lo;

	for (k = 0; k < n; k++) {
		if (s[k] != '\\') {
			buf_putc(out, s[k]);
			continue;
		}
		if (++k >= n)
			return false;
		switch (s[k]) {
		case 'b': buf_putc(out, '\b'); continue;
		case 'f': buf_putc(out, '\f'); continue;
		case 'n': buf_putc(out, '\n'); continue;
		case 'r': buf_putc(out, '\r'); continue;
		case 't': buf_putc(out, '\t'); continue;
		case 'u': break;
		default: buf_putc(out, s[k]); continue;
		}
		if (k + 4 >= n || !hex4(s + k + 1, &cp))
			return false;
		k += 4;
		if (cp >= 0xd800 && cp < 0xdc00 && k + 6 < n &&
		    s[k + 1] == '\\' && s[k + 2] == 'u' &&
		    hex4(s + k + 3, &lo) && lo >= 0xdc00 && lo < 0xe000) {
			cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			k += 6;
		}
		if (cp == 0)
			return false;
		if (cp >= 0xd800 && cp < 0xe000)
			cp = 0xfffd;
		if (cp < 0x80)
			buf_putc(out, (char)cp);
		else if (cp < 0x800) {
			buf_putc(out, (char)(0xc0 | cp >> 6));
			buf_putc(out, (char)(0x80 | (cp & 0x3f)));
		} else if (cp < 0x10000) {
			buf_putc(out, (char)(0xe0 | cp >> 12));
			buf_putc(out, (char)(0x80 | (cp >> 6 & 0x3f)));
			buf_putc(out, (char)(0x80 | (cp & 0x3f)));
		} else {
			buf_putc(out, (char)(0xf0 | cp >> 18));
			buf_putc(out, (char)(0x80 | (cp >> 12 & 0x3f)));
			buf_putc(out, (char)(0x80 | (cp >> 6 & 0x3f)));
			buf_putc(out, (char)(0x80 | (cp & 0x3f)));
		}
	}
	return true;
}

/*
 * The string token i unescaped, as a new C string; NULL when i is not a
 * string or holds \u0000 (no name we handle may contain NUL).
 */
char *
json_strdup(const struct json *j, int i)
{
	struct span v;

	if (!json_is(j, i, JSMN_STRING))
		return NULL;
	v.p = json_raw(j, i, &v.n);
	return json_span_strdup(&v);
}

/* The same, unescaped into b (emptied first), whose memory is reused. */
const char *
json_str(const struct json *j, int i, struct buf *b)
{
	struct span v;

	if (!json_is(j, i, JSMN_STRING)) {
		b->len = 0;
		return NULL;
	}
	v.p = json_raw(j, i, &v.n);
	return json_span_str(&v, b);
}

/*
 * A string as written (quotes included, checked already) unescaped into
 * b (emptied first); NULL when v is not a string or holds \u0000.
 */
const char *
json_span_str(const struct span *v, struct buf *b)
{
	b->len = 0;
	if (v->n < 2 || v->p[0] != '"')
		return NULL;
	/* Most have no escape: copied at once. */
	if (memchr(v->p + 1, '\\', v->n - 2) == NULL)
		buf_put(b, v->p + 1, v->n - 2);
	else if (!unescape(v->p + 1, v->n - 2, b))
		return NULL;
	return buf_cstr(b);
}

/*
 * A string as written (quotes included, checked already) unescaped, as a
 * new C string; NULL when v is not a string or holds \u0000.
 */
char *
json_span_strdup(const struct span *v)
{
	struct buf b = { 0 };
	char *dup = NULL;

	if (json_span_str(v, &b) != NULL)
		dup = xstrndup(b.data, b.len);
	buf_free(&b);
	return dup;
}

/* Is the string v as written (quotes included) s once unescaped? */
bool
json_span_is(const struct span *v, const char *s)
{
	size_t len = strlen(s);
	char *u;
	bool eq;

	if (v->n == len + 2 && memcmp(v->p + 1, s, len) == 0)
		return memchr(v->p, '\\', v->n) == NULL;
	if (v->n <= len + 2 || memchr(v->p, '\\', v->n) == NULL ||
	    (u = json_span_strdup(v)) == NULL)
		return false;
	eq = strcmp(u, s) == 0;
	free(u);
	return eq;
}

/* Does string token i equal s once unescaped? */
bool
json_eq(const struct json *j, int i, const char *s)
{
	const char *t;
	size_t n, len;
	char *u;
	bool eq;

	if (!json_is(j, i, JSMN_STRING))
		return false;
	t = j->js + j->tok[i].start;
	n = j->tok[i].end - j->tok[i].start;
	/* Most keys differ in their first byte; escapes are rare. */
	if (n > 0 && t[0] != s[0] && t[0] != '\\')
		return false;
	len = strlen(s);
	if (n == len && memcmp(t, s, n) == 0 && memchr(t, '\\', n) == NULL)
		return true;
	/* Unescaping shortens: only a longer token with escapes may match. */
	if (n <= len || memchr(t, '\\', n) == NULL)
		return false;
	if ((u = json_strdup(j, i)) == NULL)
		return false;
	eq = strcmp(u, s) == 0;
	free(u);
	return eq;
}

/* The value of key in object obj, or -1. */
int
json_get(const struct json *j, int obj, const char *key)
{
	int i, n, end;

	if (!json_is(j, obj, JSMN_OBJECT))
		return -1;
	end = j->tok[obj].size;
	for (i = obj + 1, n = 0; n < end; n++) {
		if (json_eq(j, i, key))
			return i + 1;
		i = json_next(j, i + 1);
	}
	return -1;
}

/*
 * The values of several keys of object obj in one pass: vals[k] for
 * keys[k] (a NULL-terminated list), -1 when absent.  Returns how many of
 * obj's keys are not in the list.
 */
int
json_members(const struct json *j, int obj, const char *const *keys,
    int *vals)
{
	int i, n, k, others = 0;

	for (k = 0; keys[k] != NULL; k++)
		vals[k] = -1;
	if (!json_is(j, obj, JSMN_OBJECT))
		return 0;
	for (i = obj + 1, n = 0; n < j->tok[obj].size; n++) {
		for (k = 0; keys[k] != NULL && !json_eq(j, i, keys[k]); k++)
			;
		if (keys[k] == NULL)
			others++;
		else if (vals[k] < 0)
			vals[k] = i + 1;
		i = json_next(j, i + 1);
	}
	return others;
}

/* Follow a dotted path of keys ("params._meta.progressToken"). */
int
json_path(const struct json *j, int obj, const char *path)
{
	char key[64];
	const char *dot;
	size_t n;

	while (obj >= 0 && *path != '\0') {
		dot = strchr(path, '.');
		n = dot == NULL ? strlen(path) : (size_t)(dot - path);
		if (n >= sizeof(key))
			return -1;
		memcpy(key, path, n);
		key[n] = '\0';
		obj = json_get(j, obj, key);
		path += n + (dot != NULL);
	}
	return obj;
}

/* Is token i an integer (no fraction, no exponent)? */
bool
json_is_int(const struct json *j, int i)
{
	return json_is(j, i, JSMN_PRIMITIVE) && raw_is_int(j->js +
	    j->tok[i].start, j->tok[i].end - j->tok[i].start);
}

/* Token i as an integer that fits a long long. */
bool
json_get_int(const struct json *j, int i, long long *v)
{
	char tmp[24];
	size_t n;
	char *end;

	if (!json_is_int(j, i))
		return false;
	n = j->tok[i].end - j->tok[i].start;
	if (n >= sizeof(tmp))
		return false;
	memcpy(tmp, j->js + j->tok[i].start, n);
	tmp[n] = '\0';
	errno = 0;
	*v = strtoll(tmp, &end, 10);
	return errno == 0 && *end == '\0';
}

/* 0 and *v set for true/false, -1 otherwise. */
int
json_get_bool(const struct json *j, int i, bool *v)
{
	if (!json_is(j, i, JSMN_PRIMITIVE))
		return -1;
	if (j->js[j->tok[i].start] == 't')
		*v = true;
	else if (j->js[j->tok[i].start] == 'f')
		*v = false;
	else
		return -1;
	return 0;
}

/* The raw text of token i, quotes included for strings. */
const char *
json_raw(const struct json *j, int i, size_t *n)
{
	int q = j->tok[i].type == JSMN_STRING;

	*n = j->tok[i].end - j->tok[i].start + 2 * q;
	return j->js + j->tok[i].start - q;
}

/* 1-based line of offset pos in s; *col gets the 1-based column. */
size_t
json_line_col(const char *s, size_t pos, size_t *col)
{
	size_t line = 1, start = 0, i;

	for (i = 0; i < pos; i++)
		if (s[i] == '\n') {
			line++;
			start = i + 1;
		}
	*col = pos - start + 1;
	return line;
}

/* Sixteen bytes compared at once: SSE2 on x86-64, NEON on ARM. */
typedef unsigned char bytes16 __attribute__((vector_size(16)));

/*
 * Which byte of a block compared is the first that matched (0xff); 16
 * when none did.  On x86-64 one movemask; elsewhere two 64-bit halves.
 * The block comes by pointer: a vector passed by value has no ABI on
 * targets without vector registers (32-bit PowerPC: -Wpsabi), and the
 * function is inlined anyway.
 */
static size_t
first_match(const bytes16 *hit)
{
#ifdef __SSE2__
	unsigned int m = (unsigned int)_mm_movemask_epi8((__m128i)*hit);

	return m != 0 ? (size_t)__builtin_ctz(m) : 16;
#else
	uint64_t half[2];

	memcpy(half, hit, sizeof(half));
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return half[0] != 0 ? (size_t)__builtin_clzll(half[0]) >> 3 :
	    half[1] != 0 ? 8 + ((size_t)__builtin_clzll(half[1]) >> 3) : 16;
#else
	return half[0] != 0 ? (size_t)__builtin_ctzll(half[0]) >> 3 :
	    half[1] != 0 ? 8 + ((size_t)__builtin_ctzll(half[1]) >> 3) : 16;
#endif
#endif
}

/* Past the ASCII bytes from u[i]: sixteen at a time, then byte by byte. */
static size_t
ascii_end(const unsigned char *u, size_t i, size_t n)
{
	bytes16 w, high, hit;

	memset(&high, 0x80, sizeof(high));
	for (; i + sizeof(w) <= n; i += sizeof(w)) {
		memcpy(&w, u + i, sizeof(w));
		hit = (bytes16)(w >= high);
		if (first_match(&hit) < sizeof(w))
			break;
	}
	while (i < n && u[i] < 0x80)
		i++;
	return i;
}

/* Is all of s valid UTF-8? */
bool
utf8_valid(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, k;

	while ((i = ascii_end(u, i, n)) < n) {
		if ((k = utf8_len(u + i, n - i)) == 0)
			return false;
		i += k;
	}
	return true;
}

/*
 * How much of s ends on a character boundary: all of it, unless its last
 * bytes start a multibyte sequence that the next bytes may complete.
 */
size_t
utf8_whole(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t k, want;

	for (k = 1; k <= 3 && k <= n; k++) {
		if ((u[n - k] & 0xc0) == 0x80)
			continue;	/* A continuation byte: look further. */
		want = u[n - k] >= 0xf0 ? 4 : u[n - k] >= 0xe0 ? 3 :
		    u[n - k] >= 0xc0 ? 2 : 1;
		return want > k ? n - k : n;
	}
	return n;
}

/* Copy s, each invalid UTF-8 byte replaced by U+FFFD. */
void
utf8_repair(struct buf *out, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i, k;

	buf_reserve(out, n + 16);
	for (i = 0; i < n; i += k) {
		if (u[i] < 0x80)
			k = 1;
		else if ((k = utf8_len(u + i, n - i)) == 0) {
			buf_puts(out, "\xef\xbf\xbd");
			k = 1;
			continue;
		}
		buf_put(out, s + i, k);
	}
}

/*
 * How a byte that stops a run of plain text is written after its
 * backslash: the two-character escapes, and 'u' for \u00XX.
 */
static const char escapes[0x80] = {
	'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'b', 't', 'n', 'u', 'f', 'r',
	'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u',
	'u', 'u', 'u', 'u',
	['"'] = '"', ['\\'] = '\\'
};

/* Input escaped per step: the output has room for six bytes of each. */
#define ESCAPE_STEP	4096

/*
 * Write the character at u (n bytes left) to *d as a JSON string holds
 * it: plain, escaped, or U+FFFD for a byte that is not valid UTF-8.
 * Returns the bytes it took.
 */
static size_t
escape_one(char **d, const unsigned char *u, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t k = 1;
	char *o = *d;

	if (u[0] >= 0x80 && (k = utf8_len(u, n)) == 0) {
		memcpy(o, "\xef\xbf\xbd", 3);
		o += 3;
		k = 1;
	} else if (u[0] >= 0x80 || (u[0] >= 0x20 && u[0] != '"' &&
	    u[0] != '\\')) {
		memcpy(o, u, k);
		o += k;
	} else {
		*o++ = '\\';
		*o++ = escapes[u[0]];
		if (escapes[u[0]] == 'u') {
			memcpy(o, "00", 2);
			o[2] = hex[u[0] >> 4];
			o[3] = hex[u[0] & 15];
			o += 4;
		}
	}
	*d = o;
	return k;
}

/* Which bytes of a block compared matched (0xff), as bits. */
static unsigned int
match_mask(const bytes16 *hit)
{
#ifdef __SSE2__
	return (unsigned int)_mm_movemask_epi8((__m128i)*hit);
#else
	unsigned char b[16];
	unsigned int m = 0, k;

	memcpy(b, hit, sizeof(b));
	for (k = 0; k < sizeof(b); k++)
		m |= (unsigned int)(b[k] != 0) << k;
	return m;
#endif
}

/*
 * Escape s[0, n) to d, which has room for 6n + 32 bytes; returns the end.
 * JSON text is dense with quotes, so a block of sixteen bytes is looked
 * at once and each quote or backslash in it escaped in turn, the plain
 * bytes between copied sixteen at a time (past the end of what they
 * need: the output moves on only by what counts).  A block with nothing
 * else, the usual one, only puts a backslash before each (the byte itself
 * goes with the next run).  Any other byte that needs care goes through
 * escape_one, and the blocks start again after it.
 */
static char *
escape_to(char *d, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	unsigned char blk[32];
	bytes16 w, quote, slash, space, top, hit;
	unsigned int m;
	size_t i = 0, run, k = 0;

	memset(&quote, '"', sizeof(quote));
	memset(&slash, '\\', sizeof(slash));
	memset(&space, 0x20, sizeof(space));
	memset(&top, 0x7f, sizeof(top));
	while (i + sizeof(w) <= n) {
		memcpy(&w, s + i, sizeof(w));
		memcpy(blk, &w, sizeof(w));
		hit = (bytes16)((w < space) | (w > top));
		if (match_mask(&hit) == 0) {
			/* Only quotes and backslashes: each gets its backslash. */
			hit = (bytes16)((w == quote) | (w == slash));
			for (m = match_mask(&hit), run = 0; m != 0;
			    m &= m - 1) {
				k = (size_t)__builtin_ctz(m);
				memcpy(d, blk + run, 16);
				d += k - run;
				*d++ = '\\';
				run = k;
			}
			memcpy(d, blk + run, 16);
			d += sizeof(w) - run;
			i += sizeof(w);
			continue;
		}
		hit = (bytes16)((w == quote) | (w == slash) | (w < space) |
		    (w > top));
		for (m = match_mask(&hit), run = 0; m != 0; m &= m - 1) {
			k = (size_t)__builtin_ctz(m);
			memcpy(d, blk + run, 16);
			d += k - run;
			if (blk[k] != '"' && blk[k] != '\\')
				break;
			*d++ = '\\';
			*d++ = (char)blk[k];
			run = k + 1;
		}
		if (m == 0) {
			memcpy(d, blk + run, 16);
			d += sizeof(w) - run;
			i += sizeof(w);
		} else
			i += k + escape_one(&d, u + i + k, n - i - k);
	}
	while (i < n)
		i += escape_one(&d, u + i, n - i);
	return d;
}

/*
 * The body of a JSON string, without its quotes: control characters,
 * quotes and backslashes escaped, and invalid UTF-8 replaced, so whatever
 * we got, we send valid JSON.  In steps, so that the room made for the
 * worst case stays small; a step never ends inside a UTF-8 sequence.
 */
void
json_put_chars(struct buf *b, const char *s, size_t n)
{
	size_t step;

	while (n > 0) {
		step = n;
		if (step > ESCAPE_STEP)
			step = utf8_whole(s, ESCAPE_STEP);
		buf_reserve(b, 6 * step + 32);
		b->len = (size_t)(escape_to(b->data + b->len, s, step) -
		    b->data);
		s += step;
		n -= step;
	}
}

/* Emit s as a JSON string (json_put_chars, quoted). */
void
json_put_str(struct buf *b, const char *s, size_t n)
{
	buf_reserve(b, n + 2);
	buf_putc(b, '"');
	json_put_chars(b, s, n);
	buf_putc(b, '"');
}

void
json_put_cstr(struct buf *b, const char *s)
{
	json_put_str(b, s, strlen(s));
}

/* Emit "key": (keys are our own constants). */
void
json_put_key(struct buf *b, const char *key)
{
	buf_putc(b, '"');
	buf_puts(b, key);
	buf_puts(b, "\":");
}

/*
 * Copy the raw object text obj (a whole "{...}") into b without its closing
 * brace, followed by a comma when it had members, so that the caller can
 * append members and close it.  Returns the bytes written.
 */
size_t
json_add_members(struct buf *b, const char *obj, size_t n)
{
	size_t start = b->len, end = n - 1, i;

	buf_put(b, obj, end);
	for (i = 1; i < end && json_space(obj[i]); i++)
		;
	if (i < end)
		buf_putc(b, ',');
	return b->len - start;
}

/*
 * The same for a line too large to keep whose start had no id: the
 * TypeScript SDK writes {"result":...,"jsonrpc":"2.0","id":N}, so look for
 * a top-level "id" as the last member, in the line's last bytes.
 */
int
rpc_scan_id_tail(const char *s, size_t n, const char **id, size_t *idlen)
{
	size_t end, start;

	if ((n = back_space(s, n)) == 0 || s[--n] != '}')
		return -1;
	end = n = back_space(s, n);
	if (n > 0 && s[n - 1] == '"') {
		for (n--; n > 0 && (s[n - 1] != '"' || (n > 1 &&
		    s[n - 2] == '\\')); n--)
			;
		if (n == 0)
			return -1;
		n--;
	} else
		while (n > 0 && (s[n - 1] == '-' || (s[n - 1] >= '0' &&
		    s[n - 1] <= '9')))
			n--;
	if ((start = n) == end)
		return -1;
	if ((n = back_space(s, n)) == 0 || s[--n] != ':')
		return -1;
	n = back_space(s, n);
	if (n < 4 || memcmp(s + n - 4, "\"id\"", 4) != 0)
		return -1;
	n = back_space(s, n - 4);
	if (n == 0 || (s[n - 1] != ',' && s[n - 1] != '{') ||
	    !raw_id_valid(s + start, end - start))
		return -1;
	*id = s + start;
	*idlen = end - start;
	return 0;
}

/*
 * Append text with the span [at, at + atlen) replaced by with: how ids and
 * progress tokens are rewritten while the rest passes untouched.
 */
void
rpc_splice(struct buf *out, const char *text, size_t n, const char *at,
    size_t atlen, const char *with, size_t withlen)
{
	size_t pre = (size_t)(at - text);

	buf_reserve(out, n - atlen + withlen + 1);
	buf_put(out, text, pre);
	buf_put(out, with, withlen);
	buf_put(out, at + atlen, n - pre - atlen);
}

/*
 * Copy text into out with each cut's span replaced by its text (an empty
 * span: the text inserted there).  The cuts, which must not overlap, are
 * put in order here.
 */
void
rpc_splice_cuts(struct buf *out, const char *text, size_t n, struct cut *c,
    int nc)
{
	const char *p = text;
	struct cut t;
	int i, k;

	for (i = 1; i < nc; i++)
		for (k = i; k > 0 && c[k].at.p < c[k - 1].at.p; k--) {
			t = c[k];
			c[k] = c[k - 1];
			c[k - 1] = t;
		}
	for (i = 0; i < nc; i++) {
		buf_put(out, p, (size_t)(c[i].at.p - p));
		buf_put(out, c[i].with, c[i].wlen);
		p = c[i].at.p + c[i].at.n;
	}
	buf_put(out, p, (size_t)(text + n - p));
}

/* The same, as a whole line for a peer's queue. */
void
rpc_splice_line(struct buf *out, const char *text, size_t n, const char *at,
    size_t atlen, const char *with, size_t withlen)
{
	rpc_splice(out, text, n, at, atlen, with, withlen);
	buf_putc(out, '\n');
}

/*
 * The first byte at or after s[i] that ends a run of plain string text: a
 * quote, a backslash or a raw control character; n when there is none.
 * Sixteen bytes at a time, the last few byte by byte.
 */
static size_t
string_stop(const char *s, size_t i, size_t n)
{
	bytes16 w, quote, slash, space, hit;
	size_t k;

	memset(&quote, '"', sizeof(quote));
	memset(&slash, '\\', sizeof(slash));
	memset(&space, 0x20, sizeof(space));
	for (; i + sizeof(w) <= n; i += sizeof(w)) {
		memcpy(&w, s + i, sizeof(w));
		hit = (bytes16)((w == quote) | (w == slash) | (w < space));
		if ((k = first_match(&hit)) < sizeof(w))
			return i + k;
	}
	for (; i < n; i++)
		if (s[i] == '"' || s[i] == '\\' || (unsigned char)s[i] < 0x20)
			return i;
	return n;
}

/*
 * String text from s[i] (just inside the quotes, or where an earlier scan
 * stopped): past the closing quote, 0 when it is not valid, or STR_MORE
 * when the text runs out first, with *resume where to go on from (never
 * inside an escape).
 */
#define STR_MORE	((size_t)-1)
/* A number or literal longer than this cannot be checked in pieces. */
#define PRIMITIVE_MAX	4096

static size_t
string_rest(const char *s, size_t i, size_t n, size_t *resume)
{
	unsigned long cp;

	for (; (i = string_stop(s, i, n)) < n; i += 2) {
		if (s[i] == '"')
			return i + 1;
		if (s[i] != '\\' || i + 1 >= n)
			break;
		if (strchr("\"\\/bfnrtu", s[i + 1]) == NULL || s[i + 1] == '\0')
			return 0;
		if (s[i + 1] == 'u') {
			if (i + 5 >= n)
				break;
			if (!hex4(s + i + 2, &cp))
				return 0;
			i += 4;
		}
	}
	if (i < n && s[i] != '\\')
		return 0;		/* A raw control character. */
	*resume = i < n ? i : n;
	return STR_MORE;
}

/* Past a string that starts at s[i] == '"'; 0 when it is not one. */
static size_t
skip_string(const char *s, size_t i, size_t n)
{
	size_t end, resume;

	end = string_rest(s, i + 1, n, &resume);
	return end == STR_MORE ? 0 : end;
}

/*
 * Is the raw text, found by a scan that does not parse, a JSON-RPC id (a
 * valid string or an integer) that may go into an answer as it is?
 */
static bool
raw_id_valid(const char *id, size_t n)
{
	if (n > 0 && id[0] == '"')
		return skip_string(id, 0, n) == n && utf8_valid(id, n);
	return raw_is_int(id, n) && valid_number(id, n);
}

static void
level_push(struct json_levels *l, char c)
{
	char *v;

	if (l->n == l->cap) {
		v = xmalloc(l->cap * 2);
		memcpy(v, l->v, l->n);
		if (l->v != l->small)
			free(l->v);
		l->v = v;
		l->cap *= 2;
	}
	l->v[l->n++] = c;
	if (l->n > l->most)
		l->most = l->n;
}

/* Past the bytes at s[i] that may be part of a number or a literal. */
static size_t
primitive_end(const char *s, size_t i, size_t n)
{
	while (i < n && (s[i] == '-' || s[i] == '+' || s[i] == '.' ||
	    (s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'z') ||
	    (s[i] >= 'A' && s[i] <= 'Z')))
		i++;
	return i;
}

/* (Field by field: clearing the inline stack would cost more than a step.) */
void
jstream_init(struct jstream *st, size_t pos)
{
	/* cppcheck-suppress uninitvar ; an address, nothing is read */
	st->l.v = st->l.small;
	st->l.n = st->l.most = 0;
	st->l.cap = sizeof(st->l.small);
	st->want = WANT_VALUE;
	st->empty = st->in_string = st->last = false;
	st->pos = st->tok = pos;
}

void
jstream_free(struct jstream *st)
{
	if (st->l.v != st->l.small)
		free(st->l.v);
	jstream_init(st, 0);
}

/* A string value or key, resumed inside it when an earlier step stopped. */
static size_t
string_step(struct jstream *st, const char *s, size_t i, size_t n)
{
	size_t end, resume;

	if (!st->in_string) {
		if (s[i] != '"')
			return 0;
		i++;
	}
	if ((end = string_rest(s, i, n, &resume)) != STR_MORE) {
		st->in_string = false;
		return end;
	}
	st->in_string = true;
	st->pos = resume;
	return STR_MORE;
}

/*
 * One step at s[i] (not space): the next offset, 0 when the text is not
 * JSON there, or STR_MORE when it needs text beyond n.  A number or
 * literal that reaches n may go on; it is checked again from its start.
 */
static size_t
check_step(struct jstream *st, const char *s, size_t i, size_t n)
{
	struct json_levels *l = &st->l;
	char c = s[i];
	size_t start;
	bool empty = st->empty;

	st->empty = false;
	if (st->want == WANT_VALUE && (c == '"' || st->in_string)) {
		if ((i = string_step(st, s, i, n)) != 0 && i != STR_MORE)
			st->want = WANT_NEXT;
		return i;
	}
	if (empty && (c == '}' || c == ']')) {
		if (c != (l->v[l->n - 1] == '{' ? '}' : ']'))
			return 0;
		l->n--;
		st->want = WANT_NEXT;
		return i + 1;
	}
	switch (st->want) {
	case WANT_KEY:
		if ((i = string_step(st, s, i, n)) == 0 || i == STR_MORE)
			return i;
		/* Usually the colon follows at once: take it in this step. */
		if ((i = skip_space(s, i, n)) < n && s[i] == ':') {
			st->want = WANT_VALUE;
			return i + 1;
		}
		st->want = WANT_COLON;
		return i;
	case WANT_COLON:
		if (c != ':')
			return 0;
		st->want = WANT_VALUE;
		return i + 1;
	case WANT_NEXT:
		if (c == ',') {
			st->want = l->v[l->n - 1] == '{' ? WANT_KEY : WANT_VALUE;
			return i + 1;
		}
		if (c != (l->v[l->n - 1] == '{' ? '}' : ']'))
			return 0;
		l->n--;
		return i + 1;
	case WANT_VALUE:
		break;
	}
	if (c == '{' || c == '[') {
		level_push(l, c);
		st->want = c == '{' ? WANT_KEY : WANT_VALUE;
		st->empty = true;
		return i + 1;
	}
	start = i;
	if ((i = primitive_end(s, i, n)) == n && !st->last) {
		if (i - start >= PRIMITIVE_MAX)
			return 0;
		st->pos = start;
		return STR_MORE;
	}
	if (i == start || !valid_primitive(s + start, i - start))
		return 0;
	st->want = WANT_NEXT;
	return i;
}

/*
 * Check the JSON value at st->pos in text that may still be arriving:
 * JSON_OK when it is complete (st->pos just past it), JSON_MORE when the
 * text s[0..n) ends first (st->pos where to go on from once more is there:
 * the caller may drop the bytes before it and lower st->pos to match), or
 * JSON_SYNTAX (st->pos at the offending token).  No recursion and no
 * tokens, whatever the depth; strings go eight bytes at a time.
 */
int
jstream_feed(struct jstream *st, const char *s, size_t n)
{
	size_t i = st->pos, next;

	if (st->want == WANT_NEXT && st->l.n == 0)
		return JSON_OK;		/* Complete already. */
	for (;;) {
		if (!st->in_string)
			i = skip_space(s, i, n);
		if (i >= n) {
			if (!st->in_string)
				st->tok = n;
			st->pos = n;
			return JSON_MORE;
		}
		st->pos = st->tok = i;
		if ((next = check_step(st, s, i, n)) == 0)
			return JSON_SYNTAX;
		if (next == STR_MORE)
			return JSON_MORE;
		i = next;
		if (st->want == WANT_NEXT && st->l.n == 0) {
			st->pos = i;
			return JSON_OK;
		}
	}
}

/*
 * Past the JSON value at s[i], checked against RFC 8259; 0 when it is not
 * one, with *bad at the offending offset.  *depth gets its nesting.
 */
static size_t
check_value(const char *s, size_t i, size_t n, size_t *bad, size_t *depth)
{
	struct jstream st;
	size_t end;
	int r;

	if (i < n && s[i] != '{' && s[i] != '[') {	/* A leaf, directly. */
		*depth = 0;
		if (s[i] == '"')
			end = skip_string(s, i, n);
		else if ((end = primitive_end(s, i, n)) == i ||
		    !valid_primitive(s + i, end - i))
			end = 0;
		*bad = end != 0 ? end : i;
		return end;
	}
	jstream_init(&st, i);
	st.last = true;
	r = jstream_feed(&st, s, n);
	*depth = st.l.most;
	*bad = r == JSON_OK ? st.pos : st.tok;
	jstream_free(&st);
	return r == JSON_OK ? *bad : 0;
}

/*
 * Past the object at s[i], checked as it goes (json_shape): its fields'
 * spans go to out.  level is its nesting, for JSON_DEPTH_MAX.
 */
static size_t
shape_object(const char *s, size_t i, size_t n, const struct field *f,
    bool strict, size_t level, struct span *out)
{
	size_t key, end, bad, depth;
	int k;

	if (i >= n || s[i] != '{')
		return 0;
	if ((i = skip_space(s, i + 1, n)) < n && s[i] == '}')
		return i + 1;
	for (;;) {
		/* A key with an escape is left to the tokenizer. */
		key = i + 1;
		if (i >= n || s[i] != '"' || (end = string_stop(s, key, n)) >= n ||
		    s[end] != '"')
			return 0;
		if ((i = skip_space(s, end + 1, n)) >= n || s[i] != ':')
			return 0;
		i = skip_space(s, i + 1, n);
		for (k = 0; f[k].key != NULL && (f[k].len != end - key ||
		    memcmp(f[k].key, s + key, f[k].len) != 0); k++)
			;
		if (f[k].key == NULL && strict)
			return 0;
		if (f[k].key != NULL && out[f[k].slot].p != NULL)
			return 0;
		if (f[k].key != NULL && f[k].inner != NULL)
			end = shape_object(s, i, n, f[k].inner, f[k].strict,
			    level + 1, out);
		else if ((end = check_value(s, i, n, &bad, &depth)) != 0 &&
		    level + depth > JSON_DEPTH_MAX)
			return 0;
		if (end == 0)
			return 0;
		if (f[k].key != NULL) {
			out[f[k].slot].p = s + i;
			out[f[k].slot].n = end - i;
		}
		if ((i = skip_space(s, end, n)) < n && s[i] == '}')
			return i + 1;
		if (i >= n || s[i] != ',')
			return 0;
		i = skip_space(s, i + 1, n);
	}
}

/*
 * Check a message and find the values of its fields, in one pass and
 * without tokens: the object that is the whole text s and the objects
 * within it are described by fields (see struct field); each value's span
 * goes to out[slot], whose p stays NULL when absent (out has nslots).
 * False when the text is not valid JSON (json_check's verdict, but for
 * JSON_TOOBIG, which it does not count) or not of that shape: a field
 * that should be an object is not, a key has an escape, a field comes
 * twice or a strict object has other keys.  The tokenizer sorts those out
 * and words the errors.
 */
bool
json_shape(const char *s, size_t n, const struct field *f, struct span *out,
    int nslots)
{
	size_t end;
	int k;

	for (k = 0; k < nslots; k++)
		out[k].p = NULL;
	end = shape_object(s, skip_space(s, 0, n), n, f, false, 1, out);
	return end != 0 && skip_space(s, end, n) == n;
}

/*
 * Walk the members of an object, or the elements of an array, in text
 * that is not tokenized: each value is checked when the caller passes it
 * (json_walk_value) or walks into it, so that a large array can be taken
 * one element at a time.  level is the nesting of the walked value, for
 * JSON_DEPTH_MAX.  False when s[at] does not open one.
 */
bool
json_walk(struct jwalk *w, const char *s, size_t n, size_t at, size_t level)
{
	w->s = s;
	w->n = n;
	w->i = at + 1;
	w->level = level;
	w->first = true;
	w->checked = false;
	w->object = at < n && s[at] == '{';
	return level <= JSON_DEPTH_MAX && at < n && (s[at] == '{' ||
	    s[at] == '[');
}

/*
 * The next member or element: 1 with w->i at its value (and, in an
 * object, its key as written in *key), 0 at the end (w->i past the
 * closing bracket), -1 when the text is not JSON there.
 */
int
json_walk_next(struct jwalk *w, struct span *key)
{
	const char *s = w->s;
	size_t n = w->n, i = skip_space(s, w->i, n), end;
	char close = w->object ? '}' : ']';

	if (i < n && s[i] == close) {
		w->i = i + 1;
		return 0;
	}
	if (!w->first) {
		if (i >= n || s[i] != ',')
			return -1;
		i = skip_space(s, i + 1, n);
	}
	w->first = false;
	if (w->object) {
		if (i >= n || s[i] != '"' || (end = skip_string(s, i, n)) == 0)
			return -1;
		key->p = s + i;
		key->n = end - i;
		if ((i = skip_space(s, end, n)) >= n || s[i] != ':')
			return -1;
		i = skip_space(s, i + 1, n);
	}
	w->i = i;
	return i < n ? 1 : -1;
}

/*
 * Past the value at s[i] of text checked already (peer_checked): strings
 * passed by blocks, brackets counted, nothing looked at twice.
 */
static size_t
skip_checked(const char *s, size_t i, size_t n)
{
	size_t depth = 0;

	do {
		switch (s[i]) {
		case '"':
			/* Past each escape's backslash and the byte after it. */
			while ((i = string_stop(s, i + 1, n)) < n && s[i] != '"')
				i++;
			i = i < n ? i + 1 : n;
			break;
		case '{':
		case '[':
			depth++;
			i++;
			break;
		case '}':
		case ']':
			depth--;
			i++;
			break;
		default:
			i = depth > 0 ? i + 1 : primitive_end(s, i, n);
		}
	} while (depth > 0 && i < n);
	return i;
}

/*
 * Past the value at w->i, checked unless the text was (w->checked), its
 * span in *v; false if not JSON.
 */
bool
json_walk_value(struct jwalk *w, struct span *v)
{
	size_t end, bad, depth = 0;

	if (w->checked)
		end = skip_checked(w->s, w->i, w->n);
	else
		end = check_value(w->s, w->i, w->n, &bad, &depth);
	if (end == 0 || w->level + depth > JSON_DEPTH_MAX)
		return false;
	v->p = w->s + w->i;
	v->n = end - w->i;
	w->i = end;
	return true;
}

/*
 * Tokenize a value checked already (json_walk_value): JSON_OK, or
 * JSON_TOOBIG.
 */
int
json_tokenize_span(struct json *j, const struct span *v)
{
	j->js = v->p;
	j->len = v->n;
	j->ntok = 0;
	j->errpos = 0;
	return json_tokenize(j);
}

/* A message's top level from its start (rpc_members). */
static int
scan_top(const char *s, size_t n, bool stop, struct rpc_top *top)
{
	size_t i = skip_space(s, 0, n);

	memset(top, 0, sizeof(*top));
	if (i >= n || s[i] != '{')
		return -1;
	return rpc_members(s, n, i + 1, true, stop, top);
}

/*
 * Read a message's top level without tokenizing its values: which of
 * id, method, result and error it has, and where the id is.  Returns 0, or
 * -1 when the line is not one well-formed object.
 */
int
rpc_scan(const char *s, size_t n, struct rpc_top *top)
{
	return scan_top(s, n, false, top);
}

/*
 * The same up to the value of "result": 1 with top->at there, the members
 * before it noted; 0 or -1 as rpc_scan when there is no result.
 */
int
rpc_scan_head(const char *s, size_t n, struct rpc_top *top)
{
	return scan_top(s, n, true, top);
}

static bool
key_is(const char *k, size_t klen, const char *quoted)
{
	return klen == strlen(quoted) && memcmp(k, quoted, klen) == 0;
}

/*
 * Note a top-level member whose value starts at s[i]: -1 when it came
 * before, 1 for "result", else 0.
 */
static int
note_member(const char *s, size_t n, size_t key, size_t klen, size_t i,
    struct rpc_top *top)
{
	const char *k = s + key;
	bool again;
	int r = 0;

	if (key_is(k, klen, "\"id\"")) {
		again = top->id != NULL;
		top->id = s + i;
	} else if (key_is(k, klen, "\"method\"")) {
		again = top->method != NULL;
		top->method = s + i;
	} else if (key_is(k, klen, "\"result\"")) {
		again = top->result;
		top->result = true;
		top->at = i;
		r = 1;
	} else if (key_is(k, klen, "\"error\"")) {
		again = top->error;
		top->error = true;
	} else if (key_is(k, klen, "\"jsonrpc\"")) {
		again = top->jsonrpc;
		top->jsonrpc = true;
		top->v2 = n - i >= 5 && memcmp(s + i, "\"2.0\"", 5) == 0;
	} else if (key_is(k, klen, "\"params\"")) {
		again = top->params;
		top->params = true;
	} else
		return 0;
	return again ? -1 : r;
}

/*
 * The members of a message's top-level object from s[i]: just past its
 * '{' when first, else just past a member's value.  Adds what it finds to
 * top.  Returns 0 at the object's end, which must end the text, or -1 when
 * it is not well-formed or has one of those members, or params, twice.
 * With stop, returns 1 as soon as the value of "result" is reached
 * (top->at), before checking it.
 */
int
rpc_members(const char *s, size_t n, size_t i, bool first, bool stop,
    struct rpc_top *top)
{
	size_t key, end, bad, depth;
	int r;

	i = skip_space(s, i, n);
	if (i < n && s[i] == '}')
		return skip_space(s, i + 1, n) == n ? 0 : -1;
	if (!first) {
		if (i >= n || s[i] != ',')
			return -1;
		i = skip_space(s, i + 1, n);
	}
	for (;;) {
		key = i;
		if (i >= n || s[i] != '"' || (i = skip_string(s, i, n)) == 0)
			return -1;
		end = i;
		i = skip_space(s, i, n);
		if (i >= n || s[i++] != ':')
			return -1;
		i = skip_space(s, i, n);
		if ((r = note_member(s, n, key, end - key, i, top)) < 0)
			return -1;
		if (r > 0 && stop)
			return 1;
		if ((end = check_value(s, i, n, &bad, &depth)) == 0)
			return -1;
		if (top->id == s + i)
			top->idlen = end - i;
		i = skip_space(s, end, n);
		if (i < n && s[i] == ',') {
			i = skip_space(s, i + 1, n);
			continue;
		}
		if (i >= n || s[i] != '}')
			return -1;
		return skip_space(s, i + 1, n) == n ? 0 : -1;
	}
}

/* A raw id that is a positive integer we could have sent: its value. */
bool
rpc_int_id(const char *id, size_t n, long long *v)
{
	size_t k;

	if (n == 0 || n > 18 || id[0] == '0')
		return false;
	for (*v = 0, k = 0; k < n; k++) {
		if (id[k] < '0' || id[k] > '9')
			return false;
		*v = *v * 10 + (id[k] - '0');
	}
	return true;
}

bool
rpc_valid_id(const struct json *j, int i)
{
	return json_is(j, i, JSMN_STRING) || json_is_int(j, i);
}

/*
 * Find the top-level "id" in the start of a line too large to parse, so
 * that the request it belongs to can still be answered.  Stops at the
 * first value it cannot follow.
 */
int
rpc_scan_id(const char *s, size_t n, const char **id, size_t *idlen)
{
	size_t i = skip_space(s, 0, n), k, start;
	bool key;

	if (i >= n || s[i++] != '{')
		return -1;
	for (;;) {
		i = skip_space(s, i, n);
		if (i >= n || s[i] != '"')
			return -1;
		key = i + 4 < n && memcmp(s + i, "\"id\"", 4) == 0;
		for (k = i + 1; k < n && s[k] != '"'; k++)
			if (s[k] == '\\')
				k++;
		i = skip_space(s, k + 1, n);
		if (i >= n || s[i++] != ':')
			return -1;
		start = i = skip_space(s, i, n);
		if (i < n && s[i] == '"') {
			for (i++; i < n && s[i] != '"'; i++)
				if (s[i] == '\\')
					i++;
			i++;
		} else
			i = primitive_end(s, i, n);
		if (i > n || i == start)
			return -1;
		if (key) {
			if (!raw_id_valid(s + start, i - start))
				return -1;
			*id = s + start;
			*idlen = i - start;
			return 0;
		}
		i = skip_space(s, i, n);
		if (i >= n || s[i++] != ',')
			return -1;
	}
}
