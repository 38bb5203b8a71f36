/*
 * demo: a scripted MCP session with mcp-workbench, printed for a human.
 *
 * It starts the workbench on the example configuration, talks to it over
 * its stdin and stdout exactly as an MCP client would (one JSON-RPC
 * message per line), and shows each step: the request it sends after
 * ">>>", the answer after "<<<", and what the answer means.
 *
 *	initialize			the handshake; shows the instructions
 *	notifications/initialized	tells the workbench we are ready
 *	tools/list			the workbench's own tools
 *	tools/call open_toolbox		starts the "example" toolbox's server
 *	tools/call use_tool		system_info, then read_file README.md
 *
 * Then it closes the workbench's stdin, which asks it to shut down, and
 * waits for it.  The exit status is 0 only if every step succeeded.
 *
 * usage: demo [WORKBENCH [CONFIG]]
 *	(default: ./mcp-workbench example/workbench-config.json, which is
 *	right when run from the top of the repository)
 */

#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jsmn.h>

#define STEP_TIMEOUT_MS	10000	/* how long one step may take */
#define SHOWN_BYTES	300	/* how much of a raw answer is printed */
#define FILE_LINES	10	/* lines of README.md shown */
#define MAX_TOKENS	(1024 * 1024)

/* The workbench process and our ends of its stdin and stdout. */
struct workbench {
	pid_t	 pid;
	int	 to;		/* its stdin */
	int	 from;		/* its stdout */
	char	*buf;		/* what has been read from it */
	size_t	 len;
	size_t	 cap;
	size_t	 used;		/* bytes of buf already handed out */
};

/* A parsed message: its text and tokens. */
struct msg {
	char		*js;
	jsmntok_t	*t;
	int		 n;
};

static int	 next_id = 1;
static char	 failure[160];	/* first failed step, for the summary */

static void *
xrealloc(void *p, size_t n)
{
	if ((p = realloc(p, n)) == NULL) {
		fprintf(stderr, "demo: out of memory\n");
		exit(1);
	}
	return p;
}

static long long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Start the workbench with pipes on its stdin and stdout; its stderr stays
 * ours, so its log lines appear on the terminal.  A CLOEXEC pipe carries
 * an exec failure back, so a missing binary is reported clearly instead
 * of looking like a silent workbench.
 */
static int
wb_start(struct workbench *wb, char *const argv[])
{
	int in[2], out[2], ep[2], err;
	ssize_t r;

	if (pipe2(in, O_CLOEXEC) == -1 || pipe2(out, O_CLOEXEC) == -1 ||
	    pipe2(ep, O_CLOEXEC) == -1)
		return -1;
	if ((wb->pid = fork()) == -1)
		return -1;
	if (wb->pid == 0) {
		/* We ignore SIGPIPE; the workbench must not inherit that. */
		signal(SIGPIPE, SIG_DFL);
		if (dup2(in[0], STDIN_FILENO) != -1 &&
		    dup2(out[1], STDOUT_FILENO) != -1)
			execvp(argv[0], argv);
		err = errno;
		(void)!write(ep[1], &err, sizeof(err));
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	close(ep[1]);
	wb->to = in[1];
	wb->from = out[0];
	while ((r = read(ep[0], &err, sizeof(err))) == -1 && errno == EINTR)
		;
	close(ep[0]);
	if (r == sizeof(err)) {
		waitpid(wb->pid, NULL, 0);
		errno = err;
		return -1;
	}
	return 0;
}

static int
wb_send(struct workbench *wb, const char *line)
{
	size_t len = strlen(line), off = 0;
	ssize_t r;

	while (off < len) {
		r = write(wb->to, line + off, len - off);
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1)
			return -1;
		off += r;
	}
	return write(wb->to, "\n", 1) == 1 ? 0 : -1;
}

/*
 * The next line from the workbench, NUL-terminated, without its \r\n; or
 * NULL when it closed its stdout or the deadline passed (errno ETIMEDOUT).
 */
static char *
wb_line(struct workbench *wb, long long deadline)
{
	struct pollfd pfd = { .fd = wb->from, .events = POLLIN };
	char *nl, *line;
	long long left;
	ssize_t r;

	if (wb->buf == NULL) {
		wb->cap = 65536;
		wb->buf = xrealloc(NULL, wb->cap);
	}
	memmove(wb->buf, wb->buf + wb->used, wb->len - wb->used);
	wb->len -= wb->used;
	wb->used = 0;
	while ((nl = memchr(wb->buf, '\n', wb->len)) == NULL) {
		if ((left = deadline - now_ms()) <= 0) {
			errno = ETIMEDOUT;
			return NULL;
		}
		if ((r = poll(&pfd, 1, (int)left)) <= 0)
			continue;
		if (wb->cap - wb->len < 4096) {
			wb->cap *= 2;
			wb->buf = xrealloc(wb->buf, wb->cap);
		}
		r = read(wb->from, wb->buf + wb->len, wb->cap - wb->len);
		if (r == -1 && errno == EINTR)
			continue;
		if (r <= 0) {
			errno = 0;
			return NULL;
		}
		wb->len += r;
	}
	line = wb->buf;
	wb->used = nl - wb->buf + 1;
	*nl = '\0';
	if (nl > line && nl[-1] == '\r')
		nl[-1] = '\0';
	return line;
}

/*
 * Tokenize js into m, growing the shared token array as jsmn asks.
 * Answers must be one JSON object filling the line.
 */
static int
msg_parse(struct msg *m, char *js)
{
	static jsmntok_t *toks;
	static unsigned int ntoks;
	jsmn_parser p;
	size_t len = strlen(js);
	int r;

	if (ntoks == 0) {
		ntoks = 256;
		toks = xrealloc(NULL, ntoks * sizeof(*toks));
	}
	jsmn_init(&p);
	while ((r = jsmn_parse(&p, js, len, toks, ntoks)) == JSMN_ERROR_NOMEM) {
		if (ntoks >= MAX_TOKENS)
			return -1;
		ntoks *= 2;
		toks = xrealloc(toks, ntoks * sizeof(*toks));
	}
	if (r < 1 || toks[0].type != JSMN_OBJECT || (size_t)toks[0].end != len)
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
	size_t len;

	if (i < 0)
		return 0;
	len = m->t[i].end - m->t[i].start;
	return strlen(s) == len && memcmp(m->js + m->t[i].start, s, len) == 0;
}

/* Value of key in object obj, or -1 (also when obj is not an object). */
static int
msg_get(const struct msg *m, int obj, const char *key)
{
	int i, k;

	if (obj < 0 || m->t[obj].type != JSMN_OBJECT)
		return -1;
	for (i = obj + 1, k = 0; k < m->t[obj].size && i + 1 < m->n; k++) {
		if (m->t[i].type == JSMN_STRING && msg_eq(m, i, key))
			return i + 1;
		i = msg_skip(m, i + 1);
	}
	return -1;
}

/* Element n of array arr, or -1. */
static int
msg_at(const struct msg *m, int arr, int n)
{
	int i, k;

	if (arr < 0 || m->t[arr].type != JSMN_ARRAY || n >= m->t[arr].size)
		return -1;
	for (i = arr + 1, k = 0; k < n; k++)
		i = msg_skip(m, i);
	return i;
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
put_utf8(char *o, long cp)
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

/* One escape at s into o; returns the bytes of s it used. */
static int
unescape_one(const char *s, const char *end, char **o)
{
	static const char from[] = "bfnrt\"\\/", to[] = "\b\f\n\r\t\"\\/";
	const char *p;
	long cp, lo;

	if (end - s >= 2 && s[1] != 'u' && s[1] != '\0' &&
	    (p = strchr(from, s[1])) != NULL) {
		*(*o)++ = to[p - from];
		return 2;
	}
	if (end - s < 6 || (cp = hex4(s + 2)) == -1)
		return -1;
	if (cp >= 0xd800 && cp <= 0xdbff && end - s >= 12 && s[6] == '\\' &&
	    s[7] == 'u' && (lo = hex4(s + 8)) >= 0xdc00 && lo <= 0xdfff) {
		*o = put_utf8(*o, 0x10000 + ((cp - 0xd800) << 10) +
		    (lo - 0xdc00));
		return 12;
	}
	/* A lone surrogate cannot be shown; print U+FFFD instead. */
	*o = put_utf8(*o, cp >= 0xd800 && cp <= 0xdfff ? 0xfffd : cp);
	return 6;
}

/* String token i, unescaped into a new string; NULL if not a string. */
static char *
msg_string(const struct msg *m, int i)
{
	const char *s, *end;
	char *out, *o;
	int k;

	if (i < 0 || m->t[i].type != JSMN_STRING)
		return NULL;
	s = m->js + m->t[i].start;
	end = m->js + m->t[i].end;
	o = out = xrealloc(NULL, end - s + 1);
	while (s < end) {
		if (*s != '\\')
			*o++ = *s++;
		else if ((k = unescape_one(s, end, &o)) == -1)
			break;
		else
			s += k;
	}
	*o = '\0';
	return out;
}

/*
 * Print text indented by indent spaces, at most max lines (0: all), and
 * say how many were left out.
 */
static void
print_text(const char *text, int indent, int max)
{
	const char *p = text, *nl;
	int shown = 0, rest = 0;

	while (*p != '\0') {
		nl = strchr(p, '\n');
		if (max == 0 || shown < max) {
			/* Blank lines stay blank, without trailing spaces. */
			printf("%*s%.*s\n", nl == p ? 0 : indent, "",
			    nl != NULL ? (int)(nl - p) : (int)strlen(p), p);
			shown++;
		} else
			rest++;
		if (nl == NULL)
			break;
		p = nl + 1;
	}
	if (rest > 0)
		printf("%*s... (%d more line%s)\n", indent, "", rest,
		    rest == 1 ? "" : "s");
}

/* Print the raw answer, cut at SHOWN_BYTES but not inside a character. */
static void
print_raw(const char *line)
{
	size_t len = strlen(line), cut = len;

	if (len > SHOWN_BYTES) {
		cut = SHOWN_BYTES;
		while (cut > 0 && ((unsigned char)line[cut] & 0xc0) == 0x80)
			cut--;
	}
	printf("<<< %.*s", (int)cut, line);
	if (cut < len)
		printf(" ... (%zu bytes in all)", len);
	printf("\n");
}

/*
 * The workbench may send notifications (log messages, list changes) or
 * requests of its own while we wait.  Show them; answer ping, and refuse
 * the rest since this client declared no capabilities.
 */
static void
other_message(struct workbench *wb, const struct msg *m)
{
	char reply[512];
	const char *idtext;
	int id = msg_get(m, 0, "id"), method = msg_get(m, 0, "method");
	int len, idlen;

	if (method == -1) {
		printf("    (ignoring an answer that is not ours)\n");
		return;
	}
	len = m->t[method].end - m->t[method].start;
	if (id == -1) {
		printf("<<< notification %.*s\n", len, m->js +
		    m->t[method].start);
		return;
	}
	printf("<<< request %.*s from the workbench\n", len,
	    m->js + m->t[method].start);
	/* The id goes back as written, quotes included for a string. */
	idtext = m->js + m->t[id].start;
	idlen = m->t[id].end - m->t[id].start;
	if (m->t[id].type == JSMN_STRING) {
		idtext--;
		idlen += 2;
	}
	snprintf(reply, sizeof(reply), msg_eq(m, method, "ping") ?
	    "{\"jsonrpc\":\"2.0\",\"id\":%.*s,\"result\":{}}" :
	    "{\"jsonrpc\":\"2.0\",\"id\":%.*s,\"error\":{\"code\":-32601,"
	    "\"message\":\"Method not found\"}}", idlen, idtext);
	wb_send(wb, reply);
}

/*
 * Send one request and wait for its answer.  Returns -1 when the session
 * is over (the workbench went away or took too long), else 0 with the
 * answer parsed into m.
 */
static int
call(struct workbench *wb, const char *title, const char *method,
    const char *params, struct msg *m)
{
	char *req, *line, num[32];
	long long deadline;
	size_t n;
	int id;

	snprintf(num, sizeof(num), "%d", next_id++);
	n = strlen(method) + strlen(params) + 80;
	req = xrealloc(NULL, n);
	snprintf(req, n, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"%s\","
	    "\"params\":%s}", num, method, params);
	printf("\n>>> %s\n%s\n", title, req);
	fflush(stdout);
	if (wb_send(wb, req) == -1) {
		free(req);
		snprintf(failure, sizeof(failure), "%s", title);
		fprintf(stderr, "demo: %s: cannot write to the workbench: "
		    "%s\n", title, strerror(errno));
		return -1;
	}
	free(req);
	deadline = now_ms() + STEP_TIMEOUT_MS;
	while ((line = wb_line(wb, deadline)) != NULL) {
		if (msg_parse(m, line) == -1) {
			printf("<<< (not a JSON-RPC message) %.100s\n", line);
			continue;
		}
		id = msg_get(m, 0, "id");
		if (id != -1 && m->t[id].type == JSMN_PRIMITIVE &&
		    msg_eq(m, id, num) && msg_get(m, 0, "method") == -1) {
			print_raw(line);
			return 0;
		}
		other_message(wb, m);
	}
	snprintf(failure, sizeof(failure), "%s", title);
	if (errno == ETIMEDOUT)
		fprintf(stderr, "demo: %s: no answer within %d s; giving "
		    "up\n", title, STEP_TIMEOUT_MS / 1000);
	else
		fprintf(stderr, "demo: %s: the workbench closed its output "
		    "(did it exit? see its messages above)\n", title);
	return -1;
}

/* Note a failed step; the first one is named in the summary. */
static int
failed(const char *step, const char *why)
{
	printf("    FAILED: %s\n", why);
	if (failure[0] == '\0')
		snprintf(failure, sizeof(failure), "%s", step);
	return 0;
}

/*
 * The common part of judging an answer: a JSON-RPC error or a tool
 * result with isError fails the step; the texts say why, so show them.
 * Returns the result's index, or -1 after reporting the failure.
 */
static int
result_of(const struct msg *m, const char *step)
{
	char *text;
	int res, err, content, i, c;

	if ((err = msg_get(m, 0, "error")) != -1) {
		text = msg_string(m, msg_get(m, err, "message"));
		failed(step, text != NULL ? text : "JSON-RPC error");
		free(text);
		return -1;
	}
	if ((res = msg_get(m, 0, "result")) == -1 ||
	    m->t[res].type != JSMN_OBJECT) {
		failed(step, "the answer holds no result");
		return -1;
	}
	if (!msg_eq(m, msg_get(m, res, "isError"), "true"))
		return res;
	content = msg_get(m, res, "content");
	for (i = 0; (c = msg_at(m, content, i)) != -1; i++) {
		if ((text = msg_string(m, msg_get(m, c, "text"))) != NULL)
			print_text(text, 4, 0);
		free(text);
	}
	failed(step, "the tool reported an error (isError: true)");
	return -1;
}

static int
step_initialize(struct workbench *wb)
{
	struct msg m;
	char *name, *version, *proto, *text;
	int res, info;

	if (call(wb, "initialize", "initialize", "{\"protocolVersion\":"
	    "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":"
	    "\"demo\",\"version\":\"1.0\"}}", &m) == -1)
		return -1;
	if ((res = result_of(&m, "initialize")) == -1)
		return 0;
	info = msg_get(&m, res, "serverInfo");
	name = msg_string(&m, msg_get(&m, info, "name"));
	version = msg_string(&m, msg_get(&m, info, "version"));
	proto = msg_string(&m, msg_get(&m, res, "protocolVersion"));
	text = msg_string(&m, msg_get(&m, res, "instructions"));
	printf("    server %s %s, protocol %s\n", name != NULL ? name : "?",
	    version != NULL ? version : "?", proto != NULL ? proto : "?");
	if (text != NULL) {
		printf("    instructions:\n");
		print_text(text, 8, 0);
	}
	free(name);
	free(version);
	free(proto);
	free(text);
	return 1;
}

/* Notifications get no answer, so there is nothing to wait for. */
static int
step_initialized(struct workbench *wb)
{
	const char *note =
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";

	printf("\n>>> notifications/initialized\n%s\n", note);
	printf("    (a notification: no answer comes back)\n");
	if (wb_send(wb, note) == -1) {
		snprintf(failure, sizeof(failure), "notifications/initialized");
		fprintf(stderr, "demo: cannot write to the workbench: %s\n",
		    strerror(errno));
		return -1;
	}
	return 1;
}

/* Print the "name" of every object in array arr on one line. */
static int
print_names(const struct msg *m, int arr, const char *label)
{
	char *name;
	int i, t;

	printf("    %s:", label);
	for (i = 0; (t = msg_at(m, arr, i)) != -1; i++) {
		name = msg_string(m, msg_get(m, t, "name"));
		printf("%s %s", i > 0 ? "," : "", name != NULL ? name : "?");
		free(name);
	}
	printf("%s\n", i == 0 ? " (none)" : "");
	return i;
}

static int
step_tools_list(struct workbench *wb)
{
	struct msg m;
	int res;

	if (call(wb, "tools/list", "tools/list", "{}", &m) == -1)
		return -1;
	if ((res = result_of(&m, "tools/list")) == -1)
		return 0;
	if (print_names(&m, msg_get(&m, res, "tools"), "tools") == 0)
		return failed("tools/list", "no tools listed");
	return 1;
}

/* Show each server that failed to start and why. */
static void
print_failed_servers(const struct msg *m, int arr)
{
	char *server, *error;
	int i, f;

	for (i = 0; (f = msg_at(m, arr, i)) != -1; i++) {
		server = msg_string(m, msg_get(m, f, "server"));
		error = msg_string(m, msg_get(m, f, "error"));
		printf("    server %s failed: %s\n", server != NULL ? server :
		    "?", error != NULL ? error : "?");
		free(server);
		free(error);
	}
}

/*
 * The tools of each server of an open_toolbox answer: its "servers",
 * each a server's name and its tools.  Returns how many tools in all.
 */
static int
print_servers(const struct msg *m, int arr)
{
	char label[128], *name;
	int i, t, n = 0;

	for (i = 0; (t = msg_at(m, arr, i)) != -1; i++) {
		name = msg_string(m, msg_get(m, t, "server"));
		snprintf(label, sizeof(label), "tools of server \"%s\"",
		    name != NULL ? name : "?");
		free(name);
		n += print_names(m, msg_get(m, t, "tools"), label);
	}
	if (i == 0)
		printf("    tools found in toolbox \"example\": (none)\n");
	return n;
}

/*
 * open_toolbox answers with JSON both as text and as structuredContent;
 * the structured copy saves parsing the text a second time.
 */
static int
step_open_toolbox(struct workbench *wb)
{
	const char *step = "tools/call open_toolbox";
	struct msg m;
	int res, sc, n;

	if (call(wb, step, "tools/call", "{\"name\":\"open_toolbox\","
	    "\"arguments\":{\"toolbox_name\":\"example\"}}", &m) == -1)
		return -1;
	if ((res = result_of(&m, step)) == -1)
		return 0;
	if ((sc = msg_get(&m, res, "structuredContent")) == -1)
		return failed(step, "no structuredContent in the result");
	n = print_servers(&m, msg_get(&m, sc, "servers"));
	print_failed_servers(&m, msg_get(&m, sc, "servers_failed"));
	if (n == 0)
		return failed(step, "the toolbox offers no tools");
	return 1;
}

/* Call a tool of the example toolbox through use_tool; show its text. */
static int
step_use_tool(struct workbench *wb, const char *tool, const char *args,
    int lines)
{
	char title[128], params[512], *text;
	struct msg m;
	int res, content, i, c;

	snprintf(title, sizeof(title), "tools/call use_tool %s %s", tool,
	    args);
	snprintf(params, sizeof(params), "{\"name\":\"use_tool\","
	    "\"arguments\":{\"tool\":{\"toolbox\":\"example\",\"server\":"
	    "\"sysinfo\",\"name\":\"%s\"},\"arguments\":%s}}", tool, args);
	if (call(wb, title, "tools/call", params, &m) == -1)
		return -1;
	if ((res = result_of(&m, title)) == -1)
		return 0;
	/* With a line limit only the first block (the file) is shown. */
	content = msg_get(&m, res, "content");
	for (i = 0; (c = msg_at(&m, content, i)) != -1 &&
	    (lines == 0 || i == 0); i++) {
		if ((text = msg_string(&m, msg_get(&m, c, "text"))) != NULL)
			print_text(text, 4, lines);
		free(text);
	}
	if (i == 0)
		return failed(title, "the result has no content");
	return 1;
}

/*
 * Wait up to 20 ms for output and throw it away: nothing is expected after
 * stdin closed, but a workbench blocked on a full pipe could never exit.
 */
static void
drain(struct workbench *wb)
{
	struct pollfd pfd = { .fd = wb->from, .events = POLLIN };
	char junk[4096];

	if (wb->from == -1) {
		poll(NULL, 0, 20);
		return;
	}
	if (poll(&pfd, 1, 20) > 0 && read(wb->from, junk, sizeof(junk)) == 0) {
		close(wb->from);
		wb->from = -1;
	}
}

/*
 * Closing stdin is how an MCP client ends a stdio session.  Give the
 * workbench time to stop its servers, then insist, so the demo never
 * leaves a process behind.
 */
static int
wb_stop(struct workbench *wb)
{
	long long start = now_ms();
	int status, sent = 0;
	pid_t r;

	close(wb->to);
	while ((r = waitpid(wb->pid, &status, WNOHANG)) == 0) {
		drain(wb);
		if (sent == 0 && now_ms() - start > 5000) {
			fprintf(stderr, "demo: the workbench did not exit; "
			    "sending SIGTERM\n");
			kill(wb->pid, SIGTERM);
			sent = 1;
		} else if (sent == 1 && now_ms() - start > 7000) {
			kill(wb->pid, SIGKILL);
			sent = 2;
		}
	}
	if (wb->from != -1)
		close(wb->from);
	free(wb->buf);
	if (r == -1)
		return -1;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFEXITED(status))
		fprintf(stderr, "demo: the workbench exited with status %d\n",
		    WEXITSTATUS(status));
	else
		fprintf(stderr, "demo: the workbench was killed by signal "
		    "%d\n", WTERMSIG(status));
	return -1;
}

/* Run the steps in order; stop early only if the session broke. */
static int
session(struct workbench *wb)
{
	int ok = 0, r;

	if ((r = step_initialize(wb)) == -1)
		return ok;
	ok += r;
	if ((r = step_initialized(wb)) == -1)
		return ok;
	ok += r;
	if ((r = step_tools_list(wb)) == -1)
		return ok;
	ok += r;
	if ((r = step_open_toolbox(wb)) == -1)
		return ok;
	ok += r;
	if ((r = step_use_tool(wb, "system_info", "{}", 0)) == -1)
		return ok;
	ok += r;
	if ((r = step_use_tool(wb, "read_file", "{\"path\":\"README.md\"}",
	    FILE_LINES)) == -1)
		return ok;
	return ok + r;
}

int
main(int argc, char *argv[])
{
	static char wb[] = "./mcp-workbench", c[] = "-c",
	    config[] = "example/workbench-config.json";
	char *wbargv[] = { wb, c, config, NULL };
	struct workbench w = { 0 };
	int ok, steps = 6;

	if (argc > 3 || (argc > 1 && argv[1][0] == '-')) {
		fprintf(stderr, "usage: demo [WORKBENCH [CONFIG]]\n");
		return 2;
	}
	if (argc > 1)
		wbargv[0] = argv[1];
	if (argc > 2)
		wbargv[2] = argv[2];
	/* Keep our lines in order with our stderr and the workbench's. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* A workbench that dies must show up as an error, not kill us. */
	signal(SIGPIPE, SIG_IGN);
	printf("demo: starting %s -c %s\n", wbargv[0], wbargv[2]);
	if (wb_start(&w, wbargv) == -1) {
		fprintf(stderr, "demo: cannot start %s: %s%s\n", wbargv[0],
		    strerror(errno), errno == ENOENT ? " (run make first)" :
		    "");
		return 1;
	}
	ok = session(&w);
	printf("\n>>> (closing the workbench's stdin to end the session)\n");
	fflush(stdout);
	if (wb_stop(&w) == -1 && failure[0] == '\0')
		snprintf(failure, sizeof(failure), "shutdown");
	if (ok == steps && failure[0] == '\0') {
		printf("demo: all %d steps succeeded\n", steps);
		return 0;
	}
	printf("demo: %d of %d steps succeeded\n", ok, steps);
	fprintf(stderr, "demo: FAILED at %s\n", failure[0] != '\0' ?
	    failure : "an unknown step");
	return 1;
}
