/*
 * example-server: a small stdio MCP server that the example configuration
 * of mcp-workbench starts.  It offers three tools:
 *
 *	system_info	host name, kernel, uptime, load, memory, CPUs
 *	read_file	a text file under the root directory
 *	list_directory	the entries of a directory under the root
 *
 * The root is the first argument (default: the current directory).  Paths
 * given by the client never leave it, not even through symbolic links.
 *
 * The program is deliberately plain: single-threaded, one request at a
 * time, one JSON-RPC message per line on stdin and stdout, logs on stderr.
 * It ends when stdin ends.
 *
 * usage: example-server [ROOT]
 */

#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jsmn.h>

#define SERVER_NAME	"example-server"
#define SERVER_VERSION	"1.0.0"
#define LATEST_PROTOCOL	"2025-11-25"

#define MAX_LINE	(16 * 1024 * 1024)	/* longest request accepted */
#define MAX_TOKENS	(1024 * 1024)		/* JSON tokens per request */
#define READ_CAP	(256 * 1024)		/* bytes read_file returns */
#define MAX_ENTRIES	10000			/* names list_directory shows */

#ifndef SI_LOAD_SHIFT
#define SI_LOAD_SHIFT	16
#endif

/* A growable string; s is always NUL-terminated once anything is added. */
struct buf {
	char	*s;
	size_t	 len;
	size_t	 cap;
};

/* A parsed request: the line and its tokens. */
struct msg {
	const char	*js;
	jsmntok_t	*t;
	int		 n;
};

/* The raw bytes of a request id, copied into the answer unchanged. */
struct id {
	const char	*s;
	size_t		 len;
};

struct tool {
	const char	*name;
	const char	*const *args;	/* accepted argument names */
	void		(*run)(const struct msg *, int, struct buf *);
};

static const char *const protocols[] = {
	"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", NULL
};

static char	*root;		/* canonical root directory */
static size_t	 rootlen;
static jsmntok_t *toks;		/* kept between requests, grown on demand */
static unsigned int ntoks;

/*
 * Tool definitions, sent verbatim by tools/list.  The schemas are what a
 * model reads to call the tools, so the descriptions say what comes back
 * and what is refused.
 */
static const char tools_json[] =
"{\"tools\":["
  "{\"name\":\"system_info\","
  "\"title\":\"System information\","
  "\"description\":\"Describe the machine this server runs on: host name, "
    "kernel (uname), uptime, load averages over 1, 5 and 15 minutes, "
    "memory total, free and available, and the number of online CPUs. "
    "Takes no arguments.\","
  "\"inputSchema\":{\"type\":\"object\",\"properties\":{},"
    "\"additionalProperties\":false},"
  "\"outputSchema\":{\"type\":\"object\",\"properties\":{"
    "\"hostname\":{\"type\":\"string\"},"
    "\"kernel\":{\"type\":\"object\",\"properties\":{"
      "\"sysname\":{\"type\":\"string\"},"
      "\"release\":{\"type\":\"string\"},"
      "\"version\":{\"type\":\"string\"},"
      "\"machine\":{\"type\":\"string\"}},"
      "\"required\":[\"sysname\",\"release\",\"version\",\"machine\"]},"
    "\"uptime_seconds\":{\"type\":\"integer\",\"minimum\":0},"
    "\"load_average\":{\"type\":\"object\",\"properties\":{"
      "\"1min\":{\"type\":\"number\"},"
      "\"5min\":{\"type\":\"number\"},"
      "\"15min\":{\"type\":\"number\"}},"
      "\"required\":[\"1min\",\"5min\",\"15min\"]},"
    "\"memory\":{\"type\":\"object\",\"properties\":{"
      "\"total_bytes\":{\"type\":\"integer\",\"minimum\":0},"
      "\"free_bytes\":{\"type\":\"integer\",\"minimum\":0},"
      "\"available_bytes\":{\"type\":\"integer\",\"minimum\":0},"
      "\"source\":{\"type\":\"string\","
        "\"enum\":[\"/proc/meminfo\",\"sysinfo\"]}},"
      "\"required\":[\"total_bytes\",\"free_bytes\",\"source\"]},"
    "\"cpus\":{\"type\":\"integer\",\"minimum\":1}},"
    "\"required\":[\"hostname\",\"kernel\",\"uptime_seconds\","
      "\"load_average\",\"memory\",\"cpus\"]},"
  "\"annotations\":{\"readOnlyHint\":true,\"openWorldHint\":false}},"

  "{\"name\":\"read_file\","
  "\"title\":\"Read a text file\","
  "\"description\":\"Return the contents of a text file under this "
    "server's root directory. The path is relative to the root (an "
    "absolute path must lie inside it); paths that lead outside the root, "
    "also through symbolic links, are refused. At most 256 KiB are "
    "returned; a longer file is cut and a second text block says so. "
    "Binary files (containing NUL bytes) are refused.\","
  "\"inputSchema\":{\"type\":\"object\",\"properties\":{"
    "\"path\":{\"type\":\"string\",\"minLength\":1,"
      "\"description\":\"File path relative to the root directory, "
      "e.g. README.md or src/main.c\"}},"
    "\"required\":[\"path\"],\"additionalProperties\":false},"
  "\"annotations\":{\"readOnlyHint\":true,\"openWorldHint\":false}},"

  "{\"name\":\"list_directory\","
  "\"title\":\"List a directory\","
  "\"description\":\"List the entries of a directory under this server's "
    "root directory, sorted by name, one per line, each marked [DIR] or "
    "[FILE] (symbolic links are marked by what they point to). Without a "
    "path, lists the root itself. Paths that lead outside the root are "
    "refused.\","
  "\"inputSchema\":{\"type\":\"object\",\"properties\":{"
    "\"path\":{\"type\":\"string\","
      "\"description\":\"Directory path relative to the root directory; "
      "default \\\".\\\", the root\"}},"
    "\"additionalProperties\":false},"
  "\"annotations\":{\"readOnlyHint\":true,\"openWorldHint\":false}}"
"]}";

static void
die(const char *what)
{
	fprintf(stderr, "%s: %s\n", SERVER_NAME, what);
	exit(1);
}

/*
 * Running out of memory in a one-request-at-a-time helper leaves nothing
 * sensible to do; exiting lets the workbench report the server as failed.
 */
static void *
xrealloc(void *p, size_t n)
{
	if ((p = realloc(p, n)) == NULL)
		die("out of memory");
	return p;
}

static void
buf_add(struct buf *b, const char *s, size_t n)
{
	size_t cap;

	if (b->cap - b->len < n + 1) {
		cap = b->cap != 0 ? b->cap : 256;
		while (cap - b->len < n + 1)
			cap *= 2;
		b->s = xrealloc(b->s, cap);
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void
buf_str(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

static void __attribute__((format(printf, 2, 3)))
buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	char small[256], *big;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(small)) {
		buf_add(b, small, n);
		return;
	}
	big = xrealloc(NULL, (size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	buf_add(b, big, n);
	free(big);
}

/*
 * Length of the valid UTF-8 sequence at s, or 0.  Overlong forms,
 * surrogates and values past U+10FFFF are rejected, because JSON text must
 * be valid UTF-8 and files are not always.
 */
static size_t
utf8_len(const unsigned char *s, size_t n)
{
	unsigned long cp;
	size_t len, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		cp = s[0] & 0x07;
	} else
		return 0;
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (cp >= 0xd800 && cp <= 0xdfff) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return len;
}

/* Append s as a JSON string; invalid UTF-8 becomes U+FFFD. */
static void
buf_json(struct buf *b, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i, run, k;

	buf_add(b, "\"", 1);
	for (i = 0; i < n; i += k) {
		for (run = i; run < n && u[run] >= 0x20 && u[run] < 0x80 &&
		    u[run] != '"' && u[run] != '\\'; run++)
			;
		if (run > i) {
			buf_add(b, s + i, run - i);
			k = 0;
			i = run;
			continue;
		}
		k = 1;
		if (u[i] == '"')
			buf_add(b, "\\\"", 2);
		else if (u[i] == '\\')
			buf_add(b, "\\\\", 2);
		else if (u[i] == '\n')
			buf_add(b, "\\n", 2);
		else if (u[i] == '\t')
			buf_add(b, "\\t", 2);
		else if (u[i] == '\r')
			buf_add(b, "\\r", 2);
		else if (u[i] < 0x20)
			buf_printf(b, "\\u%04x", u[i]);
		else if ((k = utf8_len(u + i, n - i)) == 0) {
			buf_add(b, "\\ufffd", 6);
			k = 1;
		} else
			buf_add(b, s + i, k);
	}
	buf_add(b, "\"", 1);
}

static void
buf_jsonstr(struct buf *b, const char *s)
{
	buf_json(b, s, strlen(s));
}

/*
 * Tokenize one line.  jsmn accepts trailing data and several top-level
 * values, so insist on a single object spanning the whole line.
 */
static int
msg_parse(struct msg *m, const char *js, size_t len)
{
	jsmn_parser p;
	int r;

	if (ntoks == 0) {
		ntoks = 64;
		toks = xrealloc(NULL, ntoks * sizeof(*toks));
	}
	jsmn_init(&p);
	while ((r = jsmn_parse(&p, js, len, toks, ntoks)) == JSMN_ERROR_NOMEM) {
		if (ntoks >= MAX_TOKENS)
			return -1;
		ntoks *= 2;
		toks = xrealloc(toks, ntoks * sizeof(*toks));
	}
	if (r < 1 || toks[0].type != JSMN_OBJECT || toks[0].start != 0 ||
	    (size_t)toks[0].end != len)
		return -1;
	m->js = js;
	m->t = toks;
	m->n = r;
	return 0;
}

/* Index of the token after token i and everything inside it. */
static int
msg_skip(const struct msg *m, int i)
{
	int j;

	for (j = i + 1; j < m->n && m->t[j].start < m->t[i].end; j++)
		;
	return j;
}

static int
msg_eq(const struct msg *m, int i, const char *s)
{
	size_t len = m->t[i].end - m->t[i].start;

	return m->t[i].type == JSMN_STRING && strlen(s) == len &&
	    memcmp(m->js + m->t[i].start, s, len) == 0;
}

/*
 * Value of key in object obj, or -1.  Keys are compared as written, so a
 * key spelled with escapes does not match; no client writes them so.
 */
static int
msg_get(const struct msg *m, int obj, const char *key)
{
	int i, k;

	if (obj < 0 || m->t[obj].type != JSMN_OBJECT)
		return -1;
	i = obj + 1;
	for (k = 0; k < m->t[obj].size && i + 1 < m->n; k++) {
		if (msg_eq(m, i, key))
			return i + 1;
		i = msg_skip(m, i + 1);
	}
	return -1;
}

static int
hex4(const char *s)
{
	int i, v = 0;

	for (i = 0; i < 4; i++) {
		v <<= 4;
		if (s[i] >= '0' && s[i] <= '9')
			v |= s[i] - '0';
		else if (s[i] >= 'a' && s[i] <= 'f')
			v |= s[i] - 'a' + 10;
		else if (s[i] >= 'A' && s[i] <= 'F')
			v |= s[i] - 'A' + 10;
		else
			return -1;
	}
	return v;
}

static char *
put_utf8(char *o, unsigned long cp)
{
	if (cp < 0x80)
		*o++ = cp;
	else if (cp < 0x800) {
		*o++ = 0xc0 | cp >> 6;
		*o++ = 0x80 | (cp & 0x3f);
	} else if (cp < 0x10000) {
		*o++ = 0xe0 | cp >> 12;
		*o++ = 0x80 | (cp >> 6 & 0x3f);
		*o++ = 0x80 | (cp & 0x3f);
	} else {
		*o++ = 0xf0 | cp >> 18;
		*o++ = 0x80 | (cp >> 12 & 0x3f);
		*o++ = 0x80 | (cp >> 6 & 0x3f);
		*o++ = 0x80 | (cp & 0x3f);
	}
	return o;
}

/* Decode \u escapes from s (surrogate pairs included) into o. */
static int
unescape_u(const char **sp, const char *end, char **op)
{
	const char *s = *sp;
	long cp, lo;

	if (end - s < 6 || (cp = hex4(s + 2)) == -1)
		return -1;
	s += 6;
	if (cp >= 0xdc00 && cp <= 0xdfff)
		return -1;
	if (cp >= 0xd800 && cp <= 0xdbff) {
		if (end - s < 6 || s[0] != '\\' || s[1] != 'u' ||
		    (lo = hex4(s + 2)) < 0xdc00 || lo > 0xdfff)
			return -1;
		cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
		s += 6;
	}
	*op = put_utf8(*op, cp);
	*sp = s;
	return 0;
}

/*
 * The string token i, unescaped, as a new NUL-terminated string; NULL if
 * it is not a string, is malformed or holds a NUL (which no path can).
 */
static char *
msg_string(const struct msg *m, int i)
{
	const char *s, *end;
	char *out, *o;

	if (i < 0 || m->t[i].type != JSMN_STRING)
		return NULL;
	s = m->js + m->t[i].start;
	end = m->js + m->t[i].end;
	/* Escapes never decode to more bytes than they take. */
	o = out = xrealloc(NULL, end - s + 1);
	while (s < end) {
		if (*s != '\\') {
			*o++ = *s++;
			continue;
		}
		if (end - s < 2)
			goto bad;
		switch (s[1]) {
		case 'u':
			if (unescape_u(&s, end, &o) == -1)
				goto bad;
			continue;
		case 'b':
			*o++ = '\b';
			break;
		case 'f':
			*o++ = '\f';
			break;
		case 'n':
			*o++ = '\n';
			break;
		case 'r':
			*o++ = '\r';
			break;
		case 't':
			*o++ = '\t';
			break;
		case '"':
		case '\\':
		case '/':
			*o++ = s[1];
			break;
		default:
			goto bad;
		}
		s += 2;
	}
	*o = '\0';
	if (memchr(out, '\0', o - out) != NULL)
		goto bad;
	return out;
bad:
	free(out);
	return NULL;
}

/*
 * Write one message and flush, so the client sees it at once.  If the
 * client has gone there is nobody left to serve.
 */
static void
send_line(struct buf *b)
{
	buf_add(b, "\n", 1);
	if (fwrite(b->s, 1, b->len, stdout) != b->len || fflush(stdout) != 0)
		die("cannot write to stdout; exiting");
	free(b->s);
}

static void
send_result(const struct id *id, const char *result, size_t len)
{
	struct buf b = { 0 };

	buf_str(&b, "{\"jsonrpc\":\"2.0\",\"id\":");
	buf_add(&b, id->s, id->len);
	buf_str(&b, ",\"result\":");
	buf_add(&b, result, len);
	buf_str(&b, "}");
	send_line(&b);
}

static void
send_error(const struct id *id, int code, const char *message)
{
	struct buf b = { 0 };

	buf_str(&b, "{\"jsonrpc\":\"2.0\",\"id\":");
	if (id == NULL)
		buf_str(&b, "null");
	else
		buf_add(&b, id->s, id->len);
	buf_printf(&b, ",\"error\":{\"code\":%d,\"message\":", code);
	buf_jsonstr(&b, message);
	buf_str(&b, "}}");
	send_line(&b);
}

/*
 * A tool result that is a failure: the model reads the text, so it says
 * what went wrong and, where it helps, what to do instead.
 */
static void __attribute__((format(printf, 2, 3)))
tool_error(struct buf *out, const char *fmt, ...)
{
	va_list ap;
	char text[1024];

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	buf_str(out, "{\"content\":[{\"type\":\"text\",\"text\":");
	buf_jsonstr(out, text);
	buf_str(out, "}],\"isError\":true}");
}

/* Whether path is the root or lies below it; both are canonical. */
static int
within_root(const char *path)
{
	if (rootlen == 1)
		return path[0] == '/';
	return strncmp(path, root, rootlen) == 0 &&
	    (path[rootlen] == '\0' || path[rootlen] == '/');
}

/* Collapse ".", ".." and repeated slashes in an absolute path, in place. */
static void
path_clean(char *p)
{
	char *r = p, *w = p, *c;
	size_t n;

	while (*r != '\0') {
		while (*r == '/')
			r++;
		c = r;
		while (*r != '\0' && *r != '/')
			r++;
		n = r - c;
		if (n == 0 || (n == 1 && c[0] == '.'))
			continue;
		if (n == 2 && c[0] == '.' && c[1] == '.') {
			while (w > p && *--w != '/')
				;
			continue;
		}
		*w++ = '/';
		memmove(w, c, n);
		w += n;
	}
	if (w == p)
		*w++ = '/';
	*w = '\0';
}

/*
 * Turn a client's path into a canonical path inside the root, or write an
 * error result.  The path is checked twice: as written, so that
 * "../../etc/passwd" is refused whether or not it exists, and after
 * realpath(3), so that symbolic links cannot lead out either.
 */
static char *
resolve(const char *path, struct buf *out)
{
	struct buf cand = { 0 };
	char *clean, *real = NULL;

	if (path[0] != '/') {
		buf_str(&cand, root);
		buf_str(&cand, "/");
	}
	buf_str(&cand, path);
	clean = strdup(cand.s);
	if (clean == NULL)
		die("out of memory");
	path_clean(clean);
	if (!within_root(clean)) {
		tool_error(out, "Access denied: '%s' is outside the root "
		    "directory %s.", path, root);
		goto done;
	}
	if ((real = realpath(cand.s, NULL)) == NULL) {
		tool_error(out, "Cannot access '%s': %s.", path,
		    strerror(errno));
		goto done;
	}
	if (!within_root(real)) {
		tool_error(out, "Access denied: '%s' leads outside the root "
		    "directory %s through a symbolic link.", path, root);
		free(real);
		real = NULL;
	}
done:
	free(cand.s);
	free(clean);
	return real;
}

/*
 * Check that args (an object, or -1 for none) holds only the names in ok
 * and that every value given is a string.
 */
static int
check_args(const struct msg *m, int args, const char *const *ok,
    struct buf *out)
{
	int i, k, j;

	if (args == -1)
		return 0;
	i = args + 1;
	for (k = 0; k < m->t[args].size && i + 1 < m->n; k++) {
		for (j = 0; ok[j] != NULL && !msg_eq(m, i, ok[j]); j++)
			;
		if (ok[j] == NULL) {
			tool_error(out, "Unknown argument '%.*s'.",
			    m->t[i].end - m->t[i].start, m->js + m->t[i].start);
			return -1;
		}
		if (m->t[i + 1].type != JSMN_STRING) {
			tool_error(out, "Argument '%s' must be a string.",
			    ok[j]);
			return -1;
		}
		i = msg_skip(m, i + 1);
	}
	return 0;
}

/*
 * The "path" argument, unescaped; "" when absent, NULL (with an error
 * result written) when it cannot be a path.
 */
static char *
path_arg(const struct msg *m, int args, struct buf *out)
{
	char *path;
	int i;

	if ((i = msg_get(m, args, "path")) == -1) {
		if ((path = strdup("")) == NULL)
			die("out of memory");
		return path;
	}
	if ((path = msg_string(m, i)) == NULL)
		tool_error(out, "Argument 'path' is not a usable path (it "
		    "holds a NUL character or a malformed escape).");
	return path;
}

/*
 * Memory figures.  /proc/meminfo knows MemAvailable (what can be used
 * without swapping); sysinfo(2) still works where /proc is not mounted,
 * as in a bare chroot.
 */
static void
memory_info(unsigned long long *total, unsigned long long *mfree,
    unsigned long long *avail, const char **source)
{
	struct sysinfo si;
	char line[256], key[64];
	unsigned long long kb;
	FILE *f;

	*total = *mfree = *avail = 0;
	if ((f = fopen("/proc/meminfo", "re")) != NULL) {
		while (fgets(line, sizeof(line), f) != NULL) {
			if (sscanf(line, "%63[^:]: %llu", key, &kb) != 2)
				continue;
			if (strcmp(key, "MemTotal") == 0)
				*total = kb * 1024;
			else if (strcmp(key, "MemFree") == 0)
				*mfree = kb * 1024;
			else if (strcmp(key, "MemAvailable") == 0)
				*avail = kb * 1024;
		}
		fclose(f);
		*source = "/proc/meminfo";
		if (*total != 0)
			return;
	}
	*avail = 0;
	*source = "sysinfo";
	if (sysinfo(&si) == 0) {
		*total = (unsigned long long)si.totalram * si.mem_unit;
		*mfree = (unsigned long long)si.freeram * si.mem_unit;
	}
}

static void
human_bytes(char *s, size_t n, unsigned long long bytes)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = bytes;
	int u;

	for (u = 0; v >= 1024 && u < 4; u++)
		v /= 1024;
	snprintf(s, n, u == 0 ? "%.0f %s" : "%.1f %s", v, unit[u]);
}

static void
system_text(struct buf *t, const struct utsname *un, long up,
    const double load[3], unsigned long long mem[3], long cpus)
{
	char a[32], b[32], c[32];

	buf_printf(t, "Host name: %s\n", un->nodename);
	buf_printf(t, "Kernel: %s %s (%s) on %s\n", un->sysname,
	    un->release, un->version, un->machine);
	buf_str(t, "Uptime: ");
	if (up >= 86400)
		buf_printf(t, "%ld day%s, ", up / 86400,
		    up / 86400 == 1 ? "" : "s");
	buf_printf(t, "%02ld:%02ld:%02ld\n", up % 86400 / 3600,
	    up % 3600 / 60, up % 60);
	buf_printf(t, "Load average: %.2f %.2f %.2f (1, 5, 15 minutes)\n",
	    load[0], load[1], load[2]);
	human_bytes(a, sizeof(a), mem[0]);
	human_bytes(b, sizeof(b), mem[1]);
	buf_printf(t, "Memory: %s total, %s free", a, b);
	if (mem[2] != 0) {
		human_bytes(c, sizeof(c), mem[2]);
		buf_printf(t, ", %s available", c);
	}
	buf_printf(t, "\nCPUs: %ld online\n", cpus);
}

static void
system_json(struct buf *j, const struct utsname *un, long up,
    const double load[3], unsigned long long mem[3], const char *source,
    long cpus)
{
	buf_str(j, "{\"hostname\":");
	buf_jsonstr(j, un->nodename);
	buf_str(j, ",\"kernel\":{\"sysname\":");
	buf_jsonstr(j, un->sysname);
	buf_str(j, ",\"release\":");
	buf_jsonstr(j, un->release);
	buf_str(j, ",\"version\":");
	buf_jsonstr(j, un->version);
	buf_str(j, ",\"machine\":");
	buf_jsonstr(j, un->machine);
	buf_printf(j, "},\"uptime_seconds\":%ld,\"load_average\":"
	    "{\"1min\":%.2f,\"5min\":%.2f,\"15min\":%.2f},", up,
	    load[0], load[1], load[2]);
	buf_printf(j, "\"memory\":{\"total_bytes\":%llu,\"free_bytes\":%llu,",
	    mem[0], mem[1]);
	if (mem[2] != 0)
		buf_printf(j, "\"available_bytes\":%llu,", mem[2]);
	buf_printf(j, "\"source\":\"%s\"},\"cpus\":%ld}", source, cpus);
}

/*
 * Uptime and load come from sysinfo(2) rather than /proc/uptime and
 * /proc/loadavg so that they work without /proc.
 */
static void
tool_system_info(const struct msg *m, int args, struct buf *out)
{
	struct utsname un;
	struct sysinfo si;
	struct buf text = { 0 }, json = { 0 };
	unsigned long long mem[3];
	const char *source;
	double load[3];
	long cpus;
	int i;

	(void)m;
	(void)args;
	if (uname(&un) == -1) {
		tool_error(out, "uname failed: %s.", strerror(errno));
		return;
	}
	memset(&si, 0, sizeof(si));
	if (sysinfo(&si) == -1)
		fprintf(stderr, "%s: sysinfo: %s\n", SERVER_NAME,
		    strerror(errno));
	for (i = 0; i < 3; i++)
		load[i] = (double)si.loads[i] / (1 << SI_LOAD_SHIFT);
	memory_info(&mem[0], &mem[1], &mem[2], &source);
	/* The CPU running this code exists even if sysconf cannot tell. */
	if ((cpus = sysconf(_SC_NPROCESSORS_ONLN)) < 1)
		cpus = 1;
	system_text(&text, &un, si.uptime, load, mem, cpus);
	system_json(&json, &un, si.uptime, load, mem, source, cpus);
	buf_str(out, "{\"content\":[{\"type\":\"text\",\"text\":");
	buf_json(out, text.s, text.len);
	buf_str(out, "}],\"structuredContent\":");
	buf_add(out, json.s, json.len);
	buf_str(out, "}");
	free(text.s);
	free(json.s);
}

/* Read up to cap bytes, plus one to learn whether there was more. */
static ssize_t
read_capped(int fd, char *data, size_t cap)
{
	size_t got = 0;
	ssize_t r;

	while (got < cap + 1) {
		r = read(fd, data + got, cap + 1 - got);
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1)
			return -1;
		if (r == 0)
			break;
		got += r;
	}
	return got;
}

/*
 * Open a resolved path for reading.  O_NOFOLLOW catches a symbolic link
 * swapped in after the check; O_NONBLOCK keeps a FIFO from hanging us.
 */
static int
open_checked(const char *path, const char *real, struct stat *st,
    struct buf *out)
{
	int fd;

	fd = open(real, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK |
	    O_NOCTTY);
	if (fd == -1) {
		tool_error(out, "Cannot open '%s': %s.", path,
		    strerror(errno));
		return -1;
	}
	if (fstat(fd, st) == -1) {
		tool_error(out, "Cannot stat '%s': %s.", path,
		    strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static void
read_result(struct buf *out, const char *path, const char *data,
    size_t len, long long size)
{
	struct buf note = { 0 };
	size_t keep = len;
	int i;

	if (len > READ_CAP) {
		/* Cut before a character split by the cap, not inside it. */
		keep = READ_CAP;
		for (i = 0; i < 3 && keep > 0 &&
		    ((unsigned char)data[keep] & 0xc0) == 0x80; i++)
			keep--;
	}
	buf_str(out, "{\"content\":[{\"type\":\"text\",\"text\":");
	buf_json(out, data, keep);
	buf_str(out, "}");
	if (len > READ_CAP) {
		buf_printf(&note, "[Truncated: '%s' is %lld bytes; only the "
		    "first %zu are shown.]", path, size, keep);
		buf_str(out, ",{\"type\":\"text\",\"text\":");
		buf_json(out, note.s, note.len);
		buf_str(out, "}");
		free(note.s);
	}
	buf_str(out, "]}");
}

static const char *const read_file_args[] = { "path", NULL };

static void
tool_read_file(const struct msg *m, int args, struct buf *out)
{
	struct stat st;
	char *path, *real = NULL, *data = NULL;
	ssize_t len;
	int fd = -1;

	if ((path = path_arg(m, args, out)) == NULL)
		goto done;
	if (path[0] == '\0') {
		tool_error(out, "Missing argument 'path': give a file path "
		    "relative to the root directory %s.", root);
		goto done;
	}
	if ((real = resolve(path, out)) == NULL ||
	    (fd = open_checked(path, real, &st, out)) == -1)
		goto done;
	if (S_ISDIR(st.st_mode)) {
		tool_error(out, "'%s' is a directory; use list_directory to "
		    "see its entries.", path);
		goto done;
	}
	if (!S_ISREG(st.st_mode)) {
		tool_error(out, "'%s' is not a regular file.", path);
		goto done;
	}
	data = xrealloc(NULL, READ_CAP + 1);
	if ((len = read_capped(fd, data, READ_CAP)) == -1)
		tool_error(out, "Cannot read '%s': %s.", path,
		    strerror(errno));
	else if (memchr(data, '\0', len) != NULL)
		tool_error(out, "'%s' looks like a binary file (it contains "
		    "NUL bytes); read_file only returns text.", path);
	else
		read_result(out, path, data, len, (long long)st.st_size);
done:
	if (fd != -1)
		close(fd);
	free(data);
	free(real);
	free(path);
}

struct entry {
	char	*name;
	int	 dir;
};

static int
entry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->name,
	    ((const struct entry *)b)->name);
}

/*
 * Read a directory's entries.  Links are classified by their target
 * (stat, not lstat), as a user of the listing would open them.
 */
static struct entry *
read_entries(DIR *d, size_t *count)
{
	struct entry *e = NULL;
	struct dirent *de;
	struct stat st;
	size_t n = 0, cap = 0;

	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (n == cap) {
			cap = cap != 0 ? cap * 2 : 64;
			e = xrealloc(e, cap * sizeof(*e));
		}
		if ((e[n].name = strdup(de->d_name)) == NULL)
			die("out of memory");
		e[n].dir = fstatat(dirfd(d), de->d_name, &st, 0) == 0 &&
		    S_ISDIR(st.st_mode);
		n++;
	}
	if (n > 0)
		qsort(e, n, sizeof(*e), entry_cmp);
	*count = n;
	return e;
}

static void
list_result(struct buf *out, struct entry *e, size_t n)
{
	struct buf text = { 0 };
	size_t i;

	for (i = 0; i < n && i < MAX_ENTRIES; i++)
		buf_printf(&text, "%s %s\n", e[i].dir ? "[DIR]" : "[FILE]",
		    e[i].name);
	if (n > MAX_ENTRIES)
		buf_printf(&text, "[... %zu more entries not shown]\n",
		    n - MAX_ENTRIES);
	if (n == 0)
		buf_str(&text, "(empty directory)\n");
	buf_str(out, "{\"content\":[{\"type\":\"text\",\"text\":");
	buf_json(out, text.s, text.len);
	buf_str(out, "}]}");
	free(text.s);
}

static void
tool_list_directory(const struct msg *m, int args, struct buf *out)
{
	struct entry *e;
	struct stat st;
	char *path, *real = NULL;
	size_t n, i;
	DIR *d;
	int fd = -1;

	if ((path = path_arg(m, args, out)) == NULL)
		goto done;
	if (path[0] == '\0') {
		free(path);
		if ((path = strdup(".")) == NULL)
			die("out of memory");
	}
	if ((real = resolve(path, out)) == NULL ||
	    (fd = open_checked(path, real, &st, out)) == -1)
		goto done;
	if (!S_ISDIR(st.st_mode)) {
		tool_error(out, "'%s' is not a directory; use read_file to "
		    "read a file.", path);
		goto done;
	}
	if ((d = fdopendir(fd)) == NULL) {
		tool_error(out, "Cannot list '%s': %s.", path,
		    strerror(errno));
		goto done;
	}
	fd = -1;	/* closedir closes it */
	e = read_entries(d, &n);
	closedir(d);
	list_result(out, e, n);
	for (i = 0; i < n; i++)
		free(e[i].name);
	free(e);
done:
	if (fd != -1)
		close(fd);
	free(real);
	free(path);
}

static const char *const no_args[] = { NULL };
static const char *const list_directory_args[] = { "path", NULL };

static const struct tool tools[] = {
	{ "system_info", no_args, tool_system_info },
	{ "read_file", read_file_args, tool_read_file },
	{ "list_directory", list_directory_args, tool_list_directory },
};

/*
 * tools/call.  An unknown tool is a protocol error (-32602), as the
 * specification asks; bad arguments are tool errors the model can read
 * and correct.
 */
static void
handle_call(const struct id *id, const struct msg *m, int params)
{
	struct buf out = { 0 }, msgbuf = { 0 };
	const struct tool *t;
	int name, args;
	size_t i;

	name = msg_get(m, params, "name");
	if (name == -1 || m->t[name].type != JSMN_STRING) {
		send_error(id, -32602, "Invalid params: 'name' must be a "
		    "string");
		return;
	}
	for (i = 0; i < sizeof(tools) / sizeof(tools[0]); i++)
		if (msg_eq(m, name, tools[i].name))
			break;
	if (i == sizeof(tools) / sizeof(tools[0])) {
		buf_printf(&msgbuf, "Unknown tool: %.*s", m->t[name].end -
		    m->t[name].start, m->js + m->t[name].start);
		send_error(id, -32602, msgbuf.s);
		free(msgbuf.s);
		return;
	}
	t = &tools[i];
	args = msg_get(m, params, "arguments");
	if (args != -1 && m->t[args].type != JSMN_OBJECT)
		tool_error(&out, "'arguments' must be an object.");
	else if (check_args(m, args, t->args, &out) == 0)
		t->run(m, args, &out);
	send_result(id, out.s, out.len);
	free(out.s);
}

/* Echo a revision we speak; answer anything else with the latest. */
static void
handle_initialize(const struct id *id, const struct msg *m, int params)
{
	struct buf out = { 0 }, text = { 0 };
	const char *version = LATEST_PROTOCOL;
	int pv, i;

	pv = msg_get(m, params, "protocolVersion");
	for (i = 0; pv != -1 && protocols[i] != NULL; i++)
		if (msg_eq(m, pv, protocols[i]))
			version = protocols[i];
	buf_printf(&text, "system_info describes this machine; read_file and "
	    "list_directory read files under %s.", root);
	buf_printf(&out, "{\"protocolVersion\":\"%s\",\"capabilities\":"
	    "{\"tools\":{}},\"serverInfo\":{\"name\":\"%s\",\"version\":"
	    "\"%s\"},\"instructions\":", version, SERVER_NAME, SERVER_VERSION);
	buf_json(&out, text.s, text.len);
	buf_str(&out, "}");
	send_result(id, out.s, out.len);
	free(out.s);
	free(text.s);
}

static size_t
digits(const char *s, size_t i, size_t n)
{
	while (i < n && s[i] >= '0' && s[i] <= '9')
		i++;
	return i;
}

/*
 * Whether s is a JSON number.  jsmn takes any run of printable bytes as a
 * primitive, and an id is copied into the answer, so it must be checked.
 */
static int
is_number(const char *s, size_t n)
{
	size_t i = 0, j;

	if (i < n && s[i] == '-')
		i++;
	if (i < n && s[i] == '0')
		i++;
	else if ((j = digits(s, i, n)) > i)
		i = j;
	else
		return 0;
	if (i < n && s[i] == '.') {
		if ((j = digits(s, i + 1, n)) == i + 1)
			return 0;
		i = j;
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		if ((j = digits(s, i, n)) == i)
			return 0;
		i = j;
	}
	return i == n;
}

/* Whether s can be copied into a JSON string as it is. */
static int
is_clean_string(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i, k;

	for (i = 0; i < n; i += k)
		if (u[i] < 0x20 || (k = utf8_len(u + i, n - i)) == 0)
			return 0;
	return 1;
}

/* Ids are strings or numbers; null, booleans and containers are not. */
static int
get_id(const struct msg *m, int i, struct id *id)
{
	const jsmntok_t *t = &m->t[i];
	const char *s = m->js + t->start;
	size_t len = t->end - t->start;

	if (t->type == JSMN_STRING && is_clean_string(s, len)) {
		id->s = s - 1;
		id->len = len + 2;
		return 0;
	}
	if (t->type == JSMN_PRIMITIVE && is_number(s, len)) {
		id->s = s;
		id->len = len;
		return 0;
	}
	return -1;
}

static void
dispatch(const struct id *id, const struct msg *m, int method, int params)
{
	if (msg_eq(m, method, "initialize"))
		handle_initialize(id, m, params);
	else if (msg_eq(m, method, "ping"))
		send_result(id, "{}", 2);
	else if (msg_eq(m, method, "tools/list"))
		send_result(id, tools_json, sizeof(tools_json) - 1);
	else if (msg_eq(m, method, "tools/call"))
		handle_call(id, m, params);
	else
		send_error(id, -32601, "Method not found");
}

static void
handle_line(const char *line, size_t len)
{
	struct msg m;
	struct id id;
	int idx, method, params, version;

	if (msg_parse(&m, line, len) == -1) {
		send_error(NULL, -32700, "Parse error");
		return;
	}
	/* Without an id it is a notification (or a response): no answer. */
	if ((idx = msg_get(&m, 0, "id")) == -1)
		return;
	if (get_id(&m, idx, &id) == -1) {
		send_error(NULL, -32600, "Invalid Request: bad id");
		return;
	}
	version = msg_get(&m, 0, "jsonrpc");
	method = msg_get(&m, 0, "method");
	params = msg_get(&m, 0, "params");
	if (version == -1 || !msg_eq(&m, version, "2.0") || method == -1 ||
	    m.t[method].type != JSMN_STRING)
		send_error(&id, -32600, "Invalid Request");
	else if (params != -1 && m.t[params].type != JSMN_OBJECT)
		send_error(&id, -32602, "Invalid params: not an object");
	else
		dispatch(&id, &m, method, params);
}

/* Strip a byte order mark, surrounding blanks and the \r of \r\n. */
static void
handle_raw(char *line, size_t len)
{
	while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' ' ||
	    line[len - 1] == '\t'))
		len--;
	if (len >= 3 && memcmp(line, "\xef\xbb\xbf", 3) == 0) {
		line += 3;
		len -= 3;
	}
	while (len > 0 && (*line == ' ' || *line == '\t')) {
		line++;
		len--;
	}
	if (len > 0)
		handle_line(line, len);
}

/*
 * Read stdin line by line, growing the buffer for long lines up to
 * MAX_LINE; a longer line is skipped to its end and answered with an
 * error, so one huge message cannot exhaust memory.
 */
static void
serve(void)
{
	char *buf = NULL, *nl;
	size_t len = 0, cap = 0, off;
	ssize_t r;
	int skipping = 0;

	for (;;) {
		if (len == cap) {
			if (cap >= MAX_LINE) {
				if (!skipping)
					send_error(NULL, -32600, "Invalid "
					    "Request: message too long");
				skipping = 1;
				len = 0;
			} else {
				cap = cap != 0 ? cap * 2 : 4096;
				buf = xrealloc(buf, cap);
			}
		}
		r = read(STDIN_FILENO, buf + len, cap - len);
		if (r == -1 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += r;
		off = 0;
		while ((nl = memchr(buf + off, '\n', len - off)) != NULL) {
			if (!skipping)
				handle_raw(buf + off, nl - (buf + off));
			skipping = 0;
			off = nl - buf + 1;
		}
		memmove(buf, buf + off, len - off);
		len -= off;
	}
	/* A last line without a newline still counts. */
	if (len > 0 && !skipping)
		handle_raw(buf, len);
	free(buf);
}

int
main(int argc, char *argv[])
{
	const char *dir = argc > 1 ? argv[1] : ".";
	struct stat st;

	if (argc > 2 || (argc == 2 && argv[1][0] == '-')) {
		fprintf(stderr, "usage: %s [ROOT]\n", SERVER_NAME);
		return 2;
	}
	if ((root = realpath(dir, NULL)) == NULL) {
		fprintf(stderr, "%s: %s: %s\n", SERVER_NAME, dir,
		    strerror(errno));
		return 1;
	}
	if (stat(root, &st) == -1 || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "%s: %s: not a directory\n", SERVER_NAME, dir);
		return 1;
	}
	rootlen = strlen(root);
	/* A vanished client shows up as a failed write, not a signal. */
	signal(SIGPIPE, SIG_IGN);
	fprintf(stderr, "%s: serving %s\n", SERVER_NAME, root);
	serve();
	free(root);
	free(toks);
	return 0;
}
