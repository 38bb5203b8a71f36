/*
 * http-load: the workbench served over Streamable HTTP (--listen) against
 * the same workbench on a pipe, each measured in the same run, with the
 * same use_tool call of bench/echo-server's echo.
 *
 *	http-load WORKBENCH CONFIG lat N	sequential calls: p50, p99
 *	http-load WORKBENCH CONFIG rate N	N calls, 32 in flight: one
 *						stdio session, or 4 HTTP
 *						sessions of 8 connections
 *	http-load WORKBENCH CONFIG rss		VmRSS with the toolbox open:
 *						one stdio session, or 50
 *						idle HTTP sessions
 *	http-load WORKBENCH CONFIG rate N FLOOR	rate, and the same HTTP load
 *						on FLOOR (bench/http-floor)
 *
 * CONFIG has toolbox "bench" with server "s0" (bench/run.sh's c1.json).
 * Prints one line "RESULT test=T stdio=S http=H unit=U", or "RESULT
 * error=..." on failure.  Each HTTP request is a POST on a keep-alive
 * connection, answered as JSON with a Content-Length.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "spawn.h"

#define SESSIONS	4	/* rate: HTTP sessions, */
#define PER_SESSION	8	/* connections (calls in flight) each. */
#define IDLE		50	/* rss: idle HTTP sessions. */
#define BUFSZ		(1024 * 1024)

#define CALL "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"tools/call\"," \
	"\"params\":{\"name\":\"use_tool\",\"arguments\":{\"tool\":{" \
	"\"toolbox\":\"bench\",\"server\":\"s0\",\"name\":\"echo\"}," \
	"\"arguments\":{\"message\":\"hi\"}}}}"
#define INIT "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\"," \
	"\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{}," \
	"\"clientInfo\":{\"name\":\"http-load\",\"version\":\"1\"}}}"
#define INITED "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"
#define OPEN "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\"," \
	"\"params\":{\"name\":\"open_toolbox\",\"arguments\":{" \
	"\"toolbox_name\":\"bench\"}}}"

static pid_t child = -1;

static void
fail(const char *fmt, ...)
{
	va_list ap;

	printf("RESULT error=");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (child > 0)
		kill(child, SIGKILL);
	exit(1);
}

static double
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int
cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static long
rss_kb(pid_t pid)
{
	char path[64], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "VmRSS: %ld", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* The CPU time the child has used, in microseconds. */
static double
cpu_us(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long ut, st;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	if (fgets(buf, sizeof(buf), f) == NULL ||
	    (p = strrchr(buf, ')')) == NULL ||
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
	    &ut, &st) != 2)
		ut = st = 0;
	fclose(f);
	return (ut + st) * 1e6 / (double)sysconf(_SC_CLK_TCK);
}

static double cpu_call;		/* The last rate's workbench CPU a call. */

static void
stop(void)
{
	int st;

	if (child > 0) {
		kill(child, SIGTERM);
		waitpid(child, &st, 0);
	}
	child = -1;
}

/* Wait for fd to be ready for ev, or fail after 30 s. */
static void
wait_fd(int fd, short ev)
{
	struct pollfd p = { fd, ev, 0 };

	if (poll(&p, 1, 30000) <= 0)
		fail("no progress in 30 s");
}

static void
put_all(int fd, const char *s, size_t n)
{
	ssize_t w;

	while (n > 0) {
		if ((w = write(fd, s, n)) < 0) {
			if (errno != EAGAIN && errno != EINTR)
				fail("write: %s", strerror(errno));
			wait_fd(fd, POLLOUT);
			continue;
		}
		s += w;
		n -= (size_t)w;
	}
}

/*
 * The pipe: a line written, the lines read.
 */
static char pbuf[BUFSZ];
static size_t plen;

/* Read until n more lines have come; they are dropped. */
static void
pipe_lines(int fd, long n)
{
	ssize_t r;
	char *nl;

	for (;;) {
		while (n > 0 && (nl = memchr(pbuf, '\n', plen)) != NULL) {
			plen -= (size_t)(nl + 1 - pbuf);
			memmove(pbuf, nl + 1, plen);
			n--;
		}
		if (n == 0)
			return;
		if (plen == sizeof(pbuf))
			fail("a line longer than %d bytes", BUFSZ);
		if ((r = read(fd, pbuf + plen, sizeof(pbuf) - plen)) < 0) {
			if (errno != EAGAIN && errno != EINTR)
				fail("read: %s", strerror(errno));
			wait_fd(fd, POLLIN);
		} else if (r == 0)
			fail("the workbench closed its output");
		else
			plen += (size_t)r;
	}
}

static void
pipe_send(int fd, const char *line)
{
	put_all(fd, line, strlen(line));
	put_all(fd, "\n", 1);
}

/* The workbench on a pipe, initialized, its toolbox open. */
static void
stdio_start(char *wb, char *cfg, int *wfd, int *rfd)
{
	char *cmd[] = { wb, "-c", cfg, NULL };

	if (spawn_piped(cmd, -1, &child, wfd, rfd) != 0)
		fail("cannot start %s", wb);
	plen = 0;
	pipe_send(*wfd, INIT);
	pipe_lines(*rfd, 1);
	pipe_send(*wfd, INITED);
	pipe_send(*wfd, OPEN);
	pipe_lines(*rfd, 1);
}

/*
 * HTTP: the workbench listening, and connections to it.
 */
static int port;

static void
http_start_wb(char *wb, char *cfg)
{
	char *cmd[] = { wb, "-c", cfg, "--listen", "127.0.0.1:0", NULL };
	char buf[4096];
	size_t n = 0;
	ssize_t r;
	int err[2], wfd, rfd;
	const char *at;

	if (pipe(err) < 0 || spawn_piped(cmd, err[1], &child, &wfd, &rfd) != 0)
		fail("cannot start %s --listen", wb);
	close(err[1]);
	while ((at = strstr(buf, "at http://127.0.0.1:")) == NULL ||
	    strchr(at, '\n') == NULL) {
		if (n == sizeof(buf) - 1 || (r = read(err[0], buf + n,
		    sizeof(buf) - 1 - n)) <= 0)
			fail("the workbench did not say where it listens");
		n += (size_t)r;
		buf[n] = '\0';
	}
	port = atoi(at + strlen("at http://127.0.0.1:"));
	/* Its standard error is read by no one after: it says little. */
	close(err[0]);
	close(wfd);
	close(rfd);
}

struct hconn {
	int	 fd;
	char	 sid[64];
	char	*in;
	size_t	 len;
};

static void
hconn_open(struct hconn *c)
{
	struct sockaddr_in a;
	int one = 1;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((unsigned short)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((c->fd = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
	    connect(c->fd, (struct sockaddr *)&a, sizeof(a)) < 0)
		fail("connect: %s", strerror(errno));
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (c->in == NULL)
		c->in = malloc(BUFSZ);
	c->len = 0;
}

/* One write a request, as a client that knows its body does. */
static void
hconn_send(struct hconn *c, const char *body)
{
	char req[2048];
	int n;

	n = snprintf(req, sizeof(req), "POST /mcp HTTP/1.1\r\n"
	    "Host: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
	    "Accept: application/json, text/event-stream\r\n%s%s%s"
	    "Content-Length: %zu\r\n\r\n%s", port, c->sid[0] != '\0' ?
	    "Mcp-Session-Id: " : "", c->sid, c->sid[0] != '\0' ? "\r\n" : "",
	    strlen(body), body);
	if (n < 0 || (size_t)n >= sizeof(req))
		fail("a request too long");
	put_all(c->fd, req, (size_t)n);
}

/*
 * A whole answer in c->in: its length (head and body), or 0.  The
 * session id, when there is one, is kept.
 */
static size_t
hconn_whole(struct hconn *c)
{
	char *end, *cl, *sid;
	size_t head;
	long body;

	c->in[c->len] = '\0';
	if ((end = strstr(c->in, "\r\n\r\n")) == NULL)
		return 0;
	head = (size_t)(end + 4 - c->in);
	if (strncmp(c->in, "HTTP/1.1 200", 12) != 0 &&
	    strncmp(c->in, "HTTP/1.1 202", 12) != 0)
		fail("answered %.12s", c->in);
	if ((cl = strcasestr(c->in, "\r\nContent-Length: ")) == NULL ||
	    cl > end)
		fail("an answer without Content-Length");
	body = atol(cl + 18);
	if ((sid = strcasestr(c->in, "\r\nMcp-Session-Id: ")) != NULL &&
	    sid < end)
		sscanf(sid + 18, "%63[0-9a-f]", c->sid);
	return c->len >= head + (size_t)body ? head + (size_t)body : 0;
}

/* Read what came; true once an answer is whole (and taken). */
static bool
hconn_read(struct hconn *c)
{
	size_t whole;
	ssize_t r;

	if ((r = read(c->fd, c->in + c->len, BUFSZ - 1 - c->len)) <= 0) {
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			return false;
		fail("the connection closed");
	}
	c->len += (size_t)r;
	if ((whole = hconn_whole(c)) == 0)
		return false;
	c->len -= whole;
	memmove(c->in, c->in + whole, c->len);
	return true;
}

static void
hconn_ask(struct hconn *c, const char *body)
{
	hconn_send(c, body);
	while (!hconn_read(c))
		;
}

/* A new 2025 session on c, its toolbox open. */
static void
hconn_session(struct hconn *c)
{
	c->sid[0] = '\0';
	hconn_ask(c, INIT);
	if (c->sid[0] == '\0')
		fail("initialize gave no Mcp-Session-Id");
	hconn_ask(c, INITED);
	hconn_ask(c, OPEN);
}

/*
 * The tests.
 */
static void
lat_of(double *t, long n, double *p50, double *p99)
{
	qsort(t, (size_t)n, sizeof(*t), cmp);
	*p50 = t[n / 2];
	*p99 = t[n * 99 / 100];
}

static void
test_lat(char *wb, char *cfg, long n)
{
	double *t = calloc((size_t)n, sizeof(*t)), s50, s99, h50, h99, t0;
	struct hconn c = { 0 };
	char call[512];
	int wfd, rfd;
	long i;

	stdio_start(wb, cfg, &wfd, &rfd);
	for (i = 0; i < n; i++) {
		snprintf(call, sizeof(call), CALL, i + 10);
		t0 = now_us();
		pipe_send(wfd, call);
		pipe_lines(rfd, 1);
		t[i] = now_us() - t0;
	}
	lat_of(t, n, &s50, &s99);
	close(wfd);
	close(rfd);
	stop();
	http_start_wb(wb, cfg);
	hconn_open(&c);
	hconn_session(&c);
	for (i = 0; i < n; i++) {
		snprintf(call, sizeof(call), CALL, i + 10);
		t0 = now_us();
		hconn_ask(&c, call);
		t[i] = now_us() - t0;
	}
	lat_of(t, n, &h50, &h99);
	stop();
	printf("RESULT test=lat stdio=%.1f http=%.1f unit=us stdio_p99=%.1f "
	    "http_p99=%.1f\n", s50, h50, s99, h99);
}

static double
stdio_rate(char *wb, char *cfg, long n)
{
	long sent = 0, done = 0;
	char call[512];
	double t0, c0;
	int wfd, rfd;

	stdio_start(wb, cfg, &wfd, &rfd);
	c0 = cpu_us(child);
	t0 = now_us();
	for (; sent < SESSIONS * PER_SESSION && sent < n; sent++) {
		snprintf(call, sizeof(call), CALL, sent + 10);
		pipe_send(wfd, call);
	}
	while (done < n) {
		pipe_lines(rfd, 1);
		done++;
		for (; sent < n && sent - done < SESSIONS * PER_SESSION;
		    sent++) {
			snprintf(call, sizeof(call), CALL, sent + 10);
			pipe_send(wfd, call);
		}
	}
	t0 = now_us() - t0;
	cpu_call = (cpu_us(child) - c0) / n;
	close(wfd);
	close(rfd);
	stop();
	return n / (t0 / 1e6);
}

static double
http_rate(char *wb, char *cfg, long n)
{
	struct hconn c[SESSIONS * PER_SESSION];
	struct pollfd p[SESSIONS * PER_SESSION];
	long sent = 0, done = 0;
	int i, k = SESSIONS * PER_SESSION;
	char call[512];
	double t0, c0;

	memset(c, 0, sizeof(c));
	http_start_wb(wb, cfg);
	for (i = 0; i < k; i++) {
		hconn_open(&c[i]);
		if (i % PER_SESSION == 0)
			hconn_session(&c[i]);
		else
			memcpy(c[i].sid, c[i - i % PER_SESSION].sid,
			    sizeof(c[i].sid));
	}
	c0 = cpu_us(child);
	t0 = now_us();
	for (i = 0; i < k && sent < n; i++, sent++) {
		snprintf(call, sizeof(call), CALL, sent + 10);
		hconn_send(&c[i], call);
	}
	while (done < n) {
		for (i = 0; i < k; i++) {
			p[i].fd = c[i].fd;
			p[i].events = POLLIN;
		}
		if (poll(p, (nfds_t)k, 30000) <= 0)
			fail("no answer in 30 s");
		for (i = 0; i < k; i++) {
			if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR)) ||
			    !hconn_read(&c[i]))
				continue;
			done++;
			if (sent < n) {
				snprintf(call, sizeof(call), CALL, sent++ + 10);
				hconn_send(&c[i], call);
			}
		}
	}
	t0 = now_us() - t0;
	cpu_call = (cpu_us(child) - c0) / n;
	stop();
	for (i = 0; i < k; i++) {
		close(c[i].fd);
		free(c[i].in);
	}
	return n / (t0 / 1e6);
}

static void
test_rss(char *wb, char *cfg)
{
	struct hconn c = { 0 };
	long s, h;
	int wfd, rfd, i;

	stdio_start(wb, cfg, &wfd, &rfd);
	s = rss_kb(child);
	close(wfd);
	close(rfd);
	stop();
	http_start_wb(wb, cfg);
	for (i = 0; i < IDLE; i++) {
		hconn_open(&c);
		hconn_session(&c);
		close(c.fd);
	}
	/* The connections are closed and freed at its next turn: a call. */
	hconn_open(&c);
	hconn_ask(&c, "{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}");
	h = rss_kb(child);
	close(c.fd);
	stop();
	free(c.in);
	printf("RESULT test=rss stdio=%ld http=%ld unit=KB sessions=%d\n", s,
	    h, IDLE);
}

int
main(int argc, char *argv[])
{
	long n = argc > 4 ? atol(argv[4]) : 10000;
	double s, h, sc, hc, f;

	signal(SIGPIPE, SIG_IGN);
	if (argc < 4 || n <= 0) {
		fprintf(stderr, "usage: http-load WORKBENCH CONFIG "
		    "lat|rate|rss [N [FLOOR]]\n");
		return 2;
	}
	if (strcmp(argv[3], "lat") == 0)
		test_lat(argv[1], argv[2], n);
	else if (strcmp(argv[3], "rate") == 0) {
		s = stdio_rate(argv[1], argv[2], n);
		sc = cpu_call;
		h = http_rate(argv[1], argv[2], n);
		hc = cpu_call;
		printf("RESULT test=rate stdio=%.0f http=%.0f unit=calls/s "
		    "in_flight=%d stdio_cpu_us=%.2f http_cpu_us=%.2f", s, h,
		    SESSIONS * PER_SESSION, sc, hc);
		if (argc > 5) {
			/* Its arguments are the workbench's, ignored. */
			f = http_rate(argv[5], argv[2], n);
			printf(" floor=%.0f floor_cpu_us=%.2f", f, cpu_call);
		}
		printf("\n");
	} else if (strcmp(argv[3], "hrate") == 0) {
		/* HTTP alone, for a profile. */
		h = http_rate(argv[1], argv[2], n);
		printf("RESULT test=hrate http=%.0f unit=calls/s "
		    "http_cpu_us=%.2f\n", h, cpu_call);
	} else if (strcmp(argv[3], "rss") == 0)
		test_rss(argv[1], argv[2]);
	else
		fail("unknown test %s", argv[3]);
	return 0;
}
