/*
 * server_loop.c: the servers with the loop.  The signals (a server
 * exited, or we are told to stop), each server's descriptors and its
 * nearest deadline, the guardian's socket, the process group escalation
 * and the bridge's timers are registered here; the servers' steps run
 * before poll (reclaiming instances, writing queues) and at shutdown.
 * While the log of a server is written, whoever routes it is told which
 * server it is (srv_about_by: a shared workbench's sessions).
 */
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>

#include "server_int.h"

static struct server **live;		/* Those with a process or timers. */
static int nlive, caplive;
static struct loop_io signals_io;
static struct loop_io guard_io;
static struct loop_timer proc_timer;
static struct loop_timer bridge_timer;
static void (*about)(const struct server *, const struct session *);

void
srv_about_by(void (*fn)(const struct server *, const struct session *))
{
	about = fn;
}

void
srv_about(const struct server *s)
{
	if (about != NULL)
		about(s, NULL);
}

/*
 * At debug, how a process that is no running server's ended: one
 * stopped (its input closed, then signals), the guardian, or one a
 * server left behind.
 */
static void
debug_reaped(pid_t pid, int status)
{
	struct buf why = { 0 };

	if (WB_DEBUG > wb_log_reach)
		return;
	proc_status(status, &why);
	wb_log_debug("process %ld ended: %s", (long)pid, buf_cstr(&why));
	buf_free(&why);
}

/*
 * Servers, guardians, and what servers left behind (we are their
 * subreaper); the escalation looks at groups afresh (proc_tick).
 */
static void
reap(void)
{
	struct server *s;
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		if ((s = srv_by_pid(pid)) != NULL)
			srv_exited(s, status);
		else {
			debug_reaped(pid, status);
			guard_reaped(pid);
		}
	}
}

static void
on_signal(void *arg, int fd, short revents)
{
	int sig;

	(void)arg;
	(void)fd;
	(void)revents;
	if ((sig = proc_signal_take()) != 0)
		loop_stop(sig == SIGTERM ? "SIGTERM" : sig == SIGINT ?
		    "SIGINT" : sig == SIGHUP ? "SIGHUP" : "a signal");
	reap();
}

/* An event on a descriptor polled for the process it was for. */
static void
on_server_fd(void *arg, int fd, short revents)
{
	struct srv_watch *w = arg;

	srv_about(w->s);
	srv_event(w->s, w->which, w->pid, fd, revents);
	srv_about(NULL);
}

static void
on_server_timer(void *arg)
{
	struct server *s = arg;

	srv_about(s);
	srv_check_timers(s, loop_ms());
	srv_about(NULL);
}

/*
 * Its descriptors and deadline as they are now (stdout only when read):
 * false once it has neither, no request waits on it and nothing runs (a
 * process, or a remote's session, whose queue is written here).
 */
static bool
watch_server(struct server *s, bool read)
{
	struct srv_fds fds;
	struct srv_watch *w;
	long long at;
	bool any = false;
	int k;

	srv_watch(s, read, &fds);
	for (k = 0; k < SRV_FDS; k++) {
		w = &s->watch[k];
		if (fds.fd[k] < 0) {
			loop_io_del(&w->io);
			continue;
		}
		w->s = s;
		w->which = (enum srv_fd)k;
		w->pid = fds.pid;
		loop_io_set(&w->io, fds.fd[k], fds.events[k], on_server_fd, w);
		any = true;
	}
	at = srv_deadline(s);
	loop_timer_set(&s->timer, at, on_server_timer, s);
	return any || at >= 0 || s->nreq > 0 || s->proc.pid > 0 ||
	    s->remote != NULL;
}

/*
 * A server whose process starts is live: looked at each turn until it
 * has no descriptor, timer or request left.  The rest cost nothing.
 */
void
srv_live(struct server *s)
{
	if (s->live)
		return;
	if (nlive == caplive) {
		caplive = caplive == 0 ? 8 : caplive * 2;
		live = xrealloc(live, (size_t)caplive * sizeof(*live));
	}
	live[nlive++] = s;
	s->live = true;
}

static void
unlive(int i)
{
	live[i]->live = false;
	live[i] = live[--nlive];
}

/* Is any server so far behind on its input that clients must wait? */
bool
srv_any_busy(long long now)
{
	int i;

	for (i = 0; i < nlive; i++)
		if (srv_busy(live[i], now))
			return true;
	return false;
}

void
srv_unwatch(struct server *s)
{
	int i, k;

	for (k = 0; k < SRV_FDS; k++)
		loop_io_del(&s->watch[k].io);
	loop_timer_del(&s->timer);
	for (i = 0; i < nlive; i++)
		if (live[i] == s)
			unlive(i);
}

static void
on_guard(void *arg, int fd, short revents)
{
	(void)arg;
	(void)fd;
	(void)revents;
	guard_writable();
}

static void
on_proc_timer(void *arg)
{
	(void)arg;
	proc_tick(loop_ms());
}

static void
on_bridge_timer(void *arg)
{
	(void)arg;
	bridge_check(loop_ms());
}

/* Instances no session uses go; lists no paced reply reads go. */
static void
servers_reclaim(void)
{
	bool pacing = sessions_pacing();

	srv_reclaim(pacing);
	if (!pacing)
		list_free_retired();
}

/*
 * After the clients were written: each live server's queue written, and
 * what the loop watches of it.  Backpressure: while every client is
 * behind, no server is read (a server that does not read its stdin is
 * not waited for: calls to it fail once its queue is full, call_route).
 */
static void
servers_io(void)
{
	bool held_full, behind = sessions_behind(&held_full);
	struct server *s;
	long long d;
	int i, fd;

	/* A stream's clocks sample who it keeps waiting, every turn. */
	if ((s = stream_server()) != NULL)
		on_server_timer(s);
	for (i = 0; i < nlive;) {
		s = live[i];
		if (watch_server(s, (!behind && (!held_full || stream_of(s))) ||
		    loop_stopping()))
			i++;
		else
			unlive(i);
	}
	if ((fd = guard_wants_out()) >= 0)
		loop_io_set(&guard_io, fd, POLLOUT, on_guard, NULL);
	else
		loop_io_del(&guard_io);
	loop_timer_set(&proc_timer, proc_deadline(), on_proc_timer, NULL);
	d = bridge_deadline();
	loop_timer_set(&bridge_timer, d > 0 ? d : -1, on_bridge_timer, NULL);
}

/* Servers still exiting are the guardian's (proc_hand_over). */
static bool
servers_finished(void)
{
	return proc_hand_over();
}

static void
servers_end(void)
{
	proc_kill_all();
	reap();
	guard_end();
	catalog_close();
}

static bool
servers_quiet(bool trim)
{
	return srv_peers(trim ? peer_trim : peer_bloated);
}

static const struct loop_step servers_step = {
	LOOP_RECLAIM, servers_reclaim, srv_stop_all, servers_finished, servers_end,
	servers_quiet
};

static const struct loop_step servers_io_step = {
	LOOP_SEND, servers_io, NULL, NULL, NULL, NULL
};

/*
 * The signals and the servers' steps: one before the clients are
 * written, one after.  False if the signals cannot be had.
 */
bool
srv_loop_init(void)
{
	int fd;

	if ((fd = proc_signals()) < 0)
		return false;
	loop_io_set(&signals_io, fd, POLLIN, on_signal, NULL);
	loop_step_add(&servers_step);
	loop_step_add(&servers_io_step);
	return true;
}
