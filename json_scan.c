/*
 * json_scan.c: JSON checked without tokens: the lexical steps (strings
 * sixteen bytes at a time, primitives, one value's extent), a value
 * checked as its text arrives (jstream), a few fields of a line found as
 * spans (json_shape), and walks over an object's members or an array's
 * elements (json_walk).
 */
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "json_int.h"

bool
json_valid_number(const char *s, size_t n)
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

bool
json_valid_primitive(const char *s, size_t n)
{
	if ((n == 4 && memcmp(s, "true", 4) == 0) ||
	    (n == 5 && memcmp(s, "false", 5) == 0) ||
	    (n == 4 && memcmp(s, "null", 4) == 0))
		return true;
	return json_valid_number(s, n);
}

/* Digits, after an optional minus: an integer, once known to be JSON. */
bool
json_raw_is_int(const char *s, size_t n)
{
	size_t k = (n > 0 && s[0] == '-');

	if (k == n)
		return false;
	for (; k < n; k++)
		if (s[k] < '0' || s[k] > '9')
			return false;
	return true;
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
			if (!json_hex4(s + i + 2, &cp))
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
size_t
json_skip_string(const char *s, size_t i, size_t n)
{
	size_t end, resume;

	end = string_rest(s, i + 1, n, &resume);
	return end == STR_MORE ? 0 : end;
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
size_t
json_primitive_end(const char *s, size_t i, size_t n)
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
 * A value at s[i] but a string: an object or array opened, or a number
 * or literal (check_step's offsets).
 */
static size_t
value_step(struct jstream *st, const char *s, size_t i, size_t n)
{
	char c = s[i];
	size_t start = i;

	if (c == '{' || c == '[') {
		level_push(&st->l, c);
		st->want = c == '{' ? WANT_KEY : WANT_VALUE;
		st->empty = true;
		return i + 1;
	}
	if ((i = json_primitive_end(s, i, n)) == n && !st->last) {
		if (i - start >= PRIMITIVE_MAX)
			return 0;
		st->pos = start;
		return STR_MORE;
	}
	if (i == start || !json_valid_primitive(s + start, i - start))
		return 0;
	st->want = WANT_NEXT;
	return i;
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
	return value_step(st, s, i, n);
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
size_t
json_check_value(const char *s, size_t i, size_t n, size_t *bad, size_t *depth)
{
	struct jstream st;
	size_t end;
	int r;

	if (i < n && s[i] != '{' && s[i] != '[') {	/* A leaf, directly. */
		*depth = 0;
		if (s[i] == '"')
			end = json_skip_string(s, i, n);
		else if ((end = json_primitive_end(s, i, n)) == i ||
		    !json_valid_primitive(s + i, end - i))
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
		else if ((end = json_check_value(s, i, n, &bad, &depth)) != 0 &&
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
		if (i >= n || s[i] != '"' || (end = json_skip_string(s, i, n)) == 0)
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
			i = depth > 0 ? i + 1 : json_primitive_end(s, i, n);
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
		end = json_check_value(w->s, w->i, w->n, &bad, &depth);
	if (end == 0 || w->level + depth > JSON_DEPTH_MAX)
		return false;
	v->p = w->s + w->i;
	v->n = end - w->i;
	w->i = end;
	return true;
}
