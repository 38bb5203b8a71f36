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

/* Its descriptors and deadline as they are now; stdout only when read. */
static void
watch_server(struct server *s, bool read)
{
	struct srv_fds fds;
	struct srv_watch *w;
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
	}
	loop_timer_set(&s->timer, srv_deadline(s), on_server_timer, s);
}

void
srv_unwatch(struct server *s)
{
	int k;

	for (k = 0; k < SRV_FDS; k++)
		loop_io_del(&s->watch[k].io);
	loop_timer_del(&s->timer);
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
 * After the clients were written: every server's queue written, and
 * what the loop watches of them.  Backpressure: while every client is
 * behind, no server is read (a server that does not read its stdin is
 * not waited for: calls to it fail once its queue is full, call_route).
 */
static void
servers_io(void)
{
	bool held_full, behind = sessions_behind(&held_full);
	long long d;
	struct server *s;
	int fd;

	srv_write_all(loop_ms());
	/* A stream's clocks sample who it keeps waiting, every turn. */
	if ((s = stream_server()) != NULL)
		on_server_timer(s);
	SRV_EACH(s)
		watch_server(s, (!behind && (!held_full || stream_of(s))) ||
		    loop_stopping());
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
