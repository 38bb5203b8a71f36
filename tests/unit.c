/*
 * Unit tests for the JSON layer, line framing, configuration and names
 * (and, in unit-share.c, the shared workbench's transport).  Ends with
 * "N passed, N failed"; exits non-zero when anything failed.
 * "tests/unit config-keys" prints the configuration's table of keys
 * instead, for tests/e2e/docs.test.mjs to hold it to the manual.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../util.h"
#include "../json.h"
#include "../json_out.h"
#include "../jsonrpc.h"
#include "../peer.h"
#include "../proc.h"
#include "../config.h"
#include "../config_int.h"
#include "../era.h"
#include "../store.h"
#include "../terms.h"
#include "../http.h"

static int passed, failed;

#define CHECK(cond) check((cond), #cond, __FILE__, __LINE__)

void	 check(int, const char *, const char *, int);
void	 test_share(void);		/* unit-share.c */
void	 test_sessions(void);		/* unit-session.c */
void	 test_loop(void);		/* unit-loop.c */
void	 test_remote(void);		/* unit-remote.c */

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
 * The guardian.  Its pid: our child named wb-guardian (0 when none).
 */
static pid_t
guardian_pid(void)
{
	char path[300], st[512], *p;
	struct dirent *e;
	pid_t found = 0;
	DIR *dir;
	int fd, ppid;
	ssize_t n;

	if ((dir = opendir("/proc")) == NULL)
		return 0;
	while (found == 0 && (e = readdir(dir)) != NULL) {
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		if (e->d_name[0] < '1' || e->d_name[0] > '9' ||
		    (fd = open(path, O_RDONLY)) < 0)
			continue;
		n = read(fd, st, sizeof(st) - 1);
		close(fd);
		if (n <= 0)
			continue;
		st[n] = '\0';
		if ((p = strrchr(st, ')')) != NULL &&
		    sscanf(p + 1, " %*c %d", &ppid) == 1 && ppid == getpid() &&
		    strstr(st, "(wb-guardian)") != NULL && p[2] != 'Z')
			found = (pid_t)atol(e->d_name);
	}
	closedir(dir);
	return found;
}

/* The guardian, once it has named itself (just after its fork). */
static pid_t
guardian_named(void)
{
	pid_t g;
	int waited;

	for (waited = 0; (g = guardian_pid()) == 0 && waited < 5000;
	    waited += 10)
		poll(NULL, 0, 10);
	return g;
}

/* A child that waits for a signal: in a group of its own when lead. */
static pid_t
sleeper(bool lead)
{
	pid_t pid;

	if ((pid = fork()) == 0) {
		if (lead)
			setsid();
		for (;;)
			pause();
	}
	while (lead && pid > 0 && getpgid(pid) != pid)
		poll(NULL, 0, 1);	/* Until it leads its group. */
	return pid;
}

/* Did the child die of a signal within ms?  Reaped then. */
static bool
died_within(pid_t pid, int ms)
{
	int status, waited;

	for (waited = 0; waited < ms; waited += 10) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return WIFSIGNALED(status);
		poll(NULL, 0, 10);
	}
	return false;
}

static void
end_child(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/*
 * Once we are gone, the guardian ends the groups it knows, and never a
 * pid that leads no group (as one may, reused by another process).
 */
static void
test_guardian_groups(void)
{
	pid_t bare = sleeper(false), lead = sleeper(true), g;
	bool alive;

	CHECK(bare > 0 && lead > 0);
	if (bare <= 0 || lead <= 0)
		return;
	guard_add(bare);
	guard_add(lead);
	CHECK((g = guardian_named()) > 0);
	guard_end();
	if (!died_within(lead, 5000)) {
		CHECK(!"the group was ended");
		end_child(lead);
	}
	if (g > 0)
		CHECK(waitpid(g, NULL, 0) == g);
	/* Not reaped here unless it died: then it is not killed again. */
	alive = waitpid(bare, NULL, WNOHANG) == 0;
	CHECK(alive);
	if (alive)
		end_child(bare);
}

/*
 * A guardian that does not read: what it is to know waits, none of it
 * dropped, and is told once it reads again.  Filler groups are numbers
 * no process can have (above the largest pid_max).
 */
static void
test_guardian_queue(void)
{
	pid_t lead = sleeper(true), g;
	int i;

	CHECK(lead > 0);
	if (lead <= 0)
		return;
	guard_add(0x40000000);
	CHECK((g = guardian_named()) > 0);
	if (g <= 0) {
		guard_end();
		end_child(lead);
		return;
	}
	kill(g, SIGSTOP);
	for (i = 1; i < 20000 && guard_wants_out() < 0; i++)
		guard_add(0x40000000 + i);
	CHECK(guard_wants_out() >= 0);
	guard_add(lead);
	kill(g, SIGCONT);
	while (guard_wants_out() >= 0 &&
	    poll(&(struct pollfd){ guard_wants_out(), POLLOUT, 0 }, 1, 5000) > 0)
		guard_writable();
	CHECK(guard_wants_out() < 0);
	guard_end();
	if (!died_within(lead, 5000)) {
		CHECK(!"the group told late was ended");
		end_child(lead);
	}
	CHECK(waitpid(g, NULL, 0) == g);
}

/* term_escape: what a terminal is given of a server's text. */
static int
escaped_is(const char *in, size_t n, const char *want)
{
	struct buf b = { 0 };
	int ok;

	term_escape(&b, in, n);
	ok = b.len == strlen(want) && (b.len == 0 ||
	    memcmp(b.data, want, b.len) == 0);
	if (!ok)
		fprintf(stderr, "escaped: %.*s\n", (int)b.len, b.data);
	buf_free(&b);
	return ok;
}

#define ESCAPED(in, want)	escaped_is(in, sizeof(in) - 1, want)

static void
test_term_escape(void)
{
	CHECK(ESCAPED("plain text, tab\there", "plain text, tab\there"));
	CHECK(ESCAPED("\033]0;t\007\033[1mB\r\n", "\\x1b]0;t\\x07\\x1b[1mB"
	    "\\x0d\\x0a"));
	CHECK(ESCAPED("nul\000del\177", "nul\\x00del\\x7f"));
	/* C1 as UTF-8 and raw; U+00A0 and beyond pass. */
	CHECK(ESCAPED("\302\233\302\237\302\240\233", "\\xc2\\x9b\\xc2\\x9f"
	    "\302\240\\x9b"));
	CHECK(ESCAPED("\303\251\342\202\254\360\237\230\200",
	    "\303\251\342\202\254\360\237\230\200"));
	/* Not UTF-8: an overlong, a surrogate, a sequence cut short. */
	CHECK(ESCAPED("\300\257\355\240\200\342\202", "\\xc0\\xaf\\xed"
	    "\\xa0\\x80\\xe2\\x82"));
	CHECK(ESCAPED("", ""));
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

/*
 * fd_read_all: a regular file that says by its size that it is over the
 * limit is refused before a byte is read (a catalogue entry or a
 * configuration of gigabytes costs nothing); a pipe, which cannot say,
 * is read up to the limit and refused then.
 */
static void
test_read_all(void)
{
	char path[] = "/tmp/wb-unit-read-XXXXXX", *text;
	size_t len;
	int fd, p[2];

	CHECK((fd = mkstemp(path)) >= 0);
	if (fd < 0)
		return;
	unlink(path);
	CHECK(write(fd, "0123456789", 10) == 10);
	CHECK(lseek(fd, 0, SEEK_SET) == 0);
	errno = 0;
	CHECK(fd_read_all(fd, 9, &len) == NULL && errno == EFBIG);
	CHECK(lseek(fd, 0, SEEK_CUR) == 0);
	CHECK((text = fd_read_all(fd, 10, &len)) != NULL && len == 10 &&
	    strcmp(text, "0123456789") == 0);
	free(text);
	/* "The rest": from where the file stands. */
	CHECK(lseek(fd, 2, SEEK_SET) == 2);
	CHECK((text = fd_read_all(fd, 8, &len)) != NULL && len == 8);
	free(text);
	/* Over 4 GiB by its size, sparse: refused unread all the same. */
	if (ftruncate(fd, (off_t)5 << 30) == 0) {
		CHECK(lseek(fd, 0, SEEK_SET) == 0);
		CHECK(fd_read_all(fd, 1 << 20, &len) == NULL && errno == EFBIG);
		CHECK(lseek(fd, 0, SEEK_CUR) == 0);
	}
	close(fd);
	if (pipe(p) < 0)
		return;
	CHECK(write(p[1], "0123456789", 10) == 10);
	close(p[1]);
	CHECK(fd_read_all(p[0], 9, &len) == NULL && errno == EFBIG);
	close(p[0]);
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

/*
 * httpToken: an unset ${VAR} is a problem for --listen alone, unless the
 * file names "listen" itself; a token no client can send is refused.
 */
static void
test_config_http_token(void)
{
	static const char *const bad[] = { "                    ",
	    " 0123456789abcdef", "0123456789abcdef ", "0123456789\\r\\nabcdef",
	    "0123456789abcdef\\n", "01234567\\t89abcdef" };
	struct buf t = { 0 };
	struct cfg c;
	char *err;
	size_t i;

	unsetenv("WB_T_NOTOKEN");
	CHECK(load("{\"toolboxes\":{},\"httpToken\":\"${WB_T_NOTOKEN}\"}",
	    &c, &err) == 0);
	CHECK(err[0] == '\0' && c.http_token == NULL);
	CHECK(c.http_problems != NULL && strstr(c.http_problems,
	    "httpToken: environment variable WB_T_NOTOKEN is not set") != NULL);
	cfg_free(&c);
	free(err);
	CHECK(load("{\"toolboxes\":{},\"listen\":\"127.0.0.1:0\","
	    "\"httpToken\":\"${WB_T_NOTOKEN}\"}", &c, &err) == 1);
	CHECK(strstr(err, "WB_T_NOTOKEN is not set") != NULL);
	cfg_free(&c);
	free(err);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		t.len = 0;
		buf_printf(&t, "{\"toolboxes\":{},\"httpToken\":\"%s\"}",
		    bad[i]);
		CHECK(load(buf_cstr(&t), &c, &err) == 0);
		CHECK(c.http_token == NULL && c.http_problems != NULL &&
		    strstr(c.http_problems, "no client could send it") != NULL);
		cfg_free(&c);
		free(err);
	}
	CHECK(load("{\"toolboxes\":{},\"httpToken\":\"0123 4567 89ab cdef\"}",
	    &c, &err) == 0 && c.http_problems == NULL);
	cfg_free(&c);
	free(err);
	CHECK(load("{\"toolboxes\":{},\"allowedHosts\":[\"mcp.example.com\","
	    "\"b.example:8443\",\"[::1]:1\"]}", &c, &err) == 0 &&
	    c.http_problems == NULL);
	CHECK(strcmp(c.hosts[0], "mcp.example.com") == 0 && c.hosts[3] == NULL);
	cfg_free(&c);
	free(err);
	CHECK(load("{\"toolboxes\":{},\"allowedHosts\":[\"https://x\","
	    "\"a b\",\"\"]}", &c, &err) == 0 && c.http_problems != NULL);
	CHECK(strstr(c.http_problems, "allowedHosts[0]: 'https://x' is not a "
	    "host name") != NULL && strstr(c.http_problems,
	    "allowedHosts[2]") != NULL);
	cfg_free(&c);
	free(err);
	buf_free(&t);
}

/* The keys of serving HTTP: values, defaults, and what is refused. */
static void
test_config_http(void)
{
	struct cfg c;
	char *err1, *err2, *err3, *err4, *err5, *err6;

	CHECK(load("{\"toolboxes\":{}}", &c, &err1) == 0);
	CHECK(c.listen == NULL && c.http_token == NULL && c.origins == NULL);
	CHECK(c.max_conns == WB_HTTP_CONNS);
	CHECK(c.http_session_ms == WB_HTTP_SESSION_MS);
	cfg_free(&c);
	free(err1);
	setenv("WB_T_TOKEN", "0123456789abcdef0123", 1);
	CHECK(load("{\"toolboxes\":{},\"listen\":\"[::1]:8080\","
	    "\"httpToken\":\"${WB_T_TOKEN}\",\"allowedOrigins\":"
	    "[\"https://app.example.com\",\"http://h:1\","
	    "\"HTTPS://App.Example:443\",\"Http://UP.example:80\","
	    "\"http://h:8080\",\"https://h:80\"],"
	    "\"maxConnections\":3,\"httpSessionTimeoutMs\":0}", &c,
	    &err2) == 0);
	CHECK(err2[0] == '\0');
	CHECK(strcmp(c.listen, "[::1]:8080") == 0);
	CHECK(strcmp(c.http_token, "0123456789abcdef0123") == 0);
	CHECK(strcmp(c.origins[0], "https://app.example.com") == 0);
	CHECK(strcmp(c.origins[1], "http://h:1") == 0);
	/* Kept as browsers send them, the only form that can match. */
	CHECK(strcmp(c.origins[2], "https://app.example") == 0);
	CHECK(strcmp(c.origins[3], "http://up.example") == 0);
	CHECK(strcmp(c.origins[4], "http://h:8080") == 0);
	CHECK(strcmp(c.origins[5], "https://h:80") == 0 && c.origins[6] == NULL);
	CHECK(c.max_conns == 3 && c.http_session_ms == 0);
	cfg_free(&c);
	free(err2);
	/*
	 * What only --listen reads is checked when listening: the same file
	 * serves stdio sessions (cfg_http_usable says no for --listen).
	 */
	CHECK(load("{\"toolboxes\":{},\"httpToken\":\"short\"}", &c,
	    &err3) == 0);
	CHECK(c.http_problems != NULL && strstr(c.http_problems,
	    "httpToken is shorter than 16 bytes") != NULL);
	CHECK(c.http_token == NULL);
	cfg_free(&c);
	free(err3);
	CHECK(load("{\"toolboxes\":{},\"allowedOrigins\":[\"app.example\","
	    "\"https://a/b\",\"https://ok\"],\"maxConnections\":0,"
	    "\"httpSessionTimeoutMs\":-1,\"httpNope\":1}", &c, &err4) == 0);
	CHECK(strstr(c.http_problems, "allowedOrigins[0]: 'app.example' is "
	    "not an origin") != NULL);
	CHECK(strstr(c.http_problems, "allowedOrigins[1]") != NULL);
	CHECK(strstr(c.http_problems, "allowedOrigins[2]") == NULL);
	CHECK(strstr(c.http_problems, "maxConnections") != NULL);
	CHECK(strstr(c.http_problems, "httpSessionTimeoutMs") != NULL);
	CHECK(strstr(err4, "httpNope: unknown key ignored") != NULL);
	cfg_free(&c);
	free(err4);
	test_config_http_token();
	CHECK(load("{\"toolboxes\":{},\"listen\":\"0.0.0.0:80\"}", &c,
	    &err6) == 1);
	CHECK(strstr(err6, "listen: 0.0.0.0:80 is not a loopback address: set "
	    "\"httpToken\"") != NULL);
	cfg_free(&c);
	free(err6);
	CHECK(load("{\"toolboxes\":{},\"listen\":\"0.0.0.0:80\","
	    "\"httpToken\":\"0123456789abcdef\"}", &c, &err6) == 0);
	cfg_free(&c);
	free(err6);
	CHECK(load("{\"toolboxes\":{},\"listen\":\"example.com:80\"}", &c,
	    &err6) == 1);
	CHECK(strstr(err6, "listen: ") != NULL);
	cfg_free(&c);
	free(err6);
	CHECK(load("{\"toolboxes\":{},\"allowedOrigins\":\"x\"}", &c,
	    &err5) == 0 && c.http_problems != NULL);
	cfg_free(&c);
	free(err5);
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

/*
 * The table of keys is whole: each row says where it is, what it holds
 * and the manual's line; defaults within limits; one row per key and
 * object; a key a server may leave to the top level is an integer that
 * cannot be negative (-1 marks it left, config.c's defaults()).
 */
static void
test_config_table(void)
{
	const struct cfg_key *k, *o;
	int n;

	for (k = cfg_keys; k->name != NULL; k++) {
		CHECK(k->in != 0 && k->doc != NULL && k->doc[0] != '\0');
		CHECK(k->type != CFG_OTHER || k->set != NULL);
		CHECK((k->flags & CFG_REQUIRED) == 0 || k->what != NULL);
		if (k->type == CFG_INT || k->type == CFG_SIZE)
			CHECK(k->min <= k->dflt && k->dflt <= k->max);
		if (k->type == CFG_ENUM) {
			for (n = 0; k->names[n] != NULL; n++)
				;
			CHECK(k->dflt >= 0 && k->dflt < n);
		}
		if ((k->in & CFG_IN(CFG_TOP)) && (k->in & CFG_IN(CFG_SERVER)))
			CHECK(k->type == CFG_INT && k->min >= 0);
		for (o = cfg_keys; o < k; o++)
			if (strcmp(o->name, k->name) == 0 && (o->in & k->in))
				CHECK(!"a key with two rows in one object");
	}
}

/*
 * "tests/unit config-keys": the table, a key a line, its fields split
 * by tabs: name, objects, type, flags, min, max, default, enum values,
 * the manual's line ("-" where a field says nothing).
 */
static void
print_config_keys(void)
{
	static const char *const in[] = { "top", "toolbox", "server" };
	static const char *const types[] = { "bool", "integer", "integer",
	    "enum", "string", "string", "list", "other" };
	const struct cfg_key *k;
	int i;

	for (k = cfg_keys; k->name != NULL; k++) {
		printf("%s\t", k->name);
		for (i = 0; i < CFG_NIN; i++)
			if (k->in & CFG_IN(i))
				printf("%s%s", in[i],
				    (k->in >> (i + 1)) != 0 ? "," : "");
		printf("\t%s\t%s", types[k->type], k->flags == 0 ? "-" :
		    k->flags == CFG_REQUIRED ? "required" :
		    k->flags == CFG_LISTENING ? "listening" :
		    "required,listening");
		if (k->type == CFG_INT || k->type == CFG_SIZE)
			printf("\t%d\t%d\t%d\t-", k->min, k->max, k->dflt);
		else if (k->type == CFG_BOOL)
			printf("\t-\t-\t%s\t-", k->dflt ? "true" : "false");
		else if (k->type == CFG_ENUM) {
			printf("\t-\t-\t%s\t", k->names[k->dflt]);
			for (i = 0; k->names[i] != NULL; i++)
				printf("%s%s", i > 0 ? "," : "", k->names[i]);
		} else
			printf("\t-\t-\t-\t-");
		printf("\t%s\n", k->doc);
	}
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

/* What the thesaurus brings in for a term or a phrase (thesaurus.c). */
static void
test_thesaurus(void)
{
	struct buf same = { 0 }, near = { 0 };

	CHECK(term_related("pr ", 3, &same, &near));
	CHECK(strcmp(buf_cstr(&same), "pull request ") == 0);
	same.len = near.len = 0;
	/* "folder" means "directory"; both are the others' too. */
	CHECK(term_related("folder ", 7, &same, &near));
	CHECK(strstr(buf_cstr(&same), "directory ") != NULL &&
	    strstr(same.data, "folder ") == NULL);
	same.len = near.len = 0;
	/* A phrase in a row brings its group in; one word of it, nothing. */
	CHECK(term_related("keep mind ", 10, &same, &near));
	CHECK(strstr(buf_cstr(&near), "memory ") != NULL);
	same.len = near.len = 0;
	CHECK(!term_related("keep ", 5, &same, &near) && same.len == 0 &&
	    near.len == 0);
	/* A number stands for a number. */
	CHECK(term_related("42 ", 3, &same, &near));
	CHECK(strcmp(buf_cstr(&near), "number ") == 0 && same.len == 0);
	same.len = near.len = 0;
	CHECK(!term_related("zebra ", 6, &same, &near));
	/* The verbs of tools that only read, as terms. */
	CHECK(term_reads("get ", 4) && term_reads("list ", 5) &&
	    term_reads("describ ", 8));
	CHECK(!term_reads("creat ", 6) && !term_reads("ge ", 3) &&
	    !term_reads("", 0));
	buf_free(&same);
	buf_free(&near);
}

/* A term's marks: which words were plural; and what asks a question. */
static void
test_marks(void)
{
	static const char text[] = "list the issues and an issue's status, "
	    "the entities";
	struct buf t = { 0 }, m = { 0 };

	term_put_marked(&t, &m, text, sizeof(text) - 1);
	CHECK(strcmp(buf_cstr(&t), "list issu issu status entity ") == 0);
	CHECK(m.len == 5 && memcmp(m.data, "\0\1\0\0\1", 5) == 0);
	CHECK(term_question("what's in the repo") &&
	    term_question("Which PRs are open") &&
	    term_question("  is it done") && term_question("do you know") &&
	    term_question("show me the issues?") &&
	    term_question("show me the issues? "));
	CHECK(!term_question("show me the issues") &&
	    !term_question("do a search") && !term_question("whatever") &&
	    !term_question("island maps") && !term_question("") &&
	    !term_question("can you list them"));
	buf_free(&t);
	buf_free(&m);
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
		{ "review", "review", "reviewer", "reviewers", "reviewed",
		    NULL },
		{ "contain", "contain", "container", "containers", NULL },
		{ "regist", "register", "registered", NULL },
	};
	/*
	 * Words no rule may touch: too short, no vowel left, -ss -us -is,
	 * -er after a measure of 1.
	 */
	static const char *const kept[] = {
		"string", "thing", "bring", "station", "status", "analysis",
		"class", "red", "gas", "bus", "ping", "4242", "v2", "user",
		"number", "folder", "browser", "filter", "order", NULL
	};
	/* The manual's list, in the manual's order. */
	static const char *const stop[] = {
		"a", "about", "also", "am", "an", "and", "any", "are", "as",
		"at", "be", "been", "but", "by", "can", "could", "did", "do",
		"does", "for", "from", "had", "has", "have", "he", "her",
		"here", "him", "his", "how", "i", "if", "in", "into", "is",
		"it", "its", "just", "me", "my", "no", "nor", "not", "of",
		"on", "or", "our", "please", "she", "should", "so", "some",
		"such", "than", "that", "the", "their", "them", "then",
		"there", "these", "they", "this", "those", "to", "too", "us",
		"very", "was", "we", "were", "what", "when", "where", "which",
		"while", "who", "why", "will", "with", "would", "you", "your",
		NULL
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
	    "rememb entity ") == 0);
	/* "note" stems to "not", which is a stop word as itself only. */
	CHECK(strcmp(terms("not a note"), "not ") == 0);
	CHECK(strcmp(terms("knowledge-graph.v2"), "knowledg graph v2 ") == 0);
	CHECK(strcmp(terms("The Of a, IN"), "") == 0);
	CHECK(strcmp(terms(""), "") == 0);
	CHECK(strcmp(terms("\"xy\": [12]"), "xy 12 ") == 0);
	/* A letter or digit alone is what "it's" and "repo's" leave. */
	CHECK(strcmp(terms("it's the repo's x 7"), "repo ") == 0);
	/* A long word is cut at TERM_MAX bytes, then stemmed. */
	memset(long_word, 'a', sizeof(long_word) - 1);
	long_word[sizeof(long_word) - 1] = '\0';
	CHECK(strlen(terms(long_word)) == TERM_MAX + 1);
	memcpy(long_word + TERM_MAX - 5, "ation", 5);
	memcpy(expect, long_word, TERM_MAX - 5);
	strcpy(expect + TERM_MAX - 5, "at ");
	CHECK(strcmp(terms(long_word), expect) == 0);
	test_thesaurus();
	test_marks();
}

/*
 * ratelog's steps, with what each wrote on stderr (a pipe meanwhile: the
 * checks, which write there too, come after).
 */
#define RL_STEPS	16

/* What ratelog_flush at now says on stderr (caller frees), or NULL. */
static char *
log_of_flush(struct ratelog *r, long long now)
{
	char got[512];
	int fd[2], saved;
	ssize_t n;

	if (pipe(fd) < 0 || (saved = dup(STDERR_FILENO)) < 0)
		return NULL;
	fcntl(fd[0], F_SETFL, O_NONBLOCK);
	dup2(fd[1], STDERR_FILENO);
	ratelog_flush(r, now, "b/s", false);
	wb_log_flush();
	n = read(fd[0], got, sizeof(got) - 1);
	dup2(saved, STDERR_FILENO);
	close(saved);
	close(fd[0]);
	close(fd[1]);
	got[n > 0 ? n : 0] = '\0';
	return xstrdup(got);
}

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
	STEP((ratelog_flush(&r, 1000 + ratelog_warnings.ms - 1, "b/s", false), 0));
	STEP((ratelog_flush(&r, 1000 + ratelog_warnings.ms, "b/s", false),
	    ratelog_deadline(&r)));
	/* 4-8: while they go on, each interval shows its count alone. */
	STEP(ratelog_allow(&r, 12000, "b/s"));
	STEP(ratelog_deadline(&r));
	STEP(ratelog_allow(&r, 12000 + ratelog_warnings.ms - 1, "b/s"));
	STEP(ratelog_allow(&r, 12000 + ratelog_warnings.ms, "b/s"));
	STEP((ratelog_flush(&r, 32000, "b/s", false), 0));
	/* 9-11: after a whole interval without any, they are shown again. */
	STEP(ratelog_allow(&r, 32000 - 1, "b/s"));
	STEP((ratelog_flush(&r, 32000 - 1, "b/s", true), 0));
	STEP(ratelog_allow(&r, 32000 - 1 + ratelog_warnings.ms, "b/s"));
	/* 12-13: a peer that goes: what was held back is told at once. */
	for (i = 0, v[12] = 0; i < 10; i++)
		v[12] += ratelog_allow(&r, 50000 + i, "b/s");
	STEP(v[12]);
	STEP((ratelog_flush(&r, 53500, "b/s", true), 0));
	/* 14-15: none held back: nothing to say, nothing to wake for. */
	STEP(ratelog_allow(&r, 70000, "b/s") * 100 + ratelog_deadline(&r));
	STEP((ratelog_flush(&r, 70000 + ratelog_warnings.ms, "b/s", true), 0));
#undef STEP
	dup2(saved, STDERR_FILENO);
	close(saved);
	close(fd[0]);
	close(fd[1]);
	CHECK(k == RL_STEPS);
	CHECK(v[0] == ratelog_warnings.burst * 100 + 20 - ratelog_warnings.burst);
	CHECK(v[1] == 1000 + ratelog_warnings.ms);
	CHECK(v[3] == 0);
	CHECK(v[4] == 0 && v[5] == 12000 + ratelog_warnings.ms && v[6] == 0 &&
	    v[7] == 0);
	CHECK(v[9] == 0 && v[11] == 1);
	CHECK(v[12] == ratelog_warnings.burst - 1);
	CHECK(v[14] == 100);
	for (i = 0; i < RL_STEPS; i++) {
		if (strcmp(got[i], said[i] != NULL ? said[i] : "") != 0)
			fprintf(stderr, "ratelog step %d said: %s", i, got[i]);
		CHECK(strcmp(got[i], said[i] != NULL ? said[i] : "") == 0);
	}
}

/*
 * A server's stderr: its burst in every interval, even while a flood
 * goes on (not sticky), and the count of each interval in its words.
 */
static void
test_ratelog_stderr(void)
{
	struct ratelog r = { &ratelog_stderr, 0, 0, 0, 0, false };
	const long long ms = ratelog_stderr.ms;
	int i, shown;
	char *out;

	for (i = 0, shown = 0; i < 3 * ratelog_stderr.burst; i++)
		shown += ratelog_allow(&r, 1000, "b/s");
	CHECK(shown == ratelog_stderr.burst);
	CHECK(r.held == 2 * ratelog_stderr.burst);
	CHECK(ratelog_deadline(&r) == 1000 + ms);
	out = log_of_flush(&r, 1000 + ms);
	CHECK(out != NULL && strcmp(out, "mcp-workbench: b/s: 20000 more lines "
	    "of its standard error in the last 30 s, not shown\n") == 0);
	free(out);
	/* The flood goes on: the next interval shows its burst again. */
	for (i = 0, shown = 0; i < 2 * ratelog_stderr.burst; i++)
		shown += ratelog_allow(&r, 1000 + ms + 1, "b/s");
	CHECK(shown == ratelog_stderr.burst);
}

/* What the log's sink was last given (test_log_levels). */
static struct {
	int		 n;
	enum wb_level	 level;
	const void	*who;
	char		 line[256];
} sunk;

static bool
test_sink(enum wb_level level, const void *who, const char *line, size_t n)
{
	sunk.n++;
	sunk.level = level;
	sunk.who = who;
	snprintf(sunk.line, sizeof(sunk.line), "%.*s", (int)n, line);
	return true;
}

/*
 * Levels: a line past the level is neither formatted nor its arguments
 * evaluated; the sink's readers may ask for more than our own log; a
 * debug line says so, names whom it is for, and bounds a peer's text.
 */
static void
test_log_levels(void)
{
	static const char id[] = "\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	    "xxxxxxxxxxxxxxxxxx\"";
	int evaluated = 0, who;

	CHECK(wb_log_reach == WB_INFO);
	wb_log_sink(test_sink);
	wb_log_level(WB_WARN);
	wb_log_info("not said %d", ++evaluated);
	wb_log_debug("not said %d", ++evaluated);
	CHECK(sunk.n == 0 && evaluated == 0);
	wb_log_warn("said %d", ++evaluated);
	CHECK(sunk.n == 1 && evaluated == 1 && sunk.level == WB_WARN &&
	    sunk.who == NULL && strcmp(sunk.line, "mcp-workbench: said 1\n") ==
	    0);
	wb_log_error("said too");
	CHECK(sunk.n == 2 && sunk.level == WB_ERROR);
	wb_log_line(WB_INFO, "[b/s] a line", 12);
	CHECK(sunk.n == 2);
	/* A shared workbench's session at debug: made for the sink. */
	wb_log_reaches(WB_DEBUG);
	CHECK(wb_log_reach == WB_DEBUG && wb_log_level_get() == WB_WARN);
	wb_log_debug_for(&who, "session 3 -> b/s: tools/call id "
	    LOG_PEER_FMT " (as 12)", LOG_PEER(id, strlen(id)));
	CHECK(sunk.n == 3 && sunk.level == WB_DEBUG && sunk.who == &who);
	CHECK(strcmp(sunk.line, "mcp-workbench: debug: session 3 -> b/s: "
	    "tools/call id \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx... "
	    "(as 12)\n") == 0);
	/* Not taken by the sink, and past our own level: nowhere. */
	wb_log_sink(NULL);
	wb_log_info("dropped");
	wb_log_debug("dropped");
	CHECK(!wb_log_waiting());
	wb_log_reaches(WB_ERROR);
	wb_log_level(WB_INFO);
	CHECK(wb_log_reach == WB_INFO);
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
	    "\"2026-07-28\"}}", &code) == ERA_BAD &&
	    code == RPC_INVALID_PARAMS);
	CHECK(era_of("{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"
	    "\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":[]}}",
	    &code) == ERA_BAD && code == RPC_INVALID_PARAMS);
	CHECK(era_of("{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"
	    "\"2025-11-25\",\"io.modelcontextprotocol/clientCapabilities\":{}}}",
	    &code) == ERA_BAD && code == RPC_UNSUPPORTED_VERSION);
	CHECK(era_of("{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"
	    "null,\"io.modelcontextprotocol/clientCapabilities\":{}}}",
	    &code) == ERA_BAD && code == RPC_INVALID_PARAMS);
	CHECK(era_of("{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"
	    "\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{},"
	    "\"io.modelcontextprotocol/clientInfo\":\"x\"}}", &code) == ERA_BAD &&
	    code == RPC_INVALID_PARAMS);
	CHECK(era_of("{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"
	    "\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{},"
	    "\"io.modelcontextprotocol/logLevel\":\"loud\"}}", &code) ==
	    ERA_BAD && code == RPC_INVALID_PARAMS);
	CHECK(era_of("{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":"
	    "\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":"
	    "{\"sampling\":{},\"elicitation\":{},\"x\":{}},"
	    "\"io.modelcontextprotocol/logLevel\":\"error\"}}", &code) ==
	    ERA_MODERN && code == (CAN_SAMPLE | CAN_ELICIT) * 100 + 4);
	CHECK(era_legacy_supported("2024-11-05"));
	CHECK(!era_legacy_supported("2026-07-28"));
}

/*
 * SipHash-2-4 with its 128-bit tag against the reference vectors
 * (vectors_sip128 of the reference implementation's vectors.h: key
 * 00..0f, message 00..len-1, len 0 to 63), whole and fed in pieces.
 */
static void
test_siphash(void)
{
	static const char *const tags[64] = {
		"a3817f04ba25a8e66df67214c7550293", "da87c1d86b99af44347659119b22fc45",
		"8177228da4a45dc7fca38bdef60affe4", "9c70b60c5267a94e5f33b6b02985ed51",
		"f88164c12d9c8faf7d0f6e7c7bcd5579", "1368875980776f8854527a07690e9627",
		"14eeca338b208613485ea0308fd7a15e", "a1f1ebbed8dbc153c0b84aa61ff08239",
		"3b62a9ba6258f5610f83e264f31497b4", "264499060ad9baabc47f8b02bb6d71ed",
		"00110dc378146956c95447d3f3d0fbba", "0151c568386b6677a2b4dc6f81e5dc18",
		"d626b266905ef35882634df68532c125", "9869e247e9c08b10d029934fc4b952f7",
		"31fcefac66d7de9c7ec7485fe4494902", "5493e99933b0a8117e08ec0f97cfc3d9",
		"6ee2a4ca67b054bbfd3315bf85230577", "473d06e8738db89854c066c47ae47740",
		"a426e5e423bf4885294da481feaef723", "78017731cf65fab074d5208952512eb1",
		"9e25fc833f2290733e9344a5e83839eb", "568e495abe525a218a2214cd3e071d12",
		"4a29b54552d16b9a469c10528eff0aae", "c9d184ddd5a9f5e0cf8ce29a9abf691c",
		"2db479ae78bd50d8882a8a178a6132ad", "8ece5f042d5e447b5051b9eacb8d8f6f",
		"9c0b53b4b3c307e87eaee08678141f66", "abf248af69a6eae4bfd3eb2f129eeb94",
		"0664da1668574b88b935f3027358aef4", "aa4b9dc4bf337de90cd4fd3c467c6ab7",
		"ea5c7f471faf6bde2b1ad7d4686d2287", "2939b0183223fafc1723de4f52c43d35",
		"7c3956ca5eeafc3e363e9d556546eb68", "77c6077146f01c32b6b69d5f4ea9ffcf",
		"37a6986cb8847edf0925f0f1309b54de", "a705f0e69da9a8f907241a2e923c8cc8",
		"3dc47d1f29c448461e9e76ed904f6711", "0d62bf01e6fc0e1a0d3c4751c5d3692b",
		"8c03468bca7c669ee4fd5e084bbee7b5", "528a5bb93baf2c9c4473cce5d0d22bd9",
		"df6a301e95c95dad97ae0cc8c6913bd8", "801189902c857f39e73591285e70b6db",
		"e617346ac9c231bb3650ae34ccca0c5b", "27d93437efb721aa401821dcec5adf89",
		"89237d9ded9c5e78d8b1c9b166cc7342", "4a6d8091bf5e7d651189fa94a250b14c",
		"0e33f96055e7ae893ffc0e3dcf492902", "e61c432b720b19d18ec8d84bdc63151b",
		"f7e5aef549f782cf379055a608269b16", "438d030fd0b7a54fa837f2ad201a6403",
		"a590d3ee4fbf04e3247e0d27f286423f", "5fe2c1a172fe93c4b15cd37caef9f538",
		"2c97325cbd06b36eb2133dd08b3a017c", "92c814227a6bca949ff0659f002ad39e",
		"dce850110bd8328cfbd50841d6911d87", "67f14984c7da791248e32bb5922583da",
		"1938f2cf72d54ee97e94166fa91d2a36", "74481e9646ed49fe0f6224301604698e",
		"57fca5de98a9d6d8006438d0583d8a1d", "9fecde1cefdc1cbed4763674d9575359",
		"e3040c00eb28f15366ca73cbd872e740", "7697009a6a831dfecca91c5993670f7a",
		"5853542321f567a005d547a4f04759bd", "5150d1772f50834a503e069a973fbd7c",
	};
	unsigned char key[SIP_KEY], msg[64], tag[SIP_TAG];
	char hex[2 * SIP_TAG + 1];
	struct siphash h;
	size_t len, i, step;

	for (i = 0; i < sizeof(key); i++)
		key[i] = (unsigned char)i;
	for (i = 0; i < sizeof(msg); i++)
		msg[i] = (unsigned char)i;
	for (len = 0; len < 64; len++) {
		for (step = 1; step <= 9; step += 8) {
			sip_init(&h, key);
			for (i = 0; i < len; i += step)
				sip_update(&h, msg + i, len - i < step ?
				    len - i : step);
			sip_final(&h, tag);
			for (i = 0; i < SIP_TAG; i++)
				snprintf(hex + 2 * i, 3, "%02x", tag[i]);
			CHECK(strcmp(hex, tags[len]) == 0);
		}
	}
}

/*
 * The digest of the first server of a configuration whose toolboxes
 * member is boxes, under key; false when it does not load.
 */
static bool
digest_of(const char *boxes, const unsigned char *key, unsigned char *tag)
{
	struct buf text = { 0 };
	struct cfg c;
	char *err;
	bool ok;

	buf_printf(&text, "{\"toolboxes\":%s}", boxes);
	ok = load(buf_cstr(&text), &c, &err) == 0 && c.nboxes > 0 &&
	    c.boxes[0].nservers > 0;
	if (ok)
		cfg_server_digest(&c.boxes[0].servers[0], key, tag);
	cfg_free(&c);
	free(err);
	buf_free(&text);
	return ok;
}

/*
 * A server's identity is its parsed, expanded configuration: the same
 * however the file is laid out, named or timed; another for any value
 * it runs with; another under another key.
 */
static void
test_server_digest(void)
{
	static const char base[] = "{\"b\":{\"mcpServers\":{\"s\":{"
	    "\"command\":\"/bin/srv\",\"args\":[\"-a\",\"--token=t0k\"],"
	    "\"env\":{\"A\":\"1\",\"B\":\"2\"},\"cwd\":\"/tmp\"}}}}";
	static const char *const same[] = {
		"{ \"other\" : {\n\t\"description\": \"d\", \"mcpServers\": {"
		"\"renamed\": {\n  \"initTimeoutMs\": 5,\n  \"cwd\": \"/tmp\","
		"\n  \"env\": { \"B\": \"2\", \"A\": \"${WB_T_ONE}\" },\n  "
		"\"args\": [ \"-a\" , \"--token=t0k\" ],\n  \"command\": "
		"\"/bin/${WB_T_SRV}\", \"transport\": \"stdio\",\n  "
		"\"toolFilters\": \"*\"}}}}",
		NULL
	};
	static const char *const other[] = {
		"{\"b\":{\"mcpServers\":{\"s\":{\"command\":\"/bin/srv2\","
		"\"args\":[\"-a\",\"--token=t0k\"],\"env\":{\"A\":\"1\","
		"\"B\":\"2\"},\"cwd\":\"/tmp\"}}}}",
		"{\"b\":{\"mcpServers\":{\"s\":{\"command\":\"/bin/srv\","
		"\"args\":[\"-a\",\"--token=t0K\"],\"env\":{\"A\":\"1\","
		"\"B\":\"2\"},\"cwd\":\"/tmp\"}}}}",
		"{\"b\":{\"mcpServers\":{\"s\":{\"command\":\"/bin/srv\","
		"\"args\":[\"--token=t0k\",\"-a\"],\"env\":{\"A\":\"1\","
		"\"B\":\"2\"},\"cwd\":\"/tmp\"}}}}",
		"{\"b\":{\"mcpServers\":{\"s\":{\"command\":\"/bin/srv\","
		"\"args\":[\"-a\",\"--token=t0k\"],\"env\":{\"A\":\"1\","
		"\"B\":\"3\"},\"cwd\":\"/tmp\"}}}}",
		"{\"b\":{\"mcpServers\":{\"s\":{\"command\":\"/bin/srv\","
		"\"args\":[\"-a\",\"--token=t0k\"],\"env\":{\"A\":\"1\","
		"\"B\":\"2\",\"C\":\"\"},\"cwd\":\"/tmp\"}}}}",
		"{\"b\":{\"mcpServers\":{\"s\":{\"command\":\"/bin/srv\","
		"\"args\":[\"-a\",\"--token=t0k\"],\"env\":{\"A\":\"1\","
		"\"B\":\"2\"},\"cwd\":\"/var\"}}}}",
		"{\"b\":{\"mcpServers\":{\"s\":{\"command\":\"/bin/srv\","
		"\"args\":[\"-a\",\"--token=t0k\"],\"env\":{\"A\":\"1\","
		"\"B\":\"2\"}}}}}",
		"{\"b\":{\"mcpServers\":{\"s\":{\"command\":\"/bin/srv\","
		"\"args\":[\"-a\",\"--token=t0k\"],\"env\":{\"A\":\"1\","
		"\"B\":\"2\"},\"cwd\":\"/tmp\",\"inheritEnv\":true}}}}",
		"{\"b\":{\"mcpServers\":{\"s\":{\"command\":\"/bin/srv\","
		"\"args\":[\"-a\",\"--token=t0k\"],\"env\":{\"A\":\"1\","
		"\"B\":\"2\"},\"cwd\":\"/tmp\",\"protocol\":\"legacy\"}}}}",
		"{\"b\":{\"mcpServers\":{\"s\":{\"command\":\"/bin/srv\","
		"\"args\":[\"-a\",\"--token=t0k\"],\"env\":{\"A\":\"1\","
		"\"B\":\"2\"},\"cwd\":\"/tmp\",\"toolFilters\":[\"a*\"]}}}}",
		"{\"b\":{\"mcpServers\":{\"s\":{\"command\":\"/bin/srv\","
		"\"args\":[\"-a\",\"--token=t0k\"],\"env\":{\"A\":\"1\","
		"\"B\":\"2\"},\"cwd\":\"/tmp\",\"toolFilters\":[]}}}}",
		"{\"b\":{\"mcpServers\":{\"s\":{\"command\":\"/bin/srv\","
		"\"args\":[\"-a\",\"--token=t0k\"],\"env\":{\"A\":\"1\","
		"\"B\":\"2\"},\"cwd\":\"/tmp\",\"promptFilters\":\"p\"}}}}",
		"{\"b\":{\"mcpServers\":{\"s\":{\"command\":\"/bin/srv\","
		"\"args\":[\"-a\",\"--token=t0k\"],\"env\":{\"A\":\"1\","
		"\"B\":\"2\"},\"cwd\":\"/tmp\",\"resourceFilters\":\"r\"}}}}",
		/* A value that moves from one field to the next. */
		"{\"b\":{\"mcpServers\":{\"s\":{\"command\":\"/bin/srv\","
		"\"args\":[\"-a--token=t0k\"],\"env\":{\"A\":\"1\","
		"\"B\":\"2\"},\"cwd\":\"/tmp\"}}}}",
		NULL
	};
	unsigned char key[SIP_KEY] = { 1 }, key2[SIP_KEY] = { 2 };
	unsigned char a[SIP_TAG], b[SIP_TAG];
	int i;

	setenv("WB_T_ONE", "1", 1);
	setenv("WB_T_SRV", "srv", 1);
	CHECK(digest_of(base, key, a));
	for (i = 0; same[i] != NULL; i++)
		CHECK(digest_of(same[i], key, b) && memcmp(a, b, SIP_TAG) == 0);
	for (i = 0; other[i] != NULL; i++)
		CHECK(digest_of(other[i], key, b) && memcmp(a, b, SIP_TAG) != 0);
	CHECK(digest_of(base, key2, b) && memcmp(a, b, SIP_TAG) != 0);
	/* No env is an empty one. */
	CHECK(digest_of("{\"b\":{\"mcpServers\":{\"s\":{\"command\":\"x\"}}}}",
	    key, a));
	CHECK(digest_of("{\"b\":{\"mcpServers\":{\"s\":{\"command\":\"x\","
	    "\"env\":{}}}}}", key, b) && memcmp(a, b, SIP_TAG) == 0);
}

/* The key of the capabilities a client declared, as servers are told. */
static char *
caps_key(const char *caps)
{
	struct json j = { 0 };
	struct buf members = { 0 }, k = { 0 };

	if (parse(&j, caps) == JSON_OK) {
		(void)era_caps(&j, 0, &members);
		era_caps_key(&members, &k);
	}
	free(j.tok);
	buf_free(&members);
	return buf_cstr(&k);
}

/*
 * What of the capabilities can change what a server offers: which of
 * roots, sampling and elicitation, and the sub-capabilities of the last
 * two, however written.
 */
static void
test_caps_key(void)
{
	static const char *const pairs[][2] = {
		{ "{}", "{\"experimental\":{},\"tasks\":{}}" },
		{ "{\"roots\":{}}", "{\"roots\":{\"listChanged\":true}}" },
		{ "{\"elicitation\":{\"form\":{},\"url\":{}},\"sampling\":{}}",
		    "{ \"sampling\" : { } , \"elicitation\" : { \"url\" : {\n"
		    "}, \"form\":{\"applyDefaults\":true} } }" },
	};
	static const char *const differ[] = {
		"{}", "{\"roots\":{}}", "{\"sampling\":{}}",
		"{\"elicitation\":{}}", "{\"elicitation\":{\"form\":{}}}",
		"{\"elicitation\":{\"url\":{}}}",
		"{\"sampling\":{\"tools\":{}}}",
		"{\"roots\":{},\"sampling\":{},\"elicitation\":{}}", NULL
	};
	char *x, *y;
	size_t i, k;

	for (i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		x = caps_key(pairs[i][0]);
		y = caps_key(pairs[i][1]);
		CHECK(strcmp(x, y) == 0);
		free(x);
		free(y);
	}
	for (i = 0; differ[i] != NULL; i++)
		for (k = i + 1; differ[k] != NULL; k++) {
			x = caps_key(differ[i]);
			y = caps_key(differ[k]);
			CHECK(strcmp(x, y) != 0);
			free(x);
			free(y);
		}
}

/* A fill for store_replace: the text arg. */
static int
fill_text(int fd, const void *arg)
{
	return fd_write_all(fd, arg, strlen(arg));
}

static void
count_name(int d, const char *name, void *arg)
{
	(void)d;
	(void)name;
	++*(int *)arg;
}

/*
 * Files of our own: the directory made 0700 and refused when it is a
 * link, another user's or writable by others; a file refused when it is
 * a link, a FIFO (at once), another user's or has a forbidden mode bit;
 * an exclusive creation, a replacement that leaves no temporary file.
 */
static void
test_store(void)
{
	char top[] = "/tmp/wb-unit-XXXXXX", path[64], other[128];
	struct buf why = { 0 };
	struct stat st;
	const char *w;
	size_t len;
	char *text;
	int d, d2, names = 0;

	CHECK(mkdtemp(top) != NULL);
	snprintf(path, sizeof(path), "%s/a/b", top);
	CHECK((d = store_dir(path, &why)) >= 0);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0700);
	snprintf(other, sizeof(other), "%s/a", top);
	CHECK(stat(other, &st) == 0 && (st.st_mode & 0777) == 0700);
	CHECK(store_writable(d));
	CHECK(store_create(d, "key", "0123", 4) == 0);
	CHECK(store_create(d, "key", "4567", 4) < 0 && errno == EEXIST);
	CHECK((text = store_read(d, "key", 16, 077, &len, &w)) != NULL &&
	    len == 4 && memcmp(text, "0123", 4) == 0);
	free(text);
	CHECK(store_read(d, "key", 3, 077, &len, &w) == NULL &&
	    strcmp(w, "too large") == 0);
	CHECK(store_read(d, "none", 16, 077, &len, &w) == NULL && w == NULL);
	CHECK(store_replace(d, "e.json", fill_text, "{}\n") == 0);
	CHECK(store_replace(d, "e.json", fill_text, "[]\n") == 0);
	CHECK((text = store_read(d, "e.json", 16, 022, &len, &w)) != NULL &&
	    strcmp(text, "[]\n") == 0);
	free(text);
	CHECK(store_names(d, count_name, &names) && names == 2);
	snprintf(other, sizeof(other), "%s/e.json", path);
	CHECK(chmod(other, 0644) == 0);
	CHECK((text = store_read(d, "e.json", 16, 022, &len, &w)) != NULL);
	free(text);
	CHECK(store_read(d, "e.json", 16, 077, &len, &w) == NULL &&
	    strstr(w, "open to group or others") != NULL);
	snprintf(other, sizeof(other), "%s/fifo", path);
	CHECK(mkfifo(other, 0600) == 0);
	CHECK(store_read(d, "fifo", 16, 022, &len, &w) == NULL &&
	    strcmp(w, "not a regular file") == 0);
	snprintf(other, sizeof(other), "%s/link", path);
	CHECK(symlink("e.json", other) == 0);
	CHECK(store_read(d, "link", 16, 022, &len, &w) == NULL &&
	    strcmp(w, "a symbolic link") == 0);
	CHECK(store_remove(d, "link") == 1 && store_remove(d, "link") == 0);
	if (geteuid() == 0) {
		snprintf(other, sizeof(other), "%s/e.json", path);
		CHECK(chown(other, 65534, 65534) == 0);
		CHECK(store_read(d, "e.json", 16, 022, &len, &w) == NULL &&
		    strstr(w, "owned by uid 65534") != NULL);
	}
	close(d);
	/* The directory itself: a link to it, then writable by others. */
	snprintf(other, sizeof(other), "%s/link", top);
	CHECK(symlink(path, other) == 0);
	why.len = 0;
	CHECK(store_dir(other, &why) < 0 &&
	    strstr(buf_cstr(&why), "symbolic link") != NULL);
	CHECK(chmod(path, 0777) == 0);
	why.len = 0;
	CHECK(store_dir(path, &why) < 0 &&
	    strstr(buf_cstr(&why), "writable by group or others") != NULL);
	CHECK(chmod(path, 0755) == 0);
	CHECK((d2 = store_dir(path, &why)) >= 0);
	if (d2 >= 0)
		close(d2);
	if (geteuid() == 0) {
		CHECK(chown(path, 65534, 65534) == 0);
		why.len = 0;
		CHECK(store_dir(path, &why) < 0 &&
		    strstr(buf_cstr(&why), "owned by uid 65534") != NULL);
	}
	buf_free(&why);
	snprintf(other, sizeof(other), "rm -rf '%s'", top);
	CHECK(system(other) == 0);
}

/* A relative cacheDir is the configuration file's directory's. */
static void
test_cache_dir(void)
{
	static const char text[] = "{\"cacheDir\":\"c/${WB_T_SET}\","
	    "\"toolboxes\":{}}";
	char *cwd = getcwd(NULL, 0), want[4096];
	struct cfg c;
	size_t n;
	FILE *f;
	char *err;

	f = open_memstream(&err, &n);
	CHECK(cfg_parse(&c, "/etc/wb/x.json", text, strlen(text), f) == 0);
	fclose(f);
	CHECK(strcmp(c.cache_dir, "/etc/wb/c/secret-value") == 0);
	cfg_free(&c);
	free(err);
	f = open_memstream(&err, &n);
	CHECK(cfg_parse(&c, "sub/x.json", text, strlen(text), f) == 0);
	fclose(f);
	snprintf(want, sizeof(want), "%s/sub/c/secret-value", cwd);
	CHECK(strcmp(c.cache_dir, want) == 0);
	cfg_free(&c);
	free(err);
	f = open_memstream(&err, &n);
	CHECK(cfg_parse(&c, "x.json", "{\"cacheDir\":\"/abs\",\"toolboxes\":{}}",
	    34, f) == 0);
	fclose(f);
	CHECK(strcmp(c.cache_dir, "/abs") == 0);
	cfg_free(&c);
	free(err);
	free(cwd);
}

/*
 * share, shareLingerMs, shareDir and a server's share: their defaults,
 * ranges, and shareDir taken from the configuration's directory.
 */
static void
test_config_share(void)
{
	struct cfg c;
	char *err;

	CHECK(load("{\"toolboxes\":{\"b\":{\"mcpServers\":{\"s\":"
	    "{\"command\":\"x\"}}}}}", &c, &err) == 0);
	CHECK(!c.share && c.share_linger_ms == 60000 && c.share_dir == NULL &&
	    c.boxes[0].servers[0].share);
	cfg_free(&c);
	free(err);
	CHECK(load("{\"share\":true,\"shareLingerMs\":0,\"shareDir\":\"d\","
	    "\"toolboxes\":{\"b\":{\"mcpServers\":{\"s\":{\"command\":\"x\","
	    "\"share\":false}}}}}", &c, &err) == 0);
	CHECK(c.share && c.share_linger_ms == 0 && c.share_dir != NULL &&
	    c.share_dir[0] == '/' && strcmp(c.share_dir + strlen(c.share_dir) -
	    2, "/d") == 0 && !c.boxes[0].servers[0].share);
	CHECK(strstr(err, "unknown key") == NULL);
	cfg_free(&c);
	free(err);
	CHECK(load("{\"share\":1,\"shareLingerMs\":86400001,\"shareDir\":\"\","
	    "\"toolboxes\":{\"b\":{\"mcpServers\":{\"s\":{\"command\":\"x\","
	    "\"share\":\"no\"}}}}}", &c, &err) == 4);
	CHECK(strstr(err, "shareLingerMs") != NULL &&
	    strstr(err, "from 0 to 86400000") != NULL &&
	    strstr(err, "shareDir is empty") != NULL);
	cfg_free(&c);
	free(err);
}

/* era_strip_meta: a modern _meta as a 2025 server gets it, or false. */
static bool
stripped(const char *meta, const char *want)
{
	struct buf out = { 0 };
	bool ok;

	buf_puts(&out, "x");
	ok = era_strip_meta(&out, meta, strlen(meta));
	if (want == NULL)
		ok = !ok && out.len == 1;
	else
		ok = ok && out.len == strlen(want) + 1 &&
		    memcmp(out.data + 1, want, out.len - 1) == 0;
	buf_free(&out);
	return ok;
}

static void
test_era_strip(void)
{
	CHECK(stripped("{\"io.modelcontextprotocol/protocolVersion\":"
	    "\"2026-07-28\",\"progressToken\":7,"
	    "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"c\"},"
	    "\"io.modelcontextprotocol/clientCapabilities\":{\"roots\":{}},"
	    "\"io.modelcontextprotocol/logLevel\":\"info\",\"x\" : [1, {}]}",
	    "{\"progressToken\":7,\"x\":[1, {}]}"));
	/* Written with escapes, a key is still the era's. */
	CHECK(stripped("{ \"io.modelcontextprotocol\\/protocolVersion\" : 1 }",
	    "{}"));
	CHECK(stripped("{\"io.modelcontextprotocol/clientCapabilities\":{},"
	    "\"io.modelcontextprotocol/related-task\":{\"taskId\":\"t\"}}",
	    "{\"io.modelcontextprotocol/related-task\":{\"taskId\":\"t\"}}"));
	CHECK(stripped("{\"progressToken\":\"t\"}", NULL));
	CHECK(stripped("{}", NULL));
	CHECK(stripped("[1]", NULL));
	CHECK(stripped("{\"io.modelcontextprotocol/logLevel\":", NULL));
}

/*
 * The HTTP layer (http.h).
 */

/* What a request came to, for comparing two ways of feeding it. */
struct hres {
	int		 status;	/* HTTP_DONE, or an error status. */
	size_t		 used;		/* Bytes the request took. */
	struct buf	 what;		/* Method, path, fields, body. */
};

static unsigned long long hrand_state = 88172645463325252ULL;

static size_t
hrand(size_t n)
{
	hrand_state ^= hrand_state << 13;
	hrand_state ^= hrand_state >> 7;
	hrand_state ^= hrand_state << 17;
	return (size_t)(hrand_state % n);
}

/*
 * Feed s[0, n) as a connection does, step bytes at a time (0: random
 * pieces), taking HTTP_HEADER as a go-ahead.  The request is described in
 * r->what.
 */
static void
hfeed(const char *s, size_t n, size_t step, size_t max, struct hres *r)
{
	struct http_parser p;
	struct http_request q;
	struct buf in = { 0 };
	size_t at = 0, k, consumed = 0;
	int st = HTTP_MORE, i;

	http_parser_reset(&p);
	r->what.len = 0;
	while (st == HTTP_MORE || st == HTTP_HEADER) {
		if (st == HTTP_MORE) {
			if (at == n)
				break;
			k = step > 0 ? step : 1 + hrand(7);
			if (k > n - at)
				k = n - at;
			buf_put(&in, s + at, k);
			at += k;
			consumed += k;
		}
		st = http_parse(&p, in.data, &in.len, max);
	}
	r->status = st;
	/* What the input was less what is left over for the next request. */
	r->used = consumed - (in.len - (st == HTTP_DONE ? p.headlen + p.raw :
	    in.len));
	if (st == HTTP_DONE) {
		http_request_of(&p, in.data, &q);
		buf_printf(&r->what, "%d %.*s %.*s 1.%d|", q.method,
		    (int)q.target.n, q.target.p, (int)q.path.n, q.path.p,
		    q.minor);
		for (i = 0; i < HTTP_H_N; i++)
			if (q.h[i].p != NULL)
				buf_printf(&r->what, "%d=%.*s|", i,
				    (int)q.h[i].n, q.h[i].p);
		buf_printf(&r->what, "ka=%d|body=", p.keep_alive);
		buf_put(&r->what, q.body, q.bodylen);
	}
	buf_free(&in);
}

/* One request fed whole, by bytes, and in random pieces: one result. */
static int
hparse(const char *s, size_t max, struct hres *out)
{
	struct hres a = { 0 }, b = { 0 };
	size_t n = strlen(s);
	int i, same = 1;

	hfeed(s, n, n, max, out);
	for (i = 0; i < 6; i++) {
		hfeed(s, n, i == 0 ? 1 : i == 1 ? 2 : 0, max, &a);
		if (a.status != out->status || (a.status == HTTP_DONE &&
		    (a.used != out->used || a.what.len != out->what.len ||
		    memcmp(a.what.data, out->what.data, a.what.len) != 0)))
			same = 0;
	}
	if (!same)
		fprintf(stderr, "http: pieces differ for: %.60s\n", s);
	CHECK(same);
	buf_free(&a.what);
	buf_free(&b.what);
	return out->status;
}

static int
hstatus(const char *s)
{
	struct hres r = { 0 };
	int st = hparse(s, 1000, &r);

	buf_free(&r.what);
	return st;
}

/* allowedHosts: a host with any port, or host:port exactly, any case. */
static void
test_http_allowed_hosts(void)
{
	static const char *const hosts[] = { "mcp.example.com", "b.example:8443",
	    "[2001:db8::1]", NULL };
	static const struct {
		const char	*host;
		bool		 ok;
	} t[] = {
		{ "mcp.example.com", true }, { "MCP.Example.COM:8443", true },
		{ "mcp.example.com:1", true }, { "b.example:8443", true },
		{ "b.example", false }, { "b.example:443", false },
		{ "[2001:db8::1]", true }, { "[2001:db8::1]:8443", true },
		{ "[2001:db8::2]:8443", false }, { "example.com", false },
		{ "mcp.example.com.evil", false }, { "evil.mcp.example.com", false },
		{ "mcp.example.co", false }, { ":8443", false },
		{ "localhost:8931", true }
	};
	struct http_str h;
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		h.p = t[i].host;
		h.n = strlen(t[i].host);
		if (http_host_ok(&h, hosts) != t[i].ok)
			fprintf(stderr, "allowedHosts: %s\n", t[i].host);
		CHECK(http_host_ok(&h, hosts) == t[i].ok);
	}
}

/* A GET whose head, after pre (empty lines), is exactly n bytes. */
static const char *
head_of(struct buf *b, const char *pre, size_t n)
{
	static const char start[] = "GET /mcp HTTP/1.1\r\nHost: a\r\nX-Pad: ";
	size_t pad = n - (sizeof(start) - 1) - 4;

	b->len = 0;
	buf_puts(b, pre);
	buf_puts(b, start);
	while (pad-- > 0)
		buf_putc(b, 'p');
	buf_puts(b, "\r\n\r\n");
	return buf_cstr(b);
}

static void
test_http_parse(void)
{
	static const struct {
		const char	*req;
		int		 status;
	} bad[] = {
		{ "GET /mcp HTTP/1.1\r\n\r\n", 400 },		/* No Host. */
		{ "GET /mcp HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400 },
		{ "GET /mcp HTTP/2.0\r\nHost: a\r\n\r\n", 505 },
		{ "GET /mcp HTTP/1.2\r\nHost: a\r\n\r\n", 505 },
		{ "GET /mcp HTTX/1.1\r\nHost: a\r\n\r\n", 400 },
		{ "GET /mcp\r\nHost: a\r\n\r\n", 400 },
		{ "GET  /mcp HTTP/1.1\r\nHost: a\r\n\r\n", 400 },
		{ "GET /mcp HTTP/1.1 \r\nHost: a\r\n\r\n", 400 },
		{ "GET /m\x80 HTTP/1.1\r\nHost: a\r\n\r\n", 400 },
		{ "G(T /mcp HTTP/1.1\r\nHost: a\r\n\r\n", 400 },
		{ "GET /mcp HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n", 400 },
		{ "GET /mcp HTTP/1.1\r\nHost : a\r\n\r\n", 400 },
		{ "GET /mcp HTTP/1.1\r\nHost: a\r\nX-Y : z\r\n\r\n", 400 },
		{ "GET /mcp HTTP/1.1\r\nHost: a\r\nX-Y: z\r\n\tw: v\r\n\r\n",
		    400 },
		{ "GET /mcp HTTP/1.1\r\nHost: a\r\nNoColon\r\n\r\n", 400 },
		{ "GET /mcp HTTP/1.1\r\nHost: a\r\n: x\r\n\r\n", 400 },
		{ "GET /mcp HTTP/1.1\nHost: a\r\n\r\n", 400 },	/* Bare LF. */
		{ "GET /mcp HTTP/1.1\r\nHost: a\rb\r\n\r\n", 400 },
		{ "GET /mcp HTTP/1.1\r\nHost: a\001\r\n\r\n", 400 },
		{ "POST /mcp HTTP/1.1\r\nHost: a\r\n\r\n", 411 },
		{ "POST /mcp HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n"
		    "Content-Length: 2\r\n\r\nab", 400 },
		{ "POST /mcp HTTP/1.1\r\nHost: a\r\nContent-Length: 2, 2\r\n"
		    "\r\nab", 400 },
		{ "POST /mcp HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n"
		    "\r\n", 400 },
		{ "POST /mcp HTTP/1.1\r\nHost: a\r\nContent-Length: 1001\r\n"
		    "\r\n", 413 },
		{ "POST /mcp HTTP/1.1\r\nHost: a\r\nContent-Length: "
		    "99999999999999999999999\r\n\r\n", 413 },
		{ "POST /mcp HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n"
		    "Transfer-Encoding: chunked\r\n\r\n", 400 },
		{ "POST /mcp HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, "
		    "chunked\r\n\r\n", 501 },
		{ "POST /mcp HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
		    400 },
		{ "POST /mcp HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: "
		    "chunked\r\n\r\nz\r\n", 400 },
		{ "POST /mcp HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: "
		    "chunked\r\n\r\n\r\n", 400 },
		{ "POST /mcp HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: "
		    "chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n", 400 },
		{ "POST /mcp HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: "
		    "chunked\r\n\r\n2\nab\r\n0\r\n\r\n", 400 },
		{ "POST /mcp HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: "
		    "chunked\r\n\r\n3e9\r\n", 413 },
		{ "POST /mcp HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: "
		    "chunked\r\n\r\n1f4\r\n", 0 },	/* 500: goes on. */
		{ "POST /mcp HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\n"
		    "Expect: 200-ok\r\n\r\nx", 417 },
		/* A trailer line is a field line: a name first. */
		{ "POST /mcp HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: "
		    "chunked\r\n\r\n0\r\n\nX: y\r\n\r\n", 400 },
		{ "POST /mcp HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: "
		    "chunked\r\n\r\n0\r\n\x01X: y\r\n\r\n", 400 },
		{ "POST /mcp HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: "
		    "chunked\r\n\r\n0\r\nX: y\r\n z\r\n\r\n", 400 },
		{ "POST /mcp HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: "
		    "chunked\r\n\r\n0\r\n: y\r\n\r\n", 400 },
		{ NULL, 0 }
	};
	struct hres r = { 0 };
	char big[HTTP_HEAD_MAX + 100];
	struct buf b = { 0 };
	int i;

	for (i = 0; bad[i].req != NULL; i++) {
		if (hstatus(bad[i].req) != bad[i].status)
			fprintf(stderr, "http: %d for %s\n",
			    hstatus(bad[i].req), bad[i].req);
		CHECK(hstatus(bad[i].req) == bad[i].status);
	}

	/* Garbage is refused at its first wrong byte, not at a timeout. */
	CHECK(hstatus("\x16\x03\x01\x02") == 400);	/* A TLS hello. */
	CHECK(hstatus("GET\x01") == 400);
	CHECK(hstatus("AVERYLONGMETHODNAMEOFNOUSE /") == 400);
	CHECK(hstatus("\r\r") == 400);
	CHECK(hstatus("GET /mcp HTTP/1.1\r\nHost: a\r\n") == HTTP_MORE);

	/* The head's cap: 431, found as the bytes come. */
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	memcpy(big, "GET /mcp HTTP/1.1\r\nHost: a\r\nX-Big: ", 35);
	CHECK(hstatus(big) == 431);
	/*
	 * At the cap exactly: a head of HTTP_HEAD_MAX bytes, its blank
	 * line included, is taken; one byte more is 431 (the test that
	 * tells >= from >).  Empty lines before it do not count.
	 */
	CHECK(hstatus(head_of(&b, "", HTTP_HEAD_MAX)) == HTTP_DONE);
	CHECK(hstatus(head_of(&b, "", HTTP_HEAD_MAX + 1)) == 431);
	CHECK(hstatus(head_of(&b, "\r\n\r\n", HTTP_HEAD_MAX)) == HTTP_DONE);
	CHECK(hstatus(head_of(&b, "\r\n", HTTP_HEAD_MAX + 1)) == 431);
	b.len = 0;
	buf_puts(&b, "GET /mcp HTTP/1.1\r\nHost: a\r\n");
	for (i = 0; i < HTTP_FIELDS_MAX - 1; i++)
		buf_printf(&b, "X-F%d: v\r\n", i);
	CHECK(hstatus(buf_cstr(&b)) == HTTP_MORE);
	buf_puts(&b, "\r\n");
	CHECK(hstatus(buf_cstr(&b)) == HTTP_DONE);	/* 64 fields. */
	b.len -= 2;
	buf_puts(&b, "X-One-Too-Many: v\r\n\r\n");
	CHECK(hstatus(buf_cstr(&b)) == 431);

	/* A whole request: fields in any case, values trimmed. */
	CHECK(hparse("\r\n\r\nPOST /mcp?x=1 HTTP/1.1\r\nhOsT: h:1\r\n"
	    "content-TYPE:application/json \r\nMCP-SESSION-ID:\t s1\r\n"
	    "Content-Length: 5\r\n\r\nhelloGET", 1000, &r) == HTTP_DONE);
	CHECK(strcmp(buf_cstr(&r.what), "1 /mcp?x=1 /mcp 1.1|0=h:1|"
	    "1=application/json|4=s1|9=5|ka=1|body=hello") == 0);
	CHECK(r.used == strlen("\r\n\r\nPOST /mcp?x=1 HTTP/1.1\r\nhOsT: "
	    "h:1\r\ncontent-TYPE:application/json \r\nMCP-SESSION-ID:\t s1\r\n"
	    "Content-Length: 5\r\n\r\nhello"));
	/* HTTP/1.0, Connection: close, the absolute form. */
	CHECK(hparse("GET http://h:8/mcp HTTP/1.0\r\n\r\n", 1000, &r) ==
	    HTTP_DONE);
	CHECK(strcmp(buf_cstr(&r.what), "0 http://h:8/mcp /mcp 1.0|0=h:8|"
	    "ka=0|body=") == 0);
	/* Its authority is the host, whatever Host says; https too. */
	CHECK(hparse("GET HTTPS://[::1]:9/mcp?q HTTP/1.1\r\nHost: e\r\n\r\n",
	    1000, &r) == HTTP_DONE);
	CHECK(strcmp(buf_cstr(&r.what), "0 HTTPS://[::1]:9/mcp?q /mcp 1.1|"
	    "0=[::1]:9|ka=1|body=") == 0);
	CHECK(hparse("GET http://h HTTP/1.1\r\nHost: e\r\n\r\n", 1000,
	    &r) == HTTP_DONE);
	CHECK(strcmp(buf_cstr(&r.what), "0 http://h  1.1|0=h|ka=1|body=") ==
	    0);
	CHECK(hparse("DELETE /mcp HTTP/1.1\r\nHost: a\r\nConnection: "
	    "Keep-Alive, CLOSE\r\n\r\n", 1000, &r) == HTTP_DONE);
	CHECK(strcmp(buf_cstr(&r.what), "2 /mcp /mcp 1.1|0=a|ka=0|body=") ==
	    0);

	/* Chunked: sizes in any case, extensions, trailers; in place. */
	CHECK(hparse("POST /mcp HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: "
	    "Chunked\r\n\r\n4\r\nWiki\r\n5;a=b;c=\"d\"\r\npedia\r\nd\r\n"
	    " in\r\n\r\nchunks\r\n0\r\nX-Trailer: t\r\n\r\nnext", 1000, &r) ==
	    HTTP_DONE);
	CHECK(strcmp(buf_cstr(&r.what), "1 /mcp /mcp 1.1|0=a|10=Chunked|"
	    "ka=1|body=Wikipedia in\r\n\r\nchunks") == 0);
	CHECK(r.used == strlen("POST /mcp HTTP/1.1\r\nHost: a\r\nTransfer-"
	    "Encoding: Chunked\r\n\r\n4\r\nWiki\r\n5;a=b;c=\"d\"\r\npedia\r\n"
	    "d\r\n in\r\n\r\nchunks\r\n0\r\nX-Trailer: t\r\n\r\n"));
	/* Exactly max, and one more. */
	b.len = 0;
	buf_puts(&b, "POST /mcp HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: "
	    "chunked\r\n\r\n");
	for (i = 0; i < 10; i++)
		buf_puts(&b, "64\r\n" "0123456789012345678901234567890123456789"
		    "012345678901234567890123456789012345678901234567890123456789"
		    "\r\n");
	buf_puts(&b, "0\r\n\r\n");
	CHECK(hparse(buf_cstr(&b), 1000, &r) == HTTP_DONE);
	CHECK(hparse(buf_cstr(&b), 999, &r) == 413);
	/* A chunk-size line, and trailers, have caps. */
	b.len = 0;
	buf_puts(&b, "POST /mcp HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: "
	    "chunked\r\n\r\n1;");
	for (i = 0; i < HTTP_CHUNK_LINE_MAX; i++)
		buf_putc(&b, 'e');
	CHECK(hstatus(buf_cstr(&b)) == 400);
	b.len = 0;
	buf_puts(&b, "POST /mcp HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: "
	    "chunked\r\n\r\n0\r\n");
	for (i = 0; i < HTTP_HEAD_MAX / 10 + 1; i++)
		buf_puts(&b, "X-T: 1234\r\n");
	CHECK(hstatus(buf_cstr(&b)) == 431);

	/* Expect: 100-continue is noted (1.1 only), in any case. */
	CHECK(hparse("POST /mcp HTTP/1.1\r\nHost: a\r\nExpect: 100-Continue\r\n"
	    "Content-Length: 1\r\n\r\nx", 1000, &r) == HTTP_DONE);
	buf_free(&r.what);
	buf_free(&b);
}

/* Pipelined requests: each takes its own bytes and no more. */
static void
test_http_pipeline(void)
{
	static const char two[] = "POST /mcp HTTP/1.1\r\nHost: a\r\n"
	    "Content-Length: 3\r\n\r\nabcGET /mcp HTTP/1.1\r\nHost: b\r\n\r\n";
	struct http_parser p;
	struct http_request q;
	struct buf in = { 0 };

	buf_puts(&in, two);
	http_parser_reset(&p);
	CHECK(http_parse(&p, in.data, &in.len, 100) == HTTP_HEADER);
	CHECK(http_parse(&p, in.data, &in.len, 100) == HTTP_DONE);
	http_request_of(&p, in.data, &q);
	CHECK(q.bodylen == 3 && memcmp(q.body, "abc", 3) == 0);
	buf_consume(&in, p.headlen + p.raw);
	http_parser_reset(&p);
	CHECK(http_parse(&p, in.data, &in.len, 100) == HTTP_HEADER);
	CHECK(http_parse(&p, in.data, &in.len, 100) == HTTP_DONE);
	http_request_of(&p, in.data, &q);
	CHECK(q.method == HTTP_GET && q.h[HTTP_H_HOST].n == 1 &&
	    q.h[HTTP_H_HOST].p[0] == 'b' && p.headlen + p.raw == in.len);
	buf_free(&in);
}

/* A request's head for the rules, parsed. */
static int
hrequest(const char *s, struct buf *in, struct http_parser *p,
    struct http_request *q)
{
	in->len = 0;
	buf_puts(in, s);
	http_parser_reset(p);
	if (http_parse(p, in->data, &in->len, 1000) != HTTP_HEADER)
		return -1;
	http_request_of(p, in->data, q);
	return 0;
}

static bool
origin_ok(const char *o, const char *const *allowed)
{
	struct http_str s;

	s.p = o;
	s.n = o != NULL ? strlen(o) : 0;
	return http_origin_ok(&s, allowed);
}

static bool
token_ok(const char *a, const char *token)
{
	struct http_str s;

	s.p = a;
	s.n = a != NULL ? strlen(a) : 0;
	return http_token_ok(&s, token);
}

static void
test_http_rules(void)
{
	static const char *const allowed[] = { "https://app.example.com",
	    NULL };
	struct http_config cfg = { 0 };
	struct http_parser p;
	struct http_request q;
	struct http_str v;
	struct buf in = { 0 };

	/* Origin: loopback origins with any port, the allowed exactly. */
	CHECK(origin_ok(NULL, NULL));
	CHECK(origin_ok("http://localhost", NULL));
	CHECK(origin_ok("http://localhost:6274", NULL));
	CHECK(origin_ok("https://127.0.0.1:8080", NULL));
	CHECK(origin_ok("http://[::1]:3000", NULL));
	CHECK(origin_ok("HTTP://LOCALHOST:1", NULL));
	CHECK(origin_ok("https://app.example.com", allowed));
	CHECK(!origin_ok("https://app.example.com:443", allowed));
	CHECK(!origin_ok("https://app.example.com", NULL));
	CHECK(!origin_ok("http://evil.com", allowed));
	CHECK(!origin_ok("http://localhost.evil.com", NULL));
	CHECK(!origin_ok("http://localhost:80/path", NULL));
	CHECK(!origin_ok("http://localhost:", NULL));
	CHECK(!origin_ok("http://localhost:123456", NULL));
	CHECK(!origin_ok("http://127.0.0.2", NULL));
	CHECK(!origin_ok("http://127.0.0.1@evil.com", NULL));
	CHECK(!origin_ok("null", NULL));
	CHECK(!origin_ok("file://", NULL));
	CHECK(!origin_ok("ftp://localhost", NULL));
	CHECK(!origin_ok("", NULL));

	/* Bearer tokens. */
	CHECK(token_ok(NULL, NULL));
	CHECK(token_ok("anything", NULL));
	CHECK(token_ok("Bearer s3cret", "s3cret"));
	CHECK(token_ok("bearer   s3cret", "s3cret"));
	CHECK(!token_ok(NULL, "s3cret"));
	CHECK(!token_ok("Bearer s3cre", "s3cret"));
	CHECK(!token_ok("Bearer s3cretX", "s3cret"));
	CHECK(!token_ok("Bearer S3cret", "s3cret"));
	CHECK(!token_ok("Basic s3cret", "s3cret"));
	CHECK(!token_ok("Bearers3cret", "s3cret"));
	CHECK(!token_ok("Bearer ", "s3cret"));
	CHECK(!token_ok("Bearer ", ""));

	/* Host on a loopback listener, and the media types. */
	CHECK(hrequest("GET / HTTP/1.1\r\nHost: localhost:9\r\n"
	    "Accept: text/html, Text/Event-Stream;q=0.5\r\n"
	    "accept: application/*\r\nX-A: 1\r\nx-a: 2\r\n\r\n", &in, &p,
	    &q) == 0);
	CHECK(http_host_ok(&q.h[HTTP_H_HOST], NULL));
	CHECK(http_accepts(&q, "text/event-stream"));
	CHECK(http_accepts(&q, "application/json"));
	CHECK(!http_accepts(&q, "image/png"));
	CHECK(http_field(&q, "X-a", 1, &v) == 1 && v.n == 1 && *v.p == '2');
	CHECK(http_field(&q, "X-a", 2, &v) == 0);
	CHECK(hrequest("GET / HTTP/1.1\r\nHost: evil.com:9\r\n\r\n", &in, &p,
	    &q) == 0);
	CHECK(!http_host_ok(&q.h[HTTP_H_HOST], NULL));
	CHECK(http_accepts(&q, "image/png"));	/* No Accept: all. */
	test_http_allowed_hosts();

	/* http_check, rule by rule. */
	cfg.token = "tok";
	cfg.check_host = true;
#define CHK(req)	(hrequest(req, &in, &p, &q) == 0 ? http_check(&q, &cfg) : -1)
	CHECK(CHK("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:1\r\nAuthorization: "
	    "Bearer tok\r\nContent-Type: application/json; charset=utf-8\r\n"
	    "Accept: application/json, text/event-stream\r\n"
	    "Content-Length: 2\r\n\r\n") == 0);
	CHECK(CHK("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:1\r\nOrigin: "
	    "http://evil.com\r\nAuthorization: Bearer tok\r\n"
	    "Content-Length: 2\r\n\r\n") == 403);
	CHECK(CHK("POST /mcp HTTP/1.1\r\nHost: rebound.evil.com:1\r\n"
	    "Authorization: Bearer tok\r\nContent-Length: 2\r\n\r\n") == 403);
	CHECK(CHK("POST http://rebound.evil.com:1/mcp HTTP/1.1\r\nHost: "
	    "localhost:1\r\nAuthorization: Bearer tok\r\n"
	    "Content-Length: 2\r\n\r\n") == 403);
	CHECK(CHK("DELETE https://localhost:1/mcp HTTP/1.1\r\nHost: "
	    "evil.com\r\nAuthorization: Bearer tok\r\n\r\n") == 0);
	CHECK(CHK("POST /mcp HTTP/1.1\r\nHost: [::1]:1\r\n"
	    "Content-Length: 2\r\n\r\n") == 401);
	CHECK(CHK("POST /other HTTP/1.1\r\nHost: [::1]:1\r\nAuthorization: "
	    "Bearer tok\r\nContent-Length: 2\r\n\r\n") == 404);
	CHECK(CHK("PUT /mcp HTTP/1.1\r\nHost: [::1]:1\r\nAuthorization: "
	    "Bearer tok\r\nContent-Length: 2\r\n\r\n") == 405);
	CHECK(CHK("POST /mcp HTTP/1.1\r\nHost: [::1]:1\r\nAuthorization: "
	    "Bearer tok\r\nContent-Type: text/plain\r\n"
	    "Content-Length: 2\r\n\r\n") == 415);
	CHECK(CHK("POST /mcp HTTP/1.1\r\nHost: [::1]:1\r\nAuthorization: "
	    "Bearer tok\r\nContent-Type: application/json\r\n"
	    "Accept: text/html\r\nContent-Length: 2\r\n\r\n") == 406);
	CHECK(CHK("GET /mcp HTTP/1.1\r\nHost: [::1]:1\r\nAuthorization: "
	    "Bearer tok\r\nAccept: application/json\r\n\r\n") == 406);
	CHECK(CHK("DELETE /mcp HTTP/1.1\r\nHost: [::1]:1\r\nAuthorization: "
	    "Bearer tok\r\n\r\n") == 0);
#undef CHK
	buf_free(&in);
}

static int
addr_of(const char *spec, struct http_addr *a)
{
	struct buf err = { 0 };
	int r = http_addr_parse(spec, a, &err);

	buf_free(&err);
	return r;
}

static void
test_http_addr(void)
{
	static const char *const bad[] = {
		"127.0.0.1", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:-1",
		"127.0.0.1:80x", "::1:8080", "[::1]8080", "[::1", "[127.0.0.1]:80",
		"example.com:80", "256.0.0.1:80", ":80", "[fe80::1%eth0]:80",
		"localhost6:80", NULL
	};
	struct http_addr a;
	int i;

	CHECK(addr_of("127.0.0.1:8080", &a) == 0 && a.loopback &&
	    a.ss.ss_family == AF_INET);
	CHECK(addr_of("127.3.4.5:0", &a) == 0 && a.loopback);
	CHECK(addr_of("localhost:1", &a) == 0 && a.loopback &&
	    a.ss.ss_family == AF_INET);
	CHECK(addr_of("[::1]:65535", &a) == 0 && a.loopback &&
	    a.ss.ss_family == AF_INET6);
	CHECK(addr_of("[::ffff:127.0.0.1]:80", &a) == 0 && a.loopback);
	CHECK(addr_of("[::ffff:10.0.0.1]:80", &a) == 0 && !a.loopback);
	CHECK(addr_of("0.0.0.0:80", &a) == 0 && !a.loopback);
	CHECK(addr_of("[::]:80", &a) == 0 && !a.loopback);
	CHECK(addr_of("10.1.2.3:80", &a) == 0 && !a.loopback);
	CHECK(addr_of("128.0.0.1:80", &a) == 0 && !a.loopback);
	for (i = 0; bad[i] != NULL; i++) {
		if (addr_of(bad[i], &a) == 0)
			fprintf(stderr, "http: accepted address %s\n", bad[i]);
		CHECK(addr_of(bad[i], &a) != 0);
	}
}

/* A loop around one server, for the connection tests. */
static struct pollfd hpfd[64];
static void *htags[64];
static int hnpfd;
static struct http_conn *hheld;		/* A request not answered yet. */
static struct http_conn *hstream;	/* An open GET stream. */
static int hclosed, hdrained;

static void
hwatch(void *arg, int fd, short ev, void *tag)
{
	(void)arg;
	if (hnpfd < 64) {
		hpfd[hnpfd].fd = fd;
		hpfd[hnpfd].events = ev;
		hpfd[hnpfd].revents = 0;
		htags[hnpfd++] = tag;
	}
}

/* One turn of the loop, sleeping at most ms. */
static void
hturn(struct http_server *s, int ms)
{
	long long d, now;
	int i;

	http_prepare(s);
	http_flush(s);
	hnpfd = 0;
	http_watch(s, hwatch, NULL);
	now = now_ms();
	d = http_deadline(s);
	if (d >= 0 && d - now < ms)
		ms = d <= now ? 0 : (int)(d - now);
	if (poll(hpfd, (nfds_t)hnpfd, ms) < 0)
		return;
	loop_tick();
	for (i = 0; i < hnpfd; i++)
		if (hpfd[i].revents != 0)
			http_event(s, htags[i], hpfd[i].fd, hpfd[i].revents);
	http_timeouts(s, loop_ms());
}

/*
 * POST bodies are echoed; "hold" is kept unanswered; "drop" closes its
 * own connection and reads the request after (it must still be there, and
 * the close must not call closed()); GET streams.
 */
static int hdropped;

static void
hon_request(void *ctx, struct http_conn *c, const struct http_request *r)
{
	(void)ctx;
	if (r->bodylen == 4 && memcmp(r->body, "drop", 4) == 0) {
		http_close(c);
		http_respond(c, 200, NULL, NULL, 0);	/* Ignored: closed. */
		hdropped += r->bodylen == 4 && memcmp(r->body, "drop", 4) == 0 &&
		    r->h[HTTP_H_HOST].n == 9;
	} else if (r->method == HTTP_GET) {
		http_stream_begin(c);
		hstream = c;
	} else if (r->bodylen == 4 && memcmp(r->body, "hold", 4) == 0)
		hheld = c;
	else
		http_respond(c, 200, "application/json", r->body, r->bodylen);
}

static void
hon_closed(void *ctx, const struct http_conn *c)
{
	(void)ctx;
	if (c == hheld)
		hheld = NULL;
	if (c == hstream)
		hstream = NULL;
	hclosed++;
}

static void
hon_drained(void *ctx, struct http_conn *c)
{
	(void)ctx;
	(void)c;
	hdrained++;
}

static const struct http_ops hops = { hon_request, hon_closed,
	hon_drained };

static int
hconnect(struct http_server *s)
{
	struct sockaddr_in sin;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)http_port(s));
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0)
		return -1;
	fcntl(fd, F_SETFL, O_NONBLOCK);
	return fd;
}

/*
 * Turn the loop and read fd until what it sent holds needle (or, needle
 * NULL, until it is closed), for at most turns turns.  *got has it all.
 */
static bool
hwait(struct http_server *s, int fd, const char *needle, struct buf *got,
    int turns)
{
	char b[65536];
	ssize_t n;

	while (turns-- > 0) {
		hturn(s, 20);
		while ((n = read(fd, b, sizeof(b))) > 0)
			buf_put(got, b, (size_t)n);
		if (n == 0 && needle == NULL)
			return true;
		if (needle != NULL && got->len > 0 &&
		    strstr(buf_cstr(got), needle) != NULL)
			return true;
		if (n == 0)
			return false;
	}
	return false;
}

static bool
hsend(int fd, const char *s)
{
	return write(fd, s, strlen(s)) == (ssize_t)strlen(s);
}

#define HPOST(body)	"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n" \
	"Content-Type: application/json\r\nContent-Length: " \
	#body "\r\n\r\n"

static struct http_server *
hserver(struct http_config *cfg)
{
	struct http_addr a;
	struct buf err = { 0 };
	struct http_server *s;

	if (addr_of("127.0.0.1:0", &a) != 0)
		return NULL;
	cfg->check_host = true;
	s = http_start(cfg, &a, &hops, NULL, &err);
	if (s == NULL)
		fprintf(stderr, "http: %s\n", buf_cstr(&err));
	buf_free(&err);
	return s;
}

static void
test_http_conns(void)
{
	struct http_config cfg = { 0 };
	struct http_server *s;
	struct buf got = { 0 }, pad = { 0 };
	int a, b, c, d, i;

	cfg.max_body = 1000;
	cfg.max_conns = 2;
	cfg.request_ms = 300;
	cfg.idle_ms = 300;
	cfg.linger_ms = 300;
	cfg.out_limit = 16 * 1024;
	if ((s = hserver(&cfg)) == NULL) {
		CHECK(0);
		return;
	}
	/* Keep-alive: two requests, one connection. */
	a = hconnect(s);
	CHECK(hsend(a, HPOST(3) "one"));
	CHECK(hwait(s, a, "one", &got, 50));
	CHECK(hsend(a, HPOST(3) "two"));
	CHECK(hwait(s, a, "two", &got, 50));
	CHECK(http_nconns(s) == 1);
	/*
	 * Pipelined: once the first is answered, the next waits in the
	 * buffer for http_prepare, and the poll before it must not sleep
	 * (it slept until the request's 408).
	 */
	got.len = 0;
	CHECK(hsend(a, HPOST(1) "w" HPOST(1) "v"));
	CHECK(hwait(s, a, "\r\n\r\nw", &got, 50));
	CHECK(strstr(buf_cstr(&got), "\r\n\r\nv") == NULL);
	CHECK(http_deadline(s) >= 0 && http_deadline(s) <= now_ms());
	CHECK(hwait(s, a, "\r\n\r\nv", &got, 50));
	/* Pipelined: answered in order, one at a time. */
	got.len = 0;
	CHECK(hsend(a, HPOST(1) "x" HPOST(1) "y" HPOST(1) "z"));
	CHECK(hwait(s, a, "\r\n\r\nz", &got, 50));
	CHECK(strstr(buf_cstr(&got), "\r\n\r\nx") <
	    strstr(buf_cstr(&got), "\r\n\r\ny"));
	/*
	 * At max_conns the connection idle longest (a) is closed, unanswered,
	 * to make room; with none idle (b and c have sent nothing yet), a
	 * newcomer waits in the backlog, never answered 503, until one ends.
	 */
	b = hconnect(s);
	c = hconnect(s);
	got.len = 0;
	CHECK(hwait(s, a, NULL, &got, 50) && got.len == 0);
	d = hconnect(s);
	CHECK(hsend(d, HPOST(4) "dddd"));
	CHECK(!hwait(s, d, "HTTP/1.1", &got, 5));
	close(c);
	CHECK(hwait(s, d, "dddd", &got, 50));
	CHECK(strncmp(buf_cstr(&got), "HTTP/1.1 200 ", 13) == 0);
	close(d);
	got.len = 0;
	CHECK(hsend(b, HPOST(5) "three"));
	CHECK(hwait(s, b, "three", &got, 50));
	/* 100-continue, then the body. */
	got.len = 0;
	CHECK(hsend(b, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"
	    "Content-Type: application/json\r\nExpect: 100-continue\r\n"
	    "Content-Length: 4\r\n\r\n"));
	CHECK(hwait(s, b, "100 Continue", &got, 50));
	CHECK(hsend(b, "four"));
	CHECK(hwait(s, b, "four", &got, 50));
	/* Too large, said before the body: 413 without reading it. */
	got.len = 0;
	CHECK(hsend(b, HPOST(1001)));
	CHECK(hwait(s, b, NULL, &got, 50));
	CHECK(strncmp(buf_cstr(&got), "HTTP/1.1 413 ", 13) == 0);
	CHECK(strstr(buf_cstr(&got), "Connection: close") != NULL);
	close(b);
	/* A request that comes too slowly: 408, closed; a still one: closed. */
	hturn(s, 0);
	b = hconnect(s);
	got.len = 0;
	CHECK(hsend(b, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"));
	CHECK(hwait(s, b, NULL, &got, 100));
	CHECK(strncmp(buf_cstr(&got), "HTTP/1.1 408 ", 13) == 0);
	close(b);
	got.len = 0;
	CHECK(hwait(s, a, NULL, &got, 100));	/* Idle: closed. */
	CHECK(got.len == 0);
	close(a);
	/* A client that leaves while its request is held: closed(). */
	hturn(s, 0);
	a = hconnect(s);
	CHECK(hsend(a, HPOST(4) "hold"));
	for (i = 0; i < 50 && hheld == NULL; i++)
		hturn(s, 20);
	CHECK(hheld != NULL && hclosed == 0);
	close(a);
	for (i = 0; i < 50 && hheld != NULL; i++)
		hturn(s, 20);
	CHECK(hheld == NULL && hclosed == 1);
	/* A handler that closes its own connection; the others go on. */
	b = hconnect(s);
	CHECK(hsend(b, HPOST(4) "drop"));
	got.len = 0;
	CHECK(hwait(s, b, NULL, &got, 50));
	CHECK(got.len == 0 && hdropped == 1 && hclosed == 1);
	close(b);
	b = hconnect(s);
	CHECK(hsend(b, HPOST(5) "after"));
	CHECK(hwait(s, b, "after", &got, 50));
	close(b);
	/* A stream's queue past its limit: the event is refused, closed. */
	a = hconnect(s);
	CHECK(hsend(a, "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
	for (i = 0; i < 50 && hstream == NULL; i++)
		hturn(s, 20);
	CHECK(hstream != NULL);
	for (i = 0; i < 1000; i++)
		if (http_stream_event(hstream, NULL, "{\"pad\":\""
		    "0123456789012345678901234567890123456789012345678901234567"
		    "\"}", 68) < 0)
			break;
	CHECK(i > 100 && i < 1000);
	got.len = 0;
	CHECK(hwait(s, a, NULL, &got, 50));	/* Closed, nothing sent. */
	CHECK(got.len == 0 && hclosed == 1);
	close(a);
	hstream = NULL;
	http_stop(s);

	/* A full stream, then drained: its producers may go on. */
	cfg.out_limit = 0;
	cfg.max_body = 0;
	s = hserver(&cfg);
	a = hconnect(s);
	CHECK(hsend(a, "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
	for (i = 0; i < 50 && hstream == NULL; i++)
		hturn(s, 20);
	CHECK(hstream != NULL && !http_full(hstream));
	got.len = 0;
	pad.len = 0;
	buf_puts(&pad, "[\"");
	while (pad.len < 998)
		buf_putc(&pad, 'p');
	buf_puts(&pad, "\"]");
	for (i = 0; i < 1100 && hstream != NULL; i++)
		http_stream_event(hstream, i == 0 ? "1" : NULL, pad.data,
		    pad.len);
	CHECK(hstream != NULL && http_full(hstream) && hdrained == 0);
	http_stream_end(hstream);
	CHECK(hwait(s, a, "\r\n0\r\n\r\n", &got, 500));
	CHECK(hdrained == 1);
	CHECK(strstr(buf_cstr(&got), "\r\n\r\n405\r\nevent: message\nid: 1\n"
	    "data: [\"ppp") != NULL);
	close(a);
	http_stop(s);
	buf_free(&got);
	buf_free(&pad);
}

/* Startup's words: a token for other than loopback; an address in use. */
static void
test_http_start(void)
{
	struct http_config cfg = { 0 };
	struct http_server *s, *t;
	struct http_addr a;
	struct buf err = { 0 };
	char spec[32];

	CHECK(addr_of("0.0.0.0:0", &a) == 0);
	CHECK(http_start(&cfg, &a, &hops, NULL, &err) == NULL);
	CHECK(strstr(buf_cstr(&err), "needs a token") != NULL &&
	    strstr(buf_cstr(&err), "\"httpToken\"") != NULL);
	s = hserver(&cfg);
	CHECK(s != NULL);
	if (s == NULL)
		return;
	snprintf(spec, sizeof(spec), "127.0.0.1:%d", http_port(s));
	CHECK(addr_of(spec, &a) == 0);
	err.len = 0;
	t = http_start(&cfg, &a, &hops, NULL, &err);
	CHECK(t == NULL && strstr(buf_cstr(&err), "in use") != NULL);
	http_stop(t);
	http_stop(s);
	buf_free(&err);
}

int
main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "config-keys") == 0) {
		print_config_keys();
		return 0;
	}
	test_sessions();
	test_remote();
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
	test_term_escape();
	test_guardian_groups();
	test_guardian_queue();
	test_read_all();
	test_framing();
	test_expand();
	test_config_ok();
	test_config_errors();
	test_config_warnings();
	test_config_http();
	test_config_filters();
	test_config_table();
	test_names();
	test_tool_names();
	test_terms();
	test_ratelog();
	test_ratelog_stderr();
	test_log_levels();
	test_era();
	test_siphash();
	test_server_digest();
	test_caps_key();
	test_store();
	test_cache_dir();
	test_config_share();
	test_era_strip();
	test_http_parse();
	test_http_pipeline();
	test_http_rules();
	test_http_addr();
	test_http_conns();
	test_http_start();
	test_share();
	test_loop();		/* Last: it stops the loop for good. */
	printf("%d passed, %d failed\n", passed, failed);
	return failed > 0;
}
