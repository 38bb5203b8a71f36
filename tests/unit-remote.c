/*
 * Unit tests for the remote client's values (remote_int.h): URLs, the
 * request writer, the response parser and the event stream parser, each
 * fed whole, split at every byte and byte by byte, and fed what a hostile
 * server sends.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util.h"
#include "../http.h"
#include "../remote.h"
#include "../remote_int.h"

#define CHECK(cond) check((cond), #cond, __FILE__, __LINE__)

void	 check(int, const char *, const char *, int);
void	 test_remote(void);

static int
url_of(const char *s, struct url *u)
{
	struct buf err = { 0 };
	int r = url_parse(s, strlen(s), u, &err);

	buf_free(&err);
	return r;
}

static void
test_url(void)
{
	static const char *const bad[] = {
		"ftp://h/", "h/mcp", "http://", "http:///x", "http://u:p@h/",
		"http://u@h/x", "http://h:0/", "http://h:65536/",
		"http://h:12x/", "http://[zz]/", "http://[::1/", "http://[::1]x/",
		"http://h/a b", "http://h/\x01", "http://h/\xc3\xa9",
		"http://h_!/", "http://h:123456/", NULL
	};
	struct url u, v;
	struct buf b = { 0 }, err = { 0 };
	char t[URL_MAX + 1], *big;
	int i;

	CHECK(url_of("http://example.com", &u) == 0 && !u.tls &&
	    u.port == 80 && strcmp(u.host, "example.com") == 0 &&
	    strcmp(u.target, "/") == 0);
	CHECK(url_of("HTTPS://Example.com:8443/mcp?k=1#frag", &u) == 0 &&
	    u.tls && u.port == 8443 && strcmp(u.target, "/mcp?k=1") == 0);
	CHECK(url_of("http://[::1]:3000/sse", &u) == 0 && u.v6 &&
	    strcmp(u.host, "::1") == 0 && u.port == 3000);
	CHECK(url_of("http://10.0.0.5:/x", &u) == 0 && u.port == 80);
	CHECK(url_of("http://h?q=1", &u) == 0 &&
	    strcmp(u.target, "/?q=1") == 0);
	for (i = 0; bad[i] != NULL; i++)
		if (url_of(bad[i], &u) == 0) {
			fprintf(stderr, "url accepted: %s\n", bad[i]);
			CHECK(0);
		}
	CHECK(url_parse("http://u@h/", 11, &u, &err) < 0 &&
	    strstr(buf_cstr(&err), "headers") != NULL);
	buf_free(&err);
	big = xmalloc(URL_MAX + 64);
	memcpy(big, "http://h/", 9);
	memset(big + 9, 'a', URL_MAX + 50);
	big[URL_MAX + 59] = '\0';
	CHECK(url_of(big, &u) < 0);
	free(big);

	/* Authority: the default port left out, brackets kept. */
	(void)url_of("https://[::1]:443/x", &u);
	url_authority(&u, &b);
	CHECK(strcmp(buf_cstr(&b), "[::1]") == 0);
	b.len = 0;
	(void)url_of("http://h:8080/x", &u);
	url_authority(&u, &b);
	CHECK(strcmp(buf_cstr(&b), "h:8080") == 0);
	buf_free(&b);

	/* Endpoints: absolute, relative, same origin only. */
	(void)url_of("http://H:8080/a/sse?x=1", &u);
	CHECK(url_resolve(&u, "/messages?s=1", 13, t, &err) == 0 &&
	    strcmp(t, "/messages?s=1") == 0);
	CHECK(url_resolve(&u, "msg?s=2", 7, t, &err) == 0 &&
	    strcmp(t, "/a/msg?s=2") == 0);
	CHECK(url_resolve(&u, "http://h:8080/m", 15, t, &err) == 0 &&
	    strcmp(t, "/m") == 0);
	CHECK(url_resolve(&u, "http://evil:8080/m", 18, t, &err) < 0);
	CHECK(url_resolve(&u, "https://h:8080/m", 16, t, &err) < 0);
	CHECK(url_resolve(&u, "http://h:8081/m", 15, t, &err) < 0);
	CHECK(url_resolve(&u, "//evil/m", 8, t, &err) < 0);
	CHECK(url_resolve(&u, "javascript:x", 12, t, &err) < 0);
	CHECK(url_resolve(&u, "/a b", 4, t, &err) < 0);
	CHECK(url_resolve(&u, "", 0, t, &err) < 0);
	(void)url_of("http://h:1/a", &v);
	CHECK(url_same_origin(&u, &u) && !url_same_origin(&u, &v));
	buf_free(&err);
}

static void
test_request(void)
{
	struct buf b = { 0 }, err = { 0 };
	struct hreq q;

	CHECK(hreq_header_ok("Authorization", "Bearer x", &err) == 0);
	CHECK(hreq_header_ok("X-Key", "a\tb", &err) == 0);
	CHECK(hreq_header_ok("Bad Name", "v", &err) < 0);
	CHECK(hreq_header_ok("", "v", &err) < 0);
	CHECK(hreq_header_ok("HOST", "v", &err) < 0);
	CHECK(hreq_header_ok("mcp-session-id", "v", &err) < 0);
	CHECK(hreq_header_ok("X", "a\r\nEvil: 1", &err) < 0);
	/* A refusal names the header, never its value. */
	err.len = 0;
	CHECK(hreq_header_ok("X-Secret", "sec\nret", &err) < 0 &&
	    strstr(buf_cstr(&err), "sec") == NULL);
	buf_free(&err);

	/* Mcp-Name values: plain, or Base64 between the sentinels. */
	b.len = 0;
	hreq_mcp_value(&b, "echo", 4);
	CHECK(strcmp(buf_cstr(&b), "echo") == 0);
	b.len = 0;
	hreq_mcp_value(&b, "n\xc3\xb6te", 5);
	CHECK(strcmp(buf_cstr(&b), "=?base64?bsO2dGU=?=") == 0);
	b.len = 0;
	hreq_mcp_value(&b, " a", 2);
	CHECK(strcmp(buf_cstr(&b), "=?base64?IGE=?=") == 0);
	b.len = 0;
	hreq_mcp_value(&b, "", 0);
	CHECK(strcmp(buf_cstr(&b), "=?base64?" "?=") == 0);
	b.len = 0;
	hreq_mcp_value(&b, "=?base64?x?=", 12);
	CHECK(strcmp(buf_cstr(&b), "=?base64?PT9iYXNlNjQ/eD89?=") == 0);
	b.len = 0;

	memset(&q, 0, sizeof(q));
	q.method = "POST";
	q.target = "/mcp";
	q.host = "h:8080";
	q.accept = "application/json, text/event-stream";
	q.content_type = "application/json";
	q.length = 2;
	q.session = "abc";
	q.version = "2025-06-18";
	q.extra = "X-Key: k\r\n";
	hreq_write(&b, &q);
	buf_cstr(&b);
	CHECK(strncmp(b.data, "POST /mcp HTTP/1.1\r\nHost: h:8080\r\n", 34)
	    == 0);
	CHECK(strstr(b.data, "\r\nContent-Length: 2\r\n") != NULL);
	CHECK(strstr(b.data, "\r\nMcp-Session-Id: abc\r\n") != NULL);
	CHECK(strstr(b.data, "\r\nMCP-Protocol-Version: 2025-06-18\r\n") !=
	    NULL);
	CHECK(strstr(b.data, "\r\nX-Key: k\r\n\r\n") != NULL);
	buf_free(&b);
}

/*
 * A response fed as a connection feeds it: pieces cut at the given
 * points.  Returns the final verdict; the body's bytes go to body.
 */
struct resp_out {
	int		 verdict;
	int		 status;
	bool		 sse;
	char		 session[HRESP_SID_MAX + 1];
	char		 location[HRESP_LOCATION_MAX + 1];
	struct buf	 body;
	size_t		 rest;		/* Bytes after the response. */
};

static bool
take_body(void *arg, char *p, size_t n)
{
	buf_put(arg, p, n);
	return true;
}

static void
run_resp(const char *s, size_t n, size_t cut, size_t step, bool eof,
    struct resp_out *o)
{
	struct hresp p;
	struct buf in = { 0 };
	const char *why;
	size_t at = 0, take, used;
	int r = HR_MORE;
	bool body = false;

	hresp_reset(&p, false);
	o->body.len = 0;
	o->rest = 0;
	buf_reserve(&in, n + 1);	/* The whole response fits. */
	while (at < n) {
		take = at < cut ? cut - at : step;
		if (take > n - at)
			take = n - at;
		buf_put(&in, s + at, take);
		at += take;
		for (;;) {
			if (!body) {
				r = hresp_head(&p, in.data, in.len, &used, &why);
				if (r == HR_INTERIM) {
					buf_consume(&in, used);
					hresp_reset(&p, false);
					continue;
				}
				if (r != HR_HEAD)
					break;
				buf_consume(&in, used);
				body = true;
			}
			r = hresp_body(&p, in.data, in.len, &used, take_body,
			    &o->body, &why);
			buf_consume(&in, used);
			break;
		}
		if (r == HR_ERROR || r == HR_DONE)
			break;
	}
	if (r == HR_MORE && eof)
		r = hresp_eof(&p, &why);
	o->verdict = r;
	o->status = p.status;
	o->sse = p.sse;
	memcpy(o->session, p.session, sizeof(o->session));
	memcpy(o->location, p.location, sizeof(o->location));
	o->rest = in.len + (n - at);
	buf_free(&in);
}

/* Fed whole, at every cut, and byte by byte: the same outcome. */
static void
resp_case(const char *s, bool eof, int verdict, int status,
    const char *body)
{
	struct resp_out o = { 0 };
	size_t n = strlen(s), cut;
	bool same = true;

	for (cut = 0; cut <= n; cut++) {
		run_resp(s, n, cut, cut == 0 ? 1 : n, eof, &o);
		if (o.verdict != verdict || (verdict != HR_ERROR &&
		    (o.status != status || o.body.len != strlen(body) ||
		    (o.body.len > 0 && memcmp(o.body.data, body,
		    o.body.len) != 0)))) {
			fprintf(stderr, "response at cut %zu: verdict %d "
			    "status %d body %.*s\n  %s\n", cut, o.verdict,
			    o.status, (int)o.body.len, o.body.data, s);
			same = false;
			break;
		}
	}
	CHECK(same);
	buf_free(&o.body);
}

static void
test_response(void)
{
	static const char *const bad[] = {
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: "
		    "chunked\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n"
		    "\r\nhello",
		"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
		    "3\r\nabcX\r\n",
		"HTTP/1.1 200 OK\r\nX: a\r\n b\r\n\r\n",
		"HTTP/1.1 200 OK\r\nX : a\r\n\r\n",
		"HTTP/1.1 200 OK\r\nX: a\001b\r\n\r\n",
		"HTTP/1.1 200 OK\r\nX: a\rb\r\n\r\n",
		"HTTP/1.1 200 OK\r\n: a\r\n\r\n",
		"HTTP/1.1 200 OK\r\nNoColon\r\n\r\n",
		"HTTP/2 200 OK\r\n\r\n",
		"HTTP/1.1 20 OK\r\n\r\n",
		"HTTP/1.1 200OK\r\n\r\n",
		"HTTP/1.1 099 X\r\n\r\n",
		"HTTP/1.1 101 Switching\r\n\r\n",
		"SSH-2.0-OpenSSH\r\n\r\n",
		"HTTP/1.1 200 OK\r\nMcp-Session-Id: a b\r\n\r\n",
		NULL
	};
	struct resp_out o = { 0 };
	struct buf big = { 0 };
	const char *s;
	int i;

	resp_case("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
	    "Content-Length: 5\r\n\r\nhello", false, HR_DONE, 200, "hello");
	resp_case("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
	    "5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-T: 1\r\n\r\n", false,
	    HR_DONE, 200, "hello world");
	resp_case("HTTP/1.1 200 OK\nTransfer-Encoding: Chunked\n\n"
	    "A\nabcdefghij\n0\n\n", false, HR_DONE, 200, "abcdefghij");
	resp_case("HTTP/1.0 200 OK\r\n\r\nto the end", true, HR_DONE, 200,
	    "to the end");
	resp_case("HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n", false,
	    HR_DONE, 202, "");
	resp_case("HTTP/1.1 204 No Content\r\nContent-Length: 9\r\n\r\n",
	    false, HR_DONE, 204, "");
	resp_case("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n"
	    "Content-Length: 2\r\n\r\nok", false, HR_DONE, 200, "ok");
	resp_case("HTTP/1.1 200\r\nContent-Length: 2\r\n\r\nok", false,
	    HR_DONE, 200, "ok");
	/* Cut short: an error at the end of the connection. */
	resp_case("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nshort", true,
	    HR_ERROR, 200, "");
	resp_case("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
	    "5\r\nhel", true, HR_ERROR, 200, "");
	resp_case("HTTP/1.1 200 OK\r\nContent-", true, HR_ERROR, 0, "");
	for (i = 0; bad[i] != NULL; i++)
		resp_case(bad[i], true, HR_ERROR, 0, "");

	/* What the client keeps of a head. */
	s = "HTTP/1.1 200 OK\r\nmcp-session-id: s-1\r\nContent-Type: "
	    "text/event-stream; charset=utf-8\r\n\r\n";
	run_resp(s, strlen(s), strlen(s), 1, false, &o);
	CHECK(o.verdict == HR_MORE && o.sse &&
	    strcmp(o.session, "s-1") == 0);
	s = "HTTP/1.1 302 Found\r\nLocation: https://x/y\r\n"
	    "Content-Length: 0\r\n\r\n";
	run_resp(s, strlen(s), strlen(s), 1, false, &o);
	CHECK(o.verdict == HR_DONE && o.status == 302 &&
	    strcmp(o.location, "https://x/y") == 0);
	/* The next response's bytes are left for it. */
	s = "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nxHTTP";
	run_resp(s, strlen(s), strlen(s), 1, false, &o);
	CHECK(o.verdict == HR_DONE && o.rest == 4);

	/* Oversize: a head past HTTP_HEAD_MAX, too many fields. */
	buf_puts(&big, "HTTP/1.1 200 OK\r\n");
	while (big.len < HTTP_HEAD_MAX + 10)
		buf_puts(&big, "X-Filler: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n");
	buf_puts(&big, "\r\n");
	run_resp(big.data, big.len, big.len, big.len, true, &o);
	CHECK(o.verdict == HR_ERROR);
	big.len = 0;
	buf_puts(&big, "HTTP/1.1 200 OK\r\n");
	for (i = 0; i <= HTTP_FIELDS_MAX; i++)
		buf_puts(&big, "X: 1\r\n");
	buf_puts(&big, "Content-Length: 0\r\n\r\n");
	run_resp(big.data, big.len, big.len, big.len, true, &o);
	CHECK(o.verdict == HR_ERROR);
	big.len = 0;
	buf_puts(&big, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
	buf_puts(&big, "fffffffffffffffffff\r\n");
	run_resp(big.data, big.len, big.len, big.len, true, &o);
	CHECK(o.verdict == HR_ERROR);
	buf_free(&big);
	buf_free(&o.body);
}

/* Events as "type|data\n" lines, a dropped one as "type|DROP n\n". */
static bool
take_event(void *arg, const char *type, char *p, size_t n)
{
	struct buf *b = arg;

	if (p == NULL)
		buf_printf(b, "%s|DROP\n", type);	/* n: see test_sse. */
	else {
		CHECK(p[n] == '\0');
		buf_printf(b, "%s|%.*s\n", type, (int)n, p);
	}
	return true;
}

static void
sse_case(const char *s, size_t max, const char *want, const char *id)
{
	struct sse p;
	struct buf got = { 0 };
	size_t n = strlen(s), cut, at;
	bool same = true;

	for (cut = 0; cut <= n + 1 && same; cut++) {
		sse_init(&p, max);
		got.len = 0;
		if (cut == n + 1)	/* Byte by byte. */
			for (at = 0; at < n; at++)
				sse_feed(&p, s + at, 1, take_event, &got);
		else {
			sse_feed(&p, s, cut, take_event, &got);
			sse_feed(&p, s + cut, n - cut, take_event, &got);
		}
		if (strcmp(buf_cstr(&got), want) != 0 ||
		    (id != NULL && strcmp(p.id, id) != 0)) {
			fprintf(stderr, "sse at cut %zu: %s\n  for %s\n", cut,
			    got.data, s);
			same = false;
		}
		sse_free(&p);
	}
	CHECK(same);
	buf_free(&got);
}

static bool
stop_event(void *arg, const char *type, char *p, size_t n)
{
	(void)type;
	(void)p;
	(void)n;
	(*(int *)arg)++;
	return false;
}

static bool
// cppcheck-suppress constParameter ; sse_event_fn's type
count_drop(void *arg, const char *type, char *p, size_t n)
{
	(void)type;
	if (p == NULL)
		*(int *)arg = (int)n;
	return true;
}

static void
test_sse(void)
{
	struct sse p;
	int calls = 0;

	sse_case("event: endpoint\r\ndata: /messages?s=1\r\n\r\n", 100,
	    "endpoint|/messages?s=1\n", NULL);
	sse_case("data: a\ndata: b\n\ndata:c\n\n", 100,
	    "message|a\nb\nmessage|c\n", NULL);
	sse_case("\xef\xbb\xbf: ping\r\rdata: x\r\r", 100, "message|x\n",
	    NULL);
	/* Half a BOM is bytes of a line: a field of another name. */
	sse_case("\xef\xbb" "data: y\n\n", 100, "", NULL);
	sse_case("id: 7\nevent: message\ndata: {}\n\nid: 8\n\n", 100,
	    "message|{}\n", "8");
	sse_case("event: x\n\ndata\n\n", 100, "message|\n", NULL);
	sse_case("data:  two spaces\n\n", 100, "message| two spaces\n", NULL);
	sse_case("retry: 10\nunknown: 1\ndata: z\n\n", 100, "message|z\n",
	    NULL);
	sse_case("data: 0123456789\ndata: 0123456789\n\ndata: ok\n\n", 15,
	    "message|DROP\nmessage|ok\n", NULL);
	sse_case("data: 0123456789012345678901234567890123456789\n\n"
	    "data: ok\n\n", 10, "message|DROP\nmessage|ok\n", NULL);
	sse_case("event: 01234567890123456789012345678901234567890123456789"
	    "0123456789012345\ndata: x\n\n", 100, "|x\n", NULL);
	sse_case("data: no end", 100, "", NULL);

	/* The handler stops the parse. */
	sse_init(&p, 100);
	CHECK(!sse_feed(&p, "data: 1\n\ndata: 2\n\n", 18, stop_event,
	    &calls) && calls == 1);
	sse_free(&p);
	sse_init(&p, 100);
	(void)sse_feed(&p, "retry: 250\n", 11, take_event, NULL);
	CHECK(p.retry == 250);
	sse_free(&p);
	/* A dropped event's size, fed whole. */
	sse_init(&p, 15);
	calls = 0;
	(void)sse_feed(&p, "data: 0123456789\ndata: 0123456789\n\n", 36,
	    count_drop, &calls);
	CHECK(calls == 22);
	sse_free(&p);
}

void
test_remote(void)
{
	test_url();
	test_request();
	test_response();
	test_sse();
}
