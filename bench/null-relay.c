/*
 * null-relay: the cheapest possible stdio proxy, a baseline for the
 * benchmarks.
 *
 *	null-relay COMMAND [ARG ...]
 *
 * It spawns COMMAND with pipes on its standard input and output and copies
 * bytes both ways with one poll() loop, parsing nothing.  Any proxy adds a
 * process and two pipe hops per message; on a machine with few CPUs those
 * alone cost throughput, so the workbench's calls/s is compared with this
 * relay's as well as with a direct connection: the gap to the relay is
 * what the workbench's own work costs.
 *
 * At end of file on standard input the child's input is closed once what
 * was read has been passed on; the relay exits, with the child's status,
 * when the child's output has closed and has been passed on, and the child
 * has been reaped.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define BUFSZ	(256 * 1024)

extern char **environ;

/* One direction: bytes read from rfd wait in buf[off, len) for wfd. */
struct dir {
	int	 rfd;
	int	 wfd;
	bool	 eof;		/* rfd has hit end of file (and is closed). */
	size_t	 off, len;
	char	 buf[BUFSZ];
};

static struct dir up, down;	/* Client to child, child to client. */

/* Write what is buffered; false when the reader has gone. */
static bool
dir_write(struct dir *d)
{
	ssize_t n;

	while (d->off < d->len) {
		n = write(d->wfd, d->buf + d->off, d->len - d->off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return true;
		if (n < 0)
			return false;
		d->off += (size_t)n;
	}
	d->off = d->len = 0;
	return true;
}

/*
 * Read what is there and pass it straight on: writing at once rather than
 * after the next poll() keeps a sequential call to one poll() per hop.
 */
static bool
dir_read(struct dir *d)
{
	ssize_t n;

	n = read(d->rfd, d->buf + d->len, BUFSZ - d->len);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (n <= 0) {
		close(d->rfd);
		d->rfd = -1;
		d->eof = true;
		return true;
	}
	d->len += (size_t)n;
	return dir_write(d);
}

/*
 * Once the source has ended and the buffer is empty, close the sink, so
 * that the end of file travels on.  A sink that has gone (EPIPE) ends the
 * direction too: closing its source then tells the writer.
 */
static void
dir_finish(struct dir *d, bool ok)
{
	if (!ok) {
		if (d->rfd >= 0)
			close(d->rfd);
		d->rfd = -1;
		d->eof = true;
		d->off = d->len = 0;
	}
	if (d->eof && d->len == d->off && d->wfd >= 0) {
		close(d->wfd);
		d->wfd = -1;
	}
}

/* Add d's descriptors to the poll set; returns the new count. */
static int
dir_poll(struct dir *d, struct pollfd *p, int n, int *ri, int *wi)
{
	*ri = *wi = -1;
	if (!d->eof && d->len < BUFSZ) {
		p[n].fd = d->rfd;
		p[n].events = POLLIN;
		*ri = n++;
	}
	if (d->off < d->len && d->wfd >= 0) {
		p[n].fd = d->wfd;
		p[n].events = POLLOUT;
		*wi = n++;
	}
	return n;
}

static void
dir_step(struct dir *d, struct pollfd *p, int ri, int wi)
{
	bool ok = true;

	if (wi >= 0 && p[wi].revents != 0)
		ok = dir_write(d);
	if (ok && ri >= 0 && p[ri].revents != 0)
		ok = dir_read(d);
	dir_finish(d, ok);
}

int
main(int argc, char *argv[])
{
	posix_spawn_file_actions_t fa;
	struct pollfd p[4];
	int in[2], out[2], e, n, ur, uw, dr, dw, st = 0;
	pid_t pid;

	if (argc < 2) {
		fprintf(stderr, "usage: null-relay command [arg ...]\n");
		return 2;
	}
	/* Close-on-exec, or the child would hold its own input open. */
	if (pipe(in) < 0 || pipe(out) < 0) {
		perror("null-relay: pipe");
		return 1;
	}
	for (n = 0; n < 2; n++) {
		fcntl(in[n], F_SETFD, FD_CLOEXEC);
		fcntl(out[n], F_SETFD, FD_CLOEXEC);
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in[0], 0);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	e = posix_spawnp(&pid, argv[1], &fa, NULL, argv + 1, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (e != 0) {
		fprintf(stderr, "null-relay: %s: %s\n", argv[1], strerror(e));
		return 127;
	}
	close(in[0]);
	close(out[1]);
	/* Only now, so that the child keeps the default disposition. */
	signal(SIGPIPE, SIG_IGN);

	/* Non-blocking, so that a full pipe one way never stalls the other. */
	up.rfd = STDIN_FILENO;
	up.wfd = in[1];
	down.rfd = out[0];
	down.wfd = STDOUT_FILENO;
	fcntl(up.rfd, F_SETFL, fcntl(up.rfd, F_GETFL) | O_NONBLOCK);
	fcntl(up.wfd, F_SETFL, O_NONBLOCK);
	fcntl(down.rfd, F_SETFL, O_NONBLOCK);
	fcntl(down.wfd, F_SETFL, fcntl(down.wfd, F_GETFL) | O_NONBLOCK);

	/* The relay lives as long as the child's output. */
	while (down.wfd >= 0) {
		n = dir_poll(&up, p, 0, &ur, &uw);
		n = dir_poll(&down, p, n, &dr, &dw);
		if (poll(p, (nfds_t)n, -1) < 0) {
			if (errno == EINTR)
				continue;
			perror("null-relay: poll");
			break;
		}
		dir_step(&up, p, ur, uw);
		dir_step(&down, p, dr, dw);
	}
	if (up.rfd >= 0)
		close(up.rfd);
	if (up.wfd >= 0)
		close(up.wfd);	/* The child may still be reading. */
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return WEXITSTATUS(st);
}
