/*
 * clients.c: the client sessions' side of the loop.  A session over
 * pipes (stdio, a shared workbench's front) has its input watched here;
 * the lines it sends while the workbench is busy wait in its buffer, its
 * input unread, until the busy part has drained (the held list).  Before
 * each poll, the sessions with bytes to write are flushed and the held
 * ones looked at: what happened since the last turn, never every session.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "workbench.h"

static struct session **held;		/* Their requests wait: not read. */
static int nheld, capheld;

static bool
is_held(const struct session *se)
{
	int i;

	for (i = 0; i < nheld; i++)
		if (held[i] == se)
			return true;
	return false;
}

/* Its requests wait (the workbench is busy): its input is not read. */
void
clients_hold(struct session *se)
{
	session_want_input(se, false);
	if (is_held(se))
		return;
	if (nheld == capheld) {
		capheld = capheld == 0 ? 8 : capheld * 2;
		held = xrealloc(held, (size_t)capheld * sizeof(*held));
	}
	held[nheld++] = se;
}

/* It ends: it waits no more. */
void
clients_forget(const struct session *se)
{
	int i;

	for (i = 0; i < nheld; i++)
		if (held[i] == se) {
			held[i] = held[--nheld];
			return;
		}
}

/*
 * Its input: its lines, or its leaving.  An input that fails for good (a
 * directory as stdin: EISDIR) is readable again at once: left watched it
 * would spin the loop, so the session ends, its answers still written.
 */
static void
client_input(void *arg, int fd, short revents)
{
	struct session *se = arg;
	ssize_t n;

	(void)fd;
	host_about(NULL, se);
	/* Held, it was watched for its hang-up alone: the client left. */
	n = is_held(se) ? 0 : dispatch_read(se);
	session_heard(se);
	if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
		wb_log_error("the client's input cannot be read (%s); the "
		    "session ends", strerror(errno));
		session_stop_input(se);
		session_left(se, false);
		host_about(NULL, NULL);
		return;
	}
	/* At its end, or hung up with nothing left to read. */
	if (n == 0 || (revents & (POLLHUP | POLLERR) && !(revents & POLLIN))) {
		session_stop_input(se);
		session_left(se, false);
	}
	host_about(NULL, NULL);
}

void
clients_watch(struct session *se)
{
	session_watch_input(se, client_input, se);
}

/*
 * A session so far behind, while others are not, that it must end: more
 * than HIGH_WATER and a whole message wait for its client.  A session
 * alone holds the servers back while its client is behind (backpressure,
 * and nothing is lost); with others there, one behind does not: its
 * queue grows instead, to this bound.
 */
static bool
overrun(struct session *se)
{
	bool held_much;

	if (session_queued(se) <= HIGH_WATER + wb.cfg.max_message)
		return false;
	if (sessions_behind(&held_much))
		return false;
	wb_log_warn("a client is %zu MiB behind while others are served: its "
	    "session ends", session_queued(se) >> 20);
	return true;
}

/*
 * After every queue was written: the held sessions whose requests may go
 * on now take them up again, in another turn at once (what they make is
 * written then).
 */
static void
resume_held(void)
{
	struct session *se;
	int i, n = nheld;

	if (loop_stopping() || nheld == 0)
		return;
	for (i = 0; i < n && i < nheld;) {
		se = held[i];
		if (dispatch_busy(se)) {
			i++;
			continue;
		}
		held[i] = held[--nheld];
		n--;
		dispatch_resume(se);
		if (!is_held(se))
			session_want_input(se, true);
		loop_again();
	}
}

static void
clients_flush(void)
{
	sessions_flush(overrun);
}

/* The workbench stops: no client is read any more. */
static void
clients_shutdown(void)
{
	struct session *se;

	SESSION_EACH(se)
		session_stop_input(se);
}

static bool
clients_written(void)
{
	return sessions_written();
}

/* Quiet: every session's buffers that grew large are given back. */
static bool
clients_quiet(bool trim)
{
	struct session *se;
	bool any = false;

	SESSION_EACH(se)
		any |= trim ? peer_trim(session_peer(se)) :
		    peer_bloated(session_peer(se));
	return any;
}

static const struct loop_step clients_step = {
	LOOP_WRITE, clients_flush, clients_shutdown, clients_written, NULL,
	clients_quiet
};

static const struct loop_step resume_step = {
	LOOP_RESUME, resume_held, NULL, NULL, NULL, NULL
};

void
clients_init(void)
{
	loop_step_add(&clients_step);
	loop_step_add(&resume_step);
}
