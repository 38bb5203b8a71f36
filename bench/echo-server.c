/*
 * echo-server: a deliberately cheap stdio MCP server, the downstream of the
 * benchmarks.  It must cost as little as possible per message so that what
 * a proxy in front of it adds is what the benchmark sees.
 *
 * One JSON-RPC message per line.  Input is read in large chunks; every
 * complete line is answered into one output buffer, written once the chunk
 * has no more complete lines (so pipelined requests are answered with few
 * write(2)s).  Parsing is minimal: the top-level keys of the request are
 * found by skipping values, never by building a tree.
 *
 * Methods: initialize, ping, tools/list, tools/call; notifications are
 * ignored; any other request gets -32601.  Tools:
 *	echo {message: string}	text content holding message (raw JSON
 *				string, copied without unescaping)
 *	blob {bytes: number}	one text content of exactly bytes 'x'
 *	tool_0 .. tool_{N-1}	(--tools N) like echo
 *
 * Options:
 *	--tools N		also list N generated tools
 *	--init-delay MS		answer initialize after MS milliseconds
 *	--id-last		write the tools/list answer's id last, as the
 *				TypeScript SDK does
 *
 * It exits with status 0 at end of file on standard input.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define READ_MIN	(256 * 1024)

struct span {
	const char	*p;
	size_t		 n;
};

struct obuf {
	char	*p;
	size_t	 len;
	size_t	 cap;
};

static struct obuf out;
static struct obuf toollist;	/* The tools/list result object. */
static char *blob;		/* 'x' repeated, grown on demand. */
static size_t bloblen;
static long init_delay_ms;
static bool id_last;

static void
die(const char *what)
{
	fprintf(stderr, "echo-server: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void
ob_reserve(struct obuf *b, size_t n)
{
	if (b->len + n <= b->cap)
		return;
	while (b->len + n > b->cap)
		b->cap = b->cap == 0 ? 65536 : b->cap * 2;
	if ((b->p = realloc(b->p, b->cap)) == NULL)
		die("realloc");
}

static void
ob_put(struct obuf *b, const void *s, size_t n)
{
	ob_reserve(b, n);
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

static void
ob_puts(struct obuf *b, const char *s)
{
	ob_put(b, s, strlen(s));
}

static void
flush_out(void)
{
	size_t off = 0;
	ssize_t n;

	while (off < out.len) {
		n = write(STDOUT_FILENO, out.p + off, out.len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			exit(0);	/* The reader is gone. */
		off += (size_t)n;
	}
	out.len = 0;
}

/*
 * Minimal JSON skipping.  Each function takes p at the start of a value
 * (or whitespace) and returns the first byte after it, or NULL.
 */
static const char *
skip_ws(const char *p, const char *e)
{
	while (p < e && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
		p++;
	return p;
}

static const char *
skip_string(const char *p, const char *e)
{
	const char *q;

	for (p++; p < e; p = q + 1) {
		if ((q = memchr(p, '"', (size_t)(e - p))) == NULL)
			return NULL;
		/* An odd run of backslashes before it escapes the quote. */
		{
			const char *b = q;

			while (b > p && b[-1] == '\\')
				b--;
			if (((q - b) & 1) == 0)
				return q + 1;
		}
	}
	return NULL;
}

static const char *
skip_value(const char *p, const char *e)
{
	int depth = 0;

	p = skip_ws(p, e);
	do {
		if (p >= e)
			return NULL;
		switch (*p) {
		case '"':
			if ((p = skip_string(p, e)) == NULL)
				return NULL;
			continue;
		case '{':
		case '[':
			depth++;
			break;
		case '}':
		case ']':
			depth--;
			break;
		default:
			if (depth == 0) {
				while (p < e && *p != ',' && *p != '}' &&
				    *p != ']' && *p != ' ')
					p++;
				return p;
			}
		}
		p++;
	} while (depth > 0);
	return p;
}

/* The value of key in the object spanned by obj; v->p NULL when absent. */
static bool
obj_get(struct span obj, const char *key, struct span *v)
{
	const char *p = obj.p, *e = obj.p + obj.n, *k, *ve;
	size_t klen = strlen(key);

	v->p = NULL;
	v->n = 0;
	p = skip_ws(p, e);
	if (p >= e || *p != '{')
		return false;
	p++;
	for (;;) {
		p = skip_ws(p, e);
		if (p >= e || *p != '"')
			return false;
		k = p + 1;
		if ((p = skip_string(p, e)) == NULL)
			return false;
		p = skip_ws(p, e);
		if (p >= e || *p++ != ':')
			return false;
		p = skip_ws(p, e);
		if ((ve = skip_value(p, e)) == NULL)
			return false;
		if ((size_t)(p - k) >= klen + 1 && memcmp(k, key, klen) == 0 &&
		    k[klen] == '"') {
			v->p = p;
			v->n = (size_t)(ve - p);
			return true;
		}
		p = skip_ws(ve, e);
		if (p >= e || *p != ',')
			return false;
		p++;
	}
}

static bool
span_is(struct span s, const char *lit)
{
	size_t n = strlen(lit);

	return s.p != NULL && s.n == n && memcmp(s.p, lit, n) == 0;
}

static void
begin_result(struct span id)
{
	ob_puts(&out, "{\"jsonrpc\":\"2.0\",\"id\":");
	ob_put(&out, id.p, id.n);
	ob_puts(&out, ",\"result\":");
}

static void
on_initialize(struct span id, struct span params)
{
	struct span pv;
	struct timespec ts;

	if (init_delay_ms > 0) {
		flush_out();
		ts.tv_sec = init_delay_ms / 1000;
		ts.tv_nsec = (init_delay_ms % 1000) * 1000000L;
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
	}
	obj_get(params, "protocolVersion", &pv);
	begin_result(id);
	ob_puts(&out, "{\"protocolVersion\":");
	if (pv.p != NULL && pv.p[0] == '"')
		ob_put(&out, pv.p, pv.n);
	else
		ob_puts(&out, "\"2025-06-18\"");
	ob_puts(&out, ",\"capabilities\":{\"tools\":{}},\"serverInfo\":"
	    "{\"name\":\"bench-echo\",\"version\":\"1.0.0\"}}}\n");
}

static void
put_blob(size_t n)
{
	if (n > bloblen) {
		free(blob);
		if ((blob = malloc(n)) == NULL)
			die("malloc");
		memset(blob, 'x', n);
		bloblen = n;
	}
	ob_put(&out, blob, n);
}

static void
on_call(struct span id, struct span params)
{
	struct span name, args, v;
	unsigned long n;

	obj_get(params, "name", &name);
	obj_get(params, "arguments", &args);
	begin_result(id);
	ob_puts(&out, "{\"content\":[{\"type\":\"text\",\"text\":");
	if (span_is(name, "\"blob\"")) {
		obj_get(args, "bytes", &v);
		n = v.p != NULL ? strtoul(v.p, NULL, 10) : 0;
		ob_puts(&out, "\"");
		put_blob(n);
		ob_puts(&out, "\"}]}}\n");
	} else if (span_is(name, "\"echo\"") || (name.p != NULL &&
	    name.n > 7 && memcmp(name.p, "\"tool_", 6) == 0)) {
		obj_get(args, "message", &v);
		if (v.p != NULL && v.p[0] == '"')
			ob_put(&out, v.p, v.n);
		else
			ob_puts(&out, "\"\"");
		ob_puts(&out, "}]}}\n");
	} else
		ob_puts(&out, "\"unknown tool\"}],\"isError\":true}}\n");
}

static void
on_line(const char *line, size_t n)
{
	struct span msg = { line, n }, id, method, params;

	obj_get(msg, "id", &id);
	if (id.p == NULL)
		return;		/* A notification (or an answer). */
	obj_get(msg, "method", &method);
	obj_get(msg, "params", &params);
	if (span_is(method, "\"tools/call\""))
		on_call(id, params);
	else if (span_is(method, "\"initialize\""))
		on_initialize(id, params);
	else if (span_is(method, "\"tools/list\"") && id_last) {
		ob_puts(&out, "{\"result\":");
		ob_put(&out, toollist.p, toollist.len);
		ob_puts(&out, ",\"jsonrpc\":\"2.0\",\"id\":");
		ob_put(&out, id.p, id.n);
		ob_puts(&out, "}\n");
	} else if (span_is(method, "\"tools/list\"")) {
		begin_result(id);
		ob_put(&out, toollist.p, toollist.len);
		ob_puts(&out, "}\n");
	} else if (span_is(method, "\"ping\"")) {
		begin_result(id);
		ob_puts(&out, "{}}\n");
	} else {
		ob_puts(&out, "{\"jsonrpc\":\"2.0\",\"id\":");
		ob_put(&out, id.p, id.n);
		ob_puts(&out, ",\"error\":{\"code\":-32601,\"message\":"
		    "\"Method not found\"}}\n");
	}
}

static void
build_toollist(long ntools)
{
	char t[512];
	long i;

	ob_puts(&toollist, "{\"tools\":["
	    "{\"name\":\"echo\",\"description\":\"Returns its message.\","
	    "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"message\":"
	    "{\"type\":\"string\"}},\"required\":[\"message\"]}},"
	    "{\"name\":\"blob\",\"description\":\"Returns a text of the given "
	    "number of bytes.\",\"inputSchema\":{\"type\":\"object\","
	    "\"properties\":{\"bytes\":{\"type\":\"integer\"}},"
	    "\"required\":[\"bytes\"]}}");
	for (i = 0; i < ntools; i++) {
		snprintf(t, sizeof(t), ",{\"name\":\"tool_%ld\",\"description\":"
		    "\"Generated tool %ld: returns its message.\","
		    "\"inputSchema\":{\"type\":\"object\",\"properties\":"
		    "{\"message\":{\"type\":\"string\"}}}}", i, i);
		ob_puts(&toollist, t);
	}
	ob_puts(&toollist, "]}");
}

int
main(int argc, char *argv[])
{
	char *in = NULL, *nl;
	size_t len = 0, cap = 0, pos, scanned = 0;
	long ntools = 0;
	ssize_t n;
	int i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--tools") == 0 && i + 1 < argc)
			ntools = strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--init-delay") == 0 && i + 1 < argc)
			init_delay_ms = strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--id-last") == 0)
			id_last = true;
		else {
			fprintf(stderr, "usage: echo-server [--tools N] "
			    "[--init-delay MS] [--id-last]\n");
			return 2;
		}
	}
	build_toollist(ntools);
	for (;;) {
		if (cap - len < READ_MIN) {
			cap = cap == 0 ? 2 * READ_MIN : cap * 2;
			if ((in = realloc(in, cap)) == NULL)
				die("realloc");
		}
		n = read(STDIN_FILENO, in + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
		pos = 0;
		while ((nl = memchr(in + scanned, '\n', len - scanned)) !=
		    NULL) {
			on_line(in + pos, (size_t)(nl - in) - pos);
			pos = scanned = (size_t)(nl - in) + 1;
		}
		memmove(in, in + pos, len - pos);
		len -= pos;
		scanned = len;
		flush_out();
	}
	flush_out();
	free(in);
	free(out.p);
	free(toollist.p);
	free(blob);
	return 0;
}
