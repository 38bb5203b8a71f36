/*
 * http-floor: the least any single-threaded HTTP/1.1 server does for a
 * call, as a baseline for the workbench's HTTP throughput (bench/run.sh,
 * bench/http-load.c).  One poll() loop answers every POST on a keep-alive
 * connection with the same small JSON-RPC result: one read and one send a
 * request, no MCP, no server behind it.  What this gets is the ceiling of
 * HTTP calls per second on the machine, with its load generator on the
 * same CPUs.
 *
 *	http-floor [ANY ...]
 *
 * The arguments (the workbench's) are ignored.  It listens on an ephemeral
 * loopback port and says where on standard error, in the workbench's
 * words; SIGTERM ends it.  A benchmark tool: requests are trusted to be
 * well-formed and under BUFSZ.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAXCONN	256
#define BUFSZ	8192

#define BODY "{\"jsonrpc\":\"2.0\",\"id\":10,\"result\":{\"content\":" \
	"[{\"type\":\"text\",\"text\":\"hi\"}],\"isError\":false}}"

struct floor_conn {
	char	 in[BUFSZ + 1];
	size_t	 len;
};

static struct pollfd pfd[MAXCONN];
static struct floor_conn conn[MAXCONN];
static int npfd;

static int
listen_loopback(void)
{
	struct sockaddr_in a;
	socklen_t alen = sizeof(a);
	int fd;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0)) < 0 ||
	    bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(fd, 128) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &alen) < 0) {
		perror("http-floor");
		exit(1);
	}
	fprintf(stderr, "http-floor: listening at http://127.0.0.1:%d/mcp\n",
	    ntohs(a.sin_port));
	return fd;
}

static void
accept_all(int lfd)
{
	int fd, one = 1;

	while (npfd < MAXCONN &&
	    (fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		pfd[npfd].fd = fd;
		pfd[npfd].events = POLLIN;
		pfd[npfd].revents = 0;
		conn[npfd].len = 0;
		npfd++;
	}
}

/* The length of the whole request at the start of c->in, or 0. */
static size_t
request_len(struct floor_conn *c)
{
	char *end, *cl;

	c->in[c->len] = '\0';
	if ((end = strstr(c->in, "\r\n\r\n")) == NULL)
		return 0;
	cl = strcasestr(c->in, "\r\nContent-Length:");
	end += 4;
	if (cl != NULL && cl < end)
		end += atol(cl + strlen("\r\nContent-Length:"));
	return (size_t)(end - c->in) <= c->len ? (size_t)(end - c->in) : 0;
}

/* Read what came on connection k and answer each whole request. */
static int
serve(int k)
{
	static char out[512];
	struct floor_conn *c = &conn[k];
	size_t whole;
	ssize_t r;
	int n;

	if ((r = read(pfd[k].fd, c->in + c->len, BUFSZ - c->len)) <= 0)
		return r < 0 && errno == EAGAIN ? 0 : -1;
	c->len += (size_t)r;
	while ((whole = request_len(c)) > 0) {
		n = snprintf(out, sizeof(out), "HTTP/1.1 200 OK\r\n"
		    "Content-Type: application/json\r\n"
		    "Mcp-Session-Id: 0123456789abcdef0123456789abcdef\r\n"
		    "Content-Length: %zu\r\n\r\n%s", strlen(BODY), BODY);
		if (send(pfd[k].fd, out, (size_t)n, MSG_NOSIGNAL) != n)
			return -1;
		c->len -= whole;
		memmove(c->in, c->in + whole, c->len);
	}
	return c->len == BUFSZ ? -1 : 0;
}

int
main(void)
{
	int k;

	pfd[0].fd = listen_loopback();
	pfd[0].events = POLLIN;
	npfd = 1;
	for (;;) {
		if (poll(pfd, (nfds_t)npfd, -1) < 0 && errno != EINTR)
			return 1;
		if (pfd[0].revents & POLLIN)
			accept_all(pfd[0].fd);
		for (k = 1; k < npfd; k++) {
			if (pfd[k].revents == 0 || serve(k) == 0)
				continue;
			close(pfd[k].fd);
			npfd--;
			pfd[k] = pfd[npfd];
			conn[k] = conn[npfd];
			k--;
		}
	}
}
