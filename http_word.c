/*
 * http_word.c: the words of HTTP (RFC 9110) that the server's parser
 * (http_parse.c, http_rules.c) and the client's (remote_http.c) both
 * read.  Always built: the client is in builds without the server.
 */
#include <string.h>
#include <strings.h>

#include "util.h"
#include "http.h"

/* The span [at, at + n) of the text b. */
struct http_str
http_str_at(const char *b, size_t at, size_t n)
{
	struct http_str s;

	s.p = b + at;
	s.n = n;
	return s;
}

/* Is s[0, n) the literal lit, in any case (names and tokens)? */
bool
http_ieq(const char *s, size_t n, const char *lit)
{
	return strlen(lit) == n && strncasecmp(s, lit, n) == 0;
}

/* RFC 9110 tchar. */
bool
http_tchar(unsigned char c)
{
	if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	    (c >= 'A' && c <= 'Z'))
		return true;
	return c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

int
http_hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Is tok one of the comma-separated list s[0, n) (Connection: close)? */
bool
http_has_token(const char *s, size_t n, const char *tok)
{
	size_t i, j;

	for (i = 0; i < n; i = j + 1) {
		while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == ','))
			i++;
		for (j = i; j < n && s[j] != ',' && s[j] != ' ' &&
		    s[j] != '\t'; j++)
			continue;
		if (http_ieq(s + i, j - i, tok))
			return true;
	}
	return false;
}

/* A media type's essence (before ';', trimmed) is type, in any case. */
bool
http_essence_is(const char *s, size_t n, const char *type)
{
	const char *semi = memchr(s, ';', n);

	if (semi != NULL)
		n = (size_t)(semi - s);
	while (n > 0 && (*s == ' ' || *s == '\t')) {
		s++;
		n--;
	}
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	return http_ieq(s, n, type);
}

bool
http_media_is(const struct http_str *v, const char *type)
{
	return v->p != NULL && http_essence_is(v->p, v->n, type);
}
