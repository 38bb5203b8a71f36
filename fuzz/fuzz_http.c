/*
 * libFuzzer target: the HTTP request parser (http_parse.c) and the rules
 * (http_rules.c) on arbitrary bytes, as a connection feeds them: the
 * whole input as it grows, requests one after another (pipelining), each
 * checked by http_check.  The first byte picks the body cap and how the
 * input is cut into reads.  Properties, each an abort when broken:
 *
 *  - fed whole and fed in pieces, the requests and the final verdict
 *    are the same (the parser's state carries over reads exactly);
 *  - a request takes no more bytes than it was given, its head is within
 *    HTTP_HEAD_MAX (after the empty lines before it), its body within
 *    the cap, and a Content-Length body is the bytes after the head;
 *  - every field offset lies inside the head.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util.h"
#include "../json.h"
#include "../json_out.h"
#include "../jsonrpc.h"
#include "../peer.h"
#include "../proc.h"
#include "../config.h"
#include "../era.h"
#include "../store.h"
#include "../terms.h"
#include "../http.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define REQUESTS_MAX	64

static void
broken(const char *what)
{
	fprintf(stderr, "fuzz_http: property broken: %s\n", what);
	abort();
}

/* One request's description, to compare two feedings. */
static void
describe(const struct http_parser *p, const char *b, struct buf *out)
{
	static const char *const allowed[] = { "https://ok.example", NULL };
	struct http_config cfg = { 0 };
	struct http_request r;
	struct http_str v;
	int i;

	http_request_of(p, b, &r);
	if (p->headlen - p->start > HTTP_HEAD_MAX + 2)
		broken("a head longer than HTTP_HEAD_MAX");
	for (i = 0; i < r.nfields; i++)
		if (r.fields[i].value + r.fields[i].valuelen > p->headlen ||
		    r.fields[i].name + r.fields[i].namelen > p->headlen)
			broken("a field outside its head");
	if (!p->chunked && p->length >= 0 &&
	    (size_t)p->length != r.bodylen)
		broken("a Content-Length body of another length");
	cfg.token = "tok";
	cfg.origins = allowed;
	cfg.check_host = true;
	buf_printf(out, "%d|%d|%d|%zu|", r.method, http_check(&r, &cfg),
	    http_accepts(&r, "text/event-stream"), r.bodylen);
	buf_put(out, r.body, r.bodylen);
	for (i = 0; i < HTTP_H_N; i++)
		if (r.h[i].p != NULL)
			buf_put(out, r.h[i].p, r.h[i].n);
	if (http_field(&r, "x-a", 1, &v))
		buf_put(out, v.p, v.n);
	buf_putc(out, '|');
}

/*
 * Feed data[0, n) in reads of step bytes (0: all at once) and describe
 * the requests it makes, one after another, and the verdict.
 */
static void
feed(const uint8_t *data, size_t n, size_t step, size_t max,
    struct buf *out)
{
	struct http_parser p;
	struct buf in = { 0 };
	size_t at = 0, k, used;
	int st = HTTP_MORE, reqs = 0;

	http_parser_reset(&p);
	for (;;) {
		st = http_parse(&p, in.data, &in.len, max);
		if (st == HTTP_HEADER)
			continue;
		if (st == HTTP_DONE) {
			used = p.headlen + p.raw;
			if (used > in.len)
				broken("a request took more than it was given");
			if (p.bodylen > max)
				broken("a body over the cap");
			describe(&p, in.data, out);
			buf_consume(&in, used);
			http_parser_reset(&p);
			if (++reqs == REQUESTS_MAX)
				break;
			continue;
		}
		if (st != HTTP_MORE || at == n)
			break;
		k = step == 0 || step > n - at ? n - at : step;
		buf_put(&in, data + at, k);
		at += k;
	}
	buf_printf(out, "end %d", st);
	buf_free(&in);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t caps[] = { 0, 1, 16, 100, 4096, 1 << 20 };
	struct buf a = { 0 }, b = { 0 };
	size_t max, step;

	if (size < 1)
		return 0;
	max = caps[data[0] % 6];
	step = 1 + (data[0] >> 3) % 17;
	feed(data + 1, size - 1, 0, max, &a);
	feed(data + 1, size - 1, step, max, &b);
	if (a.len != b.len || memcmp(a.data, b.data, a.len) != 0) {
		fprintf(stderr, "whole:  %.*s\npieces: %.*s\n", (int)a.len,
		    a.data, (int)b.len, b.data);
		broken("fed whole and in pieces, the requests differ");
	}
	buf_free(&a);
	buf_free(&b);
	return 0;
}
