/*
 * remote_sse.c: a Server-Sent Events stream read as the HTML standard's
 * "interpreting an event stream" says, fed in pieces of any size.  The
 * stream is attacker-controlled: a line longer than the event bound is
 * not kept (its event is dropped and reported), an event type or id too
 * long is not kept either, and the buffers shrink again after a large
 * event.  No I/O.
 */
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "remote_int.h"

void
sse_init(struct sse *s, size_t max)
{
	memset(s, 0, sizeof(*s));
	s->max = max;
	s->retry = -1;
}

/* A new stream on the same parser (a connection reused): no state kept. */
void
sse_reset(struct sse *s)
{
	s->line.len = 0;
	s->data.len = 0;
	s->cr = s->started = s->skip = s->over = s->badtype = false;
	s->bom = 0;
	s->overlen = s->typelen = 0;
	s->id[0] = '\0';
	s->retry = -1;
	buf_shrink(&s->line);
	buf_shrink(&s->data);
}

void
sse_free(struct sse *s)
{
	buf_free(&s->line);
	buf_free(&s->data);
}

/* The end of an event: hand it over, or drop it. */
static bool
dispatch(struct sse *s, sse_event_fn *fn, void *arg)
{
	const char *type = s->typelen > 0 ? s->type : "message";
	bool go = true;

	if (s->badtype)
		type = "";		/* An event no one listens for. */
	if (s->over)
		go = fn(arg, type, NULL, s->overlen);
	else if (s->data.len > 0) {
		/* The data's last LF is the field's, not the data's. */
		s->data.len--;
		buf_reserve(&s->data, 1);
		s->data.data[s->data.len] = '\0';
		go = fn(arg, type, s->data.data, s->data.len);
	}
	s->data.len = 0;
	s->typelen = 0;
	s->type[0] = '\0';
	s->over = s->badtype = false;
	s->overlen = 0;
	buf_shrink(&s->data);
	return go;
}

/* A field of the event being read. */
static void
field(struct sse *s, const char *name, size_t nn, const char *v, size_t vn)
{
	size_t i;
	long r;

	if (nn == 4 && memcmp(name, "data", 4) == 0) {
		if (s->over || s->data.len + vn + 1 > s->max) {
			s->over = true;
			s->overlen += vn + 1 + (s->overlen == 0 ?
			    s->data.len : 0);
			s->data.len = 0;
			return;
		}
		buf_put(&s->data, v, vn);
		buf_putc(&s->data, '\n');
	} else if (nn == 5 && memcmp(name, "event", 5) == 0) {
		s->badtype = vn > SSE_TYPE_MAX;
		if (!s->badtype) {
			memcpy(s->type, v, vn);
			s->type[vn] = '\0';
			s->typelen = vn;
		}
	} else if (nn == 2 && memcmp(name, "id", 2) == 0) {
		/* An id with a NUL is ignored, so is one too long. */
		if (vn <= SSE_ID_MAX && memchr(v, '\0', vn) == NULL) {
			memcpy(s->id, v, vn);
			s->id[vn] = '\0';
		}
	} else if (nn == 5 && memcmp(name, "retry", 5) == 0) {
		for (i = 0, r = 0; i < vn && v[i] >= '0' && v[i] <= '9' &&
		    r < 100000000; i++)
			r = r * 10 + (v[i] - '0');
		if (vn > 0 && i == vn)
			s->retry = r;
	}
}

/* A whole line, without its end. */
static bool
line(struct sse *s, const char *p, size_t n, sse_event_fn *fn, void *arg)
{
	const char *colon;
	size_t nn;

	if (n == 0)
		return dispatch(s, fn, arg);
	if (p[0] == ':')
		return true;		/* A comment (a keep-alive). */
	colon = memchr(p, ':', n);
	nn = colon != NULL ? (size_t)(colon - p) : n;
	if (colon == NULL)
		field(s, p, n, "", 0);
	else if (nn + 1 < n && colon[1] == ' ')
		field(s, p, nn, colon + 2, n - nn - 2);
	else
		field(s, p, nn, colon + 1, n - nn - 1);
	return true;
}

/*
 * Bytes of a line.  A line longer than any field we keep (data of max
 * bytes) is not kept, wherever the stream was cut: its event is
 * dropped, whatever the line was.
 */
static void
take(struct sse *s, const char *p, size_t n)
{
	if (!s->skip && s->line.len + n > s->max + 16) {
		s->skip = s->over = true;
		s->overlen += s->line.len + s->data.len;
		s->line.len = s->data.len = 0;
		buf_shrink(&s->line);
	}
	if (s->skip)
		s->overlen += n;
	else
		buf_put(&s->line, p, n);
}

/* The line now in s->line (or, too long, skipped) has ended. */
static bool
line_end(struct sse *s, sse_event_fn *fn, void *arg)
{
	bool go;

	if (s->skip) {
		/* Its event is dropped, whatever the line was. */
		s->skip = false;
		return true;
	}
	go = line(s, s->line.data, s->line.len, fn, arg);
	s->line.len = 0;
	buf_shrink(&s->line);
	return go;
}

/*
 * Feed p[0, n) of the stream.  False when the handler said stop; what
 * came after that event was not read.
 */
bool
sse_feed(struct sse *s, const char *p, size_t n, sse_event_fn *fn,
    void *arg)
{
	static const char bom[] = "\xef\xbb\xbf";
	size_t i, start;
	unsigned char c;

	if (!s->started) {
		/* A BOM may begin the stream, split over pieces too. */
		while (n > 0 && s->bom < 3 && p[0] == bom[s->bom]) {
			s->bom++;
			p++;
			n--;
		}
		if (n == 0 && s->bom < 3)
			return true;
		if (s->bom < 3)		/* Not a BOM: bytes of a line. */
			buf_put(&s->line, bom, (size_t)s->bom);
		s->started = true;
	}
	for (i = start = 0; i < n; i++) {
		c = (unsigned char)p[i];
		if (c != '\r' && c != '\n')
			continue;
		if (c == '\n' && s->cr && i == start) {
			/* The LF of a CRLF. */
			s->cr = false;
			start = i + 1;
			continue;
		}
		take(s, p + start, i - start);
		s->cr = c == '\r';
		start = i + 1;
		if (!line_end(s, fn, arg))
			return false;
	}
	if (start < n) {
		s->cr = false;
		take(s, p + start, n - start);
	}
	return true;
}
