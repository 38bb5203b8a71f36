/*
 * front.c: the process a client started, when its configuration says
 * "share": under the lock, connect to the user's shared workbench for
 * this binary and configuration (or replace a stale socket and start
 * one), hand it the client's stdin, stdout and stderr, and wait; or ask
 * it for its status.  The wire and the files are described in share.c.
 *
 * The front is not the loop: it runs before the loop would, one thing
 * at a time, each wait bounded (SHARE_*_MS).  Whatever fails before GO
 * leaves the client's stdio as it was, and the caller runs the session
 * on its own with one warning saying why.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util.h"
#include "jsonrpc.h"
#include "share.h"
#include "share_int.h"

#define LOCK_TICK_MS	50	/* An alarm that came too early repeats. */

extern char **environ;

static volatile sig_atomic_t stop_signal;

static void
on_alarm(int sig)
{
	(void)sig;
}

/*
 * flock(LOCK_EX) waiting at most ms: the blocking flock is interrupted
 * by SIGALRM (no SA_RESTART) at the deadline; the timer repeats, so an
 * alarm that came before flock began only delays the verdict a tick.
 * The lock is taken the moment its holder lets go, without polling.
 */
static int
lock_wait(int fd, int ms)
{
	struct itimerval it;
	struct sigaction sa, old_sa;
	sigset_t alrm, old_mask;
	long long deadline = now_ms() + ms;
	int r, err;

	if (flock(fd, LOCK_EX | LOCK_NB) == 0)
		return 0;
	if (errno != EWOULDBLOCK)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, &old_sa);
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	sigprocmask(SIG_UNBLOCK, &alrm, &old_mask);
	memset(&it, 0, sizeof(it));
	it.it_value.tv_sec = ms / 1000;
	it.it_value.tv_usec = (ms % 1000) * 1000 + 1;
	it.it_interval.tv_usec = LOCK_TICK_MS * 1000;
	setitimer(ITIMER_REAL, &it, NULL);
	while ((r = flock(fd, LOCK_EX)) < 0 && errno == EINTR &&
	    now_ms() < deadline)
		;
	err = r == 0 ? 0 : errno == EINTR ? ETIMEDOUT : errno;
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	sigaction(SIGALRM, &old_sa, NULL);
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
	errno = err;
	return r;
}

/* Wait until fd has events, by deadline; -1 with ETIMEDOUT after. */
static int
wait_fd(int fd, short events, long long deadline)
{
	struct pollfd p;
	long long left;
	int r;

	p.fd = fd;
	p.events = events;
	for (;;) {
		if ((left = deadline - now_ms()) <= 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		if ((r = poll(&p, 1, (int)left)) > 0)
			return 0;
		if (r < 0 && errno != EINTR)
			return -1;
	}
}

/*
 * Connect to the daemon of id, and check it runs as this user; its pid
 * in pid.  -1 with errno ENOENT (no socket) or ECONNREFUSED (a socket
 * no one listens on, stale), else with errno 0 and why.
 */
static int
dial(const struct share_dir *d, const struct share_id *id, pid_t *pid,
    struct buf *why)
{
	struct sockaddr_un sun;
	struct timeval tv = { SHARE_ANSWER_MS / 1000, 0 };
	char name[SHARE_NAME_LEN + 8];
	int fd, len, err;

	snprintf(name, sizeof(name), "%s.sock", id->name);
	if ((len = share_sockaddr(d, name, &sun, why)) < 0 ||
	    (fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0) {
		if (why->len == 0)
			buf_printf(why, "cannot make a socket: %s",
			    strerror(errno));
		errno = 0;
		return -1;
	}
	/* A daemon whose backlog is full makes connect wait: bounded. */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sun, (socklen_t)len) < 0) {
		err = errno;
		close(fd);
		if (err != ENOENT && err != ECONNREFUSED)
			buf_printf(why, "cannot connect to %s/%s: %s", d->path,
			    name, err == EAGAIN || err == EINPROGRESS ?
			    "it does not answer" : strerror(err));
		errno = err == ENOENT || err == ECONNREFUSED ? err : 0;
		return -1;
	}
	if (!share_peer_ours(fd, pid, why)) {
		close(fd);
		errno = 0;
		return -1;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	return fd;
}

/*
 * Write b whole to fd by deadline; nfds descriptors go with its first
 * byte.  0, or -1 with errno.
 */
static int
send_all(int fd, const struct buf *b, const int *fds, int nfds,
    long long deadline)
{
	union {
		struct cmsghdr	 align;
		char		 buf[CMSG_SPACE(sizeof(int) * 3)];
	} cmsg;
	struct msghdr msg;
	struct iovec iov;
	size_t off = 0;
	ssize_t n;

	while (off < b->len) {
		iov.iov_base = b->data + off;
		iov.iov_len = b->len - off;
		memset(&msg, 0, sizeof(msg));
		msg.msg_iov = &iov;
		msg.msg_iovlen = 1;
		if (off == 0 && nfds > 0)
			msg_put_fds(&msg, cmsg.buf, fds, nfds);
		n = sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n > 0)
			off += (size_t)n;
		else if (n < 0 && errno == EINTR)
			continue;
		else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (wait_fd(fd, POLLOUT, deadline) < 0)
				return -1;
		} else
			return -1;
	}
	return 0;
}

/* Read n bytes by deadline: 1, 0 at end of file, -1 with errno. */
static int
recv_all(int fd, void *p, size_t n, long long deadline)
{
	size_t have = 0;
	ssize_t r;

	while (have < n) {
		r = recv(fd, (char *)p + have, n - have, MSG_DONTWAIT);
		if (r > 0)
			have += (size_t)r;
		else if (r == 0 || errno == ECONNRESET)
			return 0;
		else if (errno == EINTR)
			continue;
		else if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -1;
		else if (wait_fd(fd, POLLIN, deadline) < 0)
			return -1;
	}
	return 1;
}

/*
 * Read one message of at most max bytes by deadline: its type, its body
 * in body.  1, 0 at end of file, -1 with errno (EMSGSIZE: too large).
 */
static int
recv_msg(int fd, struct buf *body, size_t max, long long deadline,
    int *type)
{
	unsigned char h[SHARE_HDR];
	size_t len;
	int r;

	body->len = 0;
	if ((r = recv_all(fd, h, sizeof(h), deadline)) <= 0)
		return r;
	if ((len = share_get32(h)) > max) {
		errno = EMSGSIZE;
		return -1;
	}
	*type = (int)share_get16(h + 4);
	buf_reserve(body, len);
	if ((r = recv_all(fd, body->data, len, deadline)) <= 0)
		return r;
	body->len = len;
	return 1;
}

/* A refusal's text, as it can be shown on one line. */
static void
put_reason(struct buf *why, pid_t pid, const struct buf *text)
{
	size_t i;

	buf_printf(why, "the shared workbench (pid %ld) refused: ", (long)pid);
	for (i = 0; i < text->len; i++)
		buf_putc(why, (unsigned char)text->data[i] < ' ' ||
		    text->data[i] == 0x7f ? '?' : text->data[i]);
}

/*
 * The exchange of hand_over once the HELLO is made (in b): it is sent
 * with fds 0-2, the WELCOME awaited, GO sent.  hand_over's answer.
 */
static int
handshake(int fd, struct buf *b, pid_t pid, long long deadline,
    struct buf *why)
{
	static const int stdio[3] = { 0, 1, 2 };
	struct buf body = { 0 };
	int r, type = 0;

	if (send_all(fd, b, stdio, 3, deadline) < 0)
		r = errno == EPIPE || errno == ECONNRESET ? 1 : -1;
	else if ((r = recv_msg(fd, &body, SHARE_REASON_MAX, deadline,
	    &type)) == 0)
		r = 1;
	else if (r < 0)
		r = -1;
	else if (type == MSG_REFUSE) {
		put_reason(why, pid, &body);
		r = -1;
	} else if (type != MSG_WELCOME || body.len != 0) {
		buf_printf(why, "the shared workbench (pid %ld) answered "
		    "with a message of type %d", (long)pid, type);
		r = -1;
	} else {
		b->len = 0;
		share_msg(b, MSG_GO, NULL, 0);
		r = send_all(fd, b, NULL, 0, deadline) < 0 ? 1 : 0;
	}
	if (r < 0 && why->len == 0)
		buf_printf(why, "the shared workbench (pid %ld) %s", (long)pid,
		    errno == ETIMEDOUT ? "did not answer in time" :
		    strerror(errno));
	buf_free(&body);
	return r;
}

/*
 * Hand the client's stdio over on fd: HELLO with fds 0-2, WELCOME, GO,
 * then our own 0 and 1 become /dev/null (the client sees end of file
 * when the daemon closes its copies).  0 when done; 1 when the daemon
 * went away before GO (it was exiting: try again); -1 with why.  Until
 * GO is sent, the daemon does not touch the descriptors, and ours stay.
 */
static int
hand_over(int fd, const struct share_id *id, char *const *opts, pid_t pid,
    struct buf *why)
{
	long long deadline = now_ms() + SHARE_ANSWER_MS;
	struct buf b = { 0 };
	int r = -1, null = -1;
	char *cwd;

	if ((cwd = getcwd(NULL, 0)) == NULL) {
		buf_printf(why, "cannot tell the current directory: %s",
		    strerror(errno));
		return -1;
	}
	if (share_hello_encode(&b, SHARE_SESSION, id->id, cwd, environ,
	    opts) < 0)
		buf_printf(why, "the environment is larger than a shared "
		    "workbench takes (1 MiB)");
	else if ((null = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0)
		buf_printf(why, "cannot open /dev/null: %s", strerror(errno));
	else
		r = handshake(fd, &b, pid, deadline, why);
	if (r == 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
	}
	if (null >= 0)
		close(null);
	free(cwd);
	buf_free(&b);
	return r;
}

/*
 * In the child: leave our session, fork the daemon and exit.  The
 * daemon (not a session leader: no terminal can become its own) gets
 * /dev/null, the log, the ready pipe as fd 3, nothing else, no signal
 * handled or blocked, and runs the binary we run.  It stays in our
 * directory: servers without a cwd of their own run in the session's,
 * and the daemon leaves it when none needs it.
 */
static void __attribute__((noreturn))
daemon_child(char **av, int null, int log, int ready)
{
	struct sigaction sa;
	sigset_t none;
	char msg[256];
	int sig, n;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	for (sig = 1; sig < NSIG; sig++)
		sigaction(sig, &sa, NULL);
	if (setsid() < 0)
		_exit(127);
	switch (fork()) {
	case -1:
		_exit(127);
	case 0:
		break;
	default:
		_exit(0);
	}
	if (dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(log, 2) < 0 ||
	    (ready == 3 ? fcntl(3, F_SETFD, 0) : dup2(ready, 3)) < 0)
		_exit(127);
	fd_close_from(4);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	execv("/proc/self/exe", av);
	n = snprintf(msg, sizeof(msg), "cannot run /proc/self/exe: %s\n",
	    strerror(errno));
	if (n > 0 && write(3, msg, (size_t)n) < 0) {
		/* The front sees end of file instead. */
	}
	_exit(127);
}

/* Wait for the ready line: 0 when empty (it listens), else -1 with why. */
static int
ready_wait(int fd, const struct share_dir *d, const struct share_id *id,
    struct buf *why)
{
	long long deadline = now_ms() + SHARE_START_MS;
	char line[SHARE_REASON_MAX + 1];
	size_t have = 0;
	ssize_t n;

	line[0] = '\0';
	while (have < sizeof(line) - 1 && memchr(line, '\n', have) == NULL) {
		if (wait_fd(fd, POLLIN, deadline) < 0) {
			buf_printf(why, "the shared workbench did not listen "
			    "within %d s (see ", SHARE_START_MS / 1000);
			share_file(why, d, id->name, "log");
			buf_putc(why, ')');
			return -1;
		}
		if ((n = read(fd, line + have, sizeof(line) - 1 - have)) < 0 &&
		    errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
	}
	if (have == 1 && line[0] == '\n')
		return 0;
	while (have > 0 && line[have - 1] == '\n')
		have--;
	line[have] = '\0';
	if (have > 0)
		buf_printf(why, "the shared workbench did not start: %s", line);
	else {
		buf_printf(why, "the shared workbench exited before it "
		    "listened (see ");
		share_file(why, d, id->name, "log");
		buf_putc(why, ')');
	}
	return -1;
}

/*
 * The daemon's command line: argv with SHARE_OPT_SERVE hex and
 * SHARE_OPT_READY fd after argv[0] (host_serve_args reads them).
 */
static char **
serve_argv(char *const *argv, char *hex, char *fd)
{
	char **av;
	size_t n, i;

	for (n = 0; argv[n] != NULL; n++)
		;
	av = xcalloc(n + 5, sizeof(*av));
	av[0] = argv[0];
	av[1] = (char *)SHARE_OPT_SERVE;
	av[2] = hex;
	av[3] = (char *)SHARE_OPT_READY;
	av[4] = fd;
	for (i = 1; i < n; i++)
		av[i + 4] = argv[i];
	return av;
}

/*
 * Start the daemon: argv with SHARE_OPT_SERVE and SHARE_OPT_READY after
 * argv[0], run from /proc/self/exe (the build we run, even after an
 * upgrade replaced the file), and wait until it listens.  0, or -1 with
 * why.
 */
static int
spawn(const struct share_dir *d, const struct share_id *id,
    char *const *argv, struct buf *why)
{
	char hex[2 * SHARE_ID_LEN + 1], fd3[] = "3", **av;
	int ready[2] = { -1, -1 }, log, null = -1, r = -1, st;
	sigset_t all, old;
	pid_t pid;

	share_id_hex(id, hex);
	av = serve_argv(argv, hex, fd3);
	if ((log = share_log_open(d, id->name, why)) < 0)
		goto done;
	if ((null = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0 ||
	    pipe2(ready, O_CLOEXEC) < 0) {
		buf_printf(why, "cannot start the shared workbench: %s",
		    strerror(errno));
		goto done;
	}
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	if ((pid = fork()) == 0)
		daemon_child(av, null, log, ready[1]);
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(ready[1]);
	ready[1] = -1;
	if (pid < 0) {
		buf_printf(why, "cannot fork: %s", strerror(errno));
		goto done;
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	r = ready_wait(ready[0], d, id, why);
done:
	if (ready[0] >= 0)
		close(ready[0]);
	if (null >= 0)
		close(null);
	if (log >= 0)
		close(log);
	free(av);
	return r;
}

/* Remove NAME.sock, on which no one listens: a socket only. */
static int
unlink_stale(const struct share_dir *d, const struct share_id *id,
    struct buf *why)
{
	char name[SHARE_NAME_LEN + 8];
	struct stat st;

	snprintf(name, sizeof(name), "%s.sock", id->name);
	if (fstatat(d->fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    !S_ISSOCK(st.st_mode)) {
		buf_printf(why, "%s/%s is not a socket", d->path, name);
		return -1;
	}
	if (unlinkat(d->fd, name, 0) < 0 && errno != ENOENT) {
		buf_printf(why, "cannot remove the stale %s/%s: %s", d->path,
		    name, strerror(errno));
		return -1;
	}
	return 0;
}

static const int stop_sigs[] = { SIGTERM, SIGINT, SIGHUP };

static void
stop_set(sigset_t *set)
{
	size_t i;

	sigemptyset(set);
	for (i = 0; i < sizeof(stop_sigs) / sizeof(stop_sigs[0]); i++)
		sigaddset(set, stop_sigs[i]);
}

/*
 * Connect, or replace a stale socket and start the daemon, then hand
 * over; under the lock.  0 with the lifeline in f, or -1 with why.
 * From the handover on, a stop signal from the client is share_wait's
 * to take (it ends the session in the daemon): blocked until then, with
 * the mask before in f.  Before it, one takes its course at once.
 */
static int
join_locked(const struct share_dir *d, const struct share_id *id,
    char *const *argv, char *const *opts, struct share_front *f,
    struct buf *why)
{
	sigset_t stops;
	int tries, fd, r;
	pid_t pid = 0;

	stop_set(&stops);
	for (tries = 0; tries < 3; tries++) {
		fd = dial(d, id, &pid, why);
		if (fd < 0 && errno == ECONNREFUSED &&
		    unlink_stale(d, id, why) < 0)
			return -1;
		if (fd < 0 && (errno == ENOENT || errno == ECONNREFUSED)) {
			if (spawn(d, id, argv, why) < 0)
				return -1;
			f->started = true;
			fd = dial(d, id, &pid, why);
		}
		if (fd < 0) {
			if (why->len == 0)
				buf_printf(why, "cannot connect to the shared "
				    "workbench it started: %s", strerror(errno));
			return -1;
		}
		f->errfl = fcntl(STDERR_FILENO, F_GETFL);
		sigprocmask(SIG_BLOCK, &stops, &f->mask);
		/* Ours to watch while the session is parked (share_wait). */
		f->in = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
		if ((r = hand_over(fd, id, opts, pid, why)) == 0) {
			f->sock = fd;
			f->daemon = pid;
			return 0;
		}
		sigprocmask(SIG_SETMASK, &f->mask, NULL);
		if (f->in >= 0)
			close(f->in);
		f->in = -1;
		close(fd);
		if (r < 0)
			return -1;
	}
	buf_printf(why, "the shared workbench went away %d times as this "
	    "session joined", tries);
	return -1;
}

/*
 * Join the shared workbench of id in d, starting it with argv (argv[0]
 * and the options it needs, e.g. -c with an absolute path) when none
 * listens; opts ("name=value", NULL-terminated, or NULL) go with the
 * hello.  0: the daemon has the client's stdio, f the lifeline; -1 with
 * why: the stdio is untouched, the session runs on its own.  Call it
 * before installing signal handlers: it uses SIGALRM while it waits for
 * the lock, and waits for the child it forks.  The client may end the
 * session the moment it is joined, before share_wait: a stop signal
 * from the handover on waits, blocked, for share_wait's handler.
 */
int
share_join(const struct share_dir *d, const struct share_id *id,
    char *const *argv, char *const *opts, struct share_front *f,
    struct buf *why)
{
	int lock, r = -1, tries;

	memset(f, 0, sizeof(*f));
	f->sock = -1;
	f->in = -1;
	f->errfl = -1;
	/* The lock file may be removed while we wait: then the new one. */
	for (tries = 0; tries < 3; tries++) {
		if ((lock = share_lock_open(d, id->name, why)) < 0)
			return -1;
		if (lock_wait(lock, SHARE_LOCK_MS) < 0) {
			buf_printf(why, "cannot lock %s/%s.lock: %s", d->path,
			    id->name, errno == ETIMEDOUT ?
			    "held for too long" : strerror(errno));
			close(lock);
			return -1;
		}
		if (share_lock_current(d, id->name, lock))
			break;
		close(lock);
		lock = -1;
	}
	if (lock < 0) {
		buf_printf(why, "%s/%s.lock was removed %d times as this "
		    "session joined", d->path, id->name, tries);
		return -1;
	}
	r = join_locked(d, id, argv, opts, f, why);
	flock(lock, LOCK_UN);
	close(lock);
	return r;
}

static void
on_stop(int sig)
{
	stop_signal = sig;
}

/*
 * What a front waits with (share_wait): the lifeline's message being
 * read, and the wake it owes the daemon while its session is parked.
 */
struct waiting {
	struct share_front *f;
	unsigned char	 m[SHARE_HDR + SHARE_WAKE_LEN];
	size_t		 have;		/* Of m. */
	unsigned char	 wake[SHARE_WAKE_LEN];
	int		 wake_fd;	/* Where it goes; -1: none given. */
	bool		 parked;	/* Watch the client's input, */
	bool		 owed;		/* then write the wake. */
	int		 status;	/* END's; -1: not yet. */
};

/* A descriptor that came with a message: the newest wake pipe. */
static void
take_wake_fd(struct waiting *w, struct msghdr *msg)
{
	struct cmsghdr *cm;
	int fd, i, n;

	for (cm = CMSG_FIRSTHDR(msg); cm != NULL; cm = CMSG_NXTHDR(msg, cm)) {
		if (cm->cmsg_level != SOL_SOCKET ||
		    cm->cmsg_type != SCM_RIGHTS)
			continue;
		n = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		for (i = 0; i < n; i++) {
			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int),
			    sizeof(int));
			if (w->wake_fd >= 0)
				close(w->wake_fd);
			w->wake_fd = fd;
		}
	}
}

/*
 * A whole message: END's status, or PARK's wake.  False: not ours, or a
 * PARK whose pipe did not come (we could never wake the daemon: the
 * session ends, said, rather than hang).
 */
static bool
message(struct waiting *w)
{
	uint32_t len = share_get32(w->m);
	unsigned type = share_get16(w->m + 4);

	w->have = 0;
	if (type == MSG_END && len == 1)
		w->status = w->m[SHARE_HDR];
	else if (type == MSG_PARK && len == SHARE_WAKE_LEN &&
	    w->wake_fd >= 0) {
		memcpy(w->wake, w->m + SHARE_HDR, SHARE_WAKE_LEN);
		w->parked = true;
		w->owed = false;
	} else
		return false;
	return true;
}

/*
 * Read the lifeline, a message at most, with what came with it: false
 * at its end, on an error, or on a message a front cannot take.
 */
static bool
lifeline_read(struct waiting *w)
{
	union {
		struct cmsghdr	 align;
		char		 buf[CMSG_SPACE(sizeof(int) * 4)];
	} cmsg;
	struct msghdr msg;
	struct iovec iov;
	size_t want = SHARE_HDR;
	ssize_t n;

	if (w->have >= SHARE_HDR) {
		if (share_get32(w->m) > SHARE_WAKE_LEN)
			return false;
		want += share_get32(w->m);
	}
	iov.iov_base = w->m + w->have;
	iov.iov_len = want - w->have;
	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cmsg.buf;
	msg.msg_controllen = sizeof(cmsg.buf);
	n = recvmsg(w->f->sock, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ||
		    errno == EINTR;
	take_wake_fd(w, &msg);
	if (n == 0 || (msg.msg_flags & MSG_CTRUNC))
		return false;
	w->have += (size_t)n;
	if (w->have < SHARE_HDR || w->have < SHARE_HDR + share_get32(w->m))
		return true;
	return message(w);
}

/*
 * The client's input moved while parked: the daemon is woken (a pipe
 * full of wakes takes this one once it has room; a daemon gone is
 * the lifeline's to tell).
 */
static void
wake_send(struct waiting *w)
{
	ssize_t n;

	if (w->wake_fd < 0) {
		w->owed = false;
		return;
	}
	do
		n = write(w->wake_fd, w->wake, SHARE_WAKE_LEN);
	while (n < 0 && errno == EINTR);
	if (n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
		w->owed = false;
}

/*
 * Wait on the lifeline until the session ends, watching the client's
 * input while the daemon parked the session.  The status to exit with
 * (END's), or -1 when the lifeline ended without one.
 */
static int
wait_lifeline(struct waiting *w, const sigset_t *during)
{
	struct pollfd p[3];

	while (stop_signal == 0 && w->status < 0) {
		/* One without a copy of the input wakes the daemon at once. */
		if (w->parked && w->f->in < 0) {
			w->parked = false;
			w->owed = true;
		}
		if (w->owed)
			wake_send(w);
		p[0].fd = w->f->sock;
		p[0].events = POLLIN;
		p[1].fd = w->parked ? w->f->in : -1;
		p[1].events = POLLIN;
		p[2].fd = w->owed ? w->wake_fd : -1;
		p[2].events = POLLOUT;
		if (ppoll(p, 3, NULL, during) < 0)
			continue;
		if (p[0].revents != 0 && !lifeline_read(w))
			break;
		if (p[1].revents != 0 && w->parked) {
			w->parked = false;
			w->owed = true;
		}
	}
	return w->status;
}

/*
 * Wait with the lifeline until the session ends: END gives the status
 * to exit with; end of file without it means the daemon died, said in
 * one line on stderr (SHARE_EXIT_LOST), whose flags the daemon made
 * non-blocking and could not put back.  END with SHARE_EXIT_LOST (the
 * daemon was stopped) is said likewise.  SIGTERM, SIGINT or SIGHUP from
 * the client close the lifeline, which ends the session in the daemon:
 * 0.  One ignored by whoever started us (nohup) stays ignored.  A wake
 * written to a daemon gone must not kill us: SIGPIPE is ignored.
 */
int
share_wait(struct share_front *f)
{
	struct waiting w = { .f = f, .wake_fd = -1, .status = -1 };
	struct sigaction sa, old;
	sigset_t during;
	size_t i;
	int status;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	/* Blocked since the handover but while in ppoll: none is lost. */
	during = f->mask;
	for (i = 0; i < sizeof(stop_sigs) / sizeof(stop_sigs[0]); i++) {
		if (sigaction(stop_sigs[i], NULL, &old) == 0 &&
		    old.sa_handler == SIG_IGN)
			continue;
		sigaction(stop_sigs[i], &sa, NULL);
		sigdelset(&during, stop_sigs[i]);
	}
	status = wait_lifeline(&w, &during);
	close(f->sock);
	f->sock = -1;
	if (f->in >= 0)
		close(f->in);
	f->in = -1;
	if (w.wake_fd >= 0)
		close(w.wake_fd);
	if (stop_signal != 0)
		return 0;
	if (status >= 0 && status != SHARE_EXIT_LOST)
		return status;
	if (f->errfl >= 0)
		fcntl(STDERR_FILENO, F_SETFL, f->errfl);
	wb_log_error("the shared workbench (pid %ld) %s; this session ended "
	    "with it", (long)f->daemon, status >= 0 ? "stopped" : "is gone");
	wb_log_flush();
	return SHARE_EXIT_LOST;
}

/*
 * Ask the daemon of id for its status (its JSON in json): 0; 1 when
 * none runs (no socket, a stale one, or one going away as it was
 * asked); -1 with why.
 */
int
share_status(const struct share_dir *d, const struct share_id *id,
    struct buf *json, struct buf *why)
{
	long long deadline = now_ms() + SHARE_ANSWER_MS;
	struct buf b = { 0 }, reason = { 0 };
	int fd, r, type = 0;
	pid_t pid;

	if ((fd = dial(d, id, &pid, why)) < 0)
		return errno == ENOENT || errno == ECONNREFUSED ? 1 : -1;
	share_hello_encode(&b, SHARE_STATUS, id->id, NULL, NULL, NULL);
	if (send_all(fd, &b, NULL, 0, deadline) < 0)
		r = errno == EPIPE || errno == ECONNRESET ? 1 : -1;
	else if ((r = recv_msg(fd, json, SHARE_STATUS_MAX, deadline,
	    &type)) == 0)
		r = 1;
	else if (r > 0 && type == MSG_STATUS)
		r = 0;
	else if (r > 0 && type == MSG_REFUSE) {
		buf_put(&reason, json->data, json->len);
		json->len = 0;
		put_reason(why, pid, &reason);
		r = -1;
	} else if (r > 0) {
		buf_printf(why, "the shared workbench (pid %ld) answered "
		    "with a message of type %d", (long)pid, type);
		r = -1;
	}
	if (r < 0 && why->len == 0)
		buf_printf(why, "the shared workbench (pid %ld) %s", (long)pid,
		    errno == ETIMEDOUT ? "did not answer in time" :
		    strerror(errno));
	close(fd);
	buf_free(&b);
	buf_free(&reason);
	return r;
}
