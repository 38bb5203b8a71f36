/*
 * utf8.c: UTF-8 checked, cut on a character boundary and repaired, with
 * the ASCII runs that make up most text skipped sixteen bytes at a time.
 */
#include <string.h>

#include "json.h"
#include "json_int.h"

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
