/*
 * loadgen: an MCP stdio load generator for the benchmarks.
 *
 *	loadgen [options] TEST -- COMMAND [ARG ...]
 *
 * It spawns COMMAND with pipes on its standard input and output, speaks
 * MCP to it (one JSON-RPC message per line) and prints one line
 *
 *	RESULT test=TEST mode=direct|workbench key=value ...
 *
 * Without -w the command is the downstream server itself (direct mode):
 * calls are tools/call of its tools, and -S N spawns N copies of it, used
 * round-robin.  With -w the command is mcp-workbench: the toolbox (-b,
 * default "bench") is opened with open_toolbox and calls go through
 * use_tool to its servers s0 .. s{N-1}, round-robin.  The payloads are the
 * same in both modes, so the ratio of the two is the proxy's cost.  With
 * -M the use_tool calls are a 2026-07-28 client's, with the _meta that
 * era puts on every request.  With -I N, N more sessions of the same
 * command are started first, each initialized and then left idle until
 * the test is over (with a shared workbench: N fronts attached to it);
 * -P waits until the shared workbench has parked them (--status).
 *
 * Tests:
 *	init	  spawn to initialize answered (-r runs); peak RSS after it
 *	open	  workbench: open_toolbox time, peak RSS; direct: spawn the
 *		  -S servers and initialize + tools/list them all, in parallel
 *	lat	  sequential echo calls (-n, after -W warm-up): p50, p99
 *	rate	  -n echo calls with -k in flight: calls/s, CPU per call, RSS
 *	blob	  -n sequential blob calls of -z bytes: time, MB/s, peak RSS
 *	list	  tools/list time (workbench: after open_toolbox; meant for
 *		  dynamic mode), peak RSS
 *	shutdown  close stdin after setup; time until the process is reaped
 *
 * Responses are recognised without a JSON parser (the id is the number
 * after the first "id": of a line that is not a request); jsmn is used
 * only to validate open_toolbox and tools/list answers, outside timing.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jsmn.h>

#include "spawn.h"

#define READ_MIN	(256 * 1024)
#define STALL_MS	120000	/* No progress for this long: give up. */

struct conn {
	pid_t	 pid;
	int	 wfd;
	int	 rfd;
	char	*in;
	size_t	 inlen, incap, scanned;
	char	*out;
	size_t	 outlen, outoff, outcap;
	bool	 eof;
	long long list_id;	/* Of the tools/list sent by "open". */
};

typedef void line_fn(struct conn *, char *, size_t);

static struct conn *conns;
static int nconns;
static struct pollfd *pfd;
static struct conn **pconn;
static int errfd = -1;

/* -I: sessions started before the test and left idle (idle_start). */
static struct conn *idle;
static int nidle;
static pid_t drainer = -1;

static bool wbmode;
static const char *call_meta = "";	/* -M: calls of a 2026-07-28 client. */
static int nservers = 1;
static const char *boxname = "bench";
static char **cmd;
static const char *testname;
static const char *message = "The quick brown fox jumps over the lazy dog "
    "(benchmark payload).";
static long long next_id = 1;

/* What the waiting loops look for. */
static long long want_id;
static bool got;
static size_t got_len;
static bool got_err;
static bool keep_line;
static char *kept;
static size_t kept_len;

static void
fail(const char *fmt, ...)
{
	va_list ap;

	printf("error=\"");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\"\n");
	fflush(stdout);
	fprintf(stderr, "loadgen: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	for (int i = 0; i < nconns; i++)
		if (conns[i].pid > 0)
			kill(conns[i].pid, SIGKILL);
	for (int i = 0; i < nidle; i++)
		if (idle[i].pid > 0)
			kill(idle[i].pid, SIGKILL);
	exit(1);
}

static double
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void *
xrealloc(void *p, size_t n)
{
	if ((p = realloc(p, n)) == NULL)
		fail("out of memory");
	return p;
}

/*
 * Processes.
 */
static struct conn *
spawn(void)
{
	struct conn *c;
	int e;

	conns = xrealloc(conns, (size_t)(nconns + 1) * sizeof(*conns));
	c = &conns[nconns++];
	memset(c, 0, sizeof(*c));
	if ((e = spawn_piped(cmd, errfd, &c->pid, &c->wfd, &c->rfd)) != 0)
		fail("cannot run %s: %s", cmd[0], strerror(e));
	return c;
}

static void
conn_free(struct conn *c)
{
	if (c->wfd >= 0)
		close(c->wfd);
	if (c->rfd >= 0)
		close(c->rfd);
	free(c->in);
	free(c->out);
	memset(c, 0, sizeof(*c));
	c->wfd = c->rfd = -1;
}

/* Close every stdin, drain every stdout, reap everything. */
static void
stop_all(void)
{
	char sink[65536];
	int i, st;

	for (i = 0; i < nconns; i++) {
		close(conns[i].wfd);
		conns[i].wfd = -1;
		fcntl(conns[i].rfd, F_SETFL, 0);
	}
	for (i = 0; i < nconns; i++) {
		while (read(conns[i].rfd, sink, sizeof(sink)) > 0)
			;
		waitpid(conns[i].pid, &st, 0);
		conn_free(&conns[i]);
	}
	nconns = 0;
}

/* A number from /proc/PID/status, in kB; -1 when not there. */
static long
status_kb(pid_t pid, const char *key)
{
	char path[64], line[256];
	size_t klen = strlen(key);
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
			v = strtol(line + klen + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/* CPU time a process has used, in microseconds. */
static double
cpu_us(pid_t pid)
{
	char path[64];
	unsigned long long ns = 0;
	FILE *f;

	if (pid == 0)
		snprintf(path, sizeof(path), "/proc/self/schedstat");
	else
		snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	if (fscanf(f, "%llu", &ns) != 1)
		ns = 0;
	fclose(f);
	return (double)ns / 1e3;
}

/* The children of a process (the workbench's servers). */
static int
children(pid_t pid, pid_t *out, int max)
{
	char path[96];
	FILE *f;
	int n = 0, v;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid,
	    (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	while (n < max && fscanf(f, "%d", &v) == 1)
		out[n++] = v;
	fclose(f);
	return n;
}

/*
 * Sending and receiving.
 */
static void
conn_put(struct conn *c, const char *s, size_t n)
{
	if (c->outlen + n > c->outcap) {
		while (c->outlen + n > c->outcap)
			c->outcap = c->outcap == 0 ? 65536 : c->outcap * 2;
		c->out = xrealloc(c->out, c->outcap);
	}
	memcpy(c->out + c->outlen, s, n);
	c->outlen += n;
}

static void
conn_printf(struct conn *c, const char *fmt, ...)
{
	char line[4096];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(line))
		fail("request too long");
	conn_put(c, line, (size_t)n);
}

static void
conn_flush(struct conn *c)
{
	ssize_t n;

	while (c->outoff < c->outlen) {
		n = write(c->wfd, c->out + c->outoff, c->outlen - c->outoff);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n < 0)
			fail("write to pid %d: %s", (int)c->pid,
			    strerror(errno));
		c->outoff += (size_t)n;
	}
	c->outoff = c->outlen = 0;
}

/*
 * The id of a response line, or -1 for anything else.  Requests and
 * notifications name their method near the start of the line; the id is
 * near the start too, or (the TypeScript SDK's order, echo-server
 * --id-last) at the end.
 */
static long long
resp_id(const char *line, size_t n)
{
	size_t m = n < 96 ? n : 96;
	const char *p, *q;

	if (memmem(line, m, "\"method\"", 8) != NULL)
		return -1;
	if ((p = memmem(line, m, "\"id\":", 5)) == NULL) {
		/* The last one: the top level's, not a nested one. */
		for (q = line + n - m; (q = memmem(q, (size_t)(line + n - q),
		    "\"id\":", 5)) != NULL; q++)
			p = q;
		if (p == NULL)
			return -1;
	}
	return strtoll(p + 5, NULL, 10);
}

/* Is this answer a failure (JSON-RPC error or isError result)? */
static bool
resp_failed(const char *line, size_t n)
{
	size_t m = n < 64 ? n : 64;

	if (memmem(line, m, "\"error\":", 8) != NULL)
		return true;
	m = n < 48 ? n : 48;
	return memmem(line + n - m, m, "\"isError\":true", 14) != NULL;
}

static void
conn_read(struct conn *c, line_fn *fn)
{
	size_t pos = 0;
	ssize_t n;
	char *nl;

	if (c->incap - c->inlen < READ_MIN) {
		while (c->incap - c->inlen < READ_MIN)
			c->incap = c->incap == 0 ? 2 * READ_MIN :
			    c->incap * 2;
		c->in = xrealloc(c->in, c->incap);
	}
	n = read(c->rfd, c->in + c->inlen, c->incap - c->inlen);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		c->eof = true;
		return;
	}
	c->inlen += (size_t)n;
	while ((nl = memchr(c->in + c->scanned, '\n', c->inlen - c->scanned))
	    != NULL) {
		fn(c, c->in + pos, (size_t)(nl - c->in) - pos);
		pos = c->scanned = (size_t)(nl - c->in) + 1;
	}
	if (pos > 0) {
		memmove(c->in, c->in + pos, c->inlen - pos);
		c->inlen -= pos;
	}
	c->scanned = c->inlen;
}

/* One poll() round over every connection. */
static void
pump(line_fn *fn)
{
	static double last_progress;
	int i, n = 0, r;

	for (i = 0; i < nconns; i++)
		if (conns[i].outoff < conns[i].outlen)
			conn_flush(&conns[i]);
	pfd = xrealloc(pfd, (size_t)(2 * nconns + 1) * sizeof(*pfd));
	pconn = xrealloc(pconn, (size_t)(2 * nconns + 1) * sizeof(*pconn));
	for (i = 0; i < nconns; i++) {
		if (!conns[i].eof) {
			pfd[n].fd = conns[i].rfd;
			pfd[n].events = POLLIN;
			pconn[n++] = &conns[i];
		}
		if (conns[i].outoff < conns[i].outlen) {
			pfd[n].fd = conns[i].wfd;
			pfd[n].events = POLLOUT;
			pconn[n++] = &conns[i];
		}
	}
	if (last_progress == 0)
		last_progress = now_us();
	r = poll(pfd, (nfds_t)n, 1000);
	if (r < 0 && errno != EINTR)
		fail("poll: %s", strerror(errno));
	if (r <= 0) {
		if (now_us() - last_progress > STALL_MS * 1000.0)
			fail("no answer for %d s", STALL_MS / 1000);
		return;
	}
	last_progress = now_us();
	for (i = 0; i < n; i++) {
		if (pfd[i].revents == 0)
			continue;
		if (pfd[i].events == POLLOUT)
			conn_flush(pconn[i]);
		else
			conn_read(pconn[i], fn);
	}
	for (i = 0; i < nconns; i++)
		if (conns[i].eof && conns[i].wfd >= 0 && testname != NULL &&
		    strcmp(testname, "shutdown") != 0)
			fail("pid %d closed its output (see the stderr log)",
			    (int)conns[i].pid);
}

/* The line handler of the waiting loops. */
static void
on_wanted(struct conn *c, char *line, size_t n)
{
	(void)c;
	if (resp_id(line, n) != want_id)
		return;
	got = true;
	got_len = n;
	got_err = resp_failed(line, n);
	if (keep_line) {
		free(kept);
		kept = xrealloc(NULL, n + 1);
		memcpy(kept, line, n);
		kept[n] = '\0';
		kept_len = n;
	}
}

static void
wait_for(long long id)
{
	want_id = id;
	got = false;
	while (!got)
		pump(on_wanted);
}

/*
 * Requests.
 */
static long long
send_initialize(struct conn *c)
{
	long long id = next_id++;

	conn_printf(c, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"method\":"
	    "\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\","
	    "\"capabilities\":{},\"clientInfo\":{\"name\":\"loadgen\","
	    "\"version\":\"1.0\"}}}\n", id);
	return id;
}

static void
send_initialized(struct conn *c)
{
	conn_printf(c, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/initialized\"}\n");
}

static long long
send_open(struct conn *c)
{
	long long id = next_id++;

	conn_printf(c, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"open_toolbox\","
	    "\"arguments\":{\"toolbox_name\":\"%s\"}}}\n", id, boxname);
	return id;
}

static long long
send_list(struct conn *c)
{
	long long id = next_id++;

	conn_printf(c, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"method\":"
	    "\"tools/list\",\"params\":{}}\n", id);
	return id;
}

/* A call of tool with the JSON arguments args, to server k. */
static long long
send_call(int k, const char *tool, const char *args)
{
	struct conn *c = wbmode ? &conns[0] : &conns[k % nconns];
	long long id = next_id++;

	if (wbmode)
		conn_printf(c, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"method\":"
		    "\"tools/call\",\"params\":{\"name\":\"use_tool\","
		    "\"arguments\":{\"tool\":{\"toolbox\":\"%s\",\"server\":"
		    "\"s%d\",\"name\":\"%s\"},\"arguments\":%s}%s}}\n", id,
		    boxname, k % nservers, tool, args, call_meta);
	else
		conn_printf(c, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"method\":"
		    "\"tools/call\",\"params\":{\"name\":\"%s\","
		    "\"arguments\":%s}}\n", id, tool, args);
	return id;
}

static char echo_args[1024];

static long long
send_echo(int k)
{
	return send_call(k, "echo", echo_args);
}

/*
 * Validation with jsmn, outside timing.  Counts the tools in a tools/list
 * result or in an open_toolbox structuredContent.
 */
static int
json_find(const char *js, jsmntok_t *t, int ntok, int obj, const char *key)
{
	int i, end;
	size_t klen = strlen(key);

	if (obj < 0 || t[obj].type != JSMN_OBJECT)
		return -1;
	end = t[obj].end;
	/* Keys are the string tokens whose parent is the object. */
	for (i = obj + 1; i < ntok && t[i].start < end; i++)
		if (t[i].parent == obj && t[i].type == JSMN_STRING &&
		    (size_t)(t[i].end - t[i].start) == klen &&
		    memcmp(js + t[i].start, key, klen) == 0)
			return i + 1;
	return -1;
}

static int
count_tools(const char *js, size_t len, bool open)
{
	jsmn_parser p;
	jsmntok_t *t;
	int ntok, r, k;

	ntok = (int)(len / 4 + 64);
	t = xrealloc(NULL, (size_t)ntok * sizeof(*t));
	jsmn_init(&p);
	r = jsmn_parse(&p, js, len, t, (unsigned int)ntok);
	if (r < 0) {
		free(t);
		return -1;
	}
	k = json_find(js, t, r, 0, "result");
	if (open)
		k = json_find(js, t, r, k, "structuredContent");
	k = json_find(js, t, r, k, "tools");
	r = k >= 0 && t[k].type == JSMN_ARRAY ? t[k].size : -1;
	free(t);
	return r;
}

/* The value of an integer member, found by text. */
static long
text_int(const char *s, const char *key)
{
	const char *p = strstr(s, key);

	return p == NULL ? -1 : strtol(p + strlen(key), NULL, 10);
}

/*
 * Did open_toolbox give every server's tools: all connected, or answered
 * from the tool catalogue while they start?
 */
static bool
opened_all(const char *answer)
{
	return text_int(answer, "\"servers_connected\":") == nservers ||
	    strstr(answer, "\"from_catalogue\":") != NULL;
}

/*
 * Setup: spawn, initialize and (workbench) open the toolbox.
 */
static int init_pending;

static void
on_init_answer(struct conn *c, char *line, size_t n)
{
	if (resp_id(line, n) < 0)
		return;
	if (resp_failed(line, n))
		fail("initialize failed: %.*s", (int)(n < 300 ? n : 300), line);
	send_initialized(c);
	init_pending--;
}

static void
setup(void)
{
	long long id;
	long sc;
	int i;

	if (wbmode)
		spawn();
	else
		for (i = 0; i < nservers; i++)
			spawn();
	for (i = 0; i < nconns; i++)
		send_initialize(&conns[i]);
	init_pending = nconns;
	while (init_pending > 0)
		pump(on_init_answer);
	if (!wbmode)
		return;
	keep_line = true;
	id = send_open(&conns[0]);
	wait_for(id);
	keep_line = false;
	sc = text_int(kept, "\"servers_connected\":");
	if (got_err || !opened_all(kept))
		fail("open_toolbox: %ld of %d servers connected: %.300s", sc,
		    nservers, kept);
}

/*
 * Idle sessions (-I).  They are set up with the same connections as the
 * test's, then moved aside, so that the test's conns[0] is its own session
 * and its poll() watches nothing more than without them.
 */

/*
 * Read and discard whatever the idle sessions are sent, in a child of our
 * own, until each of them closes its output: an idle session is sent
 * nothing, but a line that did come must not fill a pipe and block the
 * workbench, and polling them here would add to the test's every turn.
 */
static void
drain_idle(void)
{
	struct pollfd *p = xrealloc(NULL, (size_t)nidle * sizeof(*p));
	char sink[65536];
	int i, left = nidle;
	ssize_t r;

	for (i = 0; i < nidle; i++) {
		close(idle[i].wfd);	/* Or they would never see EOF. */
		p[i].fd = idle[i].rfd;
		p[i].events = POLLIN;
		p[i].revents = 0;
	}
	while (left > 0) {
		if (poll(p, (nfds_t)nidle, -1) < 0 && errno != EINTR)
			_exit(1);
		for (i = 0; i < nidle; i++) {
			if (p[i].revents == 0 || p[i].fd < 0)
				continue;
			r = read(p[i].fd, sink, sizeof(sink));
			if (r == 0 || (r < 0 && errno != EAGAIN &&
			    errno != EINTR)) {
				p[i].fd = -1;
				left--;
			}
		}
	}
	_exit(0);
}

static void
idle_start(int n)
{
	int i;

	for (i = 0; i < n; i++)
		send_initialize(spawn());
	init_pending = nconns;
	while (init_pending > 0)
		pump(on_init_answer);
	/* Their notifications/initialized: no more pump() will send them. */
	for (i = 0; i < nconns; i++)
		while (conns[i].outoff < conns[i].outlen)
			conn_flush(&conns[i]);
	idle = conns;
	nidle = nconns;
	conns = NULL;
	nconns = 0;
	fflush(stdout);		/* Or the child would print it again. */
	if ((drainer = fork()) < 0)
		fail("fork: %s", strerror(errno));
	if (drainer == 0)
		drain_idle();
	for (i = 0; i < nidle; i++) {
		close(idle[i].rfd);
		idle[i].rfd = -1;
	}
}

/* End the idle sessions: close their input, reap them and the drainer. */
static void
idle_stop(void)
{
	int i, st;

	for (i = 0; i < nidle; i++)
		close(idle[i].wfd);
	for (i = 0; i < nidle; i++)
		waitpid(idle[i].pid, &st, 0);
	if (drainer > 0)
		waitpid(drainer, &st, 0);
	free(idle);
	idle = NULL;
	nidle = 0;
}

/*
 * Statistics.
 */
static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
pct(double *v, int n, double p)
{
	int i;

	if (n == 0)
		return 0;
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	i = (int)(p * n + 0.999999) - 1;
	if (i < 0)
		i = 0;
	if (i >= n)
		i = n - 1;
	return v[i];
}

static long
max_l(long a, long b)
{
	return a > b ? a : b;
}

/*
 * The tests.
 */
static void
test_init(int reps)
{
	double *t = xrealloc(NULL, (size_t)reps * sizeof(*t)), t0;
	long hwm = 0, rss = 0;
	struct conn *c;
	long long id;
	int r;

	for (r = 0; r < reps; r++) {
		t0 = now_us();
		c = spawn();
		id = send_initialize(c);
		wait_for(id);
		t[r] = now_us() - t0;
		if (got_err)
			fail("initialize failed");
		hwm = max_l(hwm, status_kb(conns[0].pid, "VmHWM"));
		rss = max_l(rss, status_kb(conns[0].pid, "VmRSS"));
		stop_all();
	}
	printf("median_us=%.1f p90_us=%.1f min_us=%.1f hwm_kb=%ld "
	    "rss_kb=%ld", pct(t, reps, 0.5), pct(t, reps, 0.9),
	    pct(t, reps, 0.0), hwm, rss);
	free(t);
}

static int lists_pending, tools_direct;
static size_t list_bytes;

static void
on_open_direct(struct conn *c, char *line, size_t n)
{
	if (resp_id(line, n) < 0)
		return;
	if (resp_failed(line, n))
		fail("direct setup failed: %.*s", (int)(n < 300 ? n : 300),
		    line);
	if (c->list_id > 0 && resp_id(line, n) == c->list_id) {
		lists_pending--;
		list_bytes = n;
		if (tools_direct == -2)	/* The untimed first run. */
			tools_direct = count_tools(line, n, false);
		return;
	}
	send_initialized(c);
	c->list_id = send_list(c);
}

static void
test_open(int reps)
{
	double *t = xrealloc(NULL, (size_t)reps * sizeof(*t)), t0;
	long hwm = 0, rss = 0;
	int r, i, tools = -1;
	long long id;
	size_t bytes = 0;

	/* Run 0 is untimed: it warms caches up and validates. */
	for (r = -1; r < reps; r++) {
		if (wbmode) {
			spawn();
			id = send_initialize(&conns[0]);
			wait_for(id);
			send_initialized(&conns[0]);
			keep_line = r < 0;	/* Copying is not timed. */
			t0 = now_us();
			id = send_open(&conns[0]);
			wait_for(id);
			t0 = now_us() - t0;
			keep_line = false;
			if (got_err)
				fail("open_toolbox answered an error");
			if (r < 0 && !opened_all(kept))
				fail("open_toolbox: %.300s", kept);
			if (r < 0)
				tools = count_tools(kept, kept_len, true);
			bytes = got_len;
			hwm = max_l(hwm, status_kb(conns[0].pid, "VmHWM"));
			rss = max_l(rss, status_kb(conns[0].pid, "VmRSS"));
		} else {
			tools_direct = r < 0 ? -2 : -1;
			t0 = now_us();
			for (i = 0; i < nservers; i++)
				spawn();
			for (i = 0; i < nconns; i++)
				send_initialize(&conns[i]);
			lists_pending = nconns;
			while (lists_pending > 0)
				pump(on_open_direct);
			t0 = now_us() - t0;
			bytes = list_bytes;
			if (r < 0)
				tools = tools_direct;
			for (i = 0; i < nconns; i++)
				hwm = max_l(hwm, status_kb(conns[i].pid,
				    "VmHWM"));
		}
		if (r >= 0)
			t[r] = t0;
		stop_all();
	}
	printf("median_ms=%.3f min_ms=%.3f max_ms=%.3f tools=%d bytes=%zu "
	    "hwm_kb=%ld rss_kb=%ld", pct(t, reps, 0.5) / 1e3,
	    pct(t, reps, 0.0) / 1e3, pct(t, reps, 1.0) / 1e3, tools, bytes,
	    hwm, rss);
	free(t);
}

static void
test_lat(int n, int warm)
{
	double *t = xrealloc(NULL, (size_t)n * sizeof(*t)), t0, sum = 0;
	int i, errors = 0;
	long long id;

	setup();
	for (i = 0; i < warm + n; i++) {
		t0 = now_us();
		id = send_echo(i);
		wait_for(id);
		if (i >= warm) {
			t[i - warm] = now_us() - t0;
			sum += t[i - warm];
		}
		errors += got_err || got_len < strlen(message);
	}
	printf("p50_us=%.2f p99_us=%.2f mean_us=%.2f min_us=%.2f "
	    "errors=%d", pct(t, n, 0.5), pct(t, n, 0.99), sum / n,
	    pct(t, n, 0.0), errors);
	stop_all();
	free(t);
}

static long rate_sent, rate_done, rate_total;
static int rate_errors;

static void
on_rate(struct conn *c, char *line, size_t n)
{
	(void)c;
	if (resp_id(line, n) < 0)
		return;
	rate_errors += resp_failed(line, n);
	rate_done++;
	if (rate_sent < rate_total)
		send_echo((int)rate_sent++);
}

static void
run_rate(long total, int k)
{
	rate_sent = rate_done = 0;
	rate_total = total;
	while (rate_sent < k && rate_sent < total)
		send_echo((int)rate_sent++);
	while (rate_done < total)
		pump(on_rate);
}

/* CPU used so far by the target processes: [0] proxy, [1] servers. */
static void
target_cpu(double *proxy, double *servers)
{
	pid_t kids[1024];
	int i, n;

	*proxy = *servers = 0;
	if (wbmode) {
		*proxy = cpu_us(conns[0].pid);
		n = children(conns[0].pid, kids, 1024);
		for (i = 0; i < n; i++)
			*servers += cpu_us(kids[i]);
	} else
		for (i = 0; i < nconns; i++)
			*servers += cpu_us(conns[i].pid);
}

static void
test_rate(long n, int k, long warm)
{
	double t0, t1, p0, p1, s0, s1, l0, l1;
	long rss_warm = 0;
	pid_t pid;

	setup();
	pid = conns[0].pid;
	if (warm > 0)
		run_rate(warm, k);
	rss_warm = status_kb(pid, "VmRSS");
	target_cpu(&p0, &s0);
	l0 = cpu_us(0);
	t0 = now_us();
	run_rate(n, k);
	t1 = now_us();
	l1 = cpu_us(0);
	target_cpu(&p1, &s1);
	printf("calls=%ld inflight=%d servers=%d rate=%.0f secs=%.3f "
	    "cpu_proxy_us=%.3f cpu_servers_us=%.3f cpu_loadgen_us=%.3f "
	    "rss_warm_kb=%ld rss_kb=%ld hwm_kb=%ld errors=%d", n, k, nservers,
	    n / ((t1 - t0) / 1e6), (t1 - t0) / 1e6, (p1 - p0) / n,
	    (s1 - s0) / n, (l1 - l0) / n, rss_warm, status_kb(pid, "VmRSS"),
	    status_kb(pid, "VmHWM"), rate_errors);
	stop_all();
}

static void
test_blob(int n, long bytes)
{
	double *t = xrealloc(NULL, (size_t)n * sizeof(*t)), t0;
	char args[64];
	int i, errors = 0;
	long long id;
	long idle;

	snprintf(args, sizeof(args), "{\"bytes\":%ld}", bytes);
	setup();
	idle = status_kb(conns[0].pid, "VmHWM");
	for (i = -1; i < n; i++) {	/* One warm-up call. */
		t0 = now_us();
		id = send_call(0, "blob", args);
		wait_for(id);
		if (i >= 0)
			t[i] = now_us() - t0;
		errors += got_err || got_len < (size_t)bytes;
	}
	printf("bytes=%ld median_ms=%.3f min_ms=%.3f mbps=%.1f "
	    "hwm_idle_kb=%ld hwm_kb=%ld errors=%d", bytes,
	    pct(t, n, 0.5) / 1e3, pct(t, n, 0.0) / 1e3,
	    bytes / pct(t, n, 0.5), idle, status_kb(conns[0].pid, "VmHWM"),
	    errors);
	stop_all();
	free(t);
}

static void
test_list(int reps)
{
	double *t = xrealloc(NULL, (size_t)reps * sizeof(*t)), t0;
	long hwm_before = 0, hwm = 0;
	int r, tools = -1;
	long long id;
	size_t bytes = 0;

	/* Run 0 is untimed: it warms caches up and validates. */
	for (r = -1; r < reps; r++) {
		setup();
		hwm_before = max_l(hwm_before, status_kb(conns[0].pid,
		    "VmHWM"));
		keep_line = r < 0;
		t0 = now_us();
		id = send_list(&conns[0]);
		wait_for(id);
		if (r >= 0)
			t[r] = now_us() - t0;
		keep_line = false;
		if (got_err)
			fail("tools/list answered an error");
		if (r < 0)
			tools = count_tools(kept, kept_len, false);
		bytes = got_len;
		hwm = max_l(hwm, status_kb(conns[0].pid, "VmHWM"));
		stop_all();
	}
	printf("median_ms=%.3f min_ms=%.3f tools=%d bytes=%zu "
	    "hwm_before_kb=%ld hwm_kb=%ld", pct(t, reps, 0.5) / 1e3,
	    pct(t, reps, 0.0) / 1e3, tools, bytes, hwm_before, hwm);
	free(t);
}

static long long
send_search(struct conn *c)
{
	long long id = next_id++;

	conn_printf(c, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"search_tools\","
	    "\"arguments\":{\"query\":\"generated tool 4242 message\"}}}\n",
	    id);
	return id;
}

/*
 * search_tools over every tool of the open toolbox (the workbench only:
 * nothing answers it directly).  The first search builds each tool's
 * terms; it is reported apart.
 */
static void
test_search(int reps)
{
	double *t = xrealloc(NULL, (size_t)reps * sizeof(*t)), t0, first = 0;
	long long id;
	int r;

	if (!wbmode) {
		printf("median_ms=n/a first_ms=n/a");
		free(t);
		return;
	}
	setup();
	for (r = -1; r < reps; r++) {
		keep_line = r < 0;
		t0 = now_us();
		id = send_search(&conns[0]);
		wait_for(id);
		t0 = now_us() - t0;
		keep_line = false;
		if (got_err || (r < 0 && strstr(kept, "\"name\":\"tool_4242\"") ==
		    NULL))
			fail("search_tools did not find tool_4242: %.300s",
			    r < 0 ? kept : "");
		if (r < 0)
			first = t0;
		else
			t[r] = t0;
	}
	stop_all();
	printf("median_ms=%.3f min_ms=%.3f first_ms=%.3f",
	    pct(t, reps, 0.5) / 1e3, pct(t, reps, 0.0) / 1e3, first / 1e3);
	free(t);
}

static void
test_shutdown(int reps)
{
	double *t = xrealloc(NULL, (size_t)reps * sizeof(*t)), t0;
	char sink[65536];
	int r, i, st;

	for (r = 0; r < reps; r++) {
		setup();
		t0 = now_us();
		for (i = 0; i < nconns; i++) {
			close(conns[i].wfd);
			conns[i].wfd = -1;
		}
		for (i = 0; i < nconns; i++) {
			fcntl(conns[i].rfd, F_SETFL, 0);
			while (read(conns[i].rfd, sink, sizeof(sink)) > 0)
				;
			waitpid(conns[i].pid, &st, 0);
		}
		t[r] = now_us() - t0;
		for (i = 0; i < nconns; i++)
			conn_free(&conns[i]);
		nconns = 0;
	}
	printf("median_ms=%.3f max_ms=%.3f", pct(t, reps, 0.5) / 1e3,
	    pct(t, reps, 1.0) / 1e3);
	free(t);
}

/*
 * -P: how many sessions the shared workbench of cmd says are parked
 * (its --status: ", parked" on a session's line).
 */
static int
parked_count(void)
{
	char *argv[64], buf[65536];
	size_t have = 0;
	ssize_t r;
	int i, n = 0, wfd, rfd, st;
	pid_t pid;
	const char *p;

	for (i = 0; cmd[i] != NULL && i < 62; i++)
		argv[i] = cmd[i];
	argv[i++] = (char *)"--status";
	argv[i] = NULL;
	if (spawn_piped(argv, errfd, &pid, &wfd, &rfd) != 0)
		return 0;
	close(wfd);
	fcntl(rfd, F_SETFL, 0);
	while (have < sizeof(buf) - 1 &&
	    (r = read(rfd, buf + have, sizeof(buf) - 1 - have)) > 0)
		have += (size_t)r;
	buf[have] = '\0';
	close(rfd);
	waitpid(pid, &st, 0);
	for (p = buf; (p = strstr(p, ", parked")) != NULL; p++)
		n++;
	return n;
}

/*
 * -P: an idle session is one the workbench parked (its input quiet for a
 * second, watched by its front): wait until it says so of every idle
 * session, at most 20 s, looking every 50 ms.
 */
static void
idle_parked_wait(void)
{
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	int i, n = 0;

	for (i = 0; i < 400 && (n = parked_count()) < nidle; i++)
		nanosleep(&ts, NULL);
	if (n < nidle)
		fprintf(stderr, "loadgen: %d of %d idle sessions parked after "
		    "20 s; measured as they are\n", n, nidle);
}

static void
usage(void)
{
	fprintf(stderr, "usage: loadgen [-wMP] [-b toolbox] [-S servers] "
	    "[-n count] [-k inflight] [-W warmup] [-r runs] [-z bytes]\n"
	    "               [-I idle-sessions] [-e stderr-file] [-m message] "
	    "init|open|lat|rate|blob|list|search|shutdown -- command [arg ...]\n");
	exit(2);
}

int
main(int argc, char *argv[])
{
	const char *errpath = "/dev/null";
	long n = 1000, warm = -1, bytes = 1000000;
	int ch, k = 1, reps = 5, nidle_want = 0;
	bool parked = false;

	while ((ch = getopt(argc, argv, "wMPb:S:n:k:W:r:z:e:m:I:")) != -1) {
		switch (ch) {
		case 'w':
			wbmode = true;
			break;
		case 'M':
			call_meta = ",\"_meta\":{\"io.modelcontextprotocol/"
			    "protocolVersion\":\"2026-07-28\",\"io."
			    "modelcontextprotocol/clientCapabilities\":{}}";
			break;
		case 'b':
			boxname = optarg;
			break;
		case 'S':
			nservers = atoi(optarg);
			break;
		case 'n':
			n = atol(optarg);
			break;
		case 'k':
			k = atoi(optarg);
			break;
		case 'W':
			warm = atol(optarg);
			break;
		case 'r':
			reps = atoi(optarg);
			break;
		case 'z':
			bytes = atol(optarg);
			break;
		case 'e':
			errpath = optarg;
			break;
		case 'm':
			message = optarg;
			break;
		case 'I':
			nidle_want = atoi(optarg);
			break;
		case 'P':
			parked = true;
			break;
		default:
			usage();
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 2 || nservers < 1 || n < 1 || k < 1 || reps < 1 ||
	    nidle_want < 0)
		usage();
	testname = argv[0];
	cmd = argv + 1;
	if (strcmp(cmd[0], "--") == 0)
		cmd++;
	if (cmd[0] == NULL)
		usage();
	signal(SIGPIPE, SIG_IGN);
	if ((errfd = open(errpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
	    0644)) < 0) {
		fprintf(stderr, "loadgen: %s: %s\n", errpath, strerror(errno));
		return 1;
	}
	snprintf(echo_args, sizeof(echo_args), "{\"message\":\"%s\"}",
	    message);
	if (warm < 0)
		warm = n / 10 < 1000 ? n / 10 : 1000;
	printf("RESULT test=%s mode=%s ", testname, wbmode ? "workbench" :
	    "direct");
	if (nidle_want > 0)
		printf("idle=%d ", nidle_want);
	fflush(stdout);
	if (nidle_want > 0)
		idle_start(nidle_want);
	if (nidle_want > 0 && parked)
		idle_parked_wait();
	if (strcmp(testname, "init") == 0)
		test_init(reps);
	else if (strcmp(testname, "open") == 0)
		test_open(reps);
	else if (strcmp(testname, "lat") == 0)
		test_lat((int)n, (int)warm);
	else if (strcmp(testname, "rate") == 0)
		test_rate(n, k, warm);
	else if (strcmp(testname, "blob") == 0)
		test_blob((int)n, bytes);
	else if (strcmp(testname, "list") == 0)
		test_list(reps);
	else if (strcmp(testname, "shutdown") == 0)
		test_shutdown(reps);
	else if (strcmp(testname, "search") == 0)
		test_search(reps);
	else
		usage();
	printf("\n");
	idle_stop();
	return 0;
}
