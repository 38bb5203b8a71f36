/*
 * http_rules.c: what the MCP layer reads of a request's fields, and the
 * rules a request must pass before it sees one: the Origin rule against
 * DNS rebinding, Host on a loopback listener, the bearer token, the
 * endpoint, the method and the media types (http_check, in that order).
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "util.h"
#include "http.h"
#include "http_int.h"

/* The nth field named name (any case): 1 and its value, or 0. */
int
http_field(const struct http_request *r, const char *name, int nth,
    struct http_str *v)
{
	const struct http_field *f;
	int i;

	for (i = 0; i < r->nfields; i++) {
		f = &r->fields[i];
		if (http_ieq(r->buf + f->name, f->namelen, name) &&
		    nth-- == 0) {
			*v = http_str_at(r->buf, f->value, f->valuelen);
			return 1;
		}
	}
	return 0;
}

/*
 * Does the request accept type?  Each Accept field is a list of media
 * ranges; any-type and application-any count.  No Accept accepts all
 * (RFC 9110 12.5.1).  Quality values are not weighed.
 */
bool
http_accepts(const struct http_request *r, const char *type)
{
	const char *slash = strchr(type, '/');
	struct http_str v;
	size_t i, j;
	char range[64];
	int k;

	if (!http_field(r, "accept", 0, &v))
		return true;
	snprintf(range, sizeof(range), "%.*s/*", (int)(slash - type), type);
	for (k = 0; http_field(r, "accept", k, &v); k++)
		for (i = 0; i < v.n; i = j + 1) {
			for (j = i; j < v.n && v.p[j] != ','; j++)
				continue;
			if (http_essence_is(v.p + i, j - i, type) ||
			    http_essence_is(v.p + i, j - i, "*/*") ||
			    http_essence_is(v.p + i, j - i, range))
				return true;
		}
	return false;
}

/* A loopback host and optional port: localhost, 127.0.0.1, [::1]. */
static bool
loopback_authority(const char *s, size_t n)
{
	static const char *const hosts[] = { "localhost", "127.0.0.1", "[::1]" };
	size_t i, h, d;

	for (i = 0; i < sizeof(hosts) / sizeof(hosts[0]); i++) {
		h = strlen(hosts[i]);
		if (n < h || strncasecmp(s, hosts[i], h) != 0)
			continue;
		if (n == h)
			return true;
		if (s[h] != ':' || n - h - 1 < 1 || n - h - 1 > 5)
			return false;
		for (d = h + 1; d < n; d++)
			if (s[d] < '0' || s[d] > '9')
				return false;
		return true;
	}
	return false;
}

/* The entry of allowed that is the Origin, exactly, or NULL. */
const char *
http_origin_listed(const struct http_str *o, const char *const *allowed)
{
	if (o->p == NULL)
		return NULL;
	for (; allowed != NULL && *allowed != NULL; allowed++)
		if (strlen(*allowed) == o->n &&
		    memcmp(*allowed, o->p, o->n) == 0)
			return *allowed;
	return NULL;
}

/*
 * The Origin rule (DNS rebinding): none (not a browser), a loopback
 * origin (http or https, any port), or one of the allowed, exactly.
 */
bool
http_origin_ok(const struct http_str *o, const char *const *allowed)
{
	size_t skip;

	if (o->p == NULL || http_origin_listed(o, allowed) != NULL)
		return true;
	if (o->n > 7 && strncasecmp(o->p, "http://", 7) == 0)
		skip = 7;
	else if (o->n > 8 && strncasecmp(o->p, "https://", 8) == 0)
		skip = 8;
	else
		return false;
	return loopback_authority(o->p + skip, o->n - skip);
}

/* Does an authority name a port ("[v6]:port", "name:port")? */
static bool
has_port(const char *a)
{
	const char *close;

	if (a[0] == '[')
		return (close = strchr(a, ']')) != NULL && close[1] == ':';
	return strchr(a, ':') != NULL;
}

/*
 * Is the authority (host and optional port) one of the names a TLS proxy
 * in front passes through (allowedHosts)?  An entry without a port takes
 * any port; the host is compared in any case.
 */
static bool
host_listed(const char *s, size_t n, const char *const *hosts)
{
	const char *colon;
	size_t hn, en;

	colon = n > 0 && s[n - 1] != ']' ? memrchr(s, ':', n) : NULL;
	if (colon != NULL && s[0] == '[' && memchr(s, ']', n) == NULL)
		colon = NULL;
	hn = colon != NULL ? (size_t)(colon - s) : n;
	for (; hosts != NULL && *hosts != NULL; hosts++) {
		en = strlen(*hosts);
		if ((en == n && strncasecmp(*hosts, s, n) == 0) ||
		    (en == hn && hn > 0 && strncasecmp(*hosts, s, hn) == 0 &&
		    !has_port(*hosts)))
			return true;
	}
	return false;
}

/*
 * Host on a loopback listener names loopback (a rebound name does not),
 * or one of allowedHosts.
 */
bool
http_host_ok(const struct http_str *h, const char *const *hosts)
{
	return h->p == NULL || loopback_authority(h->p, h->n) ||
	    host_listed(h->p, h->n, hosts);
}

/*
 * Authorization: Bearer TOKEN, compared in a time that does not depend on
 * where the first difference is.  No token configured lets all in.
 */
bool
http_token_ok(const struct http_str *a, const char *token)
{
	size_t i, n, tn;
	const char *t;
	unsigned char diff;

	if (token == NULL)
		return true;
	if (a->p == NULL || a->n < 7 || strncasecmp(a->p, "bearer ", 7) != 0)
		return false;
	for (i = 7; i < a->n && a->p[i] == ' '; i++)
		continue;
	t = a->p + i;
	n = a->n - i;
	tn = strlen(token);
	diff = n != tn || tn == 0;
	for (i = 0; i < tn; i++)
		diff |= (unsigned char)(token[i] ^ t[i < n ? i : 0]);
	return diff == 0;
}

static bool
str_is(const struct http_str *s, const char *lit)
{
	return s->p != NULL && strlen(lit) == s->n &&
	    memcmp(s->p, lit, s->n) == 0;
}

/*
 * A complete head against the rules, in an order that tells a stranger
 * nothing: Origin and Host (403) and the token (401) before the path
 * (404) and the method (405); then what the transport requires of the
 * media types (415, 406).  0 when it passes.
 */
int
http_check(const struct http_request *r, const struct http_config *c)
{
	bool json, sse;

	if (!http_origin_ok(&r->h[HTTP_H_ORIGIN], c->origins))
		return 403;
	if (c->check_host && !http_host_ok(&r->h[HTTP_H_HOST], c->hosts))
		return 403;
	/*
	 * A browser's preflight from a listed origin carries no
	 * credentials (Fetch: CORS-preflight request), so it cannot carry
	 * the token; it learns only what the manual says, and the request
	 * it prepares must pass every rule.  http.c answers it.
	 */
	if (r->method == HTTP_OPTIONS && str_is(&r->path, c->path != NULL ?
	    c->path : "/mcp") && http_origin_listed(&r->h[HTTP_H_ORIGIN],
	    c->origins) != NULL)
		return 0;
	if (!http_token_ok(&r->h[HTTP_H_AUTHORIZATION], c->token))
		return 401;
	if (!str_is(&r->path, c->path != NULL ? c->path : "/mcp"))
		return 404;
	if (r->method != HTTP_GET && r->method != HTTP_POST &&
	    r->method != HTTP_DELETE)
		return 405;
	json = http_accepts(r, "application/json");
	sse = http_accepts(r, "text/event-stream");
	if (r->method == HTTP_POST) {
		if (!http_media_is(&r->h[HTTP_H_CONTENT_TYPE],
		    "application/json"))
			return 415;
		if (!json && !sse)
			return 406;
	} else if (r->method == HTTP_GET && !sse)
		return 406;
	return 0;
}
