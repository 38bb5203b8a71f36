/*
 * guard.c: no orphans, however the workbench ends.
 *
 * A server and what it started (an npx wrapper's node, a shell's
 * children) live on in its process group when we die, and a SIGKILL gives
 * us no chance to end those groups.  So a small guardian process, forked
 * at the first server's start, learns each server's group through a
 * socket and, when that socket reaches end of file (we are gone: exit,
 * crash or SIGKILL), ends every group it still knows: SIGTERM, then
 * SIGKILL after GUARD_KILL_MS.  A workbench that exits while its servers
 * are still ending retires first (guard_retire): the guardian gives them
 * the rest of their wait for a polite exit before it signals them, and
 * the client is not kept waiting for them.  It
 * leaves our session and ignores the signals that stop us, so a Ctrl-C
 * or a TERM sent to our group does not take it before its work is done.
 *
 * What the guardian knows follows a table kept here, one entry per group:
 * a group is told once the socket takes the message (a full socket leaves
 * it to be told when it drains, nothing dropped), and a guardian that
 * dies is replaced at once and told every group again.
 *
 * The guardian signals groups, never a bare pid: it is not the servers'
 * parent, so by the time it acts a pid of theirs may be another's.  A
 * group comes with a pidfd of its leader, opened while the leader is our
 * unreaped child; with it the kernel (Linux 6.9 and later) signals that
 * very group, whatever became of its number.  Without (an older kernel,
 * or a group told again after its leader was reaped), the group is
 * signalled by its number, which no other group can have while any
 * process of it lives; it is told as soon as it is gone.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "proc.h"

#define GUARD_KILL_MS	1000	/* SIGTERM -> SIGKILL, once we are gone */
#define GUARD_GRACE_MAX	10000	/* A retiring workbench's grace, at most. */
#define GUARD_STEP_MS	20	/* How often it looks meanwhile. */

#ifndef PIDFD_SIGNAL_PROCESS_GROUP
#define PIDFD_SIGNAL_PROCESS_GROUP	(1U << 2)	/* Linux 6.9 */
#endif

/* What the guardian is told about a server's process group. */
enum guard_op {
	GUARD_ADD,		/* pid leads a group; a pidfd may come with it. */
	GUARD_GONE,		/* The group is gone: forget it. */
	GUARD_RETIRE		/* We exit: pid is the groups' grace, in ms. */
};

struct guard_msg {
	int32_t	pid;
	int32_t	op;
};

/* A group in our table: the guardian is to know it, or to forget it. */
struct told {
	pid_t	pgid;
	bool	known;		/* The guardian was told of it, */
	bool	gone;		/* and is to be told it is gone. */
};

/* A group the guardian knows. */
struct guarded {
	pid_t	pid;
	int	pidfd;		/* Its leader's, or -1. */
};

static struct told *groups;
static int ngroups, capgroups;
static int guard_fd = -1;		/* Our end of the socket. */
static pid_t guard_pid;			/* The guardian, while it lives. */

/*
 * The guardian.
 */
/*
 * Signal a group: by its leader's pidfd where the kernel can, else by
 * its number.  -1 with errno ESRCH when nothing is left in it.
 */
static int
group_signal(const struct guarded *g, int sig)
{
#ifdef __NR_pidfd_send_signal
	if (g->pidfd >= 0) {
		if (syscall(__NR_pidfd_send_signal, g->pidfd, sig, NULL,
		    PIDFD_SIGNAL_PROCESS_GROUP) == 0)
			return 0;
		if (errno != EINVAL && errno != ENOSYS)
			return -1;
		/* A kernel before 6.9: by its number. */
	}
#endif
	return kill(-g->pid, sig);
}

static bool
group_alive(const struct guarded *g)
{
	return group_signal(g, 0) == 0 || errno == EPERM;
}

static void
sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Wait up to ms for every group to be gone; true once they are. */
static bool
guardian_wait(const struct guarded *g, int n, long ms)
{
	long waited;
	int i, alive;

	for (waited = 0;; waited += GUARD_STEP_MS) {
		for (i = 0, alive = 0; i < n; i++)
			alive += group_alive(&g[i]);
		if (alive == 0)
			return true;
		if (waited >= ms)
			return false;
		sleep_ms(GUARD_STEP_MS);
	}
}

/*
 * We are gone: TERM every group, KILL those still there after a while.
 * A workbench that retired gave them grace_ms first to exit on their own
 * (their stdin is closed), as it would have waited itself.
 */
static void
guardian_end(struct guarded *g, int n, long grace_ms)
{
	int i;

	if (grace_ms > 0 && guardian_wait(g, n, grace_ms))
		return;
	for (i = 0; i < n; i++)
		(void)group_signal(&g[i], SIGTERM);
	if (guardian_wait(g, n, GUARD_KILL_MS))
		return;
	for (i = 0; i < n; i++)
		(void)group_signal(&g[i], SIGKILL);
}

static void
guarded_forget(const struct guarded *x)
{
	if (x->pidfd >= 0)
		close(x->pidfd);
}

/* Apply one message (with the pidfd it brought) to the list of groups. */
static int
guardian_note(struct guarded **g, int n, int *cap, const struct guard_msg *m,
    int pidfd)
{
	int i;

	for (i = 0; i < n && (*g)[i].pid != m->pid; i++)
		;
	if (m->op == GUARD_GONE && i < n) {
		guarded_forget(&(*g)[i]);
		(*g)[i] = (*g)[--n];
	} else if (m->op == GUARD_ADD && i == n) {
		if (n == *cap) {
			*cap = *cap > 0 ? *cap * 2 : 16;
			*g = xrealloc(*g, (size_t)*cap * sizeof(**g));
		}
		(*g)[n].pid = m->pid;
		(*g)[n++].pidfd = pidfd;
		pidfd = -1;
	}
	if (pidfd >= 0)
		close(pidfd);
	return n;
}

/* One message and the descriptor it carries (or -1); false at the end. */
static bool
guardian_read(int fd, struct guard_msg *m, int *pidfd)
{
	union {
		struct cmsghdr	hdr;
		char		buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov = { m, sizeof(*m) };
	struct msghdr mh = { 0 };
	struct cmsghdr *c;
	ssize_t r;

	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = ctl.buf;
	mh.msg_controllen = sizeof(ctl.buf);
	do
		r = recvmsg(fd, &mh, 0);
	while (r < 0 && errno == EINTR);
	*pidfd = -1;
	for (c = CMSG_FIRSTHDR(&mh); r > 0 && c != NULL;
	    c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
		    c->cmsg_len == CMSG_LEN(sizeof(int)))
			memcpy(pidfd, CMSG_DATA(c), sizeof(int));
	return r == (ssize_t)sizeof(*m);
}

/* The guardian: read messages until we are gone, then end the groups. */
static void
guardian(int fd)
{
	struct guarded *g = NULL;
	struct guard_msg m = { 0, 0 };
	int n = 0, cap = 0, pidfd;
	long grace = 0;

	while (guardian_read(fd, &m, &pidfd)) {
		if (m.op == GUARD_RETIRE)
			grace = m.pid < 0 ? 0 : m.pid > GUARD_GRACE_MAX ?
			    GUARD_GRACE_MAX : m.pid;
		n = guardian_note(&g, n, &cap, &m, pidfd);
	}
	if (pidfd >= 0)
		close(pidfd);
	guardian_end(g, n, grace);
	_exit(0);
}

/* In the new guardian: its own session, deaf to our stop signals. */
static void
guardian_setup(int fd)
{
	struct sigaction sa;
	sigset_t none;
	int sig, null;

	memset(&sa, 0, sizeof(sa));
	for (sig = 1; sig < NSIG; sig++) {
		sa.sa_handler = sig == SIGTERM || sig == SIGINT ||
		    sig == SIGHUP || sig == SIGPIPE ? SIG_IGN : SIG_DFL;
		sigaction(sig, &sa, NULL);
	}
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	setsid();
#ifdef PR_SET_NAME
	prctl(PR_SET_NAME, "wb-guardian");	/* What ps shows. */
#endif
	/* Hold none of the client's pipes: it must see us end at once. */
	if ((null = open("/dev/null", O_RDWR)) >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
		if (null > STDERR_FILENO)
			close(null);
	}
	if (fd != 3 && (fd = dup2(fd, 3)) < 0)
		_exit(1);
	fd_close_from(4);
}

/*
 * Our side.
 */
static int
guard_start(void)
{
	sigset_t all, old;
	int p[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, p) < 0)
		return -1;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	if ((pid = fork()) == 0) {
		close(p[1]);
		guardian_setup(p[0]);
		guardian(3);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(p[0]);
	if (pid < 0) {
		close(p[1]);
		return -1;
	}
	guard_pid = pid;
	guard_fd = p[1];
	wb_log_debug("the guardian process %ld started", (long)pid);
	return 0;
}

/*
 * A group leaves the table, which keeps its order: a pid used again by a
 * new group is told gone, then new, in that order.
 */
static void
forget(int i)
{
	memmove(&groups[i], &groups[i + 1], (size_t)(ngroups - i - 1) *
	    sizeof(*groups));
	ngroups--;
}

/*
 * The guardian is gone, or its socket broke: a new one is to be told
 * every group, and those it was to forget are forgotten with it.
 */
static void
guard_lost(void)
{
	int i;

	if (guard_fd >= 0)
		close(guard_fd);
	guard_fd = -1;
	guard_pid = 0;
	for (i = ngroups - 1; i >= 0; i--) {
		groups[i].known = false;
		if (groups[i].gone)
			forget(i);
	}
}

/*
 * A pidfd of a group's leader while it is our unreaped child (then its
 * pid is its own), or -1: a group whose leader is gone is told by its
 * number alone.
 */
static int
leader_pidfd(pid_t pid)
{
#ifdef __NR_pidfd_open
	static bool none;	/* A kernel (or emulator) before pidfds. */
	siginfo_t si;
	int fd;

	if (!none && waitid(P_PID, (id_t)pid, &si, WEXITED | WSTOPPED |
	    WCONTINUED | WNOHANG | WNOWAIT) == 0) {
		fd = (int)syscall(__NR_pidfd_open, pid, 0);
		none = fd < 0 && errno == ENOSYS;
		return fd;
	}
#else
	(void)pid;
#endif
	return -1;
}

/* Tell the guardian one thing: 1 told, 0 not now (full), -1 lost. */
static int
guard_send(pid_t pid, enum guard_op op)
{
	union {
		struct cmsghdr	hdr;
		char		buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct guard_msg m = { (int32_t)pid, (int32_t)op };
	struct iovec iov = { &m, sizeof(m) };
	struct msghdr mh = { 0 };
	int pidfd = op == GUARD_ADD ? leader_pidfd(pid) : -1;
	ssize_t r;

	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	if (pidfd >= 0)
		msg_put_fds(&mh, ctl.buf, &pidfd, 1);
	do
		r = sendmsg(guard_fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
	while (r < 0 && errno == EINTR);
	if (pidfd >= 0)
		close(pidfd);
	if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK ||
	    errno == ENOBUFS))
		return 0;
	return r == (ssize_t)sizeof(m) ? 1 : -1;
}

/*
 * A guardian for the table, started when there is none; false, said
 * once, when there can be none (the next change tries again).
 */
static bool
guard_ensure(void)
{
	static bool said;

	if (guard_fd >= 0)
		return true;
	if (guard_start() == 0) {
		said = false;
		return true;
	}
	if (!said)
		wb_log_error("cannot start the guardian process: %s; servers "
		    "may outlive a workbench that is killed", strerror(errno));
	said = true;
	return false;
}

/*
 * Bring the guardian up to date with the table, as far as its socket
 * takes now; the rest is told when it drains (guard_wants_out).  A
 * guardian found gone is replaced, once per call, and told everything.
 */
static void
guard_sync(void)
{
	bool replaced = false, none = false;
	struct told *t;
	int i, r;

	for (i = 0; i < ngroups; i++) {
		t = &groups[i];
		if (t->known && !t->gone)
			continue;		/* Nothing to tell. */
		if (!t->known && t->gone) {	/* It never knew of it. */
			forget(i--);
			continue;
		}
		/* Without a guardian, the table is still kept tidy. */
		if (none || (none = !guard_ensure()))
			continue;
		if ((r = guard_send(t->pgid, t->gone ? GUARD_GONE :
		    GUARD_ADD)) == 0)
			return;
		if (r < 0) {
			wb_log_warn("the guardian process is gone; starting "
			    "another");
			guard_lost();
			if (replaced)
				return;
			replaced = true;
			i = -1;		/* The new one is told everything. */
		} else if (t->gone)
			forget(i--);
		else
			t->known = true;
	}
}

void
guard_add(pid_t pgid)
{
	if (ngroups == capgroups) {
		capgroups = capgroups > 0 ? capgroups * 2 : 16;
		groups = xrealloc(groups, (size_t)capgroups * sizeof(*groups));
	}
	groups[ngroups++] = (struct told){ pgid, false, false };
	guard_sync();
}

/* The group is gone: the guardian forgets it, now or once it can be told. */
void
guard_gone(pid_t pgid)
{
	int i;

	for (i = 0; i < ngroups; i++)
		if (groups[i].pgid == pgid && !groups[i].gone) {
			groups[i].gone = true;
			guard_sync();
			return;
		}
}

/* Our end of the socket while something waits to be told, or -1. */
int
guard_wants_out(void)
{
	int i;

	for (i = 0; guard_fd >= 0 && i < ngroups; i++)
		if (groups[i].known == groups[i].gone)
			return guard_fd;
	return -1;
}

/* The socket takes more: tell what waits. */
void
guard_writable(void)
{
	guard_sync();
}

/*
 * A child was reaped: when it was the guardian, another is started at
 * once and told every group.
 */
void
guard_reaped(pid_t pid)
{
	if (guard_pid <= 0 || pid != guard_pid)
		return;
	if (ngroups > 0)
		wb_log_warn("the guardian process is gone; starting another");
	guard_lost();
	guard_sync();
}

/*
 * We exit before our servers' groups are gone: the guardian, told every
 * one, is to give them grace_ms more to exit on their own, then end them
 * as if we had died.  So a shutdown waits for the client's answers, not
 * for servers to exit (node takes 30 ms and more, a stubborn server the
 * whole escalation).  False when the guardian cannot take them now (none
 * runs, or it has not been told every group yet): the caller ends them.
 */
bool
guard_retire(long long grace_ms)
{
	struct guard_msg m = { (int32_t)(grace_ms > GUARD_GRACE_MAX ?
	    GUARD_GRACE_MAX : grace_ms < 0 ? 0 : grace_ms), GUARD_RETIRE };
	ssize_t r;

	if (guard_fd < 0 || guard_pid <= 0 || guard_wants_out() >= 0)
		return false;
	do
		r = send(guard_fd, &m, sizeof(m), MSG_DONTWAIT | MSG_NOSIGNAL);
	while (r < 0 && errno == EINTR);
	if (r != (ssize_t)sizeof(m))
		return false;
	close(guard_fd);	/* Its end of file: it takes over now. */
	guard_fd = -1;
	guard_pid = 0;
	return true;
}

/*
 * We are about to exit, our servers' groups ended or handed to the
 * escalation: the guardian sees end of file now instead of at exit.
 */
void
guard_end(void)
{
	if (guard_fd >= 0)
		close(guard_fd);
	guard_fd = -1;
	free(groups);
	groups = NULL;
	ngroups = capgroups = 0;
}
