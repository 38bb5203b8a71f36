/*
 * Unit tests for the JSON layer, line framing, configuration and names
 * (and, in unit-share.c, the shared workbench's transport).  Ends with
 * "N passed, N failed"; exits non-zero when anything failed.
 */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../workbench.h"

static int passed, failed;

#define CHECK(cond) check((cond), #cond, __FILE__, __LINE__)

void	 check(int, const char *, const char *, int);
void	 test_share(void);		/* unit-share.c */

void
check(int ok, const char *what, const char *file, int line)
{
	if (ok)
		passed++;
	else {
		failed++;
		fprintf(stderr, "FAIL %s:%d: %s\n", file, line, what);
	}
}

static int
parse(struct json *j, const char *s)
{
	return json_parse(j, s, strlen(s));
}

static void
test_parse(void)
{
	static const char *const bad[] = {
		"{\"a\" \"b\"}", "{\"a\":tru}", "{\"a\":1} x", "{\"a\":1}{}",
		"{\"a\":\"x\001y\"}", "{\"a\":01}", "{\"a\":1.}", "{\"a\":-}",
		"{\"a\":[1,}", "{\"a\"}", "{1:2}", "", "   ", "{\"a\":nul}",
		"{\"a\":1e}", "\"x\":1", "\"{a\":\"2.0\",\"id\":1}",
		"{\"a\":1,}", "{\"a\":[1,]}", "{,\"a\":1}", "{\"a\":[,1]}",
		"{\"a\":1,,\"b\":2}", "{\"a\":1 :}", "{\"a\":\"b\":}",
		"{\"a\":[1 2]}", "{\"\":1\r:}", "{\"a\":\"\\x\"}",
		"{\"a\":\"\\u12\"}", "[1 2]", "{\"a\":{\"b\"}}", NULL
	};
	struct json j = { 0 };
	int i;

	CHECK(parse(&j, "{\"a\":1,\"b\":[true,false,null,-1.5e+3]}") ==
	    JSON_OK);
	CHECK(parse(&j, " {\"a\":{}} \r\n") == JSON_OK);
	CHECK(parse(&j, "[1,2]") == JSON_NOTOBJ);
	CHECK(parse(&j, "\"s\"") == JSON_NOTOBJ);
	for (i = 0; bad[i] != NULL; i++) {
		if (parse(&j, bad[i]) != JSON_SYNTAX)
			fprintf(stderr, "accepted: %s\n", bad[i]);
		CHECK(parse(&j, bad[i]) == JSON_SYNTAX);
	}
	free(j.tok);
}

/* Check t fed in pieces of size step: JSON_OK with its end, or not. */
static int
feed_pieces(const char *t, size_t step, size_t *end)
{
	struct jstream st;
	size_t n = strlen(t), have;
	int r = JSON_MORE;

	jstream_init(&st, 0);
	for (have = step < n ? step : n; r == JSON_MORE; have += step) {
		if (have >= n) {
			have = n;
			st.last = true;
		}
		r = jstream_feed(&st, t, have);
		if (have == n)
			break;
	}
	*end = st.pos;
	jstream_free(&st);
	return r;
}

/*
 * A value checked as it arrives, a few bytes at a time, gets the verdict
 * it gets whole: the same end when it is JSON, an error when it is not.
 */
static void
test_stream_check(void)
{
	static const char *const good[] = {
		"{\"a\":1,\"b\":[true,false,null,-1.5e+3]}", "{}", "[]",
		"{\"a\":{},\"b\":[[],{}]}", "\"x\\u00e9\\\"\\\\y\"", "12345",
		"{\"k\\n\":\"v\"}  ", "[1,\"two\",{\"3\":[4]}]", "-0.5e-7",
		NULL
	};
	static const char *const bad[] = {
		"{\"a\":1,}", "[1,]", "{,}", "{\"a\" 1}", "[1 2]", "{\"a\":tru}",
		"\"\\x\"", "\"\\u12g4\"", "\"a\001\"", "{\"a\":1]", "[}", "01",
		"{\"a\":\"b\":1}", "[\"x", "{\"a\"", NULL
	};
	size_t step, end, whole;
	int i;

	for (i = 0; good[i] != NULL; i++) {
		whole = strcspn(good[i], " ");
		for (step = 1; step <= 9; step++) {
			CHECK(feed_pieces(good[i], step, &end) == JSON_OK);
			CHECK(end == whole);
		}
	}
	for (i = 0; bad[i] != NULL; i++)
		for (step = 1; step <= 9; step++)
			CHECK(feed_pieces(bad[i], step, &end) != JSON_OK ||
			    end != strlen(bad[i]));
}

/*
 * A walk of text checked already (jwalk.checked) finds the same members
 * and values as one that checks them, escapes and nesting included.
 */
static void
test_walk_checked(void)
{
	static const char obj[] = "{\"a\":\"x\\\"}\\\\\",\"b\" : [1, {\"c\":"
	    "\"]\"}, \"\\u005d\"] ,\"d\":-1.5e3,\"e\":{\"f\":[[]]},\"g\":null}";
	struct jwalk a, b;		/* Checking, and not. */
	struct span ka, kb, va, vb;
	int ra, rb, members = 0;

	CHECK(json_walk(&a, obj, strlen(obj), 0, 1));
	CHECK(json_walk(&b, obj, strlen(obj), 0, 1));
	b.checked = true;
	for (;;) {
		ra = json_walk_next(&a, &ka);
		rb = json_walk_next(&b, &kb);
		CHECK(ra == rb);
		if (ra != 1 || rb != 1)
			break;
		CHECK(json_walk_value(&a, &va));
		CHECK(json_walk_value(&b, &vb));
		CHECK(ka.p == kb.p && ka.n == kb.n);
		CHECK(va.p == vb.p && va.n == vb.n);
		members++;
	}
	CHECK(members == 5);
	CHECK(a.i == strlen(obj) && b.i == a.i);
}

/* A text of depth levels of arrays under "a". */
static char *
nested(size_t depth)
{
	char *s = xmalloc(5 + 2 * depth + 2);

	memcpy(s, "{\"a\":", 5);
	memset(s + 5, '[', depth);
	memset(s + 5 + depth, ']', depth);
	strcpy(s + 5 + 2 * depth, "}");
	return s;
}

/*
 * json_shape checks and finds fields in one pass, and refuses the texts
 * the tokenizing path must sort out: not JSON, or not of the shape.
 */
static void
test_shape(void)
{
	static const struct field inner[] = { FIELD("a", 1, NULL, false),
	    FIELD("b", 2, NULL, false), FIELD_END };
	static const struct field top[] = { FIELD("id", 0, NULL, false),
	    FIELD("p", 3, inner, true), FIELD_END };
	static const char *const refused[] = {
		"{\"id\":1,\"id\":2}", "{\"p\":{\"a\":1,\"c\":2}}",
		"{\"p\":[1]}", "{\"i\\u0064\":1}", "{\"p\":{\"a\":1,\"a\":1}}",
		/* Not JSON, in known fields, in others, around them. */
		"{\"id\":1,}", "{\"id\" 1}", "{\"id\":01}", "{\"id\":\"a\x01\"}",
		"{\"id\":1} x", "{\"z\":[1,]}", "{\"p\":{\"a\":tru}}", "{\"id\":1",
		"{\"p\":{\"b\":\"\\x\"}}", "{,\"id\":1}", "{\"id\":1,,\"z\":2}",
		"{\"id\":1}}", "[{\"id\":1}]", "{\"z\":{\"a\" \"b\"}}", "",
		NULL
	};
	char *deep;
	const char *t = " {\"x\":{\"id\":9},\"id\":\"k}\\\"\",\"p\":{\"b\":"
	    "[1,{\"a\":\"]\"}] , \"a\":-2.5e3},\"z\":null} ";
	struct span v[4];
	int i;

	CHECK(json_shape(t, strlen(t), top, v, 4));
	CHECK(v[0].p != NULL && v[0].n == 6 &&
	    memcmp(v[0].p, "\"k}\\\"\"", 6) == 0);
	CHECK(v[1].p != NULL && v[1].n == 6 && memcmp(v[1].p, "-2.5e3", 6) == 0);
	CHECK(v[2].p != NULL && v[2].n == 13 &&
	    memcmp(v[2].p, "[1,{\"a\":\"]\"}]", 13) == 0);
	CHECK(v[3].p != NULL && v[3].p[0] == '{' && v[3].p[v[3].n - 1] == '}');
	CHECK(json_shape("{}", 2, top, v, 4) && v[0].p == NULL && v[3].p == NULL);
	for (i = 0; refused[i] != NULL; i++)
		CHECK(!json_shape(refused[i], strlen(refused[i]), top, v, 4));
	/* Nesting as json_check counts it: the object is one level. */
	deep = nested(JSON_DEPTH_MAX - 1);
	CHECK(json_shape(deep, strlen(deep), top, v, 4));
	free(deep);
	deep = nested(JSON_DEPTH_MAX);
	CHECK(!json_shape(deep, strlen(deep), top, v, 4));
	free(deep);
}

/*
 * Deep nesting is refused before jsmn sees it (jsmn would take quadratic
 * time), and what is allowed is walked without recursion.
 */
static void
test_deep(void)
{
	struct json j = { 0 };
	char *s;

	s = nested(JSON_DEPTH_MAX - 1);
	CHECK(json_parse(&j, s, strlen(s)) == JSON_OK);
	CHECK(json_next(&j, 0) == j.ntok);
	CHECK(json_get(&j, 0, "a") == 2);
	free(s);
	s = nested(100000);
	CHECK(json_parse(&j, s, strlen(s)) == JSON_TOODEEP);
	free(s);
	/* Brackets inside strings do not count. */
	s = xmalloc(3000);
	strcpy(s, "{\"a\":\"");
	memset(s + 6, '[', 2000);
	strcpy(s + 2006, "\"}");
	CHECK(json_parse(&j, s, strlen(s)) == JSON_OK);
	free(s);
	json_release(&j);
	free(j.tok);
}

static void
test_lookup(void)
{
	struct json j = { 0 };
	long long v;
	bool b;
	int p;

	CHECK(parse(&j, "{\"x\":{\"id\":5},\"id\":7,\"params\":{\"_meta\":"
	    "{\"progressToken\":\"t\"},\"n\":[1,{\"id\":9}]},\"ok\":true}") ==
	    JSON_OK);
	CHECK(json_get_int(&j, json_get(&j, 0, "id"), &v) && v == 7);
	p = json_path(&j, 0, "params._meta.progressToken");
	CHECK(json_eq(&j, p, "t"));
	CHECK(json_path(&j, 0, "params.missing") == -1);
	CHECK(json_get(&j, 0, "nope") == -1);
	CHECK(json_get_bool(&j, json_get(&j, 0, "ok"), &b) == 0 && b);
	CHECK(json_get_bool(&j, json_get(&j, 0, "id"), &b) == -1);
	CHECK(json_get(&j, json_get(&j, 0, "id"), "x") == -1);
	CHECK(parse(&j, "{\"a\":1.5,\"b\":99999999999999999999,\"c\":-3}") ==
	    JSON_OK);
	CHECK(!json_is_int(&j, json_get(&j, 0, "a")));
	CHECK(json_is_int(&j, json_get(&j, 0, "b")));
	CHECK(!json_get_int(&j, json_get(&j, 0, "b"), &v));
	CHECK(json_get_int(&j, json_get(&j, 0, "c"), &v) && v == -3);
	free(j.tok);
}

static void
test_unescape(void)
{
	struct json j = { 0 };
	char *s;

	CHECK(parse(&j, "{\"k\":\"a\\\"b\\\\c\\/\\n\\u00e9\\ud83d\\ude00\"}")
	    == JSON_OK);
	s = json_strdup(&j, 2);
	CHECK(s != NULL && strcmp(s, "a\"b\\c/\n\xc3\xa9\xf0\x9f\x98\x80") ==
	    0);
	free(s);
	CHECK(parse(&j, "{\"k\":\"x\\u0000y\"}") == JSON_OK);
	CHECK(json_strdup(&j, 2) == NULL);
	CHECK(parse(&j, "{\"k\":\"\\ud800z\"}") == JSON_OK);
	s = json_strdup(&j, 2);
	CHECK(s != NULL && strcmp(s, "\xef\xbf\xbdz") == 0);
	free(s);
	CHECK(parse(&j, "{\"k\\u0065y\":1}") == JSON_OK);
	CHECK(json_get(&j, 0, "key") == 2);
	free(j.tok);
}

static void
test_emit(void)
{
	static char in[5000], want[5000];
	struct buf b = { 0 };
	struct json j = { 0 };
	size_t i, k;
	char *s;

	json_put_str(&b, "a\"b\\c\n\t\001\xc3\xa9", 10);
	CHECK(strcmp(buf_cstr(&b), "\"a\\\"b\\\\c\\n\\t\\u0001\xc3\xa9\"") ==
	    0);
	b.len = 0;
	json_put_str(&b, "x\xff\xc3y\xed\xa0\x80", 7);
	CHECK(strcmp(buf_cstr(&b), "\"x\xef\xbf\xbd\xef\xbf\xbdy\xef\xbf\xbd"
	    "\xef\xbf\xbd\xef\xbf\xbd\"") == 0);
	b.len = 0;
	/* Blocks of sixteen: several escapes in one, and bytes that need
	 * care at and across their edges, over more than one step. */
	for (i = 0; i < 5000; i++) {
		in[i] = "ab\"c\\defghijklmn\x01\xc3\xa9opq\xffrs\"\""[i % 25];
		want[i] = in[i];
	}
	json_put_str(&b, in, 5000);
	CHECK(json_parse_any(&j, b.data, b.len) == JSON_OK);
	s = json_strdup(&j, 0);
	CHECK(s != NULL && strlen(s) > 5000);
	for (i = 0, k = 0; s != NULL && i < 5000; i++) {
		if ((unsigned char)want[i] == 0xff) {
			CHECK(memcmp(s + k, "\xef\xbf\xbd", 3) == 0);
			k += 3;
		} else if (s[k++] != want[i])
			break;
	}
	CHECK(i == 5000 && s[k] == '\0');
	free(s);
	free(j.tok);
	b.len = 0;
	json_add_members(&b, "{}", 2);
	CHECK(strcmp(buf_cstr(&b), "{") == 0);
	b.len = 0;
	json_add_members(&b, "{ \"a\":1 }", 9);
	CHECK(strcmp(buf_cstr(&b), "{ \"a\":1 ,") == 0);
	b.len = 0;
	json_add_members(&b, "{ \n }", 5);
	CHECK(strcmp(buf_cstr(&b), "{ \n ") == 0);
	buf_free(&b);
}

/*
 * What the scans find goes into an answer as it is: text that is not a
 * JSON-RPC id (a valid string or an integer) is no id at all.
 */
static void
scan_id_not_ids(void)
{
	static const char *const bad[] = { "abc", "-", "nul", "null", "true",
	    "1.5", "1e3", "007", "-0x1", "\"a\001b\"", "\"a\xff\"",
	    "\"a\\q\"", NULL };
	static const char *const good[] = { "0", "-7", "42", "\"\"",
	    "\"a\\\"b\"", "\"\xc3\xa9\"", NULL };
	char line[64];
	const char *id;
	size_t n;
	int k, wrong = 0;

	for (k = 0; bad[k] != NULL; k++) {
		snprintf(line, sizeof(line), "{\"id\":%s,\"method\":\"x", bad[k]);
		wrong += rpc_scan_id(line, strlen(line), &id, &n) != -1;
		snprintf(line, sizeof(line), "x\"},\"id\":%s}", bad[k]);
		wrong += rpc_scan_id_tail(line, strlen(line), &id, &n) != -1;
	}
	for (k = 0; good[k] != NULL; k++) {
		snprintf(line, sizeof(line), "{\"id\":%s,\"method\":\"x", good[k]);
		wrong += rpc_scan_id(line, strlen(line), &id, &n) != 0 ||
		    n != strlen(good[k]);
		snprintf(line, sizeof(line), "x\"},\"id\":%s}", good[k]);
		wrong += rpc_scan_id_tail(line, strlen(line), &id, &n) != 0 ||
		    n != strlen(good[k]);
	}
	CHECK(wrong == 0);
}

static void
test_scan_id(void)
{
	const char *id;
	size_t n;

	CHECK(rpc_scan_id("{\"jsonrpc\":\"2.0\",\"id\":42,\"method\":\"x",
	    35, &id, &n) == 0 && n == 2 && memcmp(id, "42", 2) == 0);
	CHECK(rpc_scan_id(" { \"id\" : \"a\\\"b\", \"params\":{", 28, &id,
	    &n) == 0 && n == 6 && memcmp(id, "\"a\\\"b\"", 6) == 0);
	CHECK(rpc_scan_id("{\"params\":{\"id\":1},\"id\":2}", 26, &id, &n) ==
	    -1);
	CHECK(rpc_scan_id("{\"method\":\"x\",\"params\":", 23, &id, &n) ==
	    -1);
	CHECK(rpc_scan_id("[{\"id\":1}]", 10, &id, &n) == -1);
	CHECK(rpc_scan_id("{\"id\":", 6, &id, &n) == -1);
	CHECK(rpc_scan_id_tail("x\"}},\"jsonrpc\":\"2.0\",\"id\":42}", 29,
	    &id, &n) == 0 && n == 2 && memcmp(id, "42", 2) == 0);
	CHECK(rpc_scan_id_tail("xx\", \"id\" : \"a\\\"b\" } \r", 22, &id,
	    &n) == 0 && n == 6 && memcmp(id, "\"a\\\"b\"", 6) == 0);
	CHECK(rpc_scan_id_tail("{\"id\":-7}", 9, &id, &n) == 0 && n == 2);
	CHECK(rpc_scan_id_tail("x\":{\"id\":5}}", 12, &id, &n) == -1);
	CHECK(rpc_scan_id_tail("x\"hid\":5}", 9, &id, &n) == -1);
	CHECK(rpc_scan_id_tail("\"id\":5}", 7, &id, &n) == -1);
	CHECK(rpc_scan_id_tail("", 0, &id, &n) == -1);
	scan_id_not_ids();
}

/* rpc_splice_cuts: replacements and insertions, given in any order. */
static void
test_splice_cuts(void)
{
	const char *t = "{\"id\":7,\"result\":{}}";
	struct cut c[2] = { { { t + 18, 0 }, "\"k\":1", 5 },
	    { { t + 6, 1 }, "\"x\"", 3 } };
	struct buf b = { 0 };
	unsigned char r1[16], r2[16];

	rpc_splice_cuts(&b, t, strlen(t), c, 2);
	CHECK(b.len == 27 && memcmp(b.data, "{\"id\":\"x\",\"result\":"
	    "{\"k\":1}}", 27) == 0);
	b.len = 0;
	rpc_splice_cuts(&b, t, strlen(t), c, 0);
	CHECK(b.len == strlen(t) && memcmp(b.data, t, b.len) == 0);
	buf_free(&b);
	CHECK(wb_random(r1, sizeof(r1)) && wb_random(r2, sizeof(r2)) &&
	    memcmp(r1, r2, sizeof(r1)) != 0);
}

/*
 * A two-byte character, and a stray byte, at every offset of ASCII text
 * across the sixteen-byte blocks: found wherever it is.
 */
static void
utf8_at_every_offset(void)
{
	char t[48];
	size_t at;
	int bad = 0;

	for (at = 0; at + 2 <= sizeof(t); at++) {
		memset(t, 'a', sizeof(t));
		memcpy(t + at, "\xc3\xa9", 2);
		bad += !utf8_valid(t, sizeof(t));
		bad += utf8_valid(t, at + 1);	/* Cut inside the character. */
		t[at] = '\xff';
		bad += utf8_valid(t, sizeof(t));
	}
	CHECK(bad == 0);
}

static void
test_utf8(void)
{
	struct buf b = { 0 };

	CHECK(utf8_valid("plain ascii text, long enough", 29));
	CHECK(utf8_valid("\xc3\xa9\xe2\x9c\x93\xf0\x9f\x98\x80", 9));
	CHECK(!utf8_valid("abcdefgh\xff", 9));
	CHECK(!utf8_valid("\xc3", 1));
	CHECK(!utf8_valid("\xed\xa0\x80", 3));
	CHECK(!utf8_valid("\xc0\xaf", 2));
	utf8_at_every_offset();
	utf8_repair(&b, "a\xff" "b\xc3\xa9\xc3", 6);
	CHECK(b.len == 10 && memcmp(b.data, "a\xef\xbf\xbd" "b\xc3\xa9"
	    "\xef\xbf\xbd", 10) == 0);
	CHECK(utf8_valid(b.data, b.len));
	buf_free(&b);
}

static int
scan(const char *s, struct rpc_top *t)
{
	return rpc_scan(s, strlen(s), t);
}

static void
test_scan(void)
{
	static const char *const bad[] = { "{\"a\":1", "{\"a\":\"x\001\"}",
	    "{\"result\":{\"content\":[],},\"id\":1}", "{\"a\":[1 2]}",
	    "{\"a\":tru}", "{\"id\":1} x", "[1]", "{\"a\" 1}", "{,}",
	    "{\"a\":1,}", "{\"a\":[1,2}", "{\"a\":\"x}", "{\"a\":[[1]}",
	    "", NULL };
	struct rpc_top t;
	int i;

	CHECK(scan("{\"result\":{\"a\":[1,\"x\\\"]\"],\"b\":{}},"
	    "\"jsonrpc\":\"2.0\",\"id\":42}", &t) == 0);
	CHECK(t.result && !t.error && t.method == NULL);
	CHECK(t.id != NULL && t.idlen == 2 && memcmp(t.id, "42", 2) == 0);
	CHECK(scan(" { \"jsonrpc\" : \"2.0\" , \"id\" : \"a\\\"b\" , "
	    "\"error\" : { } } ", &t) == 0);
	CHECK(t.error && !t.result && t.idlen == 6);
	CHECK(scan("{\"method\":\"m\",\"params\":{\"x\":[true,null,-1.5e3]}}",
	    &t) == 0 && t.method != NULL && t.id == NULL);
	CHECK(scan("{}", &t) == 0 && t.id == NULL);
	for (i = 0; bad[i] != NULL; i++) {
		if (scan(bad[i], &t) == 0)
			fprintf(stderr, "scan accepted: %s\n", bad[i]);
		CHECK(scan(bad[i], &t) == -1);
	}
}

/* Line framing over a real pipe. */
static struct buf lines;
static struct buf drops;

static void
on_line(void *ctx, char *s, size_t n)
{
	(void)ctx;
	buf_put(&lines, s, n);
	buf_putc(&lines, '|');
}

static void
on_oversize(void *ctx, size_t n, const char *id)
{
	(void)ctx;
	buf_printf(&drops, "%zu:%s|", n, id != NULL ? id : "-");
}

static int hold;

static bool
on_busy(void *ctx)
{
	(void)ctx;
	return hold-- <= 0;
}

/* A busy reader holds lines in the buffer; peer_input hands them later. */
static void
test_held_lines(struct peer *p)
{
	static const struct peer_ops ops = { on_line, on_oversize, on_busy,
	    NULL, NULL };

	lines.len = 0;
	p->in.len = p->scanned = 0;
	buf_puts(&p->in, "l1\nl2\nl3\npart");
	hold = 1;
	peer_input(p, 100, &ops, NULL);
	CHECK(strcmp(buf_cstr(&lines), "l1|") == 0);
	hold = 100;
	peer_input(p, 100, &ops, NULL);
	CHECK(strcmp(buf_cstr(&lines), "l1|l2|l3|") == 0);
	CHECK(p->in.len == 4 && memcmp(p->in.data, "part", 4) == 0);
}

/* pump sees how much of the lines' output was there when it ran. */
static struct buf pumped;

static void
on_pump(void)
{
	buf_printf(&pumped, "%zu|", lines.len);
}

/* A long run of lines is pumped every PUMP_BYTES, not only at its end. */
static void
test_pump(void)
{
	static const struct peer_ops ops = { on_line, on_oversize, NULL, NULL,
	    on_pump };
	struct peer p = { 0 };
	char line[100];
	size_t i, nlines = 3 * PUMP_BYTES / sizeof(line) + 1, first;

	lines.len = pumped.len = 0;
	memset(line, 'x', sizeof(line) - 1);
	line[sizeof(line) - 1] = '\n';
	for (i = 0; i < nlines; i++)
		buf_put(&p.in, line, sizeof(line));
	peer_input(&p, 1000, &ops, NULL);
	CHECK(lines.len == nlines * sizeof(line));
	/* Three pumps, the first once PUMP_BYTES of lines were handled. */
	CHECK(sscanf(buf_cstr(&pumped), "%zu|", &first) == 1);
	CHECK(first >= PUMP_BYTES && first < PUMP_BYTES + sizeof(line));
	for (i = 0, first = 0; pumped.data[i] != '\0'; i++)
		first += pumped.data[i] == '|';
	CHECK(first == 3);
	peer_close(&p);
}

/* A handler that closes its own peer, then still reads its line. */
static struct peer *closing;

static void
on_line_close(void *ctx, char *s, size_t n)
{
	(void)ctx;
	if (n == 5 && memcmp(s, "close", 5) == 0)
		peer_close(closing);
	on_line(ctx, s, n);	/* The line is still there to read. */
}

/*
 * The close waits until the handler returns; no further line is handed
 * over, and then the peer's buffers are gone.
 */
static void
test_close_while_reading(void)
{
	static const struct peer_ops ops = { on_line_close, on_oversize, NULL,
	    NULL, NULL };
	struct peer p = { 0 };

	lines.len = 0;
	closing = &p;
	buf_puts(&p.in, "a\nclose\nb\nc");
	peer_input(&p, 100, &ops, NULL);
	CHECK(strcmp(buf_cstr(&lines), "a|close|") == 0);
	CHECK(p.in.data == NULL && p.in.len == 0 && p.out.data == NULL);
	CHECK(!p.reading && !p.closed && p.mode == PEER_LINES);
	/* Closed outside a handler: at once. */
	buf_puts(&p.in, "x");
	peer_close(&p);
	CHECK(p.in.data == NULL && !p.closed);
}

/*
 * An arena carves small allocations from shared blocks, gives a large one
 * a block of its own, and frees all at once.
 */
static void
test_arena(void)
{
	struct arena a = { 0 };
	char big[20000], *p, *q;
	int i;

	memset(big, 'x', sizeof(big));
	p = arena_strndup(&a, "name", 4);
	q = arena_strndup(&a, "other", 5);
	CHECK(strcmp(p, "name") == 0 && strcmp(q, "other") == 0);
	CHECK(a.n == 1 && q == p + 5);
	p = arena_strndup(&a, big, sizeof(big));
	CHECK(a.n == 2 && p[sizeof(big)] == '\0' && p[0] == 'x');
	CHECK(arena_alloc(&a, 1) == q + 6);	/* Carving goes on. */
	for (i = 0; i < 100; i++)
		arena_adopt(&a, xmalloc(10));
	CHECK(a.n == 102);
	arena_free(&a);
	CHECK(a.n == 0 && a.blocks == NULL && a.room == 0);
}

/* A handler that keeps the line "keep\r" (peer_give_line), and reads it. */
static struct peer *giving;
static struct buf given;

static void
on_line_give(void *ctx, char *s, size_t n)
{
	char *block;

	if (n != 4 || memcmp(s, "keep", 4) != 0) {
		on_line(ctx, s, n);
		return;
	}
	block = peer_give_line(giving, s, n);
	CHECK(block != NULL && peer_give_line(giving, s, n) == NULL);
	on_line(ctx, s, n);	/* Still there: the block holds it. */
	buf_put(&given, s, n);
	free(block);
}

/*
 * A line kept beyond its handler takes the input buffer with it; the
 * lines after it, and the part of one, go on from a fresh buffer.  A line
 * not in the input is not given.
 */
static void
test_give_line(void)
{
	static const struct peer_ops ops = { on_line_give, on_oversize, NULL,
	    NULL, NULL };
	struct peer p = { 0 };
	char elsewhere[] = "keep";

	lines.len = given.len = 0;
	giving = &p;
	buf_puts(&p.in, "a\nkeep\r\nb\nkeep\nc\npart");
	peer_input(&p, 100, &ops, NULL);
	CHECK(strcmp(buf_cstr(&lines), "a|keep|b|keep|c|") == 0);
	CHECK(strcmp(buf_cstr(&given), "keepkeep") == 0);
	CHECK(p.in.len == 4 && memcmp(p.in.data, "part", 4) == 0);
	CHECK(!p.gave && p.mode == PEER_LINES && p.scanned == 4);
	CHECK(peer_give_line(&p, p.in.data, 4) == NULL);	/* Not reading. */
	p.reading = true;
	CHECK(peer_give_line(&p, elsewhere, 4) == NULL);
	p.reading = false;
	peer_close(&p);
	buf_free(&given);
}

/* A stream that takes what it is given, or declines when told to. */
static struct buf streamed;
static bool decline;

static size_t
on_stream(void *ctx, char *s, size_t n, bool end)
{
	(void)ctx;
	if (decline)
		return PEER_NOSTREAM;
	buf_put(&streamed, s, n);
	if (end)
		buf_putc(&streamed, '$');
	return n;
}

/* The input modes: a long line streams, or is kept whole when declined. */
static void
test_modes(void)
{
	static const struct peer_ops ops = { on_line, on_oversize, NULL,
	    on_stream, NULL };
	size_t max = 2 * STREAM_MIN;
	struct peer p = { 0 };

	lines.len = streamed.len = 0;
	decline = false;
	buf_reserve(&p.in, STREAM_MIN + 10);
	memset(p.in.data, 'x', STREAM_MIN + 10);
	p.in.len = STREAM_MIN + 10;
	peer_input(&p, max, &ops, NULL);
	CHECK(p.mode == PEER_STREAM && p.in.len == 0);
	CHECK(streamed.len == STREAM_MIN + 10);
	buf_puts(&p.in, "tail\nnext\n");
	peer_input(&p, max, &ops, NULL);
	CHECK(p.mode == PEER_LINES && strcmp(buf_cstr(&lines), "next|") == 0);
	CHECK(streamed.len == STREAM_MIN + 15 &&
	    memcmp(streamed.data + STREAM_MIN + 10, "tail$", 5) == 0);
	/* Declined: kept whole, offered no more, handed over at its end. */
	decline = true;
	lines.len = 0;
	buf_reserve(&p.in, STREAM_MIN + 10);
	memset(p.in.data, 'y', STREAM_MIN + 10);
	p.in.len = STREAM_MIN + 10;
	peer_input(&p, max, &ops, NULL);
	CHECK(p.mode == PEER_WHOLE && p.in.len == STREAM_MIN + 10);
	buf_puts(&p.in, "\n");
	peer_input(&p, max, &ops, NULL);
	CHECK(p.mode == PEER_LINES && lines.len == STREAM_MIN + 11);
	peer_close(&p);
	buf_free(&streamed);
}

/*
 * guard_signal: a child that has no process group of its own yet (it has
 * not reached setsid) is signalled by its pid; a reaped one never is.
 */
static void
test_guard_signal(void)
{
	int status = 0;
	pid_t pid;

	if ((pid = fork()) == 0) {
		pause();
		_exit(0);
	}
	CHECK(pid > 0);
	if (pid <= 0)
		return;
	/* As if reaped: its pid may be another's, so it is left alone. */
	guard_signal(pid, true, SIGKILL);
	poll(NULL, 0, 50);
	CHECK(waitpid(pid, &status, WNOHANG) == 0);
	guard_signal(pid, false, SIGKILL);
	CHECK(waitpid(pid, &status, 0) == pid && WIFSIGNALED(status) &&
	    WTERMSIG(status) == SIGKILL);
}

/* Short texts stay in place, long ones go to the heap; both survive a move. */
static void
test_text(void)
{
	static const size_t lengths[] = { 0, 1, 30, 31, 32, 33, 99 };
	char long_text[100];
	struct text t = { 0 }, moved;
	size_t i, n;

	memset(long_text, 'a', sizeof(long_text));
	for (i = 0; i < sizeof(lengths) / sizeof(lengths[0]); i++) {
		n = lengths[i];
		text_set(&t, long_text, n);
		moved = t;
		memset(&t, 0x55, sizeof(t));	/* The old place is gone. */
		CHECK(moved.len == n);
		CHECK((moved.heap == NULL) == (n < sizeof(moved.small)));
		CHECK(memcmp(text_get(&moved), long_text, n) == 0);
		CHECK(text_get(&moved)[n] == '\0');
		text_free(&moved);
		CHECK(moved.len == 0 && text_get(&moved)[0] == '\0');
	}
}

static void
test_framing(void)
{
	static const struct peer_ops ops = { on_line, on_oversize, NULL, NULL,
	    NULL };
	struct peer p = { 0 };
	char big[300];
	int fd[2];

	if (pipe(fd) < 0)
		return;
	fcntl(fd[0], F_SETFL, O_NONBLOCK);
	p.rfd = fd[0];
	memset(big, 'x', sizeof(big));
	memcpy(big, "{\"id\":7,\"p\":\"", 13);
	CHECK(write(fd[1], "\xef\xbb\xbf" "a\r\n\nb\n", 9) == 9);
	CHECK(write(fd[1], big, sizeof(big)) == (ssize_t)sizeof(big));
	CHECK(write(fd[1], "\nc\nd", 4) == 4);
	while (peer_read(&p, 100, &ops, NULL) > 0)
		;
	CHECK(strcmp(buf_cstr(&lines), "a|b|c|") == 0);
	CHECK(strcmp(buf_cstr(&drops), "300:7|") == 0);
	/* An oversized line spread over many reads. */
	CHECK(write(fd[1], big, sizeof(big)) == (ssize_t)sizeof(big));
	while (peer_read(&p, 100, &ops, NULL) > 0)
		;
	CHECK(write(fd[1], big, 50) == 50);
	CHECK(write(fd[1], "\ne\n", 3) == 3);
	while (peer_read(&p, 100, &ops, NULL) > 0)
		;
	CHECK(strcmp(buf_cstr(&drops), "300:7|351:-|") == 0);
	CHECK(strcmp(buf_cstr(&lines), "a|b|c|e|") == 0);
	CHECK(p.in.len == 0);
	close(fd[1]);
	CHECK(peer_read(&p, 100, &ops, NULL) == 0 && p.eof);
	close(fd[0]);
	test_held_lines(&p);
	test_pump();
	test_close_while_reading();
	test_give_line();
	test_arena();
	test_modes();
	peer_close(&p);
	buf_free(&lines);
	buf_free(&drops);
	buf_free(&pumped);
}

static int
expand(const char *in, char **out)
{
	struct buf o = { 0 }, v = { 0 };
	int r = cfg_expand(in, &o, &v);

	*out = xstrdup(r == 0 ? buf_cstr(&o) : buf_cstr(&v));
	buf_free(&o);
	buf_free(&v);
	return r;
}

static void
test_expand(void)
{
	char *s;

	setenv("WB_T_SET", "val", 1);
	setenv("WB_T_EMPTY", "", 1);
	unsetenv("WB_T_UNSET");
	CHECK(expand("a${WB_T_SET}b", &s) == 0 && strcmp(s, "avalb") == 0);
	free(s);
	CHECK(expand("${WB_T_UNSET:-d ef}", &s) == 0 && strcmp(s, "d ef") ==
	    0);
	free(s);
	CHECK(expand("${WB_T_EMPTY:-dflt}", &s) == 0 && strcmp(s, "dflt") ==
	    0);
	free(s);
	CHECK(expand("${WB_T_SET:-dflt}", &s) == 0 && strcmp(s, "val") == 0);
	free(s);
	CHECK(expand("[${WB_T_EMPTY}]", &s) == 0 && strcmp(s, "[]") == 0);
	free(s);
	CHECK(expand("$$ $$${WB_T_SET} $x $", &s) == 0 &&
	    strcmp(s, "$ $val $x $") == 0);
	free(s);
	CHECK(expand("${WB_T_UNSET}", &s) == -1 && strcmp(s, "WB_T_UNSET") ==
	    0);
	free(s);
	CHECK(expand("x${WB_T_SET", &s) == -2);
	free(s);
	CHECK(expand("${1BAD}", &s) == -3);
	free(s);
}

/* Load a config from text; returns the error count, problems in *out. */
static int
load(const char *text, struct cfg *c, char **out)
{
	size_t n;
	FILE *f = open_memstream(out, &n);
	int r = cfg_parse(c, "test.json", text, strlen(text), f);

	fclose(f);
	return r;
}

static void
test_config_ok(void)
{
	struct cfg c;
	char *err;

	setenv("WB_T_SET", "secret-value", 1);
	CHECK(load("{\"toolMode\":\"dynamic\",\"initTimeoutMs\":500,"
	    "\"toolboxes\":{\"dev-1\":{\"description\":\"D ${X}\","
	    "\"mcpServers\":{\"fs_a\":{\"command\":\"x${WB_T_SET}\","
	    "\"args\":[\"-y\",\"${WB_T_UNSET:-d}\"],\"env\":{\"K\":\"v\","
	    "\"A\":\"w\"},"
	    "\"toolFilters\":[\"read_*\"],\"transport\":\"stdio\","
	    "\"inheritEnv\":true,\"cwd\":\"/tmp\"},\"b\":{\"command\":\"y\","
	    "\"initTimeoutMs\":9,\"toolFilters\":\"*\"}}}}}", &c, &err) == 0);
	CHECK(err[0] == '\0');
	CHECK(c.mode == MODE_DYNAMIC && c.nboxes == 1);
	CHECK(strcmp(c.boxes[0].description, "D ${X}") == 0);
	CHECK(c.boxes[0].nservers == 2);
	CHECK(strcmp(c.boxes[0].servers[0].argv[0], "xsecret-value") == 0);
	CHECK(strcmp(c.boxes[0].servers[0].argv[2], "d") == 0);
	CHECK(c.boxes[0].servers[0].argv[3] == NULL);
	CHECK(strcmp(c.boxes[0].servers[0].env[0], "K=v") == 0);
	CHECK(strcmp(c.boxes[0].servers[0].env[1], "A=w") == 0);
	CHECK(c.boxes[0].servers[0].env[2] == NULL);
	CHECK(c.boxes[0].servers[0].inherit_env);
	CHECK(c.boxes[0].servers[0].init_timeout_ms == 500);
	CHECK(c.boxes[0].servers[1].init_timeout_ms == 9);
	CHECK(c.boxes[0].servers[1].filters == NULL);
	CHECK(tool_filter_match(c.boxes[0].servers[0].filters, "read_file"));
	CHECK(!tool_filter_match(c.boxes[0].servers[0].filters, "write"));
	CHECK(c.max_message == WB_MAX_MESSAGE);
	CHECK(cfg_toolbox(&c, "dev-1") == &c.boxes[0]);
	CHECK(cfg_toolbox(&c, "nope") == NULL);
	cfg_free(&c);
	free(err);
}

/* Does loading text fail, with every one of the wanted phrases? */
static bool
fails_with(const char *text, const char *const *want)
{
	struct cfg c;
	char *err;
	bool ok;
	int i;

	ok = load(text, &c, &err) > 0;
	for (i = 0; want[i] != NULL; i++)
		if (strstr(err, want[i]) == NULL) {
			fprintf(stderr, "missing '%s' in: %s", want[i], err);
			ok = false;
		}
	if (strstr(err, "secret-value") != NULL)
		ok = false;
	cfg_free(&c);
	free(err);
	return ok;
}

static void
test_config_errors(void)
{
	setenv("WB_T_SET", "secret-value", 1);
	CHECK(fails_with("{\n  \"toolboxes\": {\n    \"a\": tru\n}}",
	    (const char *[]){ "test.json:3:", "JSON syntax error", NULL }));
	CHECK(fails_with("{\"toolboxes\":{\"a\":{", (const char *[]){
	    "test.json:1:", "unexpected end of file", NULL }));
	CHECK(fails_with("{\"toolboxes\":{\"prod\":{\"mcpServers\":{\"db\":{"
	    "\"command\":\"x\",\"env\":{\"API_KEY\":\"${WB_T_UNSET}\"}}}}}}",
	    (const char *[]){ "test.json: toolboxes.prod.mcpServers.db.env."
	    "API_KEY: environment variable WB_T_UNSET is not set",
	    "export WB_T_UNSET=value", NULL }));
	CHECK(fails_with("{\"toolboxes\":{\"p\":{\"mcpServers\":{\"db\":{"
	    "\"command\":\"${WB_T_SET}\",\"args\":[\"a\",\"${WB_T_UNSET}\"]}}}}}",
	    (const char *[]){ "toolboxes.p.mcpServers.db.args[1]: "
	    "environment variable WB_T_UNSET", NULL }));
	CHECK(fails_with("{\"toolboxes\":{\"p\":{\"mcpServers\":{\"db\":{"
	    "\"command\":\"x\",\"cwd\":\"${WB_T_SET\"}}}}}", (const char *[]){
	    "toolboxes.p.mcpServers.db.cwd: unclosed '${'", NULL }));
	CHECK(fails_with("{\"toolboxes\":{\"my__box\":{\"mcpServers\":{}}}}",
	    (const char *[]){ "invalid toolbox name 'my__box'",
	    "^[A-Za-z0-9-]+(_[A-Za-z0-9-]+)*$", NULL }));
	CHECK(fails_with("{\"toolboxes\":{\"b\":{\"mcpServers\":{\"_s\":{"
	    "\"command\":\"x\"}}}}}", (const char *[]){
	    "invalid server name '_s'", NULL }));
	CHECK(fails_with("{\"toolboxes\":{\"b\":{\"mcpServers\":{\"s\":{"
	    "\"command\":\"x\",\"transport\":\"sse\"}}}}}", (const char *[]){
	    "toolboxes.b.mcpServers.s.transport: unsupported transport",
	    NULL }));
	CHECK(fails_with("{\"toolboxes\":{\"b\":{\"mcpServers\":{\"s\":{"
	    "\"args\":[]}}}}}", (const char *[]){
	    "toolboxes.b.mcpServers.s: missing \"command\"", NULL }));
	CHECK(fails_with("{\"toolboxes\":{\"b\":{\"mcpServers\":{\"s\":{"
	    "\"command\":\"x\",\"args\":[1]}}}}}", (const char *[]){
	    "args[0]: expected a string", NULL }));
	CHECK(fails_with("{\"toolboxes\":{\"b\":{\"mcpServers\":{\"s\":{"
	    "\"command\":\"x\",\"initTimeoutMs\":-5}}}}}", (const char *[]){
	    "initTimeoutMs: expected a whole number", NULL }));
	CHECK(fails_with("{\"toolboxes\":{\"a\":{\"mcpServers\":{}},"
	    "\"a\":{\"mcpServers\":{}}}}", (const char *[]){
	    "toolboxes.a: duplicate key", NULL }));
	CHECK(fails_with("{\"toolboxes\":{\"a\":{\"mcpServers\":{}},"
	    "\"b\":{\"mcpServers\":{}},\"\\u0061\":{\"mcpServers\":{}}}}",
	    (const char *[]){ "toolboxes.a: duplicate key", NULL }));
	CHECK(fails_with("{\"toolboxes\":{\"b\":{\"mcpServers\":{\"s\":{"
	    "\"command\":\"x\",\"env\":{\"A\":\"1\",\"B\":\"2\","
	    "\"A\":\"3\"}}}}}}", (const char *[]){
	    "toolboxes.b.mcpServers.s.env.A: duplicate key", NULL }));
	CHECK(fails_with("{\"toolMode\":\"fast\",\"toolboxes\":{}}",
	    (const char *[]){ "toolMode: expected \"proxy\" or \"dynamic\"",
	    NULL }));
	CHECK(fails_with("{}", (const char *[]){ "missing \"toolboxes\"",
	    NULL }));
	CHECK(fails_with("[]", (const char *[]){ "top level must be a JSON "
	    "object", NULL }));
	/* Two problems, both reported. */
	CHECK(fails_with("{\"toolboxes\":{\"a b\":{\"mcpServers\":{\"s\":{}}}}}",
	    (const char *[]){ "invalid toolbox name 'a b'",
	    "missing \"command\"", NULL }));
}

static void
test_config_warnings(void)
{
	struct cfg c;
	char *err;

	CHECK(load("{\"toolboxes\":{\"a\":{\"mcpServers\":{\"s\":{"
	    "\"command\":\"x\",\"colour\":1}},\"extra\":2}},\"x\":3}", &c,
	    &err) == 0);
	CHECK(strstr(err, "warning: toolboxes.a.mcpServers.s.colour: "
	    "unknown key ignored") != NULL);
	CHECK(strstr(err, "warning: toolboxes.a.extra") != NULL);
	CHECK(strstr(err, "warning: x: unknown key") != NULL);
	cfg_free(&c);
	free(err);
}

/* promptFilters and resourceFilters: as toolFilters, each its own. */
static void
test_config_filters(void)
{
	struct cfg c;
	char *err;

	CHECK(load("{\"toolboxes\":{\"a\":{\"mcpServers\":{\"s\":{"
	    "\"command\":\"x\",\"promptFilters\":[\"gr*\"],"
	    "\"resourceFilters\":\"file:///srv/*\",\"toolFilters\":\"*\"},"
	    "\"t\":{\"command\":\"y\",\"resourceFilters\":[],"
	    "\"promptFilters\":\"*\"}}}}}", &c, &err) == 0);
	CHECK(c.boxes[0].servers[0].filters == NULL);
	CHECK(tool_filter_match(c.boxes[0].servers[0].prompt_filters, "greet"));
	CHECK(!tool_filter_match(c.boxes[0].servers[0].prompt_filters, "x"));
	CHECK(tool_filter_match(c.boxes[0].servers[0].resource_filters,
	    "file:///srv/a/b.txt"));
	CHECK(!tool_filter_match(c.boxes[0].servers[0].resource_filters,
	    "file:///etc/passwd"));
	CHECK(c.boxes[0].servers[1].prompt_filters == NULL);
	CHECK(!tool_filter_match(c.boxes[0].servers[1].resource_filters,
	    "file:///srv/a"));
	CHECK(strstr(err, "warning: toolboxes.a.mcpServers.t.resourceFilters: "
	    "empty resourceFilters keeps no resource") != NULL);
	cfg_free(&c);
	free(err);
}

static void
test_names(void)
{
	static const char *const good[] = { "dev", "a-b", "a_b", "a_b-c_d",
	    "-", "9", NULL };
	static const char *const bad[] = { "", "_a", "a_", "a__b", "a b",
	    "a.b", "é", NULL };
	int i;

	for (i = 0; good[i] != NULL; i++)
		CHECK(tool_valid_config_name(good[i]));
	for (i = 0; bad[i] != NULL; i++)
		CHECK(!tool_valid_config_name(bad[i]));
}

static bool
splits(const char *name, const char *b, const char *s, const char *t)
{
	char *x, *y, *z;
	bool ok;

	if (tool_split(name, &x, &y, &z) < 0)
		return b == NULL;
	ok = b != NULL && strcmp(x, b) == 0 && strcmp(y, s) == 0 &&
	    strcmp(z, t) == 0;
	free(x);
	free(y);
	free(z);
	return ok;
}

static void
test_tool_names(void)
{
	char *n;

	n = tool_join("dev", "filesystem", "read_file");
	CHECK(strcmp(n, "dev__filesystem__read_file") == 0);
	free(n);
	n = tool_join("test", "server", "my__special__tool");
	CHECK(strcmp(n, "test__server__my__special__tool") == 0);
	CHECK(splits(n, "test", "server", "my__special__tool"));
	free(n);
	CHECK(splits("dev__filesystem__read_file", "dev", "filesystem",
	    "read_file"));
	CHECK(splits("prod__memory__store_value_async", "prod", "memory",
	    "store_value_async"));
	CHECK(splits("dev__filesystem_read_file", NULL, NULL, NULL));
	CHECK(splits("dev_filesystem__read_file", NULL, NULL, NULL));
	CHECK(splits("__filesystem__read_file", NULL, NULL, NULL));
	CHECK(splits("dev____read_file", NULL, NULL, NULL));
	CHECK(splits("dev__filesystem__", NULL, NULL, NULL));
	CHECK(splits("invalid", NULL, NULL, NULL));
	CHECK(tool_listable("dev__fs__read_file") == 0);
	CHECK(tool_listable("a.b-c_d") == 0);
	CHECK(tool_listable("dev__fs__read file") == -1);
	CHECK(tool_listable("dev__fs__r\xc3\xa9") == -1);
	n = xmalloc(130);
	memset(n, 'a', 129);
	n[65] = '\0';
	CHECK(tool_listable(n) == 1);
	n[65] = 'a';
	n[128] = '\0';
	CHECK(tool_listable(n) == 1);
	n[128] = 'a';
	n[129] = '\0';
	CHECK(tool_listable(n) == -1);
	free(n);
}

/* era_check: which era a request's params._meta says, and its errors. */
static int
era_of(const char *params, int *code)
{
	struct era_error err = { 0 };
	struct era e = { 0 };
	struct json j = { 0 };
	int r;

	if (json_parse(&j, params, strlen(params)) != JSON_OK)
		return -100;
	r = era_check(&j, 0, &e, &err);
	*code = err.code;
	if (r == ERA_MODERN && e.level >= 0)
		*code = e.level;
	if (r == ERA_MODERN)
		*code += (int)e.can * 100;
	buf_free(&err.msg);
	buf_free(&err.data);
	buf_free(&e.caps);
	json_release(&j);
	free(j.tok);
	return r;
}

/* The stem of word, in a static buffer. */
static const char *
stem(const char *word)
{
	static char w[TERM_MAX + 1];
	size_t n = strlen(word);

	memcpy(w, word, n);
	w[term_stem(w, n)] = '\0';
	return w;
}

/* The terms of s, as term_put writes them. */
static const char *
terms(const char *s)
{
	static struct buf b;

	b.len = 0;
	term_put(&b, s, strlen(s));
	return buf_cstr(&b);
}

static void
test_terms(void)
{
	/* Forms that must meet: each row's words share the row's stem. */
	static const char *const forms[][6] = {
		{ "fil", "file", "files", "filed", NULL },
		{ "tool", "tool", "tools", NULL },
		{ "entity", "entity", "entities", NULL },
		{ "query", "query", "queries", "queried", "querying", NULL },
		{ "box", "box", "boxes", NULL },
		{ "match", "match", "matches", "matched", "matching", NULL },
		{ "address", "address", "addresses", NULL },
		{ "read", "read", "reads", "reading", NULL },
		{ "list", "list", "lists", "listed", "listing", "listings" },
		{ "run", "run", "runs", "running", NULL },
		{ "map", "map", "maps", "mapped", "mapping", NULL },
		{ "call", "call", "calls", "called", "calling", NULL },
		{ "creat", "create", "created", "creating", "creation",
		    "creations" },
		{ "relat", "relate", "related", "relation", "relations", NULL },
		{ "copy", "copy", "copies", "copied", "copying", NULL },
		{ "need", "need", "needs", "needed", NULL },
		{ "us", "use", "uses", "used", "using", NULL },
		{ "see", "see", "sees", "seeing", NULL },
		{ "tree", "tree", "trees", NULL },
		{ "add", "add", "adds", "added", "adding", NULL },
		{ "observat", "observation", "observations", NULL },
	};
	/* Words no rule may touch: too short, no vowel left, -ss -us -is. */
	static const char *const kept[] = {
		"string", "thing", "bring", "station", "status", "analysis",
		"class", "red", "gas", "bus", "ping", "4242", "v2", NULL
	};
	/* The manual's list, in the manual's order. */
	static const char *const stop[] = {
		"a", "about", "an", "and", "any", "are", "as", "at", "be",
		"but", "by", "can", "do", "does", "for", "from", "how", "i",
		"if", "in", "into", "is", "it", "its", "me", "my", "of", "on",
		"or", "our", "so", "some", "such", "than", "that", "the",
		"their", "them", "then", "there", "these", "they", "this",
		"those", "to", "us", "was", "we", "were", "what", "when",
		"where", "which", "while", "who", "will", "with", "would",
		"you", "your", NULL
	};
	char long_word[TERM_MAX + 20], expect[TERM_MAX + 1];
	int i, k;

	for (i = 0; i < (int)(sizeof(forms) / sizeof(forms[0])); i++)
		for (k = 1; k < 6 && forms[i][k] != NULL; k++) {
			if (strcmp(stem(forms[i][k]), forms[i][0]) != 0)
				fprintf(stderr, "stem(%s) = %s, not %s\n",
				    forms[i][k], stem(forms[i][k]),
				    forms[i][0]);
			CHECK(strcmp(stem(forms[i][k]), forms[i][0]) == 0);
		}
	for (i = 0; kept[i] != NULL; i++)
		CHECK(strcmp(stem(kept[i]), kept[i]) == 0);
	/* A UTF-8 word loses an ASCII suffix only, never part of a character. */
	CHECK(strcmp(stem("caf\xc3\xa9s"), "caf\xc3\xa9") == 0);
	CHECK(strcmp(stem("\xc3\xa9tudes"), "\xc3\xa9tud") == 0);
	for (i = 0; stop[i] != NULL; i++)
		CHECK(term_stop(stop[i], strlen(stop[i])));
	CHECK(!term_stop("file", 4) && !term_stop("", 0) &&
	    !term_stop("the ", 4) && !term_stop("thee", 4) &&
	    !term_stop("aa", 2) && !term_stop("zz", 2) &&
	    !term_stop("whichever", 9) && !term_stop("\xc3\xa0", 2));

	/* Words split at separators and case changes; stop words gone. */
	CHECK(strcmp(terms("createEntities"), "creat entity ") == 0);
	CHECK(strcmp(terms("read_multiple_files"), "read multipl fil ") == 0);
	CHECK(strcmp(terms("Remember an ENTITY, please!"),
	    "remember entity pleas ") == 0);
	CHECK(strcmp(terms("knowledge-graph.v2"), "knowledg graph v2 ") == 0);
	CHECK(strcmp(terms("The Of a, IN"), "") == 0);
	CHECK(strcmp(terms(""), "") == 0);
	CHECK(strcmp(terms("\"x\": [1]"), "x 1 ") == 0);
	/* A long word is cut at TERM_MAX bytes, then stemmed. */
	memset(long_word, 'a', sizeof(long_word) - 1);
	long_word[sizeof(long_word) - 1] = '\0';
	CHECK(strlen(terms(long_word)) == TERM_MAX + 1);
	memcpy(long_word + TERM_MAX - 5, "ation", 5);
	memcpy(expect, long_word, TERM_MAX - 5);
	strcpy(expect + TERM_MAX - 5, "at ");
	CHECK(strcmp(terms(long_word), expect) == 0);
}

/*
 * ratelog's steps, with what each wrote on stderr (a pipe meanwhile: the
 * checks, which write there too, come after).
 */
#define RL_STEPS	16

static void
test_ratelog(void)
{
	static const char *const said[RL_STEPS] = {
		[3] = "mcp-workbench: b/s: 15 more warnings like the above in "
		    "the last 10 s, not shown\n",
		[7] = "mcp-workbench: b/s: 2 more warnings like the above in "
		    "the last 10 s, not shown\n",
		[8] = "mcp-workbench: b/s: 1 more warning like the above in "
		    "the last 10 s, not shown\n",
		[10] = "mcp-workbench: b/s: 1 more warning like the above in "
		    "the last 1 s, not shown\n",
		[13] = "mcp-workbench: b/s: 6 more warnings like the above in "
		    "the last 12 s, not shown\n",
	};
	struct ratelog r = { 0 };
	char got[RL_STEPS][256];
	long long v[RL_STEPS];
	int fd[2], saved, i, k = 0;
	ssize_t n;

	if (pipe(fd) < 0 || (saved = dup(STDERR_FILENO)) < 0) {
		CHECK(!"pipe");
		return;
	}
	fcntl(fd[0], F_SETFL, O_NONBLOCK);
	dup2(fd[1], STDERR_FILENO);
#define STEP(x) do {							\
	v[k] = (x);							\
	wb_log_flush();							\
	n = read(fd[0], got[k], sizeof(got[k]) - 1);			\
	got[k++][n > 0 ? n : 0] = '\0';					\
} while (0)
	/* 0-3: a burst, five shown, the rest counted until the interval ends. */
	for (i = 0, v[0] = 0; i < 20; i++)
		v[0] += ratelog_allow(&r, 1000 + i, "b/s");
	STEP(v[0] * 100 + r.held);
	STEP(ratelog_deadline(&r));
	STEP((ratelog_flush(&r, 1000 + RATELOG_MS - 1, "b/s", false), 0));
	STEP((ratelog_flush(&r, 1000 + RATELOG_MS, "b/s", false),
	    ratelog_deadline(&r)));
	/* 4-8: while they go on, each interval shows its count alone. */
	STEP(ratelog_allow(&r, 12000, "b/s"));
	STEP(ratelog_deadline(&r));
	STEP(ratelog_allow(&r, 12000 + RATELOG_MS - 1, "b/s"));
	STEP(ratelog_allow(&r, 12000 + RATELOG_MS, "b/s"));
	STEP((ratelog_flush(&r, 32000, "b/s", false), 0));
	/* 9-11: after a whole interval without any, they are shown again. */
	STEP(ratelog_allow(&r, 32000 - 1, "b/s"));
	STEP((ratelog_flush(&r, 32000 - 1, "b/s", true), 0));
	STEP(ratelog_allow(&r, 32000 - 1 + RATELOG_MS, "b/s"));
	/* 12-13: a peer that goes: what was held back is told at once. */
	for (i = 0, v[12] = 0; i < 10; i++)
		v[12] += ratelog_allow(&r, 50000 + i, "b/s");
	STEP(v[12]);
	STEP((ratelog_flush(&r, 53500, "b/s", true), 0));
	/* 14-15: none held back: nothing to say, nothing to wake for. */
	STEP(ratelog_allow(&r, 70000, "b/s") * 100 + ratelog_deadline(&r));
	STEP((ratelog_flush(&r, 70000 + RATELOG_MS, "b/s", true), 0));
#undef STEP
	dup2(saved, STDERR_FILENO);
	close(saved);
	close(fd[0]);
	close(fd[1]);
	CHECK(k == RL_STEPS);
	CHECK(v[0] == RATELOG_BURST * 100 + 20 - RATELOG_BURST);
	CHECK(v[1] == 1000 + RATELOG_MS);
	CHECK(v[3] == 0);
	CHECK(v[4] == 0 && v[5] == 12000 + RATELOG_MS && v[6] == 0 &&
	    v[7] == 0);
	CHECK(v[9] == 0 && v[11] == 1);
	CHECK(v[12] == RATELOG_BURST - 1);
	CHECK(v[14] == 100);
	for (i = 0; i < RL_STEPS; i++) {
		if (strcmp(got[i], said[i] != NULL ? said[i] : "") != 0)
			fprintf(stderr, "ratelog step %d said: %s", i, got[i]);
		CHECK(strcmp(got[i], said[i] != NULL ? said[i] : "") == 0);
	}
}

static void
test_era(void)
{
	int code = 0;

	CHECK(era_of("{}", &code) == ERA_LEGACY);
	CHECK(era_of("{\"_meta\":{\"progressToken\":1}}", &code) ==
	    ERA_LEGACY);
	CHECK(era_of("{\"_meta\":[]}", &code) == ERA_LEGACY);
	CHECK(era_of("{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"
	    "\"2026-07-28\"}}", &code) == ERA_BAD && code == -32602);
	CHECK(era_of("{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"
	    "\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":[]}}",
	    &code) == ERA_BAD && code == -32602);
	CHECK(era_of("{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"
	    "\"2025-11-25\",\"io.modelcontextprotocol/clientCapabilities\":{}}}",
	    &code) == ERA_BAD && code == ERA_UNSUPPORTED);
	CHECK(era_of("{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"
	    "null,\"io.modelcontextprotocol/clientCapabilities\":{}}}",
	    &code) == ERA_BAD && code == -32602);
	CHECK(era_of("{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"
	    "\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{},"
	    "\"io.modelcontextprotocol/clientInfo\":\"x\"}}", &code) == ERA_BAD &&
	    code == -32602);
	CHECK(era_of("{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"
	    "\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{},"
	    "\"io.modelcontextprotocol/logLevel\":\"loud\"}}", &code) ==
	    ERA_BAD && code == -32602);
	CHECK(era_of("{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"
	    "\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":"
	    "{\"sampling\":{},\"elicitation\":{},\"x\":{}},"
	    "\"io.modelcontextprotocol/logLevel\":\"error\"}}", &code) ==
	    ERA_MODERN && code == (CAN_SAMPLE | CAN_ELICIT) * 100 + 4);
	CHECK(era_legacy_supported("2024-11-05"));
	CHECK(!era_legacy_supported("2026-07-28"));
}

int
main(void)
{
	test_parse();
	test_stream_check();
	test_walk_checked();
	test_shape();
	test_deep();
	test_lookup();
	test_unescape();
	test_emit();
	test_scan_id();
	test_splice_cuts();
	test_scan();
	test_utf8();
	test_text();
	test_guard_signal();
	test_framing();
	test_expand();
	test_config_ok();
	test_config_errors();
	test_config_warnings();
	test_config_filters();
	test_names();
	test_tool_names();
	test_terms();
	test_ratelog();
	test_era();
	test_share();
	printf("%d passed, %d failed\n", passed, failed);
	return failed > 0;
}
