/*
 * procmgr.c: child processes.  Spawning (fork/exec with every fd
 * O_CLOEXEC, each child leading its own process group), draining their
 * stderr, signals through a self-pipe, reaping, and the escalation that
 * ends a process group: stdin closed, then SIGTERM, then SIGKILL.
 *
 * A group is signalled only while it is known to be ours, so that its
 * number, its leader's pid, cannot have passed to another group: while
 * its leader is our unreaped child, or while a live process of it is our
 * child.  We are a child subreaper, so what a server leaves behind when it
 * dies becomes ours, and its group stays ours while that lives.  A group
 * with neither has nothing of ours left: it is done with.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"

#define TERM_AFTER_MS	500	/* stdin closed -> SIGTERM */
#define KILL_AFTER_MS	1000	/* SIGTERM -> SIGKILL */
#define ERR_LINE_MAX	4096	/* A forwarded stderr line is cut here. */

extern char **environ;

/* Variables a child gets from our environment unless inheritEnv is set. */
static const char *const env_keep[] = {
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG",
	"LC_ALL", "TZ", "TMPDIR", NULL
};

/* A process group on its way out. */
struct dying {
	pid_t		 pgid;
	long long	 term_at;
	long long	 kill_at;
};

static struct dying *dying;
static int ndying;
static int sigpipe_fds[2] = { -1, -1 };
static volatile sig_atomic_t got_stop;

/* What a failed child tells its parent through the CLOEXEC pipe. */
struct exec_report {
	int	stage;		/* 0: chdir, 1: exec */
	int	err;
};

static void
on_signal(int sig)
{
	int saved = errno;
	char c = (char)sig;

	if (sig != SIGCHLD)
		got_stop = sig;
	if (write(sigpipe_fds[1], &c, 1) < 0) {
		/* The pipe is full: a wakeup is already pending. */
	}
	errno = saved;
}

/* Install the handlers; returns the self-pipe's read end, or -1. */
int
proc_signals(void)
{
	static const int sigs[] = { SIGCHLD, SIGTERM, SIGINT, SIGHUP };
	struct sigaction sa;
	sigset_t ours;
	size_t i;

	if (pipe2(sigpipe_fds, O_CLOEXEC | O_NONBLOCK) < 0)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigemptyset(&ours);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		sigaction(sigs[i], &sa, NULL);
		sigaddset(&ours, sigs[i]);
	}
	/* Whoever started us may have blocked them (a mask survives exec). */
	sigprocmask(SIG_UNBLOCK, &ours, NULL);
#ifdef PR_SET_CHILD_SUBREAPER
	/* What our servers leave behind is ours to reap (and to signal). */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
#endif
	return sigpipe_fds[0];
}

/* Empty the self-pipe; the stop signal that arrived last, or 0. */
int
proc_signal_take(void)
{
	char tmp[64];

	while (read(sigpipe_fds[0], tmp, sizeof(tmp)) > 0)
		;
	return got_stop;
}

/*
 * The child's environment: the kept variables (of the environment it
 * inherits: ours, or the session's of a shared workbench), then the
 * server's env.  The array is the caller's to free, the strings are not.
 */
char **
proc_child_env(const struct cfg_server *cs)
{
	char *const *from = cs->base_env != NULL ? cs->base_env : environ;
	size_t n = 0, cap = 16, i, k;
	char **env = xmalloc(cap * sizeof(*env)), *eq;

	for (i = 0; from[i] != NULL; i++) {
		if ((eq = strchr(from[i], '=')) == NULL)
			continue;
		for (k = 0; !cs->inherit_env && env_keep[k] != NULL; k++)
			if (strlen(env_keep[k]) == (size_t)(eq - from[i]) &&
			    strncmp(from[i], env_keep[k],
			    (size_t)(eq - from[i])) == 0)
				break;
		if (!cs->inherit_env && env_keep[k] == NULL)
			continue;
		if (n + 2 >= cap)
			env = xrealloc(env, (cap *= 2) * sizeof(*env));
		env[n++] = from[i];
	}
	for (i = 0; cs->env != NULL && cs->env[i] != NULL; i++) {
		eq = strchr(cs->env[i], '=');
		for (k = 0; k < n; k++)
			if (strncmp(env[k], cs->env[i],
			    (size_t)(eq - cs->env[i]) + 1) == 0)
				break;
		if (k == n && n + 2 >= cap)
			env = xrealloc(env, (cap *= 2) * sizeof(*env));
		env[k] = cs->env[i];
		n += k == n;
	}
	env[n] = NULL;
	return env;
}

/* In the child: place the fds, reset signals, exec.  Never returns. */
static void
child_exec(const struct cfg_server *cs, char **env, int fds[3], int report,
    pid_t parent)
{
	struct exec_report rep = { 0, 0 };
	struct sigaction sa;
	sigset_t none;
	int i, sig;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	for (sig = 1; sig < NSIG; sig++)
		sigaction(sig, &sa, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	setsid();
	/*
	 * Had we died already, we are not its parent now: the guardian may
	 * never have been told of it.  Afterwards the guardian (guard.c)
	 * ends it when we die, and gives it its time to exit when we exit:
	 * no parent-death signal, which would TERM every server the instant
	 * the workbench exits, before the wait a shutdown owes it.
	 */
	if (getppid() != parent)
		_exit(127);
	for (i = 0; i < 3; i++)
		if (dup2(fds[i], i) < 0)
			_exit(127);
	if (report != 3 && (report = dup3(report, 3, O_CLOEXEC)) < 0)
		_exit(127);
	fd_close_from(4);
	if (cs->cwd != NULL && chdir(cs->cwd) < 0) {
		rep.err = errno;
		goto fail;
	}
	environ = env;
	execvp(cs->argv[0], cs->argv);
	rep.stage = 1;
	rep.err = errno;
fail:
	if (write(report, &rep, sizeof(rep)) < 0) {
		/* The parent will see a plain exit 127. */
	}
	_exit(127);
}

static int
pipes(int p[4][2])
{
	int i;

	for (i = 0; i < 4; i++)
		if (pipe2(p[i], O_CLOEXEC) < 0) {
			while (i-- > 0) {
				close(p[i][0]);
				close(p[i][1]);
			}
			return -1;
		}
	return 0;
}

static void
set_nonblock(int fd)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/*
 * Start a server.  Returns 0, or -1 with the reason in why.  On success
 * p->pid leads its own process group and p holds our non-blocking ends.
 * Whether the exec itself worked is learnt later, from p->execfd: it
 * reads end-of-file once exec has closed the child's CLOEXEC end, or a
 * report when exec failed (proc_exec_status).  Nothing waits for it, so
 * many servers start at once.
 */
int
proc_spawn(struct proc *p, const struct cfg_server *cs, struct buf *why)
{
	sigset_t all, old;
	int fd[4][2], child[3], i;
	char **env;
	pid_t pid, parent;

	if (pipes(fd) < 0) {
		buf_printf(why, "cannot create pipes: %s", strerror(errno));
		return -1;
	}
	env = proc_child_env(cs);
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	child[0] = fd[0][0];
	child[1] = fd[1][1];
	child[2] = fd[2][1];
	parent = getpid();
	if ((pid = fork()) == 0)
		child_exec(cs, env, child, fd[3][1], parent);
	sigprocmask(SIG_SETMASK, &old, NULL);
	free(env);
	for (i = 0; i < 3; i++)
		close(child[i]);
	close(fd[3][1]);
	if (pid < 0) {
		buf_printf(why, "cannot fork: %s", strerror(errno));
		for (i = 0; i < 4; i++)
			close(fd[i][i == 0 ? 1 : 0]);
		return -1;
	}
	guard_add(pid);
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->io.wfd = fd[0][1];
	p->io.rfd = fd[1][0];
	p->errfd = fd[2][0];
	p->execfd = fd[3][0];
	set_nonblock(p->io.wfd);
	set_nonblock(p->io.rfd);
	set_nonblock(p->errfd);
	set_nonblock(p->execfd);
	return 0;
}

/*
 * Has the child exec'd?  1: not known yet; 0: yes (execfd is closed);
 * -1: no, with the reason in why (execfd is closed).
 */
int
proc_exec_status(struct proc *p, const struct cfg_server *cs,
    struct buf *why)
{
	struct exec_report rep;
	ssize_t n;

	do
		n = read(p->execfd, &rep, sizeof(rep));
	while (n < 0 && errno == EINTR);
	if (n < 0 && errno == EAGAIN)
		return 1;
	close(p->execfd);
	p->execfd = -1;
	if (n != (ssize_t)sizeof(rep))
		return 0;
	if (rep.stage == 0)
		buf_printf(why, "cannot change directory to '%s': %s",
		    cs->cwd_raw, strerror(rep.err));
	else
		buf_printf(why, "cannot execute '%s': %s", cs->command,
		    strerror(rep.err));
	return -1;
}

static void
tail_push(struct proc *p, const char *s, size_t n)
{
	if (n > PROC_TAIL_LINE)
		n = PROC_TAIL_LINE;
	free(p->tail[p->ntail % PROC_TAIL]);
	p->tail[p->ntail % PROC_TAIL] = xstrndup(s, n);
	p->ntail++;
}

/* Forward one stderr line, prefixed, and keep it for failure reports. */
static void
err_line(struct proc *p, const char *label, const char *s, size_t n,
    bool cut)
{
	struct buf b = { 0 };

	if (n > 0 && s[n - 1] == '\r')
		n--;
	tail_push(p, s, n);
	/* A flood would fill the client's log: journald's rule, per server. */
	p->errlog.rule = &ratelog_stderr;
	if (ratelog_stderr.level > wb_log_reach ||
	    !ratelog_allow(&p->errlog, loop_ms(), label))
		return;
	buf_printf(&b, "[%s] ", label);
	buf_put(&b, s, n);
	if (cut)
		buf_puts(&b, " [...]");
	wb_log_line(ratelog_stderr.level, b.data, b.len);
	buf_free(&b);
}

/*
 * Read what the child wrote to stderr and forward it line by line.
 * Returns 1 when something was read, 0 at end of file, -1 otherwise.
 */
int
proc_drain_stderr(struct proc *p, const char *label)
{
	char chunk[16384], *nl, *s;
	ssize_t n;
	size_t len;

	if (p->errfd < 0)
		return 0;
	do
		n = read(p->errfd, chunk, sizeof(chunk));
	while (n < 0 && errno == EINTR);
	if (n <= 0) {
		if (n == 0 && p->errline.len > 0)
			err_line(p, label, p->errline.data, p->errline.len,
			    false);
		p->errline.len = 0;
		return n == 0 ? 0 : -1;
	}
	for (s = chunk, len = (size_t)n; len > 0; ) {
		nl = memchr(s, '\n', len);
		n = nl == NULL ? (ssize_t)len : nl - s;
		if (!p->errcut)
			buf_put(&p->errline, s, (size_t)n);
		if (p->errline.len > ERR_LINE_MAX) {
			p->errline.len = ERR_LINE_MAX;
			err_line(p, label, p->errline.data, p->errline.len,
			    true);
			p->errline.len = 0;
			p->errcut = true;
		}
		if (nl == NULL)
			break;
		if (!p->errcut || p->errline.len > 0)
			err_line(p, label, p->errline.data, p->errline.len,
			    false);
		p->errline.len = 0;
		p->errcut = false;
		len -= (size_t)n + 1;
		s = nl + 1;
	}
	return 1;
}

/* Append " Last stderr: a | b | c" when the child said anything. */
void
proc_tail(const struct proc *p, struct buf *out)
{
	int i, first;

	if (p->ntail == 0)
		return;
	first = p->ntail > PROC_TAIL ? p->ntail - PROC_TAIL : 0;
	buf_puts(out, ". Last stderr: ");
	for (i = first; i < p->ntail; i++) {
		if (i > first)
			buf_puts(out, " | ");
		buf_puts(out, p->tail[i % PROC_TAIL]);
	}
}

static void
close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Close our ends and forget the tail; the pid is the caller's. */
void
proc_close(struct proc *p)
{
	int i;

	close_fd(&p->io.rfd);
	close_fd(&p->io.wfd);
	close_fd(&p->errfd);
	close_fd(&p->execfd);
	peer_close(&p->io);
	buf_free(&p->errline);
	for (i = 0; i < PROC_TAIL; i++) {
		free(p->tail[i]);
		p->tail[i] = NULL;
	}
	p->ntail = 0;
	p->errcut = false;
}

/*
 * Hand a process group to the escalation.  The caller has closed its
 * stdin (the polite request to exit); a reaped leader's group only needs
 * its leftovers (an npx wrapper's children) ended.
 */
void
proc_retire(pid_t pgid, bool reaped)
{
	long long now = now_ms();
	struct dying *d;

	dying = xrealloc(dying, ((size_t)ndying + 1) * sizeof(*dying));
	d = &dying[ndying++];
	d->pgid = pgid;
	d->term_at = reaped ? now : now + TERM_AFTER_MS;
	d->kill_at = d->term_at + KILL_AFTER_MS;
	if (reaped)
		proc_tick(now);
}

/*
 * Is the group still ours: its leader our unreaped child (a zombie too),
 * or a live process of it our child (a zombie is not, without WEXITED)?
 */
static bool
group_ours(pid_t pgid)
{
	siginfo_t si;
	int r;

	do
		r = waitid(P_PID, (id_t)pgid, &si, WEXITED | WSTOPPED |
		    WCONTINUED | WNOHANG | WNOWAIT);
	while (r < 0 && errno == EINTR);
	if (r == 0)
		return true;
	do
		r = waitid(P_PGID, (id_t)pgid, &si, WSTOPPED | WNOHANG |
		    WNOWAIT);
	while (r < 0 && errno == EINTR);
	return r == 0;
}

/*
 * Signal a group of ours.  One that has no process now is a child that
 * has not reached setsid() yet: its unreaped leader, signalled by pid.
 */
static void
group_signal(pid_t pgid, int sig)
{
	if (kill(-pgid, sig) < 0 && errno == ESRCH)
		(void)kill(pgid, sig);
}

/* Send what is due; forget the groups that are done with. */
void
proc_tick(long long now)
{
	struct dying *d;
	int i;

	for (i = ndying - 1; i >= 0; i--) {
		d = &dying[i];
		if (!group_ours(d->pgid)) {
			guard_gone(d->pgid);
			dying[i] = dying[--ndying];
			continue;
		}
		if (now >= d->kill_at) {
			wb_log_debug("process group %ld: SIGKILL, it outlived "
			    "SIGTERM", (long)d->pgid);
			group_signal(d->pgid, SIGKILL);
			d->kill_at = now + 100;
		} else if (now >= d->term_at) {
			wb_log_debug("process group %ld: SIGTERM, it did not "
			    "exit when its input closed", (long)d->pgid);
			group_signal(d->pgid, SIGTERM);
			d->term_at = d->kill_at;
		}
	}
}

/* The earliest escalation deadline, or -1. */
long long
proc_deadline(void)
{
	long long t = -1, due;
	int i;

	for (i = 0; i < ndying; i++) {
		due = dying[i].term_at < dying[i].kill_at ? dying[i].term_at :
		    dying[i].kill_at;
		if (t < 0 || due < t)
			t = due;
	}
	return t;
}

/*
 * At shutdown, the groups still ending are handed to the guardian, which
 * gives each the rest of its wait for a polite exit, then TERM and KILL:
 * the workbench need not outlive its servers.  True when none is left to
 * us (there was none, or the guardian took them).
 */
bool
proc_hand_over(void)
{
	long long now = now_ms(), grace = 0;
	int i;

	if (ndying == 0)
		return true;
	for (i = 0; i < ndying; i++)
		if (dying[i].term_at - now > grace)
			grace = dying[i].term_at - now;
	if (!guard_retire(grace))
		return false;
	ndying = 0;		/* The guardian's now, not to be told gone. */
	return true;
}

/* Everything left of ours gets SIGKILL: the last step of shutdown. */
void
proc_kill_all(void)
{
	int i;

	for (i = 0; i < ndying; i++)
		if (group_ours(dying[i].pgid))
			group_signal(dying[i].pgid, SIGKILL);
}

/* Describe a wait status: "exited with status 3", "killed by SIGSEGV". */
void
proc_status(int status, struct buf *out)
{
	if (WIFEXITED(status))
		buf_printf(out, "exited with status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		buf_printf(out, "killed by signal %d (%s)", WTERMSIG(status),
		    strsignal(WTERMSIG(status)));
	else
		buf_puts(out, "stopped");
}
