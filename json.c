/*
 * json.c: reading JSON: the checks jsmn leaves out (numbers, literals,
 * one value spanning the text), tokenizing with jsmn, token lookup and
 * string unescaping.  json.h says which reader to use when.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* This file holds jsmn's implementation; the others see the header. */
#undef JSMN_HEADER
#include <jsmn.h>

#include "json.h"
#include "json_int.h"

/*
 * Token cap: 2 Mi tokens (40 MiB) is far more than any sane message needs,
 * yet bounds what a hostile line can make us allocate.  Arrays above
 * TOKEN_KEEP are given back after the message is handled.
 */
#define TOKEN_MIN	256
#define TOKEN_MAX	(2u * 1024 * 1024)
#define TOKEN_KEEP	4096

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
	if (end == start || !json_valid_primitive(j->js + start, end - start))
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
	end = json_check_value(js, skip_space(js, 0, len), len, &j->errpos, &depth);
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

/* Four hex digits (of a \u escape) as a number. */
bool
json_hex4(const char *s, unsigned long *v)
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

/*
 * The escape \uXXXX at s[k] (its 'u'), and the low surrogate's after it
 * when it is a high one: the code point (U+FFFD for a lone surrogate),
 * *k moved to its last digit; 0 when it is not one, or is U+0000 (which
 * no C string can hold).
 */
static unsigned long
code_point(const char *s, size_t n, size_t *k)
{
	unsigned long cp, lo;
	size_t i = *k;

	if (i + 4 >= n || !json_hex4(s + i + 1, &cp))
		return 0;
	i += 4;
	if (cp >= 0xd800 && cp < 0xdc00 && i + 6 < n &&
	    s[i + 1] == '\\' && s[i + 2] == 'u' &&
	    json_hex4(s + i + 3, &lo) && lo >= 0xdc00 && lo < 0xe000) {
		cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
		i += 6;
	}
	*k = i;
	if (cp >= 0xd800 && cp < 0xe000)
		cp = 0xfffd;
	return cp;
}

/* A code point as UTF-8. */
static void
put_utf8(struct buf *out, unsigned long cp)
{
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

/* Unescape string text s[0, n) (no quotes) into out, not NUL-terminated. */
static bool
unescape(const char *s, size_t n, struct buf *out)
{
	size_t k;
	unsigned long cp;

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
		if ((cp = code_point(s, n, &k)) == 0)
			return false;
		put_utf8(out, cp);
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
	return json_is(j, i, JSMN_PRIMITIVE) && json_raw_is_int(j->js +
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
