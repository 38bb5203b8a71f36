/*
 * libFuzzer target: the JSON-RPC input path.  What a client or a server
 * writes reaches the workbench as bytes on a pipe; this drives the same
 * code: peer_read's line framing (on a real pipe, in small and large
 * chunks, with small and large size caps, with and without lines held
 * back by the busy callback), then for every line what the
 * request handlers do with it: json_parse, lookups by key and path, every
 * token read as a string, integer and boolean, the id scanners of oversized
 * lines (head and tail), id splicing and the emitter.
 *
 * Besides "no crash, no sanitizer report", it checks properties:
 *  - framing hands over exactly the lines a simple model predicts, in
 *    order, and reports every line longer than the cap with its length;
 *  - whatever bytes json_put_str gets, it emits one valid JSON string, and
 *    a string that is valid UTF-8 survives json_strdup -> json_put_str ->
 *    json_parse -> json_strdup unchanged;
 *  - json_parse accepts exactly what a plain JSON validator written here
 *    accepts (RFC 8259, string bytes not checked for UTF-8);
 *  - splicing a number over a parsed id, or adding a member to a parsed
 *    object, leaves valid JSON;
 *  - jstream_feed, given the text in pieces of any size (as a result that
 *    is passed on while it arrives), reaches the verdict ref_valid does;
 *  - json_shape accepts only what json_parse accepts, and finds spans
 *    that are each one JSON value and the same values json_get finds for
 *    the keys it looks into.
 * A broken property aborts with a message (a crash to libFuzzer).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static struct json j;		/* Kept between messages, as in the workbench. */
static struct json j2;		/* For re-parsing what we emitted. */

static void
broken(const char *what)
{
	fprintf(stderr, "fuzz_jsonrpc: property broken: %s\n", what);
	abort();
}

/* Is s[0..n) valid UTF-8 (no overlongs, no surrogates)? */
static int
ref_utf8_valid(const unsigned char *s, size_t n)
{
	size_t i = 0, len, k;
	unsigned long cp;

	while (i < n) {
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		if (s[i] >= 0xc2 && s[i] <= 0xdf)
			len = 2, cp = s[i] & 0x1f;
		else if (s[i] >= 0xe0 && s[i] <= 0xef)
			len = 3, cp = s[i] & 0x0f;
		else if (s[i] >= 0xf0 && s[i] <= 0xf4)
			len = 4, cp = s[i] & 0x07;
		else
			return 0;
		if (i + len > n)
			return 0;
		for (k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return 0;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp < 0xe000))) ||
		    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
			return 0;
		i += len;
	}
	return 1;
}

/*
 * A plain JSON validator (RFC 8259; bytes of strings are not checked for
 * UTF-8, as the workbench does not either), without recursion: the
 * reference json_parse_any is compared with.
 */
static size_t
ref_ws(const char *s, size_t i, size_t n)
{
	while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' ||
	    s[i] == '\n'))
		i++;
	return i;
}

static int
ref_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
	    (c >= 'A' && c <= 'F');
}

/* The end of the string starting at s[i] == '"', or 0. */
static size_t
ref_string(const char *s, size_t i, size_t n)
{
	size_t k;

	for (i++; i < n; i++) {
		if ((unsigned char)s[i] < 0x20)
			return 0;
		if (s[i] == '"')
			return i + 1;
		if (s[i] != '\\')
			continue;
		if (++i >= n)
			return 0;
		if (s[i] == 'u') {
			for (k = 1; k <= 4; k++)
				if (i + k >= n || !ref_hex(s[i + k]))
					return 0;
			i += 4;
		} else if (strchr("\"\\/bfnrt", s[i]) == NULL || s[i] == '\0')
			return 0;
	}
	return 0;
}

static size_t
ref_digits(const char *s, size_t i, size_t n)
{
	while (i < n && s[i] >= '0' && s[i] <= '9')
		i++;
	return i;
}

/* The end of the number or literal at s[i], or 0. */
static size_t
ref_primitive(const char *s, size_t i, size_t n)
{
	size_t k;

	if (n - i >= 4 && (memcmp(s + i, "true", 4) == 0 ||
	    memcmp(s + i, "null", 4) == 0))
		return i + 4;
	if (n - i >= 5 && memcmp(s + i, "false", 5) == 0)
		return i + 5;
	if (i < n && s[i] == '-')
		i++;
	if (i < n && s[i] == '0')
		i++;
	else if (i < n && s[i] >= '1' && s[i] <= '9')
		i = ref_digits(s, i, n);
	else
		return 0;
	if (i < n && s[i] == '.') {
		if ((k = ref_digits(s, i + 1, n)) == i + 1)
			return 0;
		i = k;
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		if ((k = ref_digits(s, i, n)) == i)
			return 0;
		i = k;
	}
	return i;
}

/* Past an object's key and its colon, spaces allowed; 0 when not there. */
static size_t
ref_key(const char *s, size_t i, size_t n)
{
	i = ref_ws(s, i, n);
	if (i >= n || s[i] != '"' || (i = ref_string(s, i, n)) == 0)
		return 0;
	i = ref_ws(s, i, n);
	return i < n && s[i] == ':' ? i + 1 : 0;
}

static int
ref_valid(const char *s, size_t n)
{
	char *stack = malloc(n + 1);
	size_t sp = 0, i = 0, e;
	int ok = 0;

	if (stack == NULL)
		abort();
	for (;;) {
		/* A value. */
		i = ref_ws(s, i, n);
		if (i >= n)
			goto out;
		if (s[i] == '{' || s[i] == '[') {
			stack[sp++] = s[i++];
			i = ref_ws(s, i, n);
			if (i < n && s[i] == (stack[sp - 1] == '{' ? '}' : ']')) {
				sp--;
				i++;
			} else if (stack[sp - 1] == '{') {
				if ((i = ref_key(s, i, n)) == 0)
					goto out;
				continue;
			} else
				continue;
		} else if (s[i] == '"') {
			if ((i = ref_string(s, i, n)) == 0)
				goto out;
		} else if ((e = ref_primitive(s, i, n)) == 0)
			goto out;
		else
			i = e;
		/* After a value: a separator, a close, or the end. */
		for (;;) {
			i = ref_ws(s, i, n);
			if (sp == 0) {
				ok = i == n;
				goto out;
			}
			if (i >= n)
				goto out;
			if (s[i] == (stack[sp - 1] == '{' ? '}' : ']')) {
				sp--;
				i++;
				continue;
			}
			if (s[i++] != ',')
				goto out;
			if (stack[sp - 1] == '{' && (i = ref_key(s, i, n)) == 0)
				goto out;
			break;
		}
	}
out:
	free(stack);
	return ok;
}

/* json_put_str of any bytes is one valid JSON string. */
static void
emit_check(const char *s, size_t n, const char *expect)
{
	struct buf b = { 0 };
	char *back;

	json_put_str(&b, s, n);
	if (json_parse_any(&j2, b.data, b.len) != JSON_OK || j2.ntok != 1 ||
	    j2.tok[0].type != JSMN_STRING)
		broken("json_put_str emitted something that is not one JSON "
		    "string");
	if (expect != NULL) {
		back = json_strdup(&j2, 0);
		if (back == NULL || strcmp(back, expect) != 0)
			broken("string round trip (strdup, put_str, parse, "
			    "strdup) changed a valid UTF-8 string");
		free(back);
	}
	buf_free(&b);
}

/* What the request handlers do with one message. */
/*
 * json_shape accepts only valid JSON, and its spans agree with the tokens
 * of the same text (in j, when json_parse gave r == JSON_OK).
 */
static void
shape_check(const char *s, size_t n, int r)
{
	static const struct field inner[] = { FIELD("a", 2, NULL, false),
	    FIELD("b", 3, NULL, false), FIELD_END };
	static const struct field top[] = { FIELD("id", 0, NULL, false),
	    FIELD("params", 1, inner, false), FIELD_END };
	static const char *const paths[] = { "id", "params", "params.a",
	    "params.b" };
	struct span v[4];
	const char *raw;
	size_t len;
	int k, t;

	if (!json_shape(s, n, top, v, 4))
		return;
	if (!ref_valid(s, n) || r == JSON_SYNTAX || r == JSON_TOODEEP)
		broken("json_shape accepts what json_parse rejects");
	if (r != JSON_OK)
		return;
	for (k = 0; k < 4; k++) {
		t = json_path(&j, 0, paths[k]);
		if ((v[k].p == NULL) != (t < 0))
			broken("json_shape and json_path disagree on a field");
		if (t < 0)
			continue;
		raw = json_raw(&j, t, &len);
		if (raw != v[k].p || len != v[k].n)
			broken("json_shape's span is not the token's");
	}
}

static void
message(const char *s, size_t n)
{
	static const char *const keys[] = {
		"jsonrpc", "id", "method", "params", "result", "error",
		"name", "arguments", "_meta", "cursor", NULL
	};
	static const char *const paths[] = {
		"params._meta.progressToken", "params.arguments.tool.toolbox",
		"params.arguments.toolbox_name", "params.capabilities.roots",
		"result.nextCursor", "error.code", "params.requestId",
		"params.protocolVersion", NULL
	};
	const char *raw, *idp;
	struct buf b = { 0 };
	size_t rawlen, idlen;
	long long v;
	char *str;
	bool bv;
	int r, i, k, id;

	r = json_parse(&j, s, n);
	if (r == JSON_SYNTAX && j.errpos > n)
		broken("syntax error position past the end of the text");
	/* Past the token or depth caps the verdict is the cap's. */
	if (r != JSON_TOOBIG && r != JSON_TOODEEP &&
	    (r != JSON_SYNTAX) != ref_valid(s, n))
		broken(r == JSON_SYNTAX ? "json_parse rejects valid JSON" :
		    "json_parse accepts invalid JSON");
	shape_check(s, n, r);
	if (r == JSON_OK) {
		for (k = 0; keys[k] != NULL; k++)
			(void)json_get(&j, 0, keys[k]);
		for (k = 0; paths[k] != NULL; k++)
			(void)json_path(&j, 0, paths[k]);
		id = json_get(&j, 0, "id");
		(void)rpc_valid_id(&j, id);
		if (id >= 0) {
			/* Splicing a number over the id keeps valid JSON. */
			raw = json_raw(&j, id, &rawlen);
			if (raw < s || raw + rawlen > s + n)
				broken("json_raw outside the text");
			rpc_splice(&b, s, n, raw, rawlen, "42", 2);
			if (json_parse(&j2, b.data, b.len) != JSON_OK)
				broken("id splice made invalid JSON");
			b.len = 0;
		}
		/* Adding a member to the object keeps valid JSON. */
		json_add_members(&b, s + j.tok[0].start,
		    (size_t)(j.tok[0].end - j.tok[0].start));
		buf_puts(&b, "\"added\":1}");
		if (json_parse(&j2, b.data, b.len) != JSON_OK)
			broken("json_add_members made invalid JSON");
		buf_free(&b);
		for (i = 0; i < j.ntok; i++) {
			if (json_next(&j, i) <= i || json_next(&j, i) > j.ntok)
				broken("json_next out of range");
			(void)json_get_int(&j, i, &v);
			(void)json_get_bool(&j, i, &bv);
			(void)json_is_int(&j, i);
			(void)json_eq(&j, i, "method");
			if ((str = json_strdup(&j, i)) != NULL) {
				emit_check(str, strlen(str),
				    ref_utf8_valid((unsigned char *)str,
				    strlen(str)) ? str : NULL);
				free(str);
			}
		}
	}
	if (rpc_scan_id(s, n, &idp, &idlen) == 0 &&
	    (idp < s || idlen > n || idp + idlen > s + n))
		broken("rpc_scan_id outside the text");
	if (rpc_scan_id_tail(s, n, &idp, &idlen) == 0 &&
	    (idp < s || idlen == 0 || idlen > n || idp + idlen > s + n))
		broken("rpc_scan_id_tail outside the text");
	json_release(&j);
}

/*
 * Line framing.  The model: the stream split at '\n'; each complete line
 * longer than max is reported as oversized with its length; any other one
 * loses a trailing '\r' and a leading BOM and, when something is left, is
 * handed over.  A last line without '\n' is never handed over.
 */
struct framing {
	const char	*stream;
	size_t		 len;
	size_t		 max;
	size_t		 pos;		/* Where the model's next line starts. */
};

/* The model's next event: 1 line, 2 oversize, 0 none; sets *a, *n. */
static int
model_next(struct framing *f, const char **a, size_t *n)
{
	const char *nl, *l;
	size_t len;

	for (;;) {
		l = f->stream + f->pos;
		nl = memchr(l, '\n', f->len - f->pos);
		if (nl == NULL)
			return 0;
		len = (size_t)(nl - l);
		f->pos += len + 1;
		if (len > f->max) {
			*n = len;
			return 2;
		}
		if (len > 0 && l[len - 1] == '\r')
			len--;
		if (len >= 3 && memcmp(l, "\xef\xbb\xbf", 3) == 0) {
			l += 3;
			len -= 3;
		}
		if (len > 0) {
			*a = l;
			*n = len;
			return 1;
		}
	}
}

static void
on_line(void *ctx, char *line, size_t n)
{
	struct framing *f = ctx;
	const char *a;
	size_t m;

	if (model_next(f, &a, &m) != 1 || m != n || memcmp(a, line, n) != 0)
		broken("framing handed over a line the model did not expect");
	message(line, n);
}

static void
on_oversize(void *ctx, size_t size, const char *id)
{
	struct framing *f = ctx;
	const char *a;
	size_t m;

	(void)id;
	if (model_next(f, &a, &m) != 2 || m != size)
		broken("framing reported an oversized line the model did not "
		    "expect, or with the wrong size");
}

/* Hold lines back (backpressure) on every busy_every-th question. */
static unsigned int busy_every, busy_calls;

static bool
on_busy(void *ctx)
{
	(void)ctx;
	return busy_every > 0 && ++busy_calls % busy_every == 0;
}

/* Let held lines go: peer_input until no complete line is left. */
static void
release(struct peer *p, size_t max, const struct peer_ops *ops, void *ctx)
{
	size_t guard = p->in.len + 2;

	while (guard-- > 0 && p->in.len > 0 &&
	    memchr(p->in.data, '\n', p->in.len) != NULL)
		peer_input(p, max, ops, ctx);
}

static void
framing(const char *data, size_t size, size_t max, size_t chunk,
    unsigned int every)
{
	static const struct peer_ops plain = {
		.line = on_line, .oversize = on_oversize
	}, held = {
		.line = on_line, .oversize = on_oversize, .busy = on_busy
	};
	const struct peer_ops *ops = every > 0 ? &held : &plain;
	struct framing f = { data, size, max, 0 };
	struct peer p;
	const char *a;
	size_t off = 0, n;
	ssize_t r;
	int fds[2];

	busy_every = every;
	busy_calls = 0;
	if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) < 0)
		abort();
	memset(&p, 0, sizeof(p));
	p.rfd = fds[0];
	p.wfd = -1;
	while (off < size) {
		n = size - off < chunk ? size - off : chunk;
		if (write(fds[1], data + off, n) != (ssize_t)n)
			abort();
		off += n;
		while ((r = peer_read(&p, max, ops, &f)) > 0)
			;
		if (r < 0 && errno != EAGAIN)
			abort();
		/* Sometimes more arrives before the held lines go. */
		if (every > 0 && off % (2 * chunk) == 0)
			release(&p, max, ops, &f);
	}
	close(fds[1]);
	while ((r = peer_read(&p, max, ops, &f)) > 0)
		;
	if (r != 0 || !p.eof)
		broken("no end of file after the writer closed");
	release(&p, max, ops, &f);
	if (model_next(&f, &a, &n) != 0)
		broken("framing lost a line the model expected");
	close(fds[0]);
	peer_close(&p);
}

/*
 * Check s in pieces of step bytes, the earlier ones dropped as they are
 * passed (as the stream does): is the whole a JSON value, spaces around?
 */
static int
valid_in_pieces(const char *s, size_t n, size_t step)
{
	struct jstream st;
	size_t base = 0, have = 0;
	int r = JSON_MORE;

	jstream_init(&st, 0);
	while (r == JSON_MORE && have < n) {
		have = n - have > step ? have + step : n;
		st.last = have == n;
		r = jstream_feed(&st, s + base, have - base);
		if (r == JSON_MORE && st.pos > 0) {
			base += st.pos;		/* Passed on: gone. */
			st.pos = 0;
		}
	}
	if (r == JSON_OK) {
		base += st.pos;
		while (base < n && (s[base] == ' ' || s[base] == '\t' ||
		    s[base] == '\n' || s[base] == '\r'))
			base++;
	}
	jstream_free(&st);
	return r == JSON_OK && base == n;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t steps[] = { 1, 2, 7, 64, 4096 };
	size_t k;
	const char *s = (const char *)data;

	/* The whole input as one message, and as bytes to emit. */
	message(s, size);
	for (k = 0; k < sizeof(steps) / sizeof(steps[0]); k++)
		if (valid_in_pieces(s, size, steps[k]) != ref_valid(s, size))
			broken("jstream_feed in pieces disagrees with ref_valid");
	emit_check(s, size, NULL);
	/*
	 * The input as a stream: a tiny cap in tiny chunks, and larger; with
	 * and without lines held back by backpressure.
	 */
	framing(s, size, 16, 3, 2);
	framing(s, size, 256, 61, 0);
	framing(s, size, 1 << 20, 4096, 3);
	return 0;
}
