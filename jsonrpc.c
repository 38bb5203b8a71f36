/*
 * jsonrpc.c: JSON-RPC 2.0 lines: the scan of a message's top level without
 * tokenizing its values, ids checked and spliced, and the envelopes of
 * every message we write: the one place that writes "jsonrpc":"2.0".
 */
#include <stdlib.h>
#include <string.h>

#include "jsonrpc.h"
#include "json_int.h"

/*
 * Is the raw text, found by a scan that does not parse, a JSON-RPC id (a
 * valid string or an integer) that may go into an answer as it is?
 */
static bool
raw_id_valid(const char *id, size_t n)
{
	if (n > 0 && id[0] == '"')
		return json_skip_string(id, 0, n) == n && utf8_valid(id, n);
	return json_raw_is_int(id, n) && json_valid_number(id, n);
}


/*
 * The same for a line too large to keep whose start had no id: the
 * TypeScript SDK writes {"result":...,"jsonrpc":"2.0","id":N}, so look for
 * a top-level "id" as the last member, in the line's last bytes.
 */
int
rpc_scan_id_tail(const char *s, size_t n, const char **id, size_t *idlen)
{
	size_t end, start;

	if ((n = back_space(s, n)) == 0 || s[--n] != '}')
		return -1;
	end = n = back_space(s, n);
	if (n > 0 && s[n - 1] == '"') {
		for (n--; n > 0 && (s[n - 1] != '"' || (n > 1 &&
		    s[n - 2] == '\\')); n--)
			;
		if (n == 0)
			return -1;
		n--;
	} else
		while (n > 0 && (s[n - 1] == '-' || (s[n - 1] >= '0' &&
		    s[n - 1] <= '9')))
			n--;
	if ((start = n) == end)
		return -1;
	if ((n = back_space(s, n)) == 0 || s[--n] != ':')
		return -1;
	n = back_space(s, n);
	if (n < 4 || memcmp(s + n - 4, "\"id\"", 4) != 0)
		return -1;
	n = back_space(s, n - 4);
	if (n == 0 || (s[n - 1] != ',' && s[n - 1] != '{') ||
	    !raw_id_valid(s + start, end - start))
		return -1;
	*id = s + start;
	*idlen = end - start;
	return 0;
}

/*
 * Append text with the span [at, at + atlen) replaced by with: how ids and
 * progress tokens are rewritten while the rest passes untouched.
 */
void
rpc_splice(struct buf *out, const char *text, size_t n, const char *at,
    size_t atlen, const char *with, size_t withlen)
{
	size_t pre = (size_t)(at - text);

	buf_reserve(out, n - atlen + withlen + 1);
	buf_put(out, text, pre);
	buf_put(out, with, withlen);
	buf_put(out, at + atlen, n - pre - atlen);
}

/*
 * Copy text into out with each cut's span replaced by its text (an empty
 * span: the text inserted there).  The cuts, which must not overlap, are
 * put in order here.
 */
void
rpc_splice_cuts(struct buf *out, const char *text, size_t n, struct cut *c,
    int nc)
{
	const char *p = text;
	struct cut t;
	int i, k;

	for (i = 1; i < nc; i++)
		for (k = i; k > 0 && c[k].at.p < c[k - 1].at.p; k--) {
			t = c[k];
			c[k] = c[k - 1];
			c[k - 1] = t;
		}
	for (i = 0; i < nc; i++) {
		buf_put(out, p, (size_t)(c[i].at.p - p));
		buf_put(out, c[i].with, c[i].wlen);
		p = c[i].at.p + c[i].at.n;
	}
	buf_put(out, p, (size_t)(text + n - p));
}

/* The same, as a whole line for a peer's queue. */
void
rpc_splice_line(struct buf *out, const char *text, size_t n, const char *at,
    size_t atlen, const char *with, size_t withlen)
{
	rpc_splice(out, text, n, at, atlen, with, withlen);
	buf_putc(out, '\n');
}

static int
scan_top(const char *s, size_t n, bool stop, struct rpc_top *top)
{
	size_t i = skip_space(s, 0, n);

	memset(top, 0, sizeof(*top));
	if (i >= n || s[i] != '{')
		return -1;
	return rpc_members(s, n, i + 1, true, stop, top);
}

/*
 * Read a message's top level without tokenizing its values: which of
 * id, method, result and error it has, and where the id is.  Returns 0, or
 * -1 when the line is not one well-formed object.
 */
int
rpc_scan(const char *s, size_t n, struct rpc_top *top)
{
	return scan_top(s, n, false, top);
}

/*
 * The same up to the value of "result": 1 with top->at there, the members
 * before it noted; 0 or -1 as rpc_scan when there is no result.
 */
int
rpc_scan_head(const char *s, size_t n, struct rpc_top *top)
{
	return scan_top(s, n, true, top);
}

static bool
key_is(const char *k, size_t klen, const char *quoted)
{
	return klen == strlen(quoted) && memcmp(k, quoted, klen) == 0;
}

/*
 * Note a top-level member whose value starts at s[i]: -1 when it came
 * before, 1 for "result", else 0.
 */
static int
note_member(const char *s, size_t n, size_t key, size_t klen, size_t i,
    struct rpc_top *top)
{
	const char *k = s + key;
	bool again;
	int r = 0;

	if (key_is(k, klen, "\"id\"")) {
		again = top->id != NULL;
		top->id = s + i;
	} else if (key_is(k, klen, "\"method\"")) {
		again = top->method != NULL;
		top->method = s + i;
	} else if (key_is(k, klen, "\"result\"")) {
		again = top->result;
		top->result = true;
		top->at = i;
		r = 1;
	} else if (key_is(k, klen, "\"error\"")) {
		again = top->error;
		top->error = true;
	} else if (key_is(k, klen, "\"jsonrpc\"")) {
		again = top->jsonrpc;
		top->jsonrpc = true;
		top->v2 = n - i >= 5 && memcmp(s + i, "\"2.0\"", 5) == 0;
	} else if (key_is(k, klen, "\"params\"")) {
		again = top->params;
		top->params = true;
	} else
		return 0;
	return again ? -1 : r;
}

/*
 * The members of a message's top-level object from s[i]: just past its
 * '{' when first, else just past a member's value.  Adds what it finds to
 * top.  Returns 0 at the object's end, which must end the text, or -1 when
 * it is not well-formed or has one of those members, or params, twice.
 * With stop, returns 1 as soon as the value of "result" is reached
 * (top->at), before checking it.
 */
int
rpc_members(const char *s, size_t n, size_t i, bool first, bool stop,
    struct rpc_top *top)
{
	size_t key, end, bad, depth;
	int r;

	i = skip_space(s, i, n);
	if (i < n && s[i] == '}')
		return skip_space(s, i + 1, n) == n ? 0 : -1;
	if (!first) {
		if (i >= n || s[i] != ',')
			return -1;
		i = skip_space(s, i + 1, n);
	}
	for (;;) {
		key = i;
		if (i >= n || s[i] != '"' || (i = json_skip_string(s, i, n)) == 0)
			return -1;
		end = i;
		i = skip_space(s, i, n);
		if (i >= n || s[i++] != ':')
			return -1;
		i = skip_space(s, i, n);
		if ((r = note_member(s, n, key, end - key, i, top)) < 0)
			return -1;
		if (r > 0 && stop)
			return 1;
		if ((end = json_check_value(s, i, n, &bad, &depth)) == 0)
			return -1;
		if (top->id == s + i)
			top->idlen = end - i;
		i = skip_space(s, end, n);
		if (i < n && s[i] == ',') {
			i = skip_space(s, i + 1, n);
			continue;
		}
		if (i >= n || s[i] != '}')
			return -1;
		return skip_space(s, i + 1, n) == n ? 0 : -1;
	}
}

/* A raw id that is a positive integer we could have sent: its value. */
bool
rpc_int_id(const char *id, size_t n, long long *v)
{
	size_t k;

	if (n == 0 || n > 18 || id[0] == '0')
		return false;
	for (*v = 0, k = 0; k < n; k++) {
		if (id[k] < '0' || id[k] > '9')
			return false;
		*v = *v * 10 + (id[k] - '0');
	}
	return true;
}

/*
 * A raw id, found in text already known to be JSON, that is a string or
 * an integer: rpc_valid_id's rule, for the paths that do not tokenize.
 */
bool
rpc_raw_id(const char *id, size_t n)
{
	return n > 0 && (id[0] == '"' || json_raw_is_int(id, n));
}

bool
rpc_valid_id(const struct json *j, int i)
{
	return json_is(j, i, JSMN_STRING) || json_is_int(j, i);
}

/*
 * Find the top-level "id" in the start of a line too large to parse, so
 * that the request it belongs to can still be answered.  Stops at the
 * first value it cannot follow.
 */
int
rpc_scan_id(const char *s, size_t n, const char **id, size_t *idlen)
{
	size_t i = skip_space(s, 0, n), k, start;
	bool key;

	if (i >= n || s[i++] != '{')
		return -1;
	for (;;) {
		i = skip_space(s, i, n);
		if (i >= n || s[i] != '"')
			return -1;
		key = i + 4 < n && memcmp(s + i, "\"id\"", 4) == 0;
		for (k = i + 1; k < n && s[k] != '"'; k++)
			if (s[k] == '\\')
				k++;
		i = skip_space(s, k + 1, n);
		if (i >= n || s[i++] != ':')
			return -1;
		start = i = skip_space(s, i, n);
		if (i < n && s[i] == '"') {
			for (i++; i < n && s[i] != '"'; i++)
				if (s[i] == '\\')
					i++;
			i++;
		} else
			i = json_primitive_end(s, i, n);
		if (i > n || i == start)
			return -1;
		if (key) {
			if (!raw_id_valid(s + start, i - start))
				return -1;
			*id = s + start;
			*idlen = i - start;
			return 0;
		}
		i = skip_space(s, i, n);
		if (i >= n || s[i++] != ',')
			return -1;
	}
}

/*
 * Envelopes (jsonrpc.h): the one place that writes "jsonrpc":"2.0".
 */
#define RPC_HEAD	"{\"jsonrpc\":\"2.0\","

void
rpc_put_request(struct buf *b, long long id, const char *method)
{
	buf_puts(b, RPC_HEAD "\"id\":");
	buf_put_int(b, id);
	buf_puts(b, ",\"method\":\"");
	buf_puts(b, method);
	buf_putc(b, '"');
}

void
rpc_put_request_raw(struct buf *b, long long id, const char *method,
    size_t n)
{
	buf_puts(b, RPC_HEAD "\"id\":");
	buf_put_int(b, id);
	buf_puts(b, ",\"method\":");
	buf_put(b, method, n);
}

void
rpc_put_notification(struct buf *b, const char *method)
{
	buf_puts(b, RPC_HEAD "\"method\":\"");
	buf_puts(b, method);
	buf_putc(b, '"');
}

/* The id of an answer; one we cannot know is null. */
static void
put_id(struct buf *b, const char *id, size_t idlen)
{
	buf_puts(b, RPC_HEAD "\"id\":");
	if (id == NULL)
		buf_puts(b, "null");
	else
		buf_put(b, id, idlen);
}

void
rpc_put_result(struct buf *b, const char *id, size_t idlen)
{
	put_id(b, id, idlen);
	buf_puts(b, ",\"result\":");
}

void
rpc_put_error(struct buf *b, const char *id, size_t idlen, int code,
    const char *msg)
{
	put_id(b, id, idlen);
	buf_puts(b, ",\"error\":{\"code\":");
	buf_put_int(b, code);
	buf_puts(b, ",\"message\":");
	json_put_cstr(b, msg);
}
