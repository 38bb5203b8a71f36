/*
 * libFuzzer target: the remote client's parsers (remote_http.c,
 * remote_sse.c) on what a hostile server sends.  The first byte picks
 * the parser (even: an HTTP response, read to its end or to the end of
 * the connection, its body fed to the event stream parser when it says
 * text/event-stream; odd: the event stream parser alone) and the size
 * of the reads.  Then url_parse, url_resolve and hreq_mcp_value on the
 * same bytes.
 * Properties, each an abort when broken:
 *
 *  - fed whole and fed in pieces, the verdict, the status, the body and
 *    the events are the same (the parsers' state carries over reads);
 *  - the body is no longer than the input, the head no longer than
 *    HTTP_HEAD_MAX, and an event's data within the parser's bound;
 *  - an event's data is NUL-terminated where the handler is told.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util.h"
#include "../http.h"
#include "../remote_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define SSE_BOUND	512

static void
broken(const char *what)
{
	fprintf(stderr, "fuzz_remote: property broken: %s\n", what);
	abort();
}

struct run {
	int		 verdict;
	int		 status;
	struct buf	 body;
	struct buf	 events;
	struct sse	 sse;
	bool		 sse_on;
};

static bool
on_event(void *arg, const char *type, char *p, size_t n)
{
	struct run *r = arg;

	if (p != NULL && (n > SSE_BOUND || p[n] != '\0'))
		broken("an event past its bound or without its NUL");
	/* A dropped event's size depends on where a long line was cut. */
	if (p == NULL)
		buf_printf(&r->events, "%s|DROP\n", type);
	else {
		buf_printf(&r->events, "%s|%zu|", type, n);
		buf_put(&r->events, p, n);
		buf_putc(&r->events, '\n');
	}
	return true;
}

static bool
on_body(void *arg, char *p, size_t n)
{
	struct run *r = arg;

	buf_put(&r->body, p, n);
	if (r->sse_on)
		(void)sse_feed(&r->sse, p, n, on_event, r);
	return true;
}

/* A response read in pieces of step bytes (0: whole). */
static void
response(const uint8_t *d, size_t n, size_t step, struct run *r)
{
	struct hresp p;
	struct buf in = { 0 };
	const char *why;
	size_t at = 0, take, used;
	int v = HR_MORE;
	bool head = true;

	hresp_reset(&p, false);
	sse_init(&r->sse, SSE_BOUND);
	while (at < n && v == HR_MORE) {
		take = step == 0 || step > n - at ? n - at : step;
		buf_put(&in, d + at, take);
		at += take;
		for (;;) {
			if (head) {
				v = hresp_head(&p, in.data, in.len, &used, &why);
				if (v == HR_INTERIM) {
					buf_consume(&in, used);
					hresp_reset(&p, false);
					continue;
				}
				if (v != HR_HEAD)
					break;
				if (used > HTTP_HEAD_MAX + 1)
					broken("a head past HTTP_HEAD_MAX");
				buf_consume(&in, used);
				head = false;
				r->sse_on = p.sse;
			}
			v = hresp_body(&p, in.data, in.len, &used, on_body, r,
			    &why);
			if (used > in.len)
				broken("the body took more than it was given");
			buf_consume(&in, used);
			break;
		}
	}
	if (v == HR_MORE)
		v = hresp_eof(&p, &why);
	r->verdict = v;
	r->status = p.status;
	if (r->body.len > n)
		broken("a body longer than the input");
	buf_free(&in);
	sse_free(&r->sse);
}

static void
stream(const uint8_t *d, size_t n, size_t step, struct run *r)
{
	size_t at, take;

	sse_init(&r->sse, SSE_BOUND);
	for (at = 0; at < n; at += take) {
		take = step == 0 || step > n - at ? n - at : step;
		(void)sse_feed(&r->sse, (const char *)d + at, take, on_event,
		    r);
	}
	sse_free(&r->sse);
}

static void
same_events(const struct run *a, const struct run *b)
{
	if (a->events.len != b->events.len || (a->events.len > 0 &&
	    memcmp(a->events.data, b->events.data, a->events.len) != 0))
		broken("whole and in pieces, the events differ");
}

static void
same(const struct run *a, const struct run *b)
{
	if (a->verdict != b->verdict || a->status != b->status)
		broken("whole and in pieces, the verdicts differ");
	if (a->verdict == HR_ERROR)
		return;		/* Where it stopped may differ. */
	if (a->body.len != b->body.len || (a->body.len > 0 &&
	    memcmp(a->body.data, b->body.data, a->body.len) != 0))
		broken("whole and in pieces, the bodies differ");
	same_events(a, b);
}

static void
free_run(struct run *r)
{
	buf_free(&r->body);
	buf_free(&r->events);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct run whole = { 0 }, parts = { 0 };
	struct buf err = { 0 };
	struct url u;
	char target[URL_MAX + 1];
	size_t step;

	if (size < 1)
		return 0;
	step = 1 + (data[0] >> 1) % 17;
	if (data[0] % 2 == 0) {
		response(data + 1, size - 1, 0, &whole);
		response(data + 1, size - 1, step, &parts);
		same(&whole, &parts);
	} else {
		stream(data + 1, size - 1, 0, &whole);
		stream(data + 1, size - 1, step, &parts);
		whole.verdict = parts.verdict = HR_DONE;
		same_events(&whole, &parts);
	}
	free_run(&whole);
	free_run(&parts);
	if (url_parse((const char *)data + 1, size - 1, &u, &err) == 0 &&
	    (strlen(u.target) > URL_MAX || u.target[0] != '/'))
		broken("a URL's target");
	(void)url_parse("http://h:1/a/b?c", 16, &u, &err);
	if (url_resolve(&u, (const char *)data + 1, size - 1, target,
	    &err) == 0 && (target[0] != '/' || strlen(target) > URL_MAX))
		broken("a resolved endpoint");
	/* An Mcp-Name value: the input itself, or all of it in Base64. */
	err.len = 0;
	hreq_mcp_value(&err, (const char *)data + 1, size - 1);
	if (!(err.len == size - 1 && memcmp(err.data, data + 1, size - 1) ==
	    0) && err.len != 11 + (size - 1 + 2) / 3 * 4)
		broken("an Mcp-Name value");
	buf_free(&err);
	return 0;
}
