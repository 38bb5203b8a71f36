/*
 * null-relay: the cheapest possible stdio proxy, a baseline for the
 * benchmarks.
 *
 *	null-relay [-n N] COMMAND [ARG ...]
 *
 * It spawns N copies of COMMAND (default 1) with pipes on their standard
 * input and output and passes bytes between them and its own standard
 * input and output with one poll() loop, parsing nothing but newlines.
 * With one copy it copies bytes both ways.  With more, each line of its
 * input goes to the next copy in turn, and each copy's output is passed
 * on in whole lines: a line that has begun to pass owns the output until
 * its newline.
 *
 * Two baselines come from it.  One relay per server: any proxy adds a
 * process and two pipe hops per message, and on a machine with few CPUs
 * those alone cost throughput.  One relay for all of N servers: the least
 * per message that a single-threaded proxy of N servers does, and so about
 * the most throughput such a proxy, the workbench included, can reach (one
 * that batches its writes may get somewhat more).  The gap between the
 * workbench and these is what its own work costs.
 *
 * At end of file on standard input each copy's input is closed once what
 * was read has been passed on; the relay exits when every copy's output
 * has closed and been passed on and every copy has been reaped, with the
 * status of the first copy that did not exit 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "spawn.h"

#define BUFSZ	(256 * 1024)
#define MAXKIDS	256

/* Bytes waiting to move on: buf[off, len). */
struct queue {
	size_t	 off, len;
	char	 buf[BUFSZ];
};

struct child {
	pid_t	 pid;
	int	 wfd;		/* Its standard input; -1 once closed. */
	int	 rfd;		/* Its standard output; -1 at end of file. */
	struct queue to;	/* For it. */
	struct queue from;	/* From it, not yet passed on. */
};

static struct child *kids;
static int nkids = 1;
static struct queue in;		/* Read from standard input, not yet dealt. */
static struct queue out;	/* For standard output. */
static bool in_eof;
static bool out_gone;
static int dealing;		/* The copy whose line of input is passing. */
static int owner = -1;		/* The copy whose line owns the output. */

static size_t
queued(const struct queue *q)
{
	return q->len - q->off;
}

/* Room at the end of q, after moving what waits to the front. */
static size_t
room(struct queue *q)
{
	if (q->off > 0) {
		memmove(q->buf, q->buf + q->off, queued(q));
		q->len -= q->off;
		q->off = 0;
	}
	return BUFSZ - q->len;
}

/*
 * Move what fits from src to dst; with line, no further than the first
 * newline.  Returns true when the last byte moved was a newline.
 */
static bool
move(struct queue *src, struct queue *dst, bool line)
{
	size_t n = queued(src), r = room(dst);
	const char *nl;

	if (line && (nl = memchr(src->buf + src->off, '\n', n)) != NULL)
		n = (size_t)(nl - (src->buf + src->off)) + 1;
	if (n > r)
		n = r;
	if (n == 0)
		return false;
	memcpy(dst->buf + dst->len, src->buf + src->off, n);
	dst->len += n;
	src->off += n;
	return dst->buf[dst->len - 1] == '\n';
}

/* Read what fd has into q; false at end of file or on error. */
static bool
fill(int fd, struct queue *q)
{
	ssize_t n;

	if (room(q) == 0)
		return true;
	n = read(fd, q->buf + q->len, BUFSZ - q->len);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (n <= 0)
		return false;
	q->len += (size_t)n;
	return true;
}

/* Write what q holds that fd takes now; false when the reader has gone. */
static bool
drain(int fd, struct queue *q)
{
	ssize_t n;

	while (queued(q) > 0) {
		n = write(fd, q->buf + q->off, queued(q));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return true;
		if (n < 0)
			return false;
		q->off += (size_t)n;
	}
	q->off = q->len = 0;
	return true;
}

/* The input's lines to the copies in turn, while they have room. */
static void
deal(void)
{
	while (queued(&in) > 0) {
		if (move(&in, &kids[dealing].to, nkids > 1))
			dealing = (dealing + 1) % nkids;
		else if (queued(&in) > 0)
			return;			/* Its queue is full. */
	}
}

/* c's output to ours; false while a line of it owns the output. */
static bool
collect_from(struct child *c)
{
	if (queued(&c->from) > 0)
		owner = move(&c->from, &out, false) ? -1 : (int)(c - kids);
	if (owner >= 0 && queued(&c->from) == 0 && c->rfd < 0 &&
	    room(&out) > 0) {
		out.buf[out.len++] = '\n';	/* It ended mid-line. */
		owner = -1;
	}
	return owner < 0;
}

/* The copies' output to ours, a line that has begun passing first. */
static void
collect(void)
{
	int i;

	if (owner >= 0 && !collect_from(&kids[owner]))
		return;
	for (i = 0; i < nkids; i++)
		if (!collect_from(&kids[i]))
			return;
}

static void
spawn(struct child *c, char **cmd)
{
	int e = spawn_piped(cmd, -1, &c->pid, &c->wfd, &c->rfd);

	if (e != 0) {
		fprintf(stderr, "null-relay: %s: %s\n", cmd[0], strerror(e));
		exit(127);
	}
}

static void
close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/*
 * Write what waits.  A copy that has stopped reading its input ends the
 * input: what is left of it is dropped, the other copies' input is
 * closed, and the relay ends once their output has passed.
 */
static void
drain_all(void)
{
	struct child *c;
	int i;

	for (i = 0; i < nkids; i++) {
		c = &kids[i];
		if (c->wfd >= 0 && !drain(c->wfd, &c->to)) {
			fprintf(stderr, "null-relay: copy %d stopped reading "
			    "its input: input ends\n", i + 1);
			close_fd(&c->wfd);
			in_eof = true;
			in.off = in.len;
		}
	}
	for (i = 0; i < nkids; i++)
		if (in_eof && queued(&in) == 0 && queued(&kids[i].to) == 0)
			close_fd(&kids[i].wfd);	/* The end travels on. */
	if (!out_gone && !drain(STDOUT_FILENO, &out))
		out_gone = true;
	if (out_gone)
		out.off = out.len = 0;
}

/*
 * Reads, then moves, then writes: one poll() per hop.  Then moves again,
 * into the room the writes made, so that what waits is always watched.
 */
static void
step(const struct pollfd *p)
{
	int i;

	if (p[0].revents != 0 && !fill(STDIN_FILENO, &in))
		in_eof = true;
	for (i = 0; i < nkids; i++)
		if (p[2 + 2 * i].revents != 0 && !fill(kids[i].rfd,
		    &kids[i].from))
			close_fd(&kids[i].rfd);
	deal();
	collect();
	drain_all();
	deal();
	collect();
}

/* True while some copy's output may still come or wait to be written. */
static bool
live(void)
{
	int i;

	for (i = 0; i < nkids; i++)
		if (kids[i].rfd >= 0 || queued(&kids[i].from) > 0)
			return !out_gone;
	return queued(&out) > 0 && !out_gone;
}

static int
watch(struct pollfd *p)
{
	int i, n = 2 + 2 * nkids;

	p[0].fd = in_eof || room(&in) == 0 ? -1 : STDIN_FILENO;
	p[1].fd = queued(&out) > 0 && !out_gone ? STDOUT_FILENO : -1;
	p[0].events = POLLIN;
	p[1].events = POLLOUT;
	for (i = 0; i < nkids; i++) {
		p[2 + 2 * i].fd = room(&kids[i].from) > 0 ? kids[i].rfd : -1;
		p[2 + 2 * i].events = POLLIN;
		p[3 + 2 * i].fd = queued(&kids[i].to) > 0 ? kids[i].wfd : -1;
		p[3 + 2 * i].events = POLLOUT;
	}
	return n;
}

int
main(int argc, char *argv[])
{
	struct pollfd *p;
	int i, n, st, status = 0;
	pid_t r;

	if (argc > 2 && strcmp(argv[1], "-n") == 0) {
		nkids = atoi(argv[2]);
		argv += 2;
		argc -= 2;
	}
	if (argc < 2 || nkids < 1 || nkids > MAXKIDS) {
		fprintf(stderr, "usage: null-relay [-n 1-%d] command [arg ...]\n",
		    MAXKIDS);
		return 2;
	}
	kids = calloc((size_t)nkids, sizeof(*kids));
	p = calloc(2 + 2 * (size_t)nkids, sizeof(*p));
	if (kids == NULL || p == NULL) {
		perror("null-relay");
		return 1;
	}
	for (i = 0; i < nkids; i++)
		spawn(&kids[i], argv + 1);
	/* Only now, so that the copies keep the default disposition. */
	signal(SIGPIPE, SIG_IGN);
	/* Non-blocking, so that a full pipe one way never stalls another. */
	fcntl(STDIN_FILENO, F_SETFL, fcntl(STDIN_FILENO, F_GETFL) | O_NONBLOCK);
	fcntl(STDOUT_FILENO, F_SETFL,
	    fcntl(STDOUT_FILENO, F_GETFL) | O_NONBLOCK);

	while (live()) {
		n = watch(p);
		if (poll(p, (nfds_t)n, -1) < 0) {
			if (errno == EINTR)
				continue;
			perror("null-relay: poll");
			break;
		}
		step(p);
	}
	for (i = 0; i < nkids; i++) {
		close_fd(&kids[i].wfd);	/* A copy may still be reading. */
		close_fd(&kids[i].rfd);
		st = 0;
		while ((r = waitpid(kids[i].pid, &st, 0)) < 0 && errno == EINTR)
			;
		if (r < 0)
			st = 0;		/* Not ours to know (SIGCHLD ignored). */
		if (status == 0)
			status = WIFSIGNALED(st) ? 128 + WTERMSIG(st) :
			    WEXITSTATUS(st);
	}
	return status;
}
