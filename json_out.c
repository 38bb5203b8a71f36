/*
 * json_out.c: the JSON emitter: strings escaped sixteen bytes at a time
 * (and invalid UTF-8 replaced, so that whatever came in, valid JSON goes
 * out), keys, and members added to an object written already.
 */
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "json.h"
#include "json_out.h"
#include "json_int.h"

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
 * A block whose only bytes to care for (bits m) are quotes and
 * backslashes, the usual one: a backslash put before each, the byte
 * itself going with the next run.  Returns the end.
 */
static inline char *
block_quotes(char *d, const unsigned char *blk, unsigned int m)
{
	size_t run = 0, k;

	for (; m != 0; m &= m - 1) {
		k = (size_t)__builtin_ctz(m);
		memcpy(d, blk + run, sizeof(bytes16));
		d += k - run;
		*d++ = '\\';
		run = k;
	}
	memcpy(d, blk + run, sizeof(bytes16));
	return d + sizeof(bytes16) - run;
}

/*
 * A block with other bytes to care for (bits m): each quote and
 * backslash before the first of them escaped, to *dp.  Returns that
 * one's offset in the block, for escape_one, or the block's size when
 * there is none (a run of quotes).
 */
static inline size_t
block_mixed(char **dp, const unsigned char *blk, unsigned int m)
{
	char *d = *dp;
	size_t run = 0, k;

	for (; m != 0; m &= m - 1) {
		k = (size_t)__builtin_ctz(m);
		memcpy(d, blk + run, sizeof(bytes16));
		d += k - run;
		if (blk[k] != '"' && blk[k] != '\\') {
			*dp = d;
			return k;
		}
		*d++ = '\\';
		*d++ = (char)blk[k];
		run = k + 1;
	}
	memcpy(d, blk + run, sizeof(bytes16));
	*dp = d + sizeof(bytes16) - run;
	return sizeof(bytes16);
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
	size_t i = 0, k;

	memset(&quote, '"', sizeof(quote));
	memset(&slash, '\\', sizeof(slash));
	memset(&space, 0x20, sizeof(space));
	memset(&top, 0x7f, sizeof(top));
	while (i + sizeof(w) <= n) {
		memcpy(&w, s + i, sizeof(w));
		memcpy(blk, &w, sizeof(w));
		hit = (bytes16)((w < space) | (w > top));
		if (match_mask(&hit) == 0) {
			hit = (bytes16)((w == quote) | (w == slash));
			d = block_quotes(d, blk, match_mask(&hit));
			i += sizeof(w);
			continue;
		}
		hit = (bytes16)((w == quote) | (w == slash) | (w < space) |
		    (w > top));
		k = block_mixed(&d, blk, match_mask(&hit));
		i += k;
		if (k < sizeof(w))
			i += escape_one(&d, u + i, n - i);
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
