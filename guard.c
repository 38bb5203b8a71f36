/*
 * guard.c: no orphans, however the workbench ends.
 *
 * A server dies with us when we die (the parent-death signal), but what
 * it started (an npx wrapper's node, a shell's children) lives on in its
 * process group, and a SIGKILL gives us no chance to end those groups.
 * So a small guardian process, forked once at the first server's start,
 * learns each server's group through a pipe and, when that pipe reaches
 * end of file (we are gone: exit, crash or SIGKILL), ends every group it
 * still knows: SIGTERM, then SIGKILL after GUARD_KILL_MS.  It leaves our
 * session and ignores the signals that stop us, so a Ctrl-C or a TERM
 * sent to our group does not take it before its work is done.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "workbench.h"

#define GUARD_KILL_MS	1000	/* SIGTERM -> SIGKILL, once we are gone */
#define GUARD_STEP_MS	20	/* How often it looks meanwhile. */

/* What the guardian is told about a server's process group. */
enum guard_op {
	GUARD_ADD,		/* Started: pid leads (or will lead) a group. */
	GUARD_REAPED,		/* Its leader was waited for: never signal the pid. */
	GUARD_GONE		/* The group is gone: forget it. */
};

struct guard_msg {
	int32_t	pid;
	int32_t	op;
};

/* A group the guardian knows. */
struct guarded {
	pid_t	pid;
	bool	reaped;
};

static int guard_fd = -1;		/* Our end of the pipe. */
static pid_t guard_pid;

static void	guard_lost(void);

/*
 * Signal a server's group; a child that has not reached setsid() yet has
 * no group, and is signalled by its pid instead, unless it was reaped
 * (then its pid may be another process's by now).
 */
void
guard_signal(pid_t pgid, bool reaped, int sig)
{
	if (kill(-pgid, sig) < 0 && errno == ESRCH && !reaped)
		kill(pgid, sig);
}

static bool
group_alive(const struct guarded *g)
{
	return kill(-g->pid, 0) == 0 || (!g->reaped && kill(g->pid, 0) == 0);
}

static void
sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* We are gone: TERM every group, KILL those still there after a while. */
static void
guardian_end(struct guarded *g, int n)
{
	int i, waited, alive;

	for (i = 0; i < n; i++)
		guard_signal(g[i].pid, g[i].reaped, SIGTERM);
	for (waited = 0; waited < GUARD_KILL_MS; waited += GUARD_STEP_MS) {
		for (i = 0, alive = 0; i < n; i++)
			alive += group_alive(&g[i]);
		if (alive == 0)
			return;
		sleep_ms(GUARD_STEP_MS);
	}
	for (i = 0; i < n; i++)
		guard_signal(g[i].pid, g[i].reaped, SIGKILL);
}

/* Apply one message to the list of groups; returns its new length. */
static int
guardian_note(struct guarded **g, int n, int *cap, const struct guard_msg *m)
{
	int i;

	for (i = 0; i < n && (*g)[i].pid != m->pid; i++)
		;
	if (m->op == GUARD_GONE && i < n)
		(*g)[i] = (*g)[--n];
	else if (m->op == GUARD_REAPED && i < n)
		(*g)[i].reaped = true;
	else if (m->op == GUARD_ADD && i == n) {
		if (n == *cap) {
			*cap = *cap > 0 ? *cap * 2 : 16;
			*g = xrealloc(*g, (size_t)*cap * sizeof(**g));
		}
		(*g)[n].pid = m->pid;
		(*g)[n++].reaped = false;
	}
	return n;
}

/* The guardian: read messages until we are gone, then end the groups. */
static void
guardian(int fd)
{
	struct guarded *g = NULL;
	struct guard_msg m;
	int n = 0, cap = 0;
	ssize_t r;

	for (;;) {
		r = read(fd, &m, sizeof(m));
		if (r < 0 && errno == EINTR)
			continue;
		if (r != (ssize_t)sizeof(m))
			break;		/* End of file (or an error): we are gone. */
		n = guardian_note(&g, n, &cap, &m);
	}
	guardian_end(g, n);
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
	proc_close_from(4);
}

static int
guard_start(void)
{
	sigset_t all, old;
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
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
	fcntl(guard_fd, F_SETFL, O_NONBLOCK);
	return 0;
}

static void
guard_send(pid_t pid, enum guard_op op)
{
	struct guard_msg m = { (int32_t)pid, (int32_t)op };
	ssize_t r;

	if (guard_fd < 0 && (op != GUARD_ADD || guard_start() < 0)) {
		if (op == GUARD_ADD)
			wb_log("cannot start the guardian process: %s; servers "
			    "may outlive a workbench that is killed",
			    strerror(errno));
		return;
	}
	/* A message is smaller than PIPE_BUF: it goes whole, or not at all. */
	do
		r = write(guard_fd, &m, sizeof(m));
	while (r < 0 && errno == EINTR);
	if (r < 0 && errno == EAGAIN)
		wb_log("the guardian process is not keeping up; process group "
		    "%ld may outlive a workbench that is killed", (long)pid);
	else if (r != (ssize_t)sizeof(m))
		guard_lost();
}

/* The guardian is gone: the next server's start starts another. */
static void
guard_lost(void)
{
	wb_log("the guardian process is gone; servers may outlive a "
	    "workbench that is killed");
	close(guard_fd);
	guard_fd = -1;
	guard_pid = 0;
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
}

void
guard_add(pid_t pid)
{
	guard_send(pid, GUARD_ADD);
}

void
guard_gone(pid_t pid)
{
	guard_send(pid, GUARD_GONE);
}

/*
 * A child was reaped: the guardian's leader may not be signalled by pid
 * any more; or the guardian itself ended.
 */
void
guard_reaped(pid_t pid)
{
	if (guard_pid > 0 && pid == guard_pid)
		guard_lost();
	else
		guard_send(pid, GUARD_REAPED);
}
