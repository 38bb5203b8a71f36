/*
 * share_daemon.c: the shared workbench's side of the transport: its
 * listening socket, each connection's handshake (bounded in time, bytes
 * and descriptors), the sessions handed to the loop, linger and the
 * bounded log.  The wire is described in share_wire.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "util.h"
#include "jsonrpc.h"
#include "share.h"
#include "share_int.h"

#define SHARE_BACKLOG		64
#define SHARE_FDS_MAX		8	/* Room to receive, more than 3. */
#define SHARE_READ_MAX		65536	/* One read of a hello. */
#define SHARE_STARVE_MS		1000	/* Out of fds: stop accepting. */

/*
 * The daemon.
 */

enum conn_state {
	CONN_HELLO,		/* Reading the hello. */
	CONN_GO,		/* WELCOME sent: waiting for GO. */
	CONN_FLUSH		/* Writing an answer, then closing. */
};

/* A session as the daemon keeps it: h first, so one points to both. */
struct share_session {
	struct share_hello	 h;
	int			 fl[3];		/* Flags as handed over. */
	dev_t			 dev[3];	/* What each fd is. */
	ino_t			 ino[3];
	struct share_session		*next;
};

/* A connection in its handshake. */
struct conn {
	int		 fd;
	enum conn_state	 state;
	pid_t		 pid;
	struct buf	 in;
	struct buf	 out;
	int		 fds[3];	/* Received with the hello. */
	int		 nfds;
	long long	 deadline;
	struct share_session	*s;		/* Between WELCOME and GO. */
};

struct share_server {
	struct share_dir	 dir;		/* Its own copy. */
	struct share_id		 id;
	int			 fd;		/* Listening; -1 once closed. */
	dev_t			 sock_dev;	/* The socket file it bound. */
	ino_t			 sock_ino;
	share_status_fn		*status;
	void			*arg;
	int			 max;		/* Sessions at most. */
	int			 nsessions;	/* Begun and not ended. */
	long long		 idle_since;	/* Without sessions since. */
	long long		 starved;	/* Out of fds: accept after. */
	struct conn		 conn[SHARE_PENDING_MAX];
	int			 nconn;
	struct share_session		*ready;		/* Begun, not taken yet. */
	struct share_session		*live;		/* Taken. */
	struct ratelog		 rl;
};

/* A warning about a connection: any process of ours can repeat it. */
static void __attribute__((format(printf, 3, 4)))
warn(struct share_server *srv, long long now, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	if (WB_WARN > wb_log_reach ||
	    !ratelog_allow(&srv->rl, now, "shared workbench"))
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	wb_log_warn("shared workbench: %s", line);
}

/* The descriptor SHARE_OPT_READY names: a pipe (or socket); else -1. */
int
share_ready_fd(const char *arg)
{
	struct stat st;
	char *end;
	long fd;

	errno = 0;
	fd = strtol(arg, &end, 10);
	if (errno != 0 || end == arg || *end != '\0' || fd < 3 ||
	    fd > INT_MAX || fstat((int)fd, &st) < 0 ||
	    (!S_ISFIFO(st.st_mode) && !S_ISSOCK(st.st_mode))) {
		errno = EBADF;
		return -1;
	}
	/* Servers started later must not hold the front's wait open. */
	fcntl((int)fd, F_SETFD, FD_CLOEXEC);
	return (int)fd;
}

/*
 * Tell the front that started us that we listen (why NULL), or why we
 * will not: one line on the ready pipe, which is then closed.
 */
void
share_ready(int fd, const char *why)
{
	char line[SHARE_REASON_MAX];
	size_t i, n = 0;
	ssize_t w;

	if (fd < 0)
		return;
	for (i = 0; why != NULL && why[i] != '\0' && n < sizeof(line) - 1;
	    i++)
		line[n++] = (unsigned char)why[i] < ' ' ? ' ' : why[i];
	line[n++] = '\n';
	while ((w = write(fd, line, n)) < 0 && errno == EINTR)
		;
	close(fd);
}

/*
 * Listen for fronts on NAME.sock in d (which the caller keeps or not):
 * non-blocking, CLOEXEC, 0700.  A front replaced a stale socket under
 * the lock before it started us, so one there now is another's.  The
 * server, or NULL with why.
 */
struct share_server *
share_listen(const struct share_dir *d, const struct share_id *id, int max,
    share_status_fn *status, void *arg, struct buf *why)
{
	struct share_server *srv = xcalloc(1, sizeof(*srv));
	struct sockaddr_un sun;
	char name[SHARE_NAME_LEN + 8];
	struct stat st;
	mode_t mask;
	int len, r;

	srv->fd = -1;
	srv->id = *id;
	srv->max = max;
	srv->status = status;
	srv->arg = arg;
	srv->dir.path = xstrdup(d->path);
	memcpy(srv->dir.key, d->key, sizeof(d->key));
	snprintf(name, sizeof(name), "%s.sock", id->name);
	if ((srv->dir.fd = fcntl(d->fd, F_DUPFD_CLOEXEC, 3)) < 0 ||
	    (srv->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) < 0) {
		buf_printf(why, "cannot make a socket: %s", strerror(errno));
		goto fail;
	}
	if ((len = share_sockaddr(&srv->dir, name, &sun, why)) < 0)
		goto fail;
	mask = umask(077);
	r = bind(srv->fd, (struct sockaddr *)&sun, (socklen_t)len);
	umask(mask);
	if (r < 0 || listen(srv->fd, SHARE_BACKLOG) < 0 ||
	    fstatat(srv->dir.fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		buf_printf(why, "cannot listen on %s/%s: %s", d->path, name,
		    errno == EADDRINUSE ? "another socket is there" :
		    strerror(errno));
		goto fail;
	}
	srv->sock_dev = st.st_dev;
	srv->sock_ino = st.st_ino;
	srv->idle_since = now_ms();
	share_prune(&srv->dir, id->name);
	return srv;
fail:
	if (srv->fd >= 0)
		close(srv->fd);
	share_dir_close(&srv->dir);
	free(srv);
	return NULL;
}

int
share_server_pollfds(struct share_server *srv, struct pollfd *pfd, int room)
{
	struct conn *c;
	int n = 0, i;

	if (srv->fd >= 0 && srv->nconn < SHARE_PENDING_MAX &&
	    srv->starved == 0 && n < room) {
		pfd[n].fd = srv->fd;
		pfd[n].events = POLLIN;
		pfd[n++].revents = 0;
	}
	for (i = 0; i < srv->nconn && n < room; i++) {
		c = &srv->conn[i];
		pfd[n].fd = c->fd;
		pfd[n].events = c->state == CONN_FLUSH ? POLLOUT :
		    POLLIN | (c->out.len > 0 ? POLLOUT : 0);
		pfd[n++].revents = 0;
	}
	return n;
}

/* Forget connection k; why, when it is worth a warning. */
static void
conn_drop(struct share_server *srv, int k, long long now, const char *why)
{
	struct conn *c = &srv->conn[k];
	int i;

	if (why != NULL)
		warn(srv, now, "dropped the connection of pid %ld: %s",
		    (long)c->pid, why);
	for (i = 0; i < c->nfds; i++)
		close(c->fds[i]);
	if (c->s != NULL) {
		for (i = 0; i < 3; i++)
			close(c->s->h.fd[i]);
		share_hello_free(&c->s->h);
		free(c->s);
	}
	if (c->fd >= 0)
		close(c->fd);
	buf_free(&c->in);
	buf_free(&c->out);
	srv->conn[k] = srv->conn[--srv->nconn];
}

/* Write what c has queued; -1 when the peer is gone. */
static int
conn_flush(struct conn *c)
{
	return fd_write_some(c->fd, &c->out, true);
}

/* Refuse c with reason (as text the front prints), then close it. */
static void
conn_refuse(struct share_server *srv, struct conn *c, long long now,
    const char *reason)
{
	int i;

	warn(srv, now, "refused pid %ld: %s", (long)c->pid, reason);
	for (i = 0; i < c->nfds; i++)
		close(c->fds[i]);
	c->nfds = 0;
	c->out.len = 0;
	share_msg(&c->out, MSG_REFUSE, reason, strlen(reason));
	c->state = CONN_FLUSH;
}

/*
 * Take the descriptors of what recvmsg got: up to three with a hello's
 * first bytes (first); any others are closed.  False when some came
 * that should not have, or were cut off.
 */
static bool
take_fds(struct conn *c, struct msghdr *msg, bool first)
{
	struct cmsghdr *cm;
	bool ok = (msg->msg_flags & MSG_CTRUNC) == 0;
	size_t k, n;
	int fd;

	for (cm = CMSG_FIRSTHDR(msg); cm != NULL; cm = CMSG_NXTHDR(msg, cm)) {
		if (cm->cmsg_level != SOL_SOCKET ||
		    cm->cmsg_type != SCM_RIGHTS) {
			ok = false;
			continue;
		}
		n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (k = 0; k < n; k++) {
			memcpy(&fd, CMSG_DATA(cm) + k * sizeof(int),
			    sizeof(fd));
			if (first && c->nfds < 3)
				c->fds[c->nfds++] = fd;
			else {
				close(fd);
				ok = false;
			}
		}
	}
	return ok;
}

/*
 * Read at most want bytes into c->in, with any descriptors.  1 when
 * some came, 0 when none yet, -1 when c must go (why says why, or is
 * empty for a peer that left).
 */
static int
conn_read(struct conn *c, size_t want, struct buf *why)
{
	union {
		struct cmsghdr	 align;
		char		 buf[CMSG_SPACE(sizeof(int) * SHARE_FDS_MAX)];
	} cmsg;
	struct msghdr msg;
	struct iovec iov;
	bool first = c->state == CONN_HELLO && c->in.len == 0;
	ssize_t n;

	if (want > SHARE_READ_MAX)
		want = SHARE_READ_MAX;
	buf_reserve(&c->in, want);
	iov.iov_base = c->in.data + c->in.len;
	iov.iov_len = want;
	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cmsg.buf;
	msg.msg_controllen = sizeof(cmsg.buf);
	n = recvmsg(c->fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK ||
	    errno == EINTR))
		return 0;
	if (n < 0) {
		buf_printf(why, "cannot read: %s", strerror(errno));
		return -1;
	}
	if (!take_fds(c, &msg, first)) {
		buf_printf(why, "descriptors that do not belong");
		return -1;
	}
	if (n == 0)
		return -1;
	c->in.len += (size_t)n;
	return 1;
}

/* Are the three descriptors a session's stdin, stdout and stderr? */
static const char *
fds_unusable(const int *fd)
{
	static const char *const names[3] = { "standard input",
	    "standard output", "standard error" };
	static char why[64];
	int i, fl, mode;

	for (i = 0; i < 3; i++) {
		if ((fl = fcntl(fd[i], F_GETFL)) < 0)
			break;
		mode = fl & O_ACCMODE;
#ifdef O_PATH
		if ((fl & O_PATH) != 0)
			break;
#endif
		if (mode != O_RDWR && mode != (i == 0 ? O_RDONLY : O_WRONLY))
			break;
	}
	if (i == 3)
		return NULL;
	snprintf(why, sizeof(why), "its %s cannot be %s", names[i],
	    i == 0 ? "read" : "written");
	return why;
}

/* Sessions begun, and coming (WELCOME sent). */
static int
sessions_counted(const struct share_server *srv)
{
	int i, n = srv->nsessions;

	for (i = 0; i < srv->nconn; i++)
		n += srv->conn[i].state == CONN_GO;
	return n;
}

static void
status_answer(struct share_server *srv, struct conn *c, long long now)
{
	struct buf json = { 0 };

	if (srv->status != NULL)
		srv->status(&json, srv->arg);
	if (json.len > SHARE_STATUS_MAX)
		conn_refuse(srv, c, now, "its status is too large");
	else {
		share_msg(&c->out, MSG_STATUS, json.data, json.len);
		c->state = CONN_FLUSH;
	}
	buf_free(&json);
}

/* The hello in c->in is whole: answer it.  -1: drop c (why). */
static int
hello_done(struct share_server *srv, struct conn *c, long long now,
    struct buf *why)
{
	struct share_session *s = xcalloc(1, sizeof(*s));
	const char *bad;
	int i;

	if (share_hello_decode(&s->h, c->in.data + SHARE_HDR,
	    c->in.len - SHARE_HDR, why) < 0) {
		free(s);
		return -1;
	}
	/*
	 * A status is answered whatever the identity (the peer is this
	 * user): --status lists every shared workbench, also those of an
	 * earlier configuration text.  A session joins its own only.
	 */
	if (s->h.kind == SHARE_STATUS && c->nfds > 0)
		buf_printf(why, "a status request with descriptors");
	else if (s->h.kind == SHARE_STATUS)
		status_answer(srv, c, now);
	else if (memcmp(s->h.id, srv->id.id, SHARE_ID_LEN) != 0)
		conn_refuse(srv, c, now, "it serves another build or "
		    "configuration");
	else if (c->nfds != 3)
		buf_printf(why, "a session with %d descriptors, not 3",
		    c->nfds);
	else if ((bad = fds_unusable(c->fds)) != NULL)
		conn_refuse(srv, c, now, bad);
	else if (sessions_counted(srv) >= srv->max)
		conn_refuse(srv, c, now, "it serves as many sessions as it "
		    "may");
	else {
		for (i = 0; i < 3; i++)
			s->h.fd[i] = c->fds[i];
		c->nfds = 0;
		c->s = s;
		c->state = CONN_GO;
		c->in.len = 0;
		share_msg(&c->out, MSG_WELCOME, NULL, 0);
		return 0;
	}
	share_hello_free(&s->h);
	free(s);
	return why->len > 0 ? -1 : 0;
}

/* Read the hello; -1: drop c (why, or empty for a peer that left). */
static int
hello_read(struct share_server *srv, struct conn *c, long long now,
    struct buf *why)
{
	size_t need = SHARE_HDR, body;
	unsigned version;
	char text[96];
	int r;

	/* The length is the peer's, up to 2^32 - 1: added as a size_t. */
	if (c->in.len >= SHARE_HDR)
		need += (size_t)share_get32((unsigned char *)c->in.data);
	if ((r = conn_read(c, need - c->in.len, why)) <= 0)
		return r;
	if (c->in.len == SHARE_HDR) {
		version = share_get16((unsigned char *)c->in.data + 6);
		body = share_get32((unsigned char *)c->in.data);
		if (version != SHARE_PROTO) {
			/* Read by the front and in our log: whose is whose. */
			snprintf(text, sizeof(text), "a hello of protocol "
			    "version %u; this shared workbench speaks version "
			    "%u", version, (unsigned)SHARE_PROTO);
			conn_refuse(srv, c, now, text);
			return 0;
		}
		if (share_get16((unsigned char *)c->in.data + 4) != MSG_HELLO) {
			buf_printf(why, "a message before its hello");
			return -1;
		}
		if (body > SHARE_HELLO_MAX) {
			buf_printf(why, "a hello of %zu bytes (at most %d)",
			    body, SHARE_HELLO_MAX);
			return -1;
		}
		need = SHARE_HDR + body;
	}
	if (c->in.len < need)
		return 0;
	return hello_done(srv, c, now, why);
}

/*
 * The session of c begins: its descriptors are made non-blocking (the
 * flags they had are put back when it ends) and it waits to be taken.
 */
static void
session_begin(struct share_server *srv, int k, long long now)
{
	struct conn *c = &srv->conn[k];
	struct share_session *s = c->s, **p;
	struct stat st;
	int i, j;

	for (i = 0; i < 3; i++) {
		if (fstat(s->h.fd[i], &st) == 0) {
			s->dev[i] = st.st_dev;
			s->ino[i] = st.st_ino;
		}
		s->fl[i] = fcntl(s->h.fd[i], F_GETFL);
		/* fds 0 and 1 may be one description: the flags before. */
		for (j = 0; j < i; j++)
			if (s->dev[j] == s->dev[i] && s->ino[j] == s->ino[i])
				s->fl[i] = s->fl[j];
		if (s->fl[i] >= 0)
			fcntl(s->h.fd[i], F_SETFL, s->fl[i] | O_NONBLOCK);
	}
	s->h.sock = c->fd;
	s->h.pid = c->pid;
	s->h.since = now;
	for (p = &srv->ready; *p != NULL; p = &(*p)->next)
		;
	*p = s;
	srv->nsessions++;
	c->s = NULL;
	c->fd = -1;
	conn_drop(srv, k, now, NULL);
}

/* Wait for GO; -1: drop c (why, or empty for a front that gave up). */
static int
go_read(struct share_server *srv, int k, long long now, struct buf *why)
{
	struct conn *c = &srv->conn[k];
	const unsigned char *h;
	int r;

	if ((r = conn_read(c, SHARE_HDR - c->in.len, why)) <= 0)
		return r;
	if (c->in.len < SHARE_HDR)
		return 0;
	h = (unsigned char *)c->in.data;
	if (share_get32(h) != 0 || share_get16(h + 4) != MSG_GO ||
	    share_get16(h + 6) != SHARE_PROTO) {
		buf_printf(why, "a message where GO was due");
		return -1;
	}
	session_begin(srv, k, now);
	return 0;
}

static void
conn_io(struct share_server *srv, int k, short revents, long long now)
{
	struct conn *c = &srv->conn[k];
	struct buf why = { 0 };
	enum conn_state was = c->state;
	int r = 0;

	if (conn_flush(c) < 0)
		r = -1;
	else if (c->state == CONN_FLUSH && c->out.len == 0)
		r = -1;		/* Answered. */
	else if (c->state == CONN_FLUSH)
		r = (revents & (POLLHUP | POLLERR)) != 0 ? -1 : 0;
	else if (c->state == CONN_HELLO)
		r = hello_read(srv, c, now, &why);
	else if ((r = go_read(srv, k, now, &why)) == 0)
		return;		/* c may be gone: it began. */
	if (r == 0 && c->state != was && conn_flush(c) < 0)
		r = -1;
	if (r == 0 && c->state == CONN_FLUSH && c->out.len == 0)
		r = -1;
	if (r < 0)
		conn_drop(srv, k, now, why.len > 0 ? buf_cstr(&why) : NULL);
	buf_free(&why);
}

static void
accept_all(struct share_server *srv, long long now)
{
	struct buf why = { 0 };
	struct conn *c;
	pid_t pid;
	int fd;

	while (srv->nconn < SHARE_PENDING_MAX) {
		fd = accept4(srv->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0 && (errno == EINTR || errno == ECONNABORTED))
			continue;
		if (fd < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
			/* Out of descriptors: a pause, not a hot loop. */
			warn(srv, now, "cannot accept: %s", strerror(errno));
			srv->starved = now + SHARE_STARVE_MS;
		}
		if (fd < 0)
			break;
		why.len = 0;
		if (!share_peer_ours(fd, &pid, &why)) {
			warn(srv, now, "refused a connection: %s",
			    buf_cstr(&why));
			close(fd);
			continue;
		}
		c = &srv->conn[srv->nconn++];
		memset(c, 0, sizeof(*c));
		c->fd = fd;
		c->pid = pid;
		c->state = CONN_HELLO;
		c->deadline = now + SHARE_HANDSHAKE_MS;
	}
	buf_free(&why);
}

/*
 * After poll(): pfd[0, n) as share_server_pollfds gave them (within a
 * larger array or not), with their revents.
 */
void
share_server_events(struct share_server *srv, const struct pollfd *pfd,
    int n, long long now)
{
	bool listener = false;
	int i, k;

	for (i = 0; i < n; i++) {
		if (pfd[i].revents == 0 || pfd[i].fd < 0)
			continue;
		if (pfd[i].fd == srv->fd) {
			listener = true;
			continue;
		}
		for (k = 0; k < srv->nconn; k++)
			if (srv->conn[k].fd == pfd[i].fd) {
				conn_io(srv, k, pfd[i].revents, now);
				break;
			}
	}
	for (k = srv->nconn - 1; k >= 0; k--)
		if (srv->conn[k].deadline <= now)
			conn_drop(srv, k, now, "its handshake took too long");
	if (srv->starved != 0 && now >= srv->starved)
		srv->starved = 0;
	if (listener && srv->fd >= 0 && srv->starved == 0)
		accept_all(srv, now);
	ratelog_flush(&srv->rl, now, "shared workbench", false);
}

/* When share_server_events is due without any event; 0: never. */
long long
share_server_deadline(const struct share_server *srv)
{
	long long d = earliest(srv->starved, ratelog_deadline(&srv->rl));
	int i;

	for (i = 0; i < srv->nconn; i++)
		d = earliest(d, srv->conn[i].deadline);
	return d;
}

/* A session that began, for the caller to serve; NULL when none. */
struct share_hello *
share_server_take(struct share_server *srv)
{
	struct share_session *s = srv->ready;

	if (s == NULL)
		return NULL;
	srv->ready = s->next;
	s->next = srv->live;
	srv->live = s;
	return &s->h;
}

/*
 * Is the front of h gone (its lifeline readable: end of file, an error,
 * or bytes, which a front never sends once its session began)?
 */
bool
share_session_gone(const struct share_hello *h)
{
	ssize_t n;
	char c;

	n = recv(h->sock, &c, 1, MSG_DONTWAIT);
	return n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK &&
	    errno != EINTR);
}

/*
 * Park the session of h: its front is to watch the client's input and,
 * once it is readable (or ended), write wake[0, SHARE_WAKE_LEN) to fd,
 * once.  1: asked; 0: the lifeline takes nothing now; -1: the front
 * is gone, or its lifeline holds a torn message and cannot be used.
 */
int
share_session_park(const struct share_hello *h, int fd,
    const unsigned char *wake)
{
	union {
		struct cmsghdr	 align;
		char		 buf[CMSG_SPACE(sizeof(int))];
	} cmsg;
	struct buf b = { 0 };
	struct msghdr msg;
	struct iovec iov;
	ssize_t n;

	share_msg(&b, MSG_PARK, wake, SHARE_WAKE_LEN);
	iov.iov_base = b.data;
	iov.iov_len = b.len;
	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg_put_fds(&msg, cmsg.buf, &fd, 1);
	do
		n = sendmsg(h->sock, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	buf_free(&b);
	/* Short of room or of descriptors in flight: another time. */
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK ||
	    errno == ENOBUFS || errno == ENOMEM || errno == ETOOMANYREFS))
		return 0;
	return n == (ssize_t)iov.iov_len ? 1 : -1;
}

/*
 * Put back the flags of s's descriptors, unless another session holds
 * the same file (two fronts started with one stderr): then that one
 * puts them back when it ends, with the flags s found.
 */
static void
flags_restore(struct share_server *srv, struct share_session *s)
{
	struct share_session *lists[2] = { srv->ready, srv->live }, *o;
	int i, j, l;

	for (i = 0; i < 3; i++) {
		for (l = 0; l < 2; l++)
			for (o = lists[l]; o != NULL; o = o->next)
				for (j = 0; o != s && j < 3; j++)
					if (o->dev[j] == s->dev[i] &&
					    o->ino[j] == s->ino[i]) {
						o->fl[j] = s->fl[i];
						goto next;
					}
		if (s->fl[i] >= 0)
			fcntl(s->h.fd[i], F_SETFL, s->fl[i]);
next:		;
	}
}

/*
 * End the session of h: its front is told status (the status it exits
 * with; it has gone already when its lifeline closed), its descriptors
 * closed.  h is freed.
 */
void
share_session_end(struct share_server *srv, struct share_hello *h,
    int status)
{
	struct share_session *s = (struct share_session *)h, **p;
	struct buf b = { 0 };
	unsigned char st = (unsigned char)(status & 0xff);
	int i;

	share_msg(&b, MSG_END, &st, 1);
	if (send(h->sock, b.data, b.len, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
		/* The front is gone, or will see end of file instead. */
	}
	buf_free(&b);
	flags_restore(srv, s);
	for (p = &srv->live; *p != NULL && *p != s; p = &(*p)->next)
		;
	if (*p == NULL)
		for (p = &srv->ready; *p != NULL && *p != s; p = &(*p)->next)
			;
	if (*p != NULL)
		*p = s->next;
	for (i = 0; i < 3; i++)
		close(h->fd[i]);
	close(h->sock);
	if (--srv->nsessions == 0)
		srv->idle_since = now_ms();
	share_hello_free(h);
	free(s);
}

/*
 * When to exit: linger_ms after the last session ended (or after we
 * began, when none came), while none is in its handshake; 0 while any
 * session is there.  The caller exits at that time with
 * share_server_close.
 */
long long
share_server_linger(const struct share_server *srv, long long linger_ms)
{
	if (srv->nsessions > 0 || srv->nconn > 0)
		return 0;
	return srv->idle_since + (linger_ms > 0 ? linger_ms : 0);
}

/*
 * Keep the log (our stderr, when it is NAME.log) bounded: past
 * SHARE_LOG_MAX it becomes NAME.log.old and a new one begins.  Cheap
 * (one fstat): the loop calls it once a turn.
 */
void
share_server_log(struct share_server *srv)
{
	char from[SHARE_NAME_LEN + 16], to[SHARE_NAME_LEN + 16];
	struct stat err, named;
	struct buf why = { 0 };
	int fd;

	if (fstat(STDERR_FILENO, &err) < 0 || !S_ISREG(err.st_mode) ||
	    err.st_size <= SHARE_LOG_MAX)
		return;
	snprintf(from, sizeof(from), "%s.log", srv->id.name);
	snprintf(to, sizeof(to), "%s.log.old", srv->id.name);
	if (fstatat(srv->dir.fd, from, &named, AT_SYMLINK_NOFOLLOW) < 0 ||
	    named.st_dev != err.st_dev || named.st_ino != err.st_ino)
		return;
	wb_log_flush();
	if (renameat(srv->dir.fd, from, srv->dir.fd, to) < 0)
		return;
	if ((fd = share_log_open(&srv->dir, srv->id.name, &why)) >= 0) {
		dup2(fd, STDERR_FILENO);
		close(fd);
	}
	buf_free(&why);
}

/*
 * Stop: no more connections, and srv freed.  The socket file is removed
 * when the lock is free (no front is connecting or starting a daemon
 * then, so the file is surely ours); else it stays, stale, and the next
 * front replaces it under the lock.  Sessions still there (not yet the
 * caller's) end with SHARE_EXIT_LOST: the caller ends its own first.
 */
void
share_server_close(struct share_server *srv)
{
	char name[SHARE_NAME_LEN + 8];
	struct buf why = { 0 };
	struct stat st;
	int lock;

	if (srv->fd >= 0) {
		snprintf(name, sizeof(name), "%s.sock", srv->id.name);
		lock = share_lock_open(&srv->dir, srv->id.name, &why);
		if (lock >= 0 && flock(lock, LOCK_EX | LOCK_NB) == 0 &&
		    share_lock_current(&srv->dir, srv->id.name, lock) &&
		    fstatat(srv->dir.fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    st.st_dev == srv->sock_dev && st.st_ino == srv->sock_ino) {
			unlinkat(srv->dir.fd, name, 0);
			/* Held: a front waiting on it opens it anew. */
			snprintf(name, sizeof(name), "%s.lock", srv->id.name);
			unlinkat(srv->dir.fd, name, 0);
		}
		close(srv->fd);
		srv->fd = -1;
		if (lock >= 0)
			close(lock);
	}
	buf_free(&why);
	while (srv->nconn > 0)
		conn_drop(srv, srv->nconn - 1, 0, NULL);
	while (srv->live != NULL)
		share_session_end(srv, &srv->live->h, SHARE_EXIT_LOST);
	while (srv->ready != NULL)
		share_session_end(srv, &srv->ready->h, SHARE_EXIT_LOST);
	share_dir_close(&srv->dir);
	free(srv);
}
