/*
 * http-rtt: the round trip of a small JSON-RPC request through the HTTP
 * layer (tests/http-echo, one POST after another on one keep-alive
 * connection) against the same echo over a pipe (http-echo --stdio, one
 * line after another), each in the same run.
 *
 *	http-rtt ECHO [N]
 *
 * Prints p50 and p99 of each in microseconds and the ratio of the p50s,
 * then a line in bench/run.sh's form:
 *	BENCH name=http_rtt_p50 direct=PIPE workbench=HTTP unit=us ...
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define REQ	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\"," \
		"\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"hi\"}}}"

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

static pid_t
spawn(const char *echo, int *in, int *out, int stdio)
{
	int a[2], b[2];
	pid_t pid;

	if (pipe(a) < 0 || pipe(b) < 0)
		exit(1);
	if ((pid = fork()) == 0) {
		dup2(a[0], 0);
		dup2(b[1], 1);
		close(a[1]);
		close(b[0]);
		if (stdio)
			execl(echo, echo, "--stdio", (char *)NULL);
		else
			execl(echo, echo, (char *)NULL);
		_exit(127);
	}
	close(a[0]);
	close(b[1]);
	*in = a[1];
	*out = b[0];
	return pid;
}

/* Read until the buffer holds a complete answer of the kind. */
static size_t
read_answer(int fd, char *buf, size_t cap, int http)
{
	size_t have = 0;
	ssize_t n;
	char *e, *cl;

	for (;;) {
		if ((n = read(fd, buf + have, cap - have - 1)) <= 0)
			exit(1);
		have += (size_t)n;
		buf[have] = '\0';
		if (!http) {
			if (memchr(buf, '\n', have) != NULL)
				return have;
			continue;
		}
		if ((e = strstr(buf, "\r\n\r\n")) == NULL ||
		    (cl = strcasestr(buf, "Content-Length: ")) == NULL)
			continue;
		if (have >= (size_t)(e + 4 - buf) + strtoul(cl + 16, NULL, 10))
			return have;
	}
}

static void
report(const char *what, double *t, int n)
{
	qsort(t, (size_t)n, sizeof(*t), cmp);
	printf("%-28s p50 %7.1f us  p99 %7.1f us\n", what, t[n / 2],
	    t[n * 99 / 100]);
}

int
main(int argc, char *argv[])
{
	static char buf[65536], req[1024];
	int n = argc > 2 ? atoi(argv[2]) : 20000, i, in, out, fd;
	double *pipe_t, *http_t, t0;
	struct sockaddr_in sin;
	pid_t a, b;
	int one = 1, port;
	size_t len;
	FILE *f;

	if (argc < 2 || n < 100) {
		fprintf(stderr, "usage: http-rtt ECHO [N >= 100]\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	pipe_t = calloc((size_t)n, sizeof(double));
	http_t = calloc((size_t)n, sizeof(double));

	a = spawn(argv[1], &in, &out, 1);
	for (i = 0; i < n; i++) {
		t0 = now_us();
		if (write(in, REQ "\n", sizeof(REQ)) != (ssize_t)sizeof(REQ))
			return 1;
		read_answer(out, buf, sizeof(buf), 0);
		pipe_t[i] = now_us() - t0;
	}
	close(in);
	close(out);

	b = spawn(argv[1], &in, &out, 0);
	if ((f = fdopen(out, "r")) == NULL || fscanf(f, "listening on %d",
	    &port) != 1)
		return 1;
	fd = socket(AF_INET, SOCK_STREAM, 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0)
		return 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	len = (size_t)snprintf(req, sizeof(req), "POST /mcp HTTP/1.1\r\n"
	    "Host: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
	    "Accept: application/json, text/event-stream\r\n"
	    "MCP-Protocol-Version: 2025-11-25\r\nContent-Length: %zu\r\n\r\n"
	    "%s", port, sizeof(REQ) - 1, REQ);
	for (i = 0; i < n; i++) {
		t0 = now_us();
		if (write(fd, req, len) != (ssize_t)len)
			return 1;
		read_answer(fd, buf, sizeof(buf), 1);
		http_t[i] = now_us() - t0;
	}
	close(fd);
	kill(b, SIGTERM);
	waitpid(a, NULL, 0);
	waitpid(b, NULL, 0);

	report("pipe (http-echo --stdio)", pipe_t, n);
	report("HTTP keep-alive (http-echo)", http_t, n);
	qsort(pipe_t, (size_t)n, sizeof(double), cmp);
	printf("BENCH name=http_rtt_p50 direct=%.1f workbench=%.1f unit=us "
	    "ratio=%.2f target=- met=-\n", pipe_t[n / 2], http_t[n / 2],
	    http_t[n / 2] / pipe_t[n / 2]);
	return 0;
}
