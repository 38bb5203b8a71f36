/*
 * server_io.c: a server's descriptors and timers: the messages of the
 * workbench's own written to it (listens, requests whose answer is
 * dropped; handshake.c writes initialize and server/discover), its output
 * read (its lines go to server.c's srv_line), its stdin written as it
 * takes it, its exit and last words, and the deadlines of its start,
 * calls and idleness; and what the loop asks of every server (srv_watch,
 * srv_event).
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server_int.h"
#include "mcp.h"

#define EOF_GRACE_MS	250

/*
 * A server process ended: its last words are read, at most what its pipes
 * hold (64 KiB by default, 1 MiB at most: pipe-max-size); more comes from
 * a process it left behind, which must not hold the loop up.
 */
#define LAST_READS	64

static void	srv_write_in(struct server *, long long);

/*
 * Between lines (peer_ops.pump), write the queues that hold PUMP_BYTES or
 * more: one write per destination per few dozen messages, so that eight
 * servers do not each wake for every other call.  A server's queue goes
 * the usual way (srv_write_in); the client's errors are left to the
 * loop, between reads, since ending the session could stop the very
 * server whose lines are being handled.
 */
void
srv_pump(void)
{
	struct server *s;

	session_pump();
	SRV_EACH(s)
		if (peer_queued(&s->proc.io) >= PUMP_BYTES)
			srv_write_in(s, loop_ms());
}

/*
 * Messages to a server.
 */
/*
 * A request's start, {"jsonrpc":"2.0","id":N,"method":M,"params":, in the
 * server's queue; the caller adds the params and "}\n".
 */
struct buf *
srv_send_head(struct server *s, struct request *r, const char *method)
{
	struct buf *b = &s->proc.io.out;

	r->sent = true;
	s->active_at = loop_ms();
	rpc_put_request(b, r->id, method);
	buf_puts(b, ",\"params\":");
	return b;
}

void
srv_send(struct server *s, struct request *r, const char *method,
    const char *params, size_t plen)
{
	struct buf *b = srv_send_head(s, r, method);

	buf_put(b, params, plen);
	buf_puts(b, "}\n");
}

/*
 * A request of the workbench's own, its params' members given: the era's
 * _meta first for a modern server.  Its id; 0 when the server's stdin is
 * closed (it was stopped: it forgot everything asked of it).
 */
static long long
srv_put_request(struct server *s, long long id, const char *method,
    const char *members, size_t n)
{
	struct buf *b = &s->proc.io.out;

	if (!srv_writable(s))
		return 0;
	rpc_put_request(b, id, method);
	buf_puts(b, ",\"params\":{");
	srv_put_meta(s, b);
	if (srv_modern(s) && n > 0)
		buf_putc(b, ',');
	buf_put(b, members, n);
	buf_puts(b, "}}\n");
	return id;
}

/* A request whose answer is dropped (REQ_QUIET). */
void
srv_request(struct server *s, const char *method, const char *members,
    size_t n)
{
	struct request *r;

	if (!srv_writable(s))
		return;
	r = req_add(s, REQ_QUIET);
	r->sent = true;
	s->active_at = loop_ms();
	(void)srv_put_request(s, r->id, method, members, n);
}

/*
 * A request answered only at its end (subscriptions/listen), so kept in
 * no table: its id, for srv_cancel, or 0 when nothing was sent.
 */
long long
srv_request_open(struct server *s, const char *method, const char *members,
    size_t n)
{
	return srv_put_request(s, s->next_id + 1, method, members, n) > 0 ?
	    ++s->next_id : 0;
}

/* The server drops a request it was sent (notifications/cancelled). */
void
srv_cancel(struct server *s, long long id, const char *reason)
{
	if (srv_writable(s))
		call_tell_cancelled(s, id, reason);
}

void
srv_notify(struct server *s, const char *method)
{
	rpc_put_notification(&s->proc.io.out, method);
	buf_puts(&s->proc.io.out, "}\n");
}

/* Modern servers tell of list changes only to a listener. */
void
srv_send_listen(struct server *s)
{
	struct buf *b = &s->proc.io.out;

	/* Never answered but at its end. */
	rpc_put_request(b, ++s->next_id, MCP_SUBSCRIPTIONS_LISTEN);
	buf_puts(b, ",\"params\":{");
	srv_put_meta(s, b);
	buf_puts(b, ",\"notifications\":{\"toolsListChanged\":true");
	if (s->caps & CAP_PROMPTS)
		buf_puts(b, ",\"promptsListChanged\":true");
	if (s->caps & CAP_RESOURCES)
		buf_puts(b, ",\"resourcesListChanged\":true");
	buf_puts(b, "}}}\n");
}

/* Does it take messages: a process's stdin is open, or a remote? */
bool
srv_writable(const struct server *s)
{
	return s->remote != NULL || s->proc.io.wfd >= 0;
}

/*
 * Its process, descriptors and timers.
 */
struct server *
srv_by_pid(pid_t pid)
{
	struct server *s;

	SRV_EACH(s)
		if (s->proc.pid == pid)
			return s;
	return NULL;
}

/* A server process ended: take its last words, then fail what waits. */
void
srv_exited(struct server *s, int status)
{
	struct buf why = { 0 };
	int n;

	s->proc.reaped = true;
	/* An exec failure explains the exit better than status 127. */
	if (s->proc.execfd >= 0 && proc_exec_status(&s->proc, s->cfg, &why) <
	    0) {
		srv_fail(s, buf_cstr(&why));
		buf_free(&why);
		return;
	}
	for (n = 0; n < LAST_READS && s->proc.io.rfd >= 0 && s->proc.pid > 0 &&
	    peer_read(&s->proc.io, wb.cfg.max_message, &srv_ops, s) > 0; n++)
		;
	for (n = 0; n < LAST_READS && s->proc.pid > 0 &&
	    proc_drain_stderr(&s->proc, s->label) > 0; n++)
		;
	if (s->proc.pid > 0) {
		proc_status(status, &why);
		wb_log_debug("%s: process %ld ended: %s", s->label,
		    (long)s->proc.pid, buf_cstr(&why));
		if (!srv_probe_ended(s, buf_cstr(&why)))
			srv_fail(s, buf_cstr(&why));
		buf_free(&why);
	}
}

/*
 * When an idle server is to be stopped, or 0: idleTimeoutMs after its
 * last traffic, while nothing is in flight on it either way.
 */
static long long
idle_deadline(const struct server *s)
{
	if (s->cfg->idle_ms <= 0 || s->state != SRV_READY || s->nreq > 0 ||
	    stream_of(s) || relay_pending(s))
		return 0;
	return s->active_at + s->cfg->idle_ms;
}

/*
 * When a server of a shared workbench that no session uses is to be
 * stopped, or 0: shareLingerMs after its last session left (a session
 * in another project opened a toolbox and went), as the shared
 * workbench itself lingers after its last session.
 */
static long long
linger_deadline(const struct server *s)
{
	if (!wb.shared || s->unused_at == 0 || (s->state != SRV_STARTING &&
	    s->state != SRV_READY && s->state != SRV_RELISTING))
		return 0;
	return s->unused_at + wb.cfg.share_linger_ms;
}

long long
srv_deadline(const struct server *s)
{
	long long t = s->eof_at;

	if (s->state == SRV_STARTING)
		t = earliest(earliest(t, s->deadline), handshake_deadline(s));
	/* Wake when it turns stuck; once it is, that time stays past. */
	if (srv_busy(s, loop_ms()))
		t = earliest(t, s->drained_at + STUCK_MS);
	t = earliest(t, call_deadline(s));
	t = earliest(t, stream_deadline(s));
	t = earliest(t, idle_deadline(s));
	t = earliest(t, linger_deadline(s));
	t = earliest(t, ratelog_deadline(&s->warned));
	t = earliest(t, ratelog_deadline(&s->proc.errlog));
	return t > 0 ? t : -1;
}

/*
 * The timers of one server: a closed stdout, idleness, its stream, its
 * calls, its start.
 */
void
srv_check_timers(struct server *s, long long now)
{
	struct buf why = { 0 };
	long long idle = idle_deadline(s), linger = linger_deadline(s);

	ratelog_flush(&s->warned, now, s->label, false);
	ratelog_flush(&s->proc.errlog, now, s->label, false);
	if (s->eof_at > 0 && now >= s->eof_at) {
		if (!srv_probe_ended(s, "closed its standard output"))
			srv_fail(s, "closed its standard output");
		return;
	}
	if (idle > 0 && now >= idle) {
		wb_log_info("%s: stopped after %d ms without traffic "
		    "(idleTimeoutMs)", s->label, s->cfg->idle_ms);
		srv_stop(s);
		return;
	}
	if (linger > 0 && now >= linger) {
		wb_log_info("%s: stopped: no session has used it for %d ms "
		    "(shareLingerMs)", s->label, wb.cfg.share_linger_ms);
		srv_stop(s);
		return;
	}
	stream_check(s, now);
	call_check_timeouts(s, now);
	handshake_check(s, now);
	if (s->state != SRV_STARTING || now < s->deadline)
		return;
	buf_printf(&why, "timed out after %d ms waiting for it to initialize "
	    "and list its tools (initTimeoutMs)", s->cfg->init_timeout_ms);
	srv_fail(s, buf_cstr(&why));
	buf_free(&why);
}

/* Its stdout is readable: handle what it said. */
static void
srv_read_out(struct server *s)
{
	if (peer_read(&s->proc.io, wb.cfg.max_message, &srv_ops, s) != 0 ||
	    s->proc.pid <= 0)
		return;
	/*
	 * End of file.  Usually the process is exiting: give its exit
	 * status a moment to arrive, since that is the better report.
	 */
	close(s->proc.io.rfd);
	s->proc.io.rfd = -1;
	s->eof_at = now_ms() + EOF_GRACE_MS;
	stream_output_ended(s);
}

/* The child's exec report: nothing (it runs) or why it could not. */
static void
srv_read_exec(struct server *s)
{
	struct buf why = { 0 };

	if (proc_exec_status(&s->proc, s->cfg, &why) < 0)
		srv_fail(s, buf_cstr(&why));
	buf_free(&why);
}

static void
srv_read_err(struct server *s)
{
	if (proc_drain_stderr(&s->proc, s->label) == 0) {
		close(s->proc.errfd);
		s->proc.errfd = -1;
	}
}

/* Its stdin broke: what is queued for it can never go. */
static void
srv_write_error(struct server *s)
{
	close(s->proc.io.wfd);
	s->proc.io.wfd = -1;
	peer_drop_output(&s->proc.io);
}

/*
 * Write what is queued for its stdin; a broken pipe drops the queue.  An
 * empty queue, or any byte taken, counts as the server keeping up.
 */
static void
srv_write_in(struct server *s, long long now)
{
	size_t before = peer_queued(&s->proc.io);

	if (s->remote != NULL)
		srv_remote_send(s);
	else if (s->proc.io.wfd >= 0 && peer_flush(&s->proc.io) < 0)
		srv_write_error(s);
	if (peer_queued(&s->proc.io) == 0 || peer_queued(&s->proc.io) < before)
		s->drained_at = now;
}

/*
 * A server with more than HIGH_WATER waiting for its stdin is busy while
 * it still takes bytes (we stop reading the client meanwhile), and stuck
 * once it has taken none for STUCK_MS (its calls fail; nobody waits).
 */
bool
srv_stuck(const struct server *s, long long now)
{
	return peer_queued(&s->proc.io) > HIGH_WATER &&
	    now - s->drained_at >= STUCK_MS;
}

bool
srv_busy(const struct server *s, long long now)
{
	return peer_queued(&s->proc.io) > HIGH_WATER && !srv_stuck(s, now);
}

/*
 * The loop's side.
 */
/*
 * What waits for its stdin written, then the descriptors to poll: its
 * stdout while the loop reads servers (read), its stdin while bytes
 * still wait, its stderr and exec report.  While the loop does not read
 * a server (its client is behind), the server may be blocked writing
 * and so take none of its input: that is our doing, not the server's,
 * so its clock towards STUCK_MS starts again.
 */
void
srv_watch(struct server *s, bool read, struct srv_fds *w)
{
	srv_write_in(s, loop_ms());
	if (!read)
		s->drained_at = loop_ms();
	w->pid = s->proc.pid;
	w->fd[SRV_FD_OUT] = read ? s->proc.io.rfd : -1;
	w->events[SRV_FD_OUT] = POLLIN;
	w->fd[SRV_FD_IN] = peer_queued(&s->proc.io) > 0 ? s->proc.io.wfd : -1;
	w->events[SRV_FD_IN] = POLLOUT;
	w->fd[SRV_FD_ERR] = s->proc.errfd;
	w->events[SRV_FD_ERR] = POLLIN;
	w->fd[SRV_FD_EXEC] = s->proc.execfd;
	w->events[SRV_FD_EXEC] = POLLIN;
}

/* The descriptor of this kind now, or -1. */
static int
srv_fd(const struct server *s, enum srv_fd which)
{
	switch (which) {
	case SRV_FD_OUT:
		return s->proc.io.rfd;
	case SRV_FD_IN:
		return s->proc.io.wfd;
	case SRV_FD_ERR:
		return s->proc.errfd;
	default:
		return s->proc.execfd;
	}
}

/*
 * An event on a descriptor polled for process pid.  The server may have
 * been stopped meanwhile, and even started again on the same descriptor
 * numbers: the old process's events are not the new one's.
 */
void
srv_event(struct server *s, enum srv_fd which, pid_t pid, int fd,
    short revents)
{
	if (s->proc.pid != pid || srv_fd(s, which) != fd)
		return;
	if (which == SRV_FD_ERR)
		srv_read_err(s);
	else if (which == SRV_FD_EXEC)
		srv_read_exec(s);
	else if (which == SRV_FD_OUT)
		srv_read_out(s);
	else if (revents & POLLERR)
		srv_write_error(s);
	else
		srv_write_in(s, now_ms());
}

/* Apply fn to every server's peer; true if any said so. */
bool
srv_peers(bool (*fn)(struct peer *))
{
	struct server *s;
	bool any = false;

	SRV_EACH(s)
		any |= fn(&s->proc.io);
	return any;
}
