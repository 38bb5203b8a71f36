/*
 * mock-server: a downstream MCP server for the test suites.
 *
 * It speaks MCP over stdio, one JSON-RPC message per line, and misbehaves
 * on request: it crashes, hangs, sleeps, writes garbage and huge answers,
 * and pages its tool list, badly if asked.  Command-line flags choose the
 * behaviour (see usage() and the test documentation).  With --hostile it
 * also lists tools that break the protocol on purpose (hostile_tools[]:
 * answers to ids never sent, answers twice, huge lines, answers that break
 * off midway, stderr floods, a closed stdout, a stopped reader...); with
 * --linger it keeps running after stdin ends, until a signal ends it.
 *
 * Everything runs in one poll() loop over stdin.  Answers that must wait
 * (the sleep tool, --init-delay) sit in a timer list, so a slow call never
 * delays the others and answers may leave out of order.  Answers are
 * written with a blocking loop: a mock may stall while its reader is slow.
 */

#include <sys/types.h>

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jsmn.h>

#define MOCK_VERSION	"1.0.0"
#define DEFAULT_PROTO	"2025-11-25"
#define READ_CHUNK	65536
/* The most bytes the big tool writes, and the longest sleep in ms. */
#define BIG_MAX		1e10
#define DELAY_MAX	1e12

/* A 1x1 transparent PNG. */
#define PNG_1X1	"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJ" \
		"AAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="

#define SCHEMA_EMPTY	"{\"type\":\"object\",\"properties\":{}}"
#define SCHEMA_ANY	"{\"type\":\"object\"}"
#define SCHEMA_1(k, t, req) \
	"{\"type\":\"object\",\"properties\":{\"" k "\":{\"type\":\"" t "\"}}" \
	req "}"
#define REQ(k)		",\"required\":[\"" k "\"]"

struct buf {
	char	*p;
	size_t	 len;
	size_t	 cap;
};

/* One parsed line: the text and its jsmn tokens. */
struct msg {
	const char	*js;
	size_t		 len;
	jsmntok_t	*tok;
	int		 ntok;
};

/* A request being answered. */
struct req {
	const struct msg	*m;
	const char		*id;	/* raw bytes, with quotes */
	size_t			 idlen;
	int			 params;	/* token, or -1 */
};

typedef void	tool_fn(const struct req *, int);

struct tool {
	const char	*name;
	const char	*desc;
	const char	*input;		/* JSON Schema text */
	const char	*output;	/* JSON Schema text, or NULL */
	tool_fn		*fn;
};

/* An answer waiting for its time to leave. */
struct timer {
	struct timer	*next;
	int64_t		 due;		/* CLOCK_MONOTONIC, us */
	char		*text;
	size_t		 len;
	int		 exitcode;	/* >= 0: exit with it instead */
};

static struct {
	long		 ntools;
	long		 pagesize;
	int		 repeat;
	int		 noinit;
	int		 exitoninit;
	int		 exitcode;
	long		 initdelay;
	int		 garbage;
	int		 ignoreterm;
	int		 grandchild;
	long		 stderrlines;
	int		 hostile;
	int		 linger;
	int		 discover;	/* server/discover: 1 silent, 2 exit */
	int		 prompts;	/* --prompts */
	long		 nres;		/* --resources N; -1: none */
	long		 ntpl;		/* --templates N: hostile ones */
	int		 faillists;
	const char	*name;
} opt = { .name = "mock-server", .nres = -1 };

static void	tool_echo(const struct req *, int);
static void	tool_add(const struct req *, int);
static void	tool_sleep(const struct req *, int);
static void	tool_big(const struct req *, int);
static void	tool_crash(const struct req *, int);
static void	tool_fail(const struct req *, int);
static void	tool_rpc_error(const struct req *, int);
static void	tool_structured(const struct req *, int);
static void	tool_image(const struct req *, int);
static void	tool_env(const struct req *, int);
static void	tool_cwd(const struct req *, int);
static void	tool_init_params(const struct req *, int);
static void	tool_notify(const struct req *, int);
static void	tool_stderr(const struct req *, int);
static void	tool_echo_args(const struct req *, int);
static void	tool_close_stdout(const struct req *, int);
static void	tool_exit_after(const struct req *, int);
static void	tool_never_answer(const struct req *, int);
static void	tool_answer_twice(const struct req *, int);
static void	tool_stray_answers(const struct req *, int);
static void	tool_wrong_id_type(const struct req *, int);
static void	tool_garbage_lines(const struct req *, int);
static void	tool_flood_stderr(const struct req *, int);
static void	tool_big_id_last(const struct req *, int);
static void	tool_big_noise(const struct req *, int);
static void	tool_log_flood(const struct req *, int);
static void	tool_bad_utf8(const struct req *, int);
static void	tool_stop_reading(const struct req *, int);
static void	tool_framing(const struct req *, int);
static void	tool_big_cut(const struct req *, int);

/* The tools every mock has, in the order tools/list gives them. */
static const struct tool fixed_tools[] = {
	{ "echo", "Answers with the message it was given.",
	    SCHEMA_1("message", "string", REQ("message")), NULL, tool_echo },
	{ "add", "Adds two numbers.",
	    "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"number\"},"
	    "\"b\":{\"type\":\"number\"}},\"required\":[\"a\",\"b\"]}",
	    "{\"type\":\"object\",\"properties\":"
	    "{\"sum\":{\"type\":\"number\"}},\"required\":[\"sum\"]}",
	    tool_add },
	{ "sleep", "Answers after ms milliseconds without blocking others.",
	    SCHEMA_1("ms", "number", REQ("ms")), NULL, tool_sleep },
	{ "big", "Answers with a text of exactly bytes 'x' characters.",
	    SCHEMA_1("bytes", "number", REQ("bytes")), NULL, tool_big },
	{ "crash", "Exits with code (default 3) without answering.",
	    SCHEMA_1("code", "number", ""), NULL, tool_crash },
	{ "fail", "Answers with a tool error (isError).",
	    SCHEMA_1("message", "string", ""), NULL, tool_fail },
	{ "rpc_error", "Answers with a JSON-RPC error -32000.",
	    SCHEMA_1("message", "string", ""), NULL, tool_rpc_error },
	{ "structured", "Answers with structuredContent.",
	    SCHEMA_EMPTY, NULL, tool_structured },
	{ "image", "Answers with a 1x1 PNG image.",
	    SCHEMA_EMPTY, NULL, tool_image },
	{ "env", "Answers with an environment variable or (unset).",
	    SCHEMA_1("name", "string", REQ("name")), NULL, tool_env },
	{ "cwd", "Answers with the working directory.",
	    SCHEMA_EMPTY, NULL, tool_cwd },
	{ "init_params", "Answers with the params of initialize, as JSON.",
	    SCHEMA_EMPTY, NULL, tool_init_params },
	{ "notify_list_changed", "Adds a tool and sends tools/list_changed.",
	    SCHEMA_EMPTY, NULL, tool_notify },
	{ "stderr", "Writes text to stderr.",
	    SCHEMA_1("text", "string", REQ("text")), NULL, tool_stderr },
};

/*
 * With --hostile: tools that break the protocol on purpose, listed after
 * the fixed ones (and before generated and extra tools).
 */
static const struct tool hostile_tools[] = {
	{ "close_stdout", "Closes stdout, never answers, keeps running.",
	    SCHEMA_EMPTY, NULL, tool_close_stdout },
	{ "exit_after", "Answers, then exits with code after ms.",
	    SCHEMA_1("ms", "number", REQ("ms")), NULL, tool_exit_after },
	{ "never_answer", "Never answers.",
	    SCHEMA_EMPTY, NULL, tool_never_answer },
	{ "answer_twice", "Answers \"first\", then \"second\", same id.",
	    SCHEMA_EMPTY, NULL, tool_answer_twice },
	{ "stray_answers", "Answers ids never sent and bad ids, then \"ok\".",
	    SCHEMA_EMPTY, NULL, tool_stray_answers },
	{ "wrong_id_type", "Answers only with the id as the other type.",
	    SCHEMA_EMPTY, NULL, tool_wrong_id_type },
	{ "garbage_lines", "Writes lines that are not JSON-RPC (with depth:"
	    " nested that deep), then \"ok\".",
	    SCHEMA_1("depth", "number", ""), NULL, tool_garbage_lines },
	{ "flood_stderr", "A child writes bytes to stderr over ms.",
	    "{\"type\":\"object\",\"properties\":{\"bytes\":"
	    "{\"type\":\"number\"},\"ms\":{\"type\":\"number\"}},"
	    "\"required\":[\"bytes\"]}", NULL, tool_flood_stderr },
	{ "big_id_last", "Like big, with the id last (as the TS SDK writes);"
	    " delay_ms: the whole line that much later.",
	    "{\"type\":\"object\",\"properties\":{\"bytes\":"
	    "{\"type\":\"number\"},\"delay_ms\":{\"type\":\"number\"}},"
	    "\"required\":[\"bytes\"]}", NULL, tool_big_id_last },
	{ "big_noise", "A line of bytes 'z' (not JSON), then \"ok\".",
	    SCHEMA_1("bytes", "number", REQ("bytes")), NULL, tool_big_noise },
	{ "log_flood", "count notifications/message of bytes, then \"ok\".",
	    "{\"type\":\"object\",\"properties\":{\"count\":"
	    "{\"type\":\"number\"},\"bytes\":{\"type\":\"number\"}},"
	    "\"required\":[\"count\"]}", NULL, tool_log_flood },
	{ "bad_utf8", "Answers with a text that is not valid UTF-8.",
	    SCHEMA_EMPTY, NULL, tool_bad_utf8 },
	{ "stop_reading", "Answers \"ok\", then never reads stdin again.",
	    SCHEMA_EMPTY, NULL, tool_stop_reading },
	{ "framing", "Answers \"ok\" after blank lines, with a BOM and CRLF.",
	    SCHEMA_EMPTY, NULL, tool_framing },
	{ "big_cut", "Like big (id last with idLast), then by then: garbage"
	    " ends the line as no JSON, exit exits, close closes stdout,"
	    " badutf8 makes bytes/2 and the next 0xff 0xfe, ok ends well,"
	    " pause ends well after 1000 spaces and pause_ms (200), trickle adds"
	    " an x every 500 ms for 30 s, then ends well.",
	    "{\"type\":\"object\",\"properties\":{\"bytes\":"
	    "{\"type\":\"number\"},\"then\":{\"type\":\"string\",\"enum\":"
	    "[\"garbage\",\"exit\",\"close\",\"badutf8\",\"ok\","
	    "\"pause\",\"trickle\"]},"
	    "\"idLast\":{\"type\":\"boolean\"},"
	    "\"pause_ms\":{\"type\":\"number\"}},"
	    "\"required\":[\"bytes\",\"then\"]}", NULL, tool_big_cut },
};

static void	send_page(const struct req *, const char *, size_t,
		    void (*)(struct buf *, size_t));
static void	tool_change_lists(const struct req *, int);
static void	tool_touch(const struct req *, int);

/* With --prompts or --resources: tools that change those lists. */
static const struct tool catalog_tools[] = {
	{ "change_lists", "Adds a prompt and a resource, then sends "
	    "prompts and resources list_changed.", SCHEMA_EMPTY, NULL,
	    tool_change_lists },
	{ "touch", "Sends notifications/resources/updated for uri.",
	    SCHEMA_1("uri", "string", REQ("uri")), NULL, tool_touch },
};

static const char	**xuris;	/* --resource-uri values */
static size_t		  nxuris;
static int		  ncatadded;	/* change_lists calls */

static struct tool	*tools;
static size_t		 ntools;
static size_t		 captools;
static int		 nadded;

static jsmntok_t	*toks;
static unsigned int	 captoks;

static struct buf	 in;		/* bytes read, not yet handled */
static size_t		 scanned;	/* prefix of in with no '\n' */
static struct buf	 out;		/* the answer being built */
static struct buf	 initparams;	/* raw params of initialize */
static int		 gotinit;
static struct timer	*timers;	/* sorted by due time */
static int		 stdout_closed;	/* close_stdout was called */
static int		 stdin_done;	/* EOF seen (--linger), or stop_reading */


/*
 * Output.
 */

/*
 * Writes all of p to fd, waiting when the fd is non-blocking and full (the
 * file description may be shared with a parent that set O_NONBLOCK).
 */
static int
write_all(int fd, const char *p, size_t n)
{
	struct pollfd pfd;
	ssize_t w;

	while (n > 0) {
		w = write(fd, p, n);
		if (w >= 0) {
			p += w;
			n -= w;
			continue;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -1;
		pfd.fd = fd;
		pfd.events = POLLOUT;
		(void)poll(&pfd, 1, -1);
	}
	return 0;
}

static void
logmsg(const char *fmt, ...)
{
	va_list ap;
	char s[1024];
	int n;

	va_start(ap, fmt);
	n = vsnprintf(s, sizeof(s), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(s))
		n = sizeof(s) - 1;
	/* Failing to log must not stop the mock. */
	(void)write_all(2, s, n);
}

static void
die(const char *msg)
{
	logmsg("mock-server: %s\n", msg);
	exit(1);
}

/* The client went away when stdout fails; that ends the mock like EOF. */
static void
out_write(const char *p, size_t n)
{
	if (stdout_closed)
		return;
	if (write_all(1, p, n) == -1) {
		if (errno != EPIPE)
			logmsg("mock-server: stdout: %s\n", strerror(errno));
		exit(0);
	}
}

/*
 * Growable buffers.
 */

static void
buf_reserve(struct buf *b, size_t n)
{
	size_t cap;
	char *p;

	if (b->cap - b->len >= n)
		return;
	cap = b->cap == 0 ? 256 : b->cap;
	while (cap - b->len < n) {
		if (cap > SIZE_MAX / 2)
			die("out of memory");
		cap *= 2;
	}
	if ((p = realloc(b->p, cap)) == NULL)
		die("out of memory");
	b->p = p;
	b->cap = cap;
}

static void
buf_add(struct buf *b, const void *p, size_t n)
{
	/* An empty buffer has no memory yet, and memcpy wants some. */
	if (n == 0)
		return;
	buf_reserve(b, n);
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

static void
buf_adds(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

static void
buf_addc(struct buf *b, char c)
{
	buf_reserve(b, 1);
	b->p[b->len++] = c;
}

/* Terminates the text without counting the NUL, so b->p is a C string. */
static void
buf_nul(struct buf *b)
{
	buf_reserve(b, 1);
	b->p[b->len] = '\0';
}

/*
 * JSON output.
 */

/*
 * Returns the length of the valid UTF-8 sequence at s, or 0.  Overlong
 * forms, surrogates and code points past U+10FFFF are invalid: they would
 * make the output something other than UTF-8 JSON.
 */
static size_t
utf8_len(const unsigned char *s, size_t n)
{
	uint32_t cp;
	size_t len, i;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4;
	else
		return 0;
	if (n < len)
		return 0;
	cp = s[0] & (0x3f >> (len - 1));
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return len;
}

static int
json_plain(unsigned char c)
{
	return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
}

static void
json_escape(struct buf *b, unsigned char c)
{
	static const char hex[] = "0123456789abcdef";
	char u[6] = { '\\', 'u', '0', '0', 0, 0 };

	switch (c) {
	case '"':
		buf_adds(b, "\\\"");
		break;
	case '\\':
		buf_adds(b, "\\\\");
		break;
	case '\n':
		buf_adds(b, "\\n");
		break;
	case '\r':
		buf_adds(b, "\\r");
		break;
	case '\t':
		buf_adds(b, "\\t");
		break;
	default:
		u[4] = hex[c >> 4];
		u[5] = hex[c & 0xf];
		buf_add(b, u, sizeof(u));
		break;
	}
}

/* Appends s as a JSON string; invalid UTF-8 bytes become U+FFFD. */
static void
json_str(struct buf *b, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i, end, k;

	buf_reserve(b, n + 2);
	buf_addc(b, '"');
	for (i = 0; i < n; ) {
		/* Copy runs at once: echoed texts can be many MB. */
		for (end = i; end < n && json_plain(u[end]); end++)
			continue;
		buf_add(b, s + i, end - i);
		if ((i = end) == n)
			break;
		if (u[i] < 0x80) {
			json_escape(b, u[i++]);
		} else if ((k = utf8_len(u + i, n - i)) > 0) {
			buf_add(b, s + i, k);
			i += k;
		} else {
			buf_adds(b, "\\ufffd");
			i++;
		}
	}
	buf_addc(b, '"');
}

static void
json_strz(struct buf *b, const char *s)
{
	json_str(b, s, strlen(s));
}

/* Appends the shortest text that reads back as d. */
static void
buf_num(struct buf *b, double d)
{
	char s[40];
	int prec;

	for (prec = 15; ; prec++) {
		(void)snprintf(s, sizeof(s), "%.*g", prec, d);
		if (prec == 17 || strtod(s, NULL) == d)
			break;
	}
	buf_adds(b, s);
}

/*
 * JSON input.
 */

static void
toks_grow(void)
{
	unsigned int cap;
	jsmntok_t *t;

	cap = captoks == 0 ? 256 : captoks * 2;
	if (cap > UINT_MAX / 2 / sizeof(*t))
		die("out of memory");
	if ((t = realloc(toks, cap * sizeof(*t))) == NULL)
		die("out of memory");
	toks = t;
	captoks = cap;
}

/* jsmn lets raw control characters into strings; JSON does not. */
static int
strings_clean(const char *js, const jsmntok_t *t, int n)
{
	int i, k;

	for (i = 0; i < n; i++) {
		if (t[i].type != JSMN_STRING)
			continue;
		for (k = t[i].start; k < t[i].end; k++)
			if ((unsigned char)js[k] < 0x20)
				return 0;
	}
	return 1;
}

/*
 * Tokenizes a line.  jsmn stops quietly at a NUL byte and accepts trailing
 * data, so the line must be exactly one object.
 */
static int
msg_parse(struct msg *m, const char *js, size_t len)
{
	jsmn_parser p;
	int r;

	if (len > INT_MAX)
		return -1;
	if (toks == NULL)
		toks_grow();
	jsmn_init(&p);
	/* On NOMEM jsmn resumes where it stopped, given the same parser. */
	while ((r = jsmn_parse(&p, js, len, toks, captoks)) == JSMN_ERROR_NOMEM)
		toks_grow();
	if (r < 1 || toks[0].type != JSMN_OBJECT || toks[0].start != 0 ||
	    (size_t)toks[0].end != len || !strings_clean(js, toks, p.toknext))
		return -1;
	m->js = js;
	m->len = len;
	m->tok = toks;
	m->ntok = p.toknext;
	return 0;
}

/* Returns the token of the value of key in object obj, or -1. */
static int
obj_get(const struct msg *m, int obj, const char *key)
{
	const jsmntok_t *t;
	size_t klen;
	int i;

	if (obj < 0 || m->tok[obj].type != JSMN_OBJECT)
		return -1;
	klen = strlen(key);
	for (i = obj + 1; i + 1 < m->ntok; i++) {
		t = &m->tok[i];
		if (t->start >= m->tok[obj].end)
			break;
		if (t->parent == obj && t->type == JSMN_STRING &&
		    (size_t)(t->end - t->start) == klen &&
		    memcmp(m->js + t->start, key, klen) == 0)
			return i + 1;
	}
	return -1;
}

/* The exact text of a value: strings keep their quotes. */
static void
tok_raw(const struct msg *m, int i, const char **p, size_t *n)
{
	const jsmntok_t *t = &m->tok[i];
	int q;

	q = t->type == JSMN_STRING;
	*p = m->js + t->start - q;
	*n = t->end - t->start + 2 * q;
}

static void
utf8_put(struct buf *b, uint32_t cp)
{
	char s[4];

	if (cp < 0x80) {
		buf_addc(b, cp);
		return;
	}
	if (cp < 0x800) {
		s[0] = 0xc0 | cp >> 6;
		s[1] = 0x80 | (cp & 0x3f);
		buf_add(b, s, 2);
	} else if (cp < 0x10000) {
		s[0] = 0xe0 | cp >> 12;
		s[1] = 0x80 | (cp >> 6 & 0x3f);
		s[2] = 0x80 | (cp & 0x3f);
		buf_add(b, s, 3);
	} else {
		s[0] = 0xf0 | cp >> 18;
		s[1] = 0x80 | (cp >> 12 & 0x3f);
		s[2] = 0x80 | (cp >> 6 & 0x3f);
		s[3] = 0x80 | (cp & 0x3f);
		buf_add(b, s, 4);
	}
}

static int
hex4(const char *s, size_t n, uint32_t *v)
{
	size_t i;
	int c;

	if (n < 4)
		return -1;
	*v = 0;
	for (i = 0; i < 4; i++) {
		c = s[i];
		if (c >= '0' && c <= '9')
			c -= '0';
		else if (c >= 'a' && c <= 'f')
			c -= 'a' - 10;
		else if (c >= 'A' && c <= 'F')
			c -= 'A' - 10;
		else
			return -1;
		*v = *v << 4 | c;
	}
	return 0;
}

/*
 * Decodes the \u escape at s (after the backslash and 'u'), joining a
 * surrogate pair; a lone surrogate becomes U+FFFD.  Returns bytes used.
 */
static size_t
unescape_u(struct buf *b, const char *s, size_t n)
{
	uint32_t hi, lo;

	if (hex4(s, n, &hi) == -1) {
		buf_adds(b, "\\u");
		return 0;
	}
	if (hi >= 0xd800 && hi <= 0xdbff && n >= 10 && s[4] == '\\' &&
	    s[5] == 'u' && hex4(s + 6, n - 6, &lo) == 0 &&
	    lo >= 0xdc00 && lo <= 0xdfff) {
		utf8_put(b, 0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00));
		return 10;
	}
	utf8_put(b, hi >= 0xd800 && hi <= 0xdfff ? 0xfffd : hi);
	return 4;
}

static void
unescape(struct buf *b, const char *s, size_t n)
{
	const char *bs;
	size_t i;

	for (i = 0; i < n; ) {
		if ((bs = memchr(s + i, '\\', n - i)) == NULL)
			bs = s + n;
		buf_add(b, s + i, bs - (s + i));
		if ((i = bs - s) + 1 >= n) {
			buf_add(b, s + i, n - i);
			break;
		}
		i += 2;
		switch (s[i - 1]) {
		case 'b':
			buf_addc(b, '\b');
			break;
		case 'f':
			buf_addc(b, '\f');
			break;
		case 'n':
			buf_addc(b, '\n');
			break;
		case 'r':
			buf_addc(b, '\r');
			break;
		case 't':
			buf_addc(b, '\t');
			break;
		case 'u':
			i += unescape_u(b, s + i, n - i);
			break;
		default:
			buf_addc(b, s[i - 1]);
			break;
		}
	}
}

/* Decodes string token i into b (NUL-terminated); -1 if not a string. */
static int
tok_string(const struct msg *m, int i, struct buf *b)
{
	const jsmntok_t *t = &m->tok[i];

	b->len = 0;
	if (t->type != JSMN_STRING)
		return -1;
	unescape(b, m->js + t->start, t->end - t->start);
	buf_nul(b);
	return 0;
}

/* Checks the JSON number grammar, which strtod alone does not. */
static int
is_number(const char *s, size_t n)
{
	size_t i = 0, d;

	if (i < n && s[i] == '-')
		i++;
	if (i < n && s[i] == '0')
		i++;
	else if (i < n && s[i] >= '1' && s[i] <= '9')
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++;
	else
		return 0;
	if (i < n && s[i] == '.') {
		for (d = ++i; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			continue;
		if (i == d)
			return 0;
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		if (++i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		for (d = i; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			continue;
		if (i == d)
			return 0;
	}
	return i == n;
}

static int
tok_number(const struct msg *m, int i, double *d)
{
	const jsmntok_t *t = &m->tok[i];
	struct buf s = { 0 };

	if (t->type != JSMN_PRIMITIVE ||
	    !is_number(m->js + t->start, t->end - t->start))
		return -1;
	buf_add(&s, m->js + t->start, t->end - t->start);
	buf_nul(&s);
	*d = strtod(s.p, NULL);
	free(s.p);
	return 0;
}

/*
 * Answers.
 */

static struct buf	sarg;	/* a decoded argument */
static struct buf	sname;	/* a decoded method or tool name */

static void
ans_begin(struct buf *b, const struct req *r)
{
	b->len = 0;
	buf_adds(b, "{\"jsonrpc\":\"2.0\",\"id\":");
	buf_add(b, r->id, r->idlen);
	buf_adds(b, ",\"result\":");
}

static void
ans_end(struct buf *b)
{
	buf_adds(b, "}\n");
}

static void
send_garbage(void)
{
	static const char g[] = "this is not json\n";

	if (opt.garbage)
		out_write(g, sizeof(g) - 1);
}

static void
send_answer(const char *p, size_t n)
{
	send_garbage();
	out_write(p, n);
}

static void
send_out(void)
{
	send_answer(out.p, out.len);
}

/* Answers with a JSON-RPC error; r is NULL when the id is unknown. */
static void
send_error(const struct req *r, int code, const char *msg, size_t n)
{
	char s[16];

	out.len = 0;
	buf_adds(&out, "{\"jsonrpc\":\"2.0\",\"id\":");
	if (r == NULL)
		buf_adds(&out, "null");
	else
		buf_add(&out, r->id, r->idlen);
	(void)snprintf(s, sizeof(s), "%d", code);
	buf_adds(&out, ",\"error\":{\"code\":");
	buf_adds(&out, s);
	buf_adds(&out, ",\"message\":");
	json_str(&out, msg, n);
	buf_adds(&out, "}}\n");
	send_out();
}

static void
send_errorz(const struct req *r, int code, const char *msg)
{
	send_error(r, code, msg, strlen(msg));
}

static void
build_text(struct buf *b, const struct req *r, const char *text, size_t n,
    int iserror)
{
	ans_begin(b, r);
	buf_adds(b, "{\"content\":[{\"type\":\"text\",\"text\":");
	json_str(b, text, n);
	buf_adds(b, "}]");
	if (iserror)
		buf_adds(b, ",\"isError\":true");
	buf_addc(b, '}');
	ans_end(b);
}

static void
send_text(const struct req *r, const char *text, size_t n, int iserror)
{
	build_text(&out, r, text, n, iserror);
	send_out();
}

static void
send_textz(const struct req *r, const char *text, int iserror)
{
	send_text(r, text, strlen(text), iserror);
}

/*
 * Timers: answers that leave later.  Microseconds, so that an answer never
 * leaves before its time because of rounding.
 */

static int64_t
now_us(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void
timer_insert(struct timer *t, int64_t delay_us)
{
	struct timer **pp;

	t->due = now_us() + delay_us;
	/* Answers due at the same time leave in the order they were asked. */
	for (pp = &timers; *pp != NULL && (*pp)->due <= t->due;
	    pp = &(*pp)->next)
		continue;
	t->next = *pp;
	*pp = t;
}

static void
timer_add(int64_t delay_us, const struct buf *b)
{
	struct timer *t;

	if ((t = malloc(sizeof(*t))) == NULL ||
	    (t->text = malloc(b->len)) == NULL)
		die("out of memory");
	memcpy(t->text, b->p, b->len);
	t->len = b->len;
	t->exitcode = -1;
	timer_insert(t, delay_us);
}

/* An exit that happens later, after the answers due before it. */
static void
timer_exit(int64_t delay_us, int code)
{
	struct timer *t;

	if ((t = calloc(1, sizeof(*t))) == NULL)
		die("out of memory");
	t->exitcode = code;
	timer_insert(t, delay_us);
}

/* The poll() timeout until the next answer is due, rounded up. */
static int
timer_timeout(void)
{
	int64_t d;

	if (timers == NULL)
		return -1;
	d = timers->due - now_us();
	if (d <= 0)
		return 0;
	d = (d + 999) / 1000;
	return d > INT_MAX ? INT_MAX : (int)d;
}

static void
timer_fire(void)
{
	struct timer *t;
	int64_t now;

	now = now_us();
	while ((t = timers) != NULL && t->due <= now) {
		timers = t->next;
		if (t->exitcode >= 0) {
			logmsg("mock-server: exiting with status %d\n",
			    t->exitcode);
			exit(t->exitcode);
		}
		send_answer(t->text, t->len);
		free(t->text);
		free(t);
	}
}

/*
 * Tools.
 */

static void
tool_push(const struct tool *t)
{
	struct tool *p;
	size_t cap;

	if (ntools == captools) {
		cap = captools == 0 ? 64 : captools * 2;
		if ((p = reallocarray(tools, cap, sizeof(*p))) == NULL)
			die("out of memory");
		tools = p;
		captools = cap;
	}
	tools[ntools++] = *t;
}

static void
tool_push_echo(const char *name, const char *desc)
{
	struct tool t = { name, desc, SCHEMA_ANY, NULL, tool_echo_args };

	if (t.name == NULL)
		die("out of memory");
	tool_push(&t);
}

static void
tool_render(struct buf *b, const struct tool *t)
{
	buf_adds(b, "{\"name\":");
	json_strz(b, t->name);
	buf_adds(b, ",\"description\":");
	json_strz(b, t->desc);
	buf_adds(b, ",\"inputSchema\":");
	buf_adds(b, t->input);
	if (t->output != NULL) {
		buf_adds(b, ",\"outputSchema\":");
		buf_adds(b, t->output);
	}
	buf_addc(b, '}');
}

static const struct tool *
tool_find(const char *name, size_t n)
{
	size_t i;

	/* The first of equal names wins, so --tool-name cannot hide echo. */
	for (i = 0; i < ntools; i++)
		if (strlen(tools[i].name) == n &&
		    memcmp(tools[i].name, name, n) == 0)
			return &tools[i];
	return NULL;
}

/* Returns 1 and the string in b, 0 if absent, -1 if not a string. */
static int
arg_string(const struct req *r, int args, const char *key, struct buf *b)
{
	int v;

	if ((v = obj_get(r->m, args, key)) == -1)
		return 0;
	return tok_string(r->m, v, b) == 0 ? 1 : -1;
}

static int
arg_number(const struct req *r, int args, const char *key, double *d)
{
	int v;

	if ((v = obj_get(r->m, args, key)) == -1)
		return 0;
	return tok_number(r->m, v, d) == 0 ? 1 : -1;
}

static void
tool_echo(const struct req *r, int args)
{
	if (arg_string(r, args, "message", &sarg) != 1) {
		send_textz(r, "echo: message must be a string", 1);
		return;
	}
	send_text(r, sarg.p, sarg.len, 0);
}

static void
tool_add(const struct req *r, int args)
{
	double a, b, sum;

	if (arg_number(r, args, "a", &a) != 1 ||
	    arg_number(r, args, "b", &b) != 1) {
		send_textz(r, "add: a and b must be numbers", 1);
		return;
	}
	sum = a + b;
	/* JSON has no infinity; inf - inf is NaN, which differs from 0. */
	if (sum - sum != 0) {
		send_textz(r, "add: the sum is too large", 1);
		return;
	}
	sarg.len = 0;
	buf_num(&sarg, sum);
	ans_begin(&out, r);
	buf_adds(&out, "{\"content\":[{\"type\":\"text\",\"text\":\"");
	buf_add(&out, sarg.p, sarg.len);
	buf_adds(&out, "\"}],\"structuredContent\":{\"sum\":");
	buf_add(&out, sarg.p, sarg.len);
	buf_adds(&out, "}}");
	ans_end(&out);
	send_out();
}

static void
tool_sleep(const struct req *r, int args)
{
	double ms;
	int64_t us;

	if (arg_number(r, args, "ms", &ms) != 1 || ms < 0 || ms > DELAY_MAX) {
		send_textz(r, "sleep: ms must be a number from 0 to 1e12", 1);
		return;
	}
	sarg.len = 0;
	buf_adds(&sarg, "slept ");
	buf_num(&sarg, ms);
	build_text(&out, r, sarg.p, sarg.len, 0);
	us = ms * 1000;
	if (us < ms * 1000)
		us++;
	timer_add(us, &out);
}

/*
 * Writes the answer in pieces from one block of 'x', so that tens of MB
 * cost neither memory nor copying.
 */
static void
tool_big(const struct req *r, int args)
{
	static char xs[READ_CHUNK];
	static const char tail[] = "\"}]}}\n";
	double d;
	size_t n, k;

	if (arg_number(r, args, "bytes", &d) != 1 || d < 0 || d > BIG_MAX ||
	    d != (double)(uint64_t)d) {
		send_textz(r, "big: bytes must be an integer from 0 to 1e10",
		    1);
		return;
	}
	if (xs[0] != 'x')
		memset(xs, 'x', sizeof(xs));
	ans_begin(&out, r);
	buf_adds(&out, "{\"content\":[{\"type\":\"text\",\"text\":\"");
	send_out();
	for (n = d; n > 0; n -= k) {
		k = n < sizeof(xs) ? n : sizeof(xs);
		out_write(xs, k);
	}
	out_write(tail, sizeof(tail) - 1);
}

static void
tool_crash(const struct req *r, int args)
{
	double d;
	int code = 3;

	if (arg_number(r, args, "code", &d) == 1 && d >= 0 && d <= 255)
		code = d;
	logmsg("mock-server: crashing\n");
	_exit(code);
}

static void
tool_fail(const struct req *r, int args)
{
	if (arg_string(r, args, "message", &sarg) != 1) {
		sarg.len = 0;
		buf_adds(&sarg, "failure requested");
	}
	send_text(r, sarg.p, sarg.len, 1);
}

static void
tool_rpc_error(const struct req *r, int args)
{
	if (arg_string(r, args, "message", &sarg) != 1) {
		sarg.len = 0;
		buf_adds(&sarg, "error requested");
	}
	send_error(r, -32000, sarg.p, sarg.len);
}

#define STRUCTURED	"{\"answer\":42,\"items\":[\"a\",\"b\"]}"

static void
tool_structured(const struct req *r, int args)
{
	(void)args;
	ans_begin(&out, r);
	buf_adds(&out, "{\"content\":[{\"type\":\"text\",\"text\":");
	json_strz(&out, STRUCTURED);
	buf_adds(&out, "}],\"structuredContent\":" STRUCTURED "}");
	ans_end(&out);
	send_out();
}

static void
tool_image(const struct req *r, int args)
{
	(void)args;
	ans_begin(&out, r);
	buf_adds(&out, "{\"content\":[{\"type\":\"image\",\"data\":\"" PNG_1X1
	    "\",\"mimeType\":\"image/png\"}]}");
	ans_end(&out);
	send_out();
}

static void
tool_env(const struct req *r, int args)
{
	const char *v;

	if (arg_string(r, args, "name", &sarg) != 1) {
		send_textz(r, "env: name must be a string", 1);
		return;
	}
	v = getenv(sarg.p);
	send_textz(r, v != NULL ? v : "(unset)", 0);
}

static void
tool_cwd(const struct req *r, int args)
{
	(void)args;
	sarg.len = 0;
	buf_reserve(&sarg, 256);
	while (getcwd(sarg.p, sarg.cap) == NULL) {
		if (errno != ERANGE) {
			send_textz(r, strerror(errno), 1);
			return;
		}
		buf_reserve(&sarg, sarg.cap + 1);
	}
	send_textz(r, sarg.p, 0);
}

static void
tool_init_params(const struct req *r, int args)
{
	(void)args;
	if (gotinit)
		send_text(r, initparams.p, initparams.len, 0);
	else
		send_textz(r, "null", 0);
}

static void
tool_notify(const struct req *r, int args)
{
	static const char note[] =
	    "{\"jsonrpc\":\"2.0\","
	    "\"method\":\"notifications/tools/list_changed\"}\n";
	char name[32];

	(void)args;
	(void)snprintf(name, sizeof(name), "added_%d", ++nadded);
	tool_push_echo(strdup(name),
	    "Added at run time; echoes its arguments.");
	/* The notification goes first: whoever sees "ok" has seen it. */
	out_write(note, sizeof(note) - 1);
	send_textz(r, "ok", 0);
}

static void
tool_stderr(const struct req *r, int args)
{
	if (arg_string(r, args, "text", &sarg) != 1) {
		send_textz(r, "stderr: text must be a string", 1);
		return;
	}
	buf_addc(&sarg, '\n');
	(void)write_all(2, sarg.p, sarg.len);
	send_textz(r, "ok", 0);
}

static void
tool_echo_args(const struct req *r, int args)
{
	const char *p = "{}";
	size_t n = 2;

	if (args != -1)
		tok_raw(r->m, args, &p, &n);
	send_text(r, p, n, 0);
}

/*
 * Hostile tools (--hostile).
 */

/* Writes n copies of c to stdout, from one block: GBs cost no memory. */
static void
write_repeat(char c, size_t n)
{
	static char block[READ_CHUNK];
	size_t k;

	memset(block, c, sizeof(block));
	for (; n > 0; n -= k) {
		k = n < sizeof(block) ? n : sizeof(block);
		out_write(block, k);
	}
}

static int
arg_size(const struct req *r, int args, const char *key, size_t *n)
{
	double d;

	if (arg_number(r, args, key, &d) != 1 || d < 0 || d > BIG_MAX ||
	    d != (double)(uint64_t)d)
		return -1;
	*n = d;
	return 0;
}

/* Returns 1 and the value in *v, 0 if absent, -1 if not a boolean. */
static int
arg_bool(const struct req *r, int args, const char *key, int *v)
{
	const jsmntok_t *t;
	int i;

	if ((i = obj_get(r->m, args, key)) == -1)
		return 0;
	t = &r->m->tok[i];
	if (t->type != JSMN_PRIMITIVE)
		return -1;
	if (t->end - t->start == 4 &&
	    memcmp(r->m->js + t->start, "true", 4) == 0)
		*v = 1;
	else if (t->end - t->start == 5 &&
	    memcmp(r->m->js + t->start, "false", 5) == 0)
		*v = 0;
	else
		return -1;
	return 1;
}

/* Its stdout is gone, the process stays (with --linger, past EOF too). */
static void
tool_close_stdout(const struct req *r, int args)
{
	(void)r;
	(void)args;
	logmsg("mock-server: closing stdout\n");
	stdout_closed = 1;
	(void)close(1);
}

static void
tool_exit_after(const struct req *r, int args)
{
	double ms, d;
	int code = 0;

	if (arg_number(r, args, "ms", &ms) != 1 || ms < 0 || ms > DELAY_MAX) {
		send_textz(r, "exit_after: ms must be a number from 0 to 1e12",
		    1);
		return;
	}
	if (arg_number(r, args, "code", &d) == 1 && d >= 0 && d <= 255)
		code = d;
	send_textz(r, "exiting", 0);
	timer_exit((int64_t)(ms * 1000), code);
}

static void
tool_never_answer(const struct req *r, int args)
{
	(void)r;
	(void)args;
	logmsg("mock-server: not answering\n");
}

static void
tool_answer_twice(const struct req *r, int args)
{
	(void)args;
	send_textz(r, "first", 0);
	send_textz(r, "second", 0);
}

/* One answer line with this raw id. */
static void
stray(const char *id, size_t n)
{
	struct buf b = { 0 };

	buf_adds(&b, "{\"jsonrpc\":\"2.0\",\"id\":");
	buf_add(&b, id, n);
	buf_adds(&b, ",\"result\":{\"content\":[{\"type\":\"text\","
	    "\"text\":\"stray\"}]}}\n");
	out_write(b.p, b.len);
	free(b.p);
}

static void
strayz(const char *id)
{
	stray(id, strlen(id));
}

/*
 * Answers that match no request: ids never sent, ids of the wrong type,
 * the id of the previous request (answered long ago), answers without an
 * id or with both result and error.  Then the real answer.
 */
static void
tool_stray_answers(const struct req *r, int args)
{
	static const char *const ids[] = {
		"987654321", "-1", "0", "\"987654321\"", "null", "1.5",
		"1e3", "{\"id\":1}", "[1]", "true", "false",
		"99999999999999999999999", "\"\"",
	};
	static const char *const lines[] = {
		"{\"jsonrpc\":\"2.0\",\"result\":{}}\n",
		"{\"jsonrpc\":\"2.0\",\"id\":987654322,\"error\":{\"code\":-1,"
		"\"message\":\"stray error\"}}\n",
		"{\"jsonrpc\":\"2.0\",\"id\":987654323}\n",
		"{\"jsonrpc\":\"2.0\",\"id\":987654324,\"result\":{},"
		"\"error\":{\"code\":1,\"message\":\"both\"}}\n",
	};
	struct buf b = { 0 };
	long long prev;
	char s[64], *end;
	size_t i;

	(void)args;
	for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
		strayz(ids[i]);
	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		out_write(lines[i], strlen(lines[i]));
	/* The request's own id, as a string when it is a number. */
	buf_addc(&b, '"');
	buf_add(&b, r->id, r->idlen);
	buf_addc(&b, '"');
	if (r->id[0] != '"')
		stray(b.p, b.len);
	free(b.p);
	/* The previous request's id: answered already. */
	buf_nul(&sarg);
	errno = 0;
	prev = strtoll(r->id, &end, 10);
	if (errno == 0 && end == r->id + r->idlen && prev > 1) {
		(void)snprintf(s, sizeof(s), "%lld", prev - 1);
		strayz(s);
	}
	send_textz(r, "ok", 0);
}

/* The only answer carries the id as the other JSON type. */
static void
tool_wrong_id_type(const struct req *r, int args)
{
	struct buf b = { 0 };
	size_t i;
	int digits = 1;

	(void)args;
	if (r->id[0] == '"') {
		for (i = 1; i + 1 < r->idlen; i++)
			if (r->id[i] < '0' || r->id[i] > '9')
				digits = 0;
		if (digits && r->idlen > 2)
			buf_add(&b, r->id + 1, r->idlen - 2);
		else
			buf_adds(&b, "0");
	} else {
		buf_addc(&b, '"');
		buf_add(&b, r->id, r->idlen);
		buf_addc(&b, '"');
	}
	stray(b.p, b.len);
	free(b.p);
}

/* Lines a broken server might write; none is a JSON-RPC message. */
static void
tool_garbage_lines(const struct req *r, int args)
{
	static const char *const lines[] = {
		"this is not json\n",
		"\n",
		"\r\n",
		"   \t  \n",
		"\xef\xbb\xbf\n",
		"\xff\xfe\x00\x01 binary \x02\x03\n",
		"{\"jsonrpc\":\"2.0\"\n",
		"{\"jsonrpc\":\"2.0\",\"id\":\n",
		"[1,2,3]\n",
		"[]\n",
		"null\n",
		"42\n",
		"\"a string\"\n",
		"{}\n",
		"{\"a\":1}{\"b\":2}\n",
		"{\"jsonrpc\":\"2.0\",\"method\":123}\n",
		"{\"jsonrpc\":\"2.0\",\"method\":null,\"id\":1}\n",
		"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\","
		"\"params\":\"not an object\"}\n",
		"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\","
		"\"params\":{\"progressToken\":987654321,\"progress\":1}}\n",
		"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\","
		"\"params\":{\"progressToken\":{\"a\":[]},\"progress\":1}}\n",
		"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
		"\"params\":{\"requestId\":{}}}\n",
		"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/"
		"list_changed\",\"params\":[]}\n",
		"{\"jsonrpc\":\"2.0\",\"method\":\"no/such/request\","
		"\"id\":{\"bad\":true}}\n",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"a\":tru}}\n",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"a\" \"b\"}}\n",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}} trailing\n",
		"{\"jsonrpc\":\"2.0\",\"id\":\"\x01\",\"result\":{}}\n",
	};
	size_t i, depth = 0;

	if (obj_get(r->m, args, "depth") != -1 &&
	    arg_size(r, args, "depth", &depth) == -1) {
		send_textz(r, "garbage_lines: depth must be an integer", 1);
		return;
	}
	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		out_write(lines[i], strlen(lines[i]));
	/*
	 * With depth: nesting that a recursive parser's stack would not
	 * like, balanced (a valid JSON text, but no message) and not.
	 */
	write_repeat('[', depth);
	write_repeat(']', depth);
	out_write("\n", 1);
	write_repeat('{', depth);
	out_write("\n", 1);
	/* A NUL byte in the middle of an otherwise valid answer. */
	{
		static const char nul[] =
		    "{\"jsonrpc\":\"2.0\",\"id\":1,\0\"result\":{}}\n";

		out_write(nul, sizeof(nul) - 1);
	}
	send_textz(r, "ok", 0);
}

/*
 * A child of ours writes bytes to stderr in 100-byte lines, paced to take
 * about ms, then exits; we answer at once and go on serving.
 */
static void
tool_flood_stderr(const struct req *r, int args)
{
	char line[100], s[64];
	size_t bytes, done = 0, paced = 0, k;
	double ms = 0;
	int64_t t0, due, left;
	struct timespec ts;
	pid_t pid;

	if (arg_size(r, args, "bytes", &bytes) == -1 ||
	    arg_number(r, args, "ms", &ms) == -1 || ms < 0 || ms > DELAY_MAX) {
		send_textz(r, "flood_stderr: bytes must be an integer from 0 "
		    "to 1e10, ms a number", 1);
		return;
	}
	(void)signal(SIGCHLD, SIG_IGN);
	if ((pid = fork()) == -1) {
		send_textz(r, "flood_stderr: fork failed", 1);
		return;
	}
	if (pid > 0) {
		(void)snprintf(s, sizeof(s), "flooding pid=%ld", (long)pid);
		send_textz(r, s, 0);
		return;
	}
	(void)close(0);
	(void)close(1);
	memset(line, 'e', sizeof(line));
	line[sizeof(line) - 1] = '\n';
	t0 = now_us();
	while (done < bytes) {
		k = bytes - done < sizeof(line) ? bytes - done : sizeof(line);
		(void)snprintf(line, sizeof(line), "flood %012zu ", done);
		line[strlen(line)] = 'e';
		if (write_all(2, line, k) == -1)
			_exit(1);
		done += k;
		/* Pace per 64 KB: ahead of schedule means sleep. */
		if (ms > 0 && done - paced >= 65536) {
			paced = done;
			due = t0 + (int64_t)(ms * 1000 * done / bytes);
			while ((left = due - now_us()) > 0) {
				ts.tv_sec = left / 1000000;
				ts.tv_nsec = left % 1000000 * 1000;
				(void)nanosleep(&ts, NULL);
			}
		}
	}
	logmsg("\nmock-server: flood done bytes=%zu ms=%lld\n", done,
	    (long long)((now_us() - t0) / 1000));
	_exit(0);
}

/*
 * Like big, in the order the TypeScript SDK writes: the id comes last.
 * With delay_ms the whole line is sent that much later (a timer).
 */
static void
tool_big_id_last(const struct req *r, int args)
{
	struct buf b = { 0 };
	double delay = 0;
	size_t n;

	if (arg_size(r, args, "bytes", &n) == -1 ||
	    arg_number(r, args, "delay_ms", &delay) == -1 || delay < 0 ||
	    delay > 60000 || (delay > 0 && n > 64 * 1024 * 1024)) {
		send_textz(r, "big_id_last: bytes must be an integer from 0 to "
		    "1e10 (64 MiB with delay_ms), delay_ms from 0 to 60000", 1);
		return;
	}
	send_garbage();
	buf_adds(&b, "{\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"");
	if (delay > 0) {
		while (n-- > 0)
			buf_addc(&b, 'x');
	} else {
		out_write(b.p, b.len);
		write_repeat('x', n);
		b.len = 0;
	}
	buf_adds(&b, "\"}]},\"jsonrpc\":\"2.0\",\"id\":");
	buf_add(&b, r->id, r->idlen);
	buf_adds(&b, "}\n");
	if (delay > 0)
		timer_add((int64_t)(delay * 1000), &b);
	else
		out_write(b.p, b.len);
	free(b.p);
}

static void
tool_big_noise(const struct req *r, int args)
{
	size_t n;

	if (arg_size(r, args, "bytes", &n) == -1) {
		send_textz(r, "big_noise: bytes must be an integer from 0 to "
		    "1e10", 1);
		return;
	}
	write_repeat('z', n);
	out_write("\n", 1);
	send_textz(r, "ok", 0);
}

/* Many log notifications, written as fast as the reader takes them. */
static void
tool_log_flood(const struct req *r, int args)
{
	struct buf b = { 0 };
	size_t count, bytes = 100, i;
	char s[32];

	if (arg_size(r, args, "count", &count) == -1 ||
	    (obj_get(r->m, args, "bytes") != -1 &&
	    arg_size(r, args, "bytes", &bytes) == -1)) {
		send_textz(r, "log_flood: count and bytes must be integers",
		    1);
		return;
	}
	for (i = 0; i < count; i++) {
		b.len = 0;
		(void)snprintf(s, sizeof(s), "%zu ", i);
		buf_adds(&b, "{\"jsonrpc\":\"2.0\",\"method\":"
		    "\"notifications/message\",\"params\":{\"level\":\"info\","
		    "\"logger\":\"flood\",\"data\":\"");
		buf_adds(&b, s);
		out_write(b.p, b.len);
		write_repeat('l', bytes);
		out_write("\"}}\n", 4);
	}
	free(b.p);
	send_textz(r, "ok", 0);
}

/* A text with bytes that are not UTF-8, written raw. */
static void
tool_bad_utf8(const struct req *r, int args)
{
	(void)args;
	ans_begin(&out, r);
	buf_adds(&out, "{\"content\":[{\"type\":\"text\",\"text\":\"bad "
	    "\xc3\x28 \xff \xed\xa0\x80 \xf8\x88\x80\x80\x80 \xc0\xaf end\"}]}");
	ans_end(&out);
	send_out();
}

/* Stuck, as far as its input goes: alive, but never reading again. */
static void
tool_stop_reading(const struct req *r, int args)
{
	(void)args;
	send_textz(r, "ok", 0);
	logmsg("mock-server: no longer reading stdin\n");
	stdin_done = 1;
}

/* The framing a child may use and the workbench must tolerate. */
static void
tool_framing(const struct req *r, int args)
{
	(void)args;
	out_write("\n\r\n\n", 4);
	out_write("\xef\xbb\xbf", 3);
	build_text(&out, r, "ok", 2, 0);
	out.len--;		/* the '\n' */
	buf_adds(&out, "\r\n");
	send_out();
}

/*
 * An answer that breaks after bytes 'x' of its text went out (a line that
 * is no JSON, an exit, a closed stdout), or that does not: with badutf8,
 * two of the bytes, at bytes/2, are 0xff 0xfe; with ok, it is big's.
 */
static void
tool_big_cut(const struct req *r, int args)
{
	static const char *const thens[] = {
		"garbage", "exit", "close", "badutf8", "ok", "pause", "trickle",
	};
	enum { GARBAGE, EXIT, CLOSE, BADUTF8, OK, PAUSE, TRICKLE };
	struct timespec half = { 0, 500 * 1000000L };
	struct timespec ts;
	struct buf b = { 0 };
	size_t n, i;
	double pause = 200;
	int idlast = 0;

	if (arg_size(r, args, "bytes", &n) == -1 ||
	    arg_string(r, args, "then", &sarg) != 1 ||
	    arg_bool(r, args, "idLast", &idlast) == -1 ||
	    arg_number(r, args, "pause_ms", &pause) == -1 || pause < 0 ||
	    pause > 60000) {
		send_textz(r, "big_cut: bytes must be an integer from 0 to "
		    "1e10, then a string, idLast a boolean, pause_ms from 0 "
		    "to 60000", 1);
		return;
	}
	ts.tv_sec = (time_t)(pause / 1000);
	ts.tv_nsec = (long)((pause - (double)ts.tv_sec * 1000) * 1e6);
	for (i = 0; i < sizeof(thens) / sizeof(thens[0]); i++)
		if (strcmp(sarg.p, thens[i]) == 0)
			break;
	if (i == sizeof(thens) / sizeof(thens[0]) || (i == BADUTF8 && n < 2)) {
		send_textz(r, "big_cut: then must be garbage, exit, close, "
		    "badutf8, ok, pause or trickle (badutf8 with 2 bytes or more)",
		    1);
		return;
	}
	send_garbage();
	if (idlast)
		buf_adds(&b, "{\"result\":");
	else
		ans_begin(&b, r);
	buf_adds(&b, "{\"content\":[{\"type\":\"text\",\"text\":\"");
	out_write(b.p, b.len);
	if (i == BADUTF8) {
		write_repeat('x', n / 2);
		out_write("\xff\xfe", 2);
		write_repeat('x', n - n / 2 - 2);
	} else
		write_repeat('x', n);
	/* Slow as can be, yet never quite stalled. */
	for (n = 0; i == TRICKLE && n < 60; n++) {
		(void)nanosleep(&half, NULL);
		out_write("x", 1);
	}
	switch (i) {
	case GARBAGE:
		out_write("!!not json\n", 11);
		break;
	case EXIT:
		logmsg("mock-server: exiting mid-answer\n");
		_exit(3);
	case CLOSE:
		logmsg("mock-server: closing stdout mid-answer\n");
		stdout_closed = 1;
		(void)close(1);
		break;
	default:
		b.len = 0;
		buf_adds(&b, "\"}]}");
		if (i == PAUSE) {
			/* The result is whole; its line ends a moment later. */
			for (n = 0; n < 1000; n++)
				buf_adds(&b, " ");
			out_write(b.p, b.len);
			b.len = 0;
			(void)nanosleep(&ts, NULL);
		}
		if (idlast) {
			buf_adds(&b, ",\"jsonrpc\":\"2.0\",\"id\":");
			buf_add(&b, r->id, r->idlen);
		}
		buf_adds(&b, "}\n");
		out_write(b.p, b.len);
		break;
	}
	free(b.p);
}

/*
 * Prompts and resources (--prompts, --resources N).  Prompts: greet
 * (argument name), plain, and added_K per change_lists.  Resources:
 * mock://r/0 .. N-1, mock://blob, the --resource-uri ones and
 * mock://added/K; one template, mock://item/{id}.  With --fail-lists
 * their lists answer errors.
 */
static size_t
nprompts(void)
{
	return 2 + (size_t)ncatadded;
}

static void
render_prompt(struct buf *b, size_t i)
{
	char s[32];

	if (i == 0) {
		buf_adds(b, "{\"name\":\"greet\",\"title\":\"Greet\","
		    "\"description\":\"Greets someone.\",\"arguments\":"
		    "[{\"name\":\"name\",\"required\":true}],"
		    "\"_meta\":{\"mock\":1}}");
		return;
	}
	if (i == 1)
		(void)snprintf(s, sizeof(s), "plain");
	else
		(void)snprintf(s, sizeof(s), "added_%zu", i - 1);
	buf_adds(b, "{\"name\":\"");
	buf_adds(b, s);
	buf_adds(b, "\"}");
}

static size_t
nresources(void)
{
	return (size_t)opt.nres + 1 + nxuris + (size_t)ncatadded;
}

/* Resource i's URI. */
static void
resource_uri(struct buf *b, size_t i)
{
	char s[48];

	if (i < (size_t)opt.nres)
		(void)snprintf(s, sizeof(s), "mock://r/%zu", i);
	else if (i == (size_t)opt.nres)
		(void)snprintf(s, sizeof(s), "mock://blob");
	else if (i - opt.nres - 1 < nxuris) {
		json_strz(b, xuris[i - opt.nres - 1]);
		return;
	} else
		(void)snprintf(s, sizeof(s), "mock://added/%zu",
		    (size_t)(i - opt.nres - nxuris));
	json_strz(b, s);
}

static void
render_resource(struct buf *b, size_t i)
{
	buf_adds(b, "{\"uri\":");
	resource_uri(b, i);
	buf_adds(b, ",\"name\":");
	resource_uri(b, i);
	buf_adds(b, ",\"description\":\"A resource of ");
	buf_adds(b, opt.name);
	buf_adds(b, ".\",\"mimeType\":\"text/plain\"}");
}

/*
 * Template 0 is mock://item/{id}; with --templates N, N more follow, each
 * x{a}{a}...{a}Z<i> with 32 expressions, which a URI of x and many a's
 * matches only after much backtracking; but among the first 1000, every
 * twentieth is y and 64000 '{' without a '}' then Z<i>, which a URI of y
 * and many '{' matches only after each '{' looked for its '}' to the end.
 */
static void
render_template(struct buf *b, size_t i)
{
	int braces = i < 1000 && i % 20 == 10, k;
	char s[32];

	if (i == 0) {
		buf_adds(b, "{\"uriTemplate\":\"mock://item/{id}\","
		    "\"name\":\"item\",\"description\":\"An item by id.\"}");
		return;
	}
	buf_adds(b, braces ? "{\"uriTemplate\":\"y" : "{\"uriTemplate\":\"x");
	for (k = 0; braces && k < 64000; k++)
		buf_addc(b, '{');
	for (k = 0; !braces && k < 32; k++)
		buf_adds(b, "{a}");
	(void)snprintf(s, sizeof(s), "Z%zu", i);
	buf_adds(b, s);
	buf_adds(b, "\",\"name\":\"");
	buf_adds(b, s);
	buf_adds(b, "\"}");
}

static int
list_fails(const struct req *r)
{
	if (opt.faillists)
		send_errorz(r, -32603, "list failure");
	return opt.faillists;
}

static void
do_prompts_list(const struct req *r)
{
	if (!list_fails(r))
		send_page(r, "prompts", nprompts(), render_prompt);
}

static void
do_resources_list(const struct req *r)
{
	if (!list_fails(r))
		send_page(r, "resources", nresources(), render_resource);
}

static void
do_templates_list(const struct req *r)
{
	if (!list_fails(r))
		send_page(r, "resourceTemplates", 1 + (size_t)opt.ntpl,
		    render_template);
}

/* prompts/get: the name and arguments it got, back as one message. */
static void
do_prompts_get(const struct req *r)
{
	const char *p = "{}";
	size_t n = 2;
	int name = obj_get(r->m, r->params, "name");
	int args = obj_get(r->m, r->params, "arguments");

	if (name == -1 || tok_string(r->m, name, &sname) == -1) {
		send_errorz(r, -32602, "prompts/get: name must be a string");
		return;
	}
	if (strcmp(sname.p, "greet") != 0 && strcmp(sname.p, "plain") != 0 &&
	    strncmp(sname.p, "added_", 6) != 0) {
		send_errorz(r, -32602, "Unknown prompt");
		return;
	}
	if (args != -1)
		tok_raw(r->m, args, &p, &n);
	ans_begin(&out, r);
	buf_adds(&out, "{\"description\":\"from ");
	buf_adds(&out, opt.name);
	buf_adds(&out, "\",\"messages\":[{\"role\":\"user\",\"content\":"
	    "{\"type\":\"text\",\"text\":");
	sarg.len = 0;
	buf_add(&sarg, sname.p, sname.len);
	buf_addc(&sarg, ' ');
	buf_add(&sarg, p, n);
	json_str(&out, sarg.p, sarg.len);
	buf_adds(&out, "}}]}");
	ans_end(&out);
	send_out();
}

/* completion/complete: the ref and argument it got, as values. */
static void
do_complete(const struct req *r)
{
	const char *p = "null", *q = "null";
	size_t n = 4, m = 4;
	int ref = obj_get(r->m, r->params, "ref");
	int arg = obj_get(r->m, r->params, "argument");

	if (ref != -1)
		tok_raw(r->m, ref, &p, &n);
	if (arg != -1)
		tok_raw(r->m, arg, &q, &m);
	ans_begin(&out, r);
	buf_adds(&out, "{\"completion\":{\"values\":[");
	json_str(&out, p, n);
	buf_addc(&out, ',');
	json_str(&out, q, m);
	buf_adds(&out, "],\"total\":2,\"hasMore\":false}}");
	ans_end(&out);
	send_out();
}

/*
 * resources/read.  mock://blob is bytes 0..255 in base64, with _meta
 * written with escapes, to see that the answer passes byte for byte.
 */
static void
do_resources_read(const struct req *r)
{
	static const char blob[] = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8g"
	    "ISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+P0BBQkNERUZHSElKS0xNTk9Q"
	    "UVJTVFVWV1hZWltcXV5fYGFiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6e3x9fn+A"
	    "gYKDhIWGh4iJiouMjY6PkJGSk5SVlpeYmZqbnJ2en6ChoqOkpaanqKmqq6ytrq+w"
	    "sbKztLW2t7i5uru8vb6/wMHCw8TFxsfIycrLzM3Oz9DR0tPU1dbX2Nna29zd3t/g"
	    "4eLj5OXm5+jp6uvs7e7v8PHy8/T19vf4+fr7/P3+/w==";
	int uri = obj_get(r->m, r->params, "uri");

	if (uri == -1 || tok_string(r->m, uri, &sarg) == -1) {
		send_errorz(r, -32602, "resources/read: uri must be a string");
		return;
	}
	ans_begin(&out, r);
	buf_adds(&out, "{\"contents\":[{\"uri\":");
	json_str(&out, sarg.p, sarg.len);
	if (strcmp(sarg.p, "mock://blob") == 0) {
		buf_adds(&out, ",\"mimeType\":\"application/octet-stream\","
		    "\"blob\":\"");
		buf_adds(&out, blob);
		buf_adds(&out, "\"}],\"_meta\":{\"x\":\"\\u00e9\\/\\n\"}}");
	} else {
		buf_adds(&out, ",\"text\":");
		buf_addc(&sarg, ' ');
		buf_adds(&sarg, "from ");
		buf_adds(&sarg, opt.name);
		json_str(&out, sarg.p, sarg.len);
		buf_adds(&out, "}]}");
	}
	ans_end(&out);
	send_out();
}

static void
tool_change_lists(const struct req *r, int args)
{
	static const char note[] =
	    "{\"jsonrpc\":\"2.0\","
	    "\"method\":\"notifications/prompts/list_changed\"}\n"
	    "{\"jsonrpc\":\"2.0\","
	    "\"method\":\"notifications/resources/list_changed\"}\n";

	(void)args;
	ncatadded++;
	out_write(note, sizeof(note) - 1);
	send_textz(r, "ok", 0);
}

/* Says the URI changed, subscribed to or not: the workbench filters. */
static void
tool_touch(const struct req *r, int args)
{
	struct buf b = { 0 };

	if (arg_string(r, args, "uri", &sarg) != 1) {
		send_textz(r, "touch: uri must be a string", 1);
		return;
	}
	buf_adds(&b, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/resources/updated\",\"params\":{\"uri\":");
	json_str(&b, sarg.p, sarg.len);
	buf_adds(&b, "}}\n");
	out_write(b.p, b.len);
	free(b.p);
	send_textz(r, "ok", 0);
}

/*
 * Methods.
 */

static void
do_initialize(const struct req *r)
{
	const char *p;
	size_t n;
	int v;

	gotinit = r->params != -1;
	initparams.len = 0;
	if (gotinit) {
		tok_raw(r->m, r->params, &p, &n);
		buf_add(&initparams, p, n);
	}
	if (opt.exitoninit) {
		logmsg("mock-server: dying on init\n");
		exit(opt.exitcode);
	}
	if (opt.noinit)
		return;
	v = obj_get(r->m, r->params, "protocolVersion");
	if (v == -1 || tok_string(r->m, v, &sarg) == -1) {
		sarg.len = 0;
		buf_adds(&sarg, DEFAULT_PROTO);
	}
	ans_begin(&out, r);
	buf_adds(&out, "{\"protocolVersion\":");
	json_str(&out, sarg.p, sarg.len);
	buf_adds(&out, ",\"capabilities\":{\"tools\":{\"listChanged\":true},");
	if (opt.prompts)
		buf_adds(&out, "\"prompts\":{\"listChanged\":true},"
		    "\"completions\":{},");
	if (opt.nres >= 0)
		buf_adds(&out, "\"resources\":{\"subscribe\":true,"
		    "\"listChanged\":true},");
	buf_adds(&out, "\"logging\":{}},\"serverInfo\":{\"name\":");
	json_strz(&out, opt.name);
	buf_adds(&out, ",\"version\":\"" MOCK_VERSION "\"}}");
	ans_end(&out);
	if (opt.initdelay > 0)
		timer_add((int64_t)opt.initdelay * 1000, &out);
	else
		send_out();
}

static void
do_empty(const struct req *r)
{
	ans_begin(&out, r);
	buf_adds(&out, "{}");
	ans_end(&out);
	send_out();
}

/* Cursors are "page-N"; in --repeat-cursor mode "same" is page 0. */
static int
parse_cursor(const char *c, size_t *page)
{
	unsigned long long n;
	char *end;

	if (opt.repeat && strcmp(c, "same") == 0) {
		*page = 0;
		return 0;
	}
	if (strncmp(c, "page-", 5) != 0 || c[5] < '0' || c[5] > '9')
		return -1;
	errno = 0;
	n = strtoull(c + 5, &end, 10);
	if (errno != 0 || *end != '\0' || n > SIZE_MAX)
		return -1;
	*page = n;
	return 0;
}

/* A page of a list of n entries, each written by fn. */
static void
send_page(const struct req *r, const char *member, size_t n,
    void (*fn)(struct buf *, size_t))
{
	size_t size, page = 0, first, last, i;
	char s[40];
	int c;

	size = opt.pagesize > 0 ? (size_t)opt.pagesize : n > 0 ? n : 1;
	c = obj_get(r->m, r->params, "cursor");
	if (c != -1 && (tok_string(r->m, c, &sarg) == -1 ||
	    parse_cursor(sarg.p, &page) == -1 ||
	    (n > 0 && page > (n - 1) / size))) {
		send_errorz(r, -32602, "Invalid cursor");
		return;
	}
	first = page * size;
	last = n - first < size ? n : first + size;
	ans_begin(&out, r);
	buf_adds(&out, "{\"");
	buf_adds(&out, member);
	buf_adds(&out, "\":[");
	for (i = first; i < last; i++) {
		if (i > first)
			buf_addc(&out, ',');
		fn(&out, i);
	}
	buf_addc(&out, ']');
	if (opt.repeat || last < n) {
		if (opt.repeat)
			(void)snprintf(s, sizeof(s), "same");
		else
			(void)snprintf(s, sizeof(s), "page-%zu", page + 1);
		buf_adds(&out, ",\"nextCursor\":\"");
		buf_adds(&out, s);
		buf_addc(&out, '"');
	}
	buf_addc(&out, '}');
	ans_end(&out);
	send_out();
}

static void
render_tool(struct buf *b, size_t i)
{
	tool_render(b, &tools[i]);
}

static void
do_tools_list(const struct req *r)
{
	send_page(r, "tools", ntools, render_tool);
}

static int
is_null(const struct msg *m, int i)
{
	const jsmntok_t *t = &m->tok[i];

	return t->type == JSMN_PRIMITIVE && t->end - t->start == 4 &&
	    memcmp(m->js + t->start, "null", 4) == 0;
}

static void
do_tools_call(const struct req *r)
{
	const struct tool *t;
	struct buf e = { 0 };
	int name, args;

	name = obj_get(r->m, r->params, "name");
	if (name == -1 || tok_string(r->m, name, &sname) == -1) {
		send_errorz(r, -32602, "tools/call: name must be a string");
		return;
	}
	args = obj_get(r->m, r->params, "arguments");
	if (args != -1 && is_null(r->m, args))
		args = -1;
	if (args != -1 && r->m->tok[args].type != JSMN_OBJECT) {
		send_errorz(r, -32602,
		    "tools/call: arguments must be an object");
		return;
	}
	if ((t = tool_find(sname.p, sname.len)) != NULL) {
		t->fn(r, args);
		return;
	}
	buf_adds(&e, "Unknown tool: ");
	buf_add(&e, sname.p, sname.len);
	send_error(r, -32602, e.p, e.len);
	free(e.p);
}

static const struct method {
	const char	*name;
	void		(*fn)(const struct req *);
} methods[] = {
	{ "initialize", do_initialize },
	{ "ping", do_empty },
	{ "logging/setLevel", do_empty },
	{ "tools/list", do_tools_list },
	{ "tools/call", do_tools_call },
	{ "prompts/list", do_prompts_list },
	{ "prompts/get", do_prompts_get },
	{ "completion/complete", do_complete },
	{ "resources/list", do_resources_list },
	{ "resources/templates/list", do_templates_list },
	{ "resources/read", do_resources_read },
	{ "resources/subscribe", do_empty },
	{ "resources/unsubscribe", do_empty },
};

/* Ids are strings or numbers; null is not an id. */
static int
valid_id(const struct msg *m, int id)
{
	const jsmntok_t *t = &m->tok[id];

	return t->type == JSMN_STRING || (t->type == JSMN_PRIMITIVE &&
	    is_number(m->js + t->start, t->end - t->start));
}

static void
handle_msg(const struct msg *m)
{
	struct req r;
	size_t i;
	int id, method;

	method = obj_get(m, 0, "method");
	id = obj_get(m, 0, "id");
	/* Notifications, and answers to requests never sent, get nothing. */
	if (method == -1 || id == -1)
		return;
	if (!valid_id(m, id)) {
		send_errorz(NULL, -32600, "Invalid Request: bad id");
		return;
	}
	r.m = m;
	tok_raw(m, id, &r.id, &r.idlen);
	r.params = obj_get(m, 0, "params");
	if (tok_string(m, method, &sname) == -1) {
		send_errorz(&r, -32600, "Invalid Request: bad method");
		return;
	}
	/* Legacy servers that ignore the era probe, or exit on it. */
	if (opt.discover > 0 && sname.len == 15 &&
	    memcmp(sname.p, "server/discover", 15) == 0) {
		if (opt.discover == 2)
			exit(1);
		return;
	}
	if (r.params != -1 && m->tok[r.params].type != JSMN_OBJECT) {
		send_errorz(&r, -32602, "Invalid params: not an object");
		return;
	}
	for (i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
		if (strlen(methods[i].name) == sname.len &&
		    memcmp(methods[i].name, sname.p, sname.len) == 0) {
			methods[i].fn(&r);
			return;
		}
	}
	send_errorz(&r, -32601, "Method not found");
}

/*
 * Input.
 */

static int
is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* Tolerates \r\n, blank lines, surrounding blanks and a BOM. */
static void
handle_line(const char *p, size_t n)
{
	struct msg m;

	if (n >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0) {
		p += 3;
		n -= 3;
	}
	while (n > 0 && is_blank(p[0])) {
		p++;
		n--;
	}
	while (n > 0 && is_blank(p[n - 1]))
		n--;
	if (n == 0)
		return;
	if (msg_parse(&m, p, n) == -1) {
		send_errorz(NULL, -32700, "Parse error");
		return;
	}
	handle_msg(&m);
}

/* Returns 0 at end of input. */
static int
input_read(void)
{
	ssize_t n;

	buf_reserve(&in, READ_CHUNK);
	n = read(0, in.p + in.len, in.cap - in.len);
	if (n == -1) {
		if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
			return 1;
		logmsg("mock-server: stdin: %s\n", strerror(errno));
		return 0;
	}
	in.len += n;
	return n > 0;
}

/*
 * Handles every complete line.  Only new bytes are searched for '\n', so
 * a line of many MB read in small pieces costs linear time.
 */
static void
input_lines(void)
{
	size_t start = 0, end;
	char *nl;

	while ((nl = memchr(in.p + scanned, '\n', in.len - scanned)) != NULL) {
		end = nl - in.p;
		handle_line(in.p + start, end - start);
		start = scanned = end + 1;
	}
	memmove(in.p, in.p + start, in.len - start);
	in.len -= start;
	scanned = in.len;
}

static void
run(void)
{
	struct pollfd pfd;
	int r;

	for (;;) {
		/* A negative fd is ignored: only timers and signals remain. */
		pfd.fd = stdin_done ? -1 : 0;
		pfd.events = POLLIN;
		pfd.revents = 0;
		r = poll(&pfd, 1, timer_timeout());
		if (r == -1 && errno != EINTR)
			die("poll failed");
		timer_fire();
		if (r <= 0 || pfd.revents == 0)
			continue;
		/* At EOF, answers still pending are dropped. */
		if ((pfd.revents & POLLNVAL) != 0 || input_read() == 0) {
			handle_line(in.p, in.len);
			in.len = scanned = 0;
			if (!opt.linger)
				exit(0);
			/* --linger: keep running until a signal ends us. */
			logmsg("mock-server: stdin closed, lingering\n");
			stdin_done = 1;
			continue;
		}
		input_lines();
	}
}

/*
 * Startup.
 */

static const char	**extra;	/* --tool-name values */
static size_t		  nextra;

static void
usage(int status)
{
	logmsg("usage: mock-server [--tools N] [--page-size K]"
	    " [--repeat-cursor] [--tool-name NAME]...\n"
	    "\t[--no-init] [--exit-on-init CODE] [--init-delay MS]"
	    " [--garbage]\n"
	    "\t[--ignore-sigterm] [--grandchild] [--stderr-lines N]"
	    " [--name NAME] [--discover silent|exit]\n"
	    "\t[--hostile] [--linger] [--prompts] [--resources N]"
	    " [--resource-uri URI]...\n"
	    "\t[--fail-lists] [--templates N]\n");
	exit(status);
}

static long
num_arg(const char *flag, const char *s, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (s[0] == '\0' || *end != '\0' || errno != 0 || v < 0 || v > max) {
		logmsg("mock-server: %s: bad number: %s\n", flag, s);
		usage(2);
	}
	return v;
}

/* Flags without a value; returns 0 if f is not one. */
static int
bool_flag(const char *f)
{
	static const struct {
		const char	*name;
		int		*p;
	} flags[] = {
		{ "--repeat-cursor", &opt.repeat },
		{ "--no-init", &opt.noinit },
		{ "--garbage", &opt.garbage },
		{ "--ignore-sigterm", &opt.ignoreterm },
		{ "--grandchild", &opt.grandchild },
		{ "--hostile", &opt.hostile },
		{ "--linger", &opt.linger },
		{ "--prompts", &opt.prompts },
		{ "--fail-lists", &opt.faillists },
	};
	size_t i;

	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		if (strcmp(f, flags[i].name) == 0) {
			*flags[i].p = 1;
			return 1;
		}
	}
	return 0;
}

static void
value_flag(const char *f, const char *v)
{
	if (strcmp(f, "--tools") == 0)
		opt.ntools = num_arg(f, v, 10000000);
	else if (strcmp(f, "--page-size") == 0)
		opt.pagesize = num_arg(f, v, LONG_MAX);
	else if (strcmp(f, "--tool-name") == 0)
		extra[nextra++] = v;
	else if (strcmp(f, "--resources") == 0)
		opt.nres = num_arg(f, v, 1000000);
	else if (strcmp(f, "--templates") == 0)
		opt.ntpl = num_arg(f, v, 1000000);
	else if (strcmp(f, "--resource-uri") == 0)
		xuris[nxuris++] = v;
	else if (strcmp(f, "--exit-on-init") == 0) {
		opt.exitoninit = 1;
		opt.exitcode = num_arg(f, v, 255);
	} else if (strcmp(f, "--init-delay") == 0)
		opt.initdelay = num_arg(f, v, (long)DELAY_MAX);
	else if (strcmp(f, "--stderr-lines") == 0)
		opt.stderrlines = num_arg(f, v, LONG_MAX);
	else if (strcmp(f, "--discover") == 0)
		opt.discover = strcmp(v, "exit") == 0 ? 2 : 1;
	else if (strcmp(f, "--name") == 0)
		opt.name = v;
	else {
		logmsg("mock-server: unknown flag: %s\n", f);
		usage(2);
	}
}

static void
parse_args(int argc, char **argv)
{
	int i;

	if ((extra = calloc(argc, sizeof(*extra))) == NULL ||
	    (xuris = calloc(argc, sizeof(*xuris))) == NULL)
		die("out of memory");
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-h") == 0 ||
		    strcmp(argv[i], "--help") == 0)
			usage(0);
		if (bool_flag(argv[i]))
			continue;
		if (i + 1 == argc) {
			logmsg("mock-server: %s needs a value\n", argv[i]);
			usage(2);
		}
		value_flag(argv[i], argv[i + 1]);
		i++;
	}
}

static void
tools_init(void)
{
	char s[32];
	size_t i;
	long k;

	for (i = 0; i < sizeof(fixed_tools) / sizeof(fixed_tools[0]); i++)
		tool_push(&fixed_tools[i]);
	for (i = 0; opt.hostile &&
	    i < sizeof(hostile_tools) / sizeof(hostile_tools[0]); i++)
		tool_push(&hostile_tools[i]);
	for (k = 0; k < opt.ntools; k++) {
		(void)snprintf(s, sizeof(s), "tool_%ld", k);
		tool_push_echo(strdup(s),
		    "Generated tool; echoes its arguments.");
	}
	for (i = 0; i < nextra; i++)
		tool_push_echo(extra[i], "Extra tool; echoes its arguments.");
	for (i = 0; (opt.prompts || opt.nres >= 0) &&
	    i < sizeof(catalog_tools) / sizeof(catalog_tools[0]); i++)
		tool_push(&catalog_tools[i]);
}

/*
 * The grandchild lives in our process group and keeps our stdin, stdout
 * and stderr open, like the stray children of npx wrappers: only killing
 * the group ends it, and the pipes see no EOF while it lives.
 */
static void
spawn_grandchild(void)
{
	struct timespec ts = { 600, 0 };
	pid_t pid;

	if ((pid = fork()) == -1)
		die("fork failed");
	if (pid == 0) {
		while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
			continue;
		_exit(0);
	}
	logmsg("mock-server: grandchild pid=%ld\n", (long)pid);
}

int
main(int argc, char **argv)
{
	long i;

	parse_args(argc, argv);
	tools_init();
	/* A vanished client shows as EPIPE on stdout, handled there. */
	(void)signal(SIGPIPE, SIG_IGN);
	/* Set before the fork, so the grandchild resists SIGTERM too. */
	if (opt.ignoreterm)
		(void)signal(SIGTERM, SIG_IGN);
	logmsg("mock-server: started pid=%ld\n", (long)getpid());
	if (opt.grandchild)
		spawn_grandchild();
	for (i = 1; i <= opt.stderrlines; i++)
		logmsg("mock stderr line %ld\n", i);
	run();
	return 0;
}
