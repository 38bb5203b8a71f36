/*
 * share.c: the transport of a shared workbench: the directory and its
 * key, identities and names, and what both sides use (the lock, the log,
 * the peer's credentials).  The wire is in share_wire.c, the daemon's
 * listening socket and connections in share_daemon.c, the front's side
 * (starting the daemon, the handover and the wait) in front.c.
 *
 * Files, in shareDir (configured, else $XDG_RUNTIME_DIR/mcp-workbench,
 * else /tmp/mcp-workbench-EUID), a directory of the effective user that
 * no one else may enter (0700), checked on an O_NOFOLLOW descriptor and
 * used through that descriptor only:
 *
 *	key		16 random bytes, 0600, made once under a fresh name
 *			and linked into place: the key of every digest.
 *	NAME.lock	flock(2)ed by a front while it connects, or replaces
 *			a stale socket and starts a daemon, and hands over.
 *	NAME.sock	the daemon's listening socket (0700).
 *	NAME.log	the daemon's standard error; at 1 MiB it becomes
 *	NAME.log.old	and a new one begins.
 *
 * A daemon that exits removes its socket and lock (under the lock); its
 * log stays, saying why it stopped.  A daemon that starts prunes the
 * files of other names that no daemon serves: a socket no one listens
 * on (one SIGKILLed) and the lock at once, the log once it is
 * SHARE_PRUNE_MS old (share_prune).
 *
 * NAME is 16 hex digits of the identity: the keyed SipHash-2-4 of the
 * version, of a digest of the running executable's bytes and of the
 * configuration's text.  Without the key, a name tells nothing of the
 * configuration; an edited configuration or another build makes another
 * name, so another daemon, while the old one serves its sessions to the
 * end.  Nothing else is written: the configuration, the environment and
 * the identity travel only over the socket.
 */
#include <dirent.h>
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
#include <time.h>
#include <unistd.h>

#include "util.h"
#include "jsonrpc.h"
#include "share.h"
#include "share_int.h"


/* The digest of p[0, n) under key, in one call. */
void
share_digest(const unsigned char *key, const void *p, size_t n,
    unsigned char *out)
{
	struct siphash h;

	sip_init(&h, key);
	sip_update(&h, p, n);
	sip_final(&h, out);
}

/*
 * The directory.
 */

/* "DIR/NAME.SUFFIX" (or "DIR/NAME"), for what a user reads. */
void
share_file(struct buf *b, const struct share_dir *d, const char *name,
    const char *suffix)
{
	buf_printf(b, "%s/%s%s%s", d->path, name, suffix != NULL ? "." : "",
	    suffix != NULL ? suffix : "");
}

static void
strip_slashes(struct buf *b)
{
	while (b->len > 1 && b->data[b->len - 1] == '/')
		b->len--;
}

/*
 * Where the directory is: configured (absolute), else in
 * $XDG_RUNTIME_DIR (when absolute, as the XDG specification requires),
 * else in /tmp, named by the effective uid.  0, or -1 with why.
 */
int
share_dir_path(const char *configured, struct buf *path, struct buf *why)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");

	path->len = 0;
	if (configured != NULL && configured[0] != '/') {
		buf_printf(why, "shareDir %s is not an absolute path",
		    configured);
		return -1;
	}
	if (configured != NULL)
		buf_puts(path, configured);
	else if (xdg != NULL && xdg[0] == '/') {
		buf_puts(path, xdg);
		strip_slashes(path);
		buf_puts(path, "/" WB_NAME);
	} else
		buf_printf(path, "/tmp/" WB_NAME "-%lu",
		    (unsigned long)geteuid());
	strip_slashes(path);
	if (path->len >= PATH_MAX) {
		buf_printf(why, "the share directory's path is too long (%zu "
		    "bytes, at most %d)", path->len, PATH_MAX - 1);
		return -1;
	}
	buf_cstr(path);
	return 0;
}

/*
 * Is st a file (or directory) of ours that no one else can use?  NULL,
 * or why not.
 */
static const char *
not_ours(const struct stat *st, char *why, size_t size)
{
	if (st->st_uid != geteuid())
		snprintf(why, size, "is owned by uid %lu, not by this user "
		    "(uid %lu)", (unsigned long)st->st_uid,
		    (unsigned long)geteuid());
	else if ((st->st_mode & 077) != 0)
		snprintf(why, size, "is open to group or others (mode %04o)",
		    (unsigned)(st->st_mode & 07777));
	else
		return NULL;
	return why;
}

/* Why opening path as a directory failed, said plainly. */
static void
dir_failed(const char *path, int err, struct buf *why)
{
	struct stat st;

	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
		buf_printf(why, "%s is a symbolic link", path);
	else if (err == ENOTDIR || (err == 0 && !S_ISDIR(st.st_mode)))
		buf_printf(why, "%s is not a directory", path);
	else
		buf_printf(why, "cannot open %s: %s", path, strerror(err));
}

static int
key_read(struct share_dir *d, int fd, struct buf *why)
{
	char bad[96];
	struct stat st;
	ssize_t n;

	if (fstat(fd, &st) < 0) {
		buf_printf(why, "cannot read %s/key: %s", d->path,
		    strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode) || st.st_size != SHARE_KEY_LEN) {
		buf_printf(why, "%s/key is not a file of %d bytes; remove it",
		    d->path, SHARE_KEY_LEN);
		return -1;
	}
	if (not_ours(&st, bad, sizeof(bad)) != NULL) {
		buf_printf(why, "%s/key %s", d->path, bad);
		return -1;
	}
	while ((n = read(fd, d->key, SHARE_KEY_LEN)) < 0 && errno == EINTR)
		;
	if (n != SHARE_KEY_LEN) {
		buf_printf(why, "cannot read %s/key: %s", d->path, n < 0 ?
		    strerror(errno) : "short read");
		return -1;
	}
	return 0;
}

/*
 * Make the key: written whole under a fresh exclusive name, then linked
 * to "key", so that no one reads half a key.  A key linked meanwhile by
 * another process wins (EEXIST), and is read next.
 */
static int
key_make(struct share_dir *d, struct buf *why)
{
	unsigned char key[SHARE_KEY_LEN], r[4];
	char tmp[32];
	int fd, err = 0;

	if (!wb_random(key, sizeof(key)) || !wb_random(r, sizeof(r))) {
		buf_printf(why, "no random bytes for %s/key", d->path);
		return -1;
	}
	snprintf(tmp, sizeof(tmp), "key.%02x%02x%02x%02x", r[0], r[1], r[2],
	    r[3]);
	fd = openat(d->fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600);
	if (fd < 0) {
		buf_printf(why, "cannot create %s/%s: %s", d->path, tmp,
		    strerror(errno));
		return -1;
	}
	if (write(fd, key, sizeof(key)) != (ssize_t)sizeof(key) ||
	    fsync(fd) < 0)
		err = errno != 0 ? errno : EIO;
	close(fd);
	if (err == 0 && linkat(d->fd, tmp, d->fd, "key", 0) < 0 &&
	    errno != EEXIST)
		err = errno;
	unlinkat(d->fd, tmp, 0);
	if (err != 0) {
		buf_printf(why, "cannot make %s/key: %s", d->path,
		    strerror(err));
		return -1;
	}
	return 0;
}

static int
key_load(struct share_dir *d, struct buf *why)
{
	int fd, tries, r;

	for (tries = 0; tries < 2; tries++) {
		fd = openat(d->fd, "key", O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
		    O_CLOEXEC);
		if (fd >= 0) {
			r = key_read(d, fd, why);
			close(fd);
			return r;
		}
		if (errno == ELOOP) {
			buf_printf(why, "%s/key is a symbolic link", d->path);
			return -1;
		}
		if (errno != ENOENT) {
			buf_printf(why, "cannot open %s/key: %s", d->path,
			    strerror(errno));
			return -1;
		}
		if (key_make(d, why) < 0)
			return -1;
	}
	buf_printf(why, "%s/key vanished as it was made", d->path);
	return -1;
}

/*
 * Open the share directory (made 0700 when missing: its last level
 * only; its parents must be there) and its key.  It must be a directory
 * itself, not a link to one, of the effective user, closed to everyone
 * else.  0, or -1 with why (then the session runs on its own).
 */
int
share_dir_open(struct share_dir *d, const char *configured, struct buf *why)
{
	struct buf path = { 0 };
	char bad[96];
	struct stat st;

	memset(d, 0, sizeof(*d));
	d->fd = -1;
	if (share_dir_path(configured, &path, why) < 0)
		goto fail;
	if (mkdir(path.data, 0700) < 0 && errno != EEXIST) {
		buf_printf(why, "cannot create %s: %s", path.data,
		    strerror(errno));
		goto fail;
	}
	d->fd = open(path.data, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (d->fd < 0 || fstat(d->fd, &st) < 0) {
		dir_failed(path.data, errno, why);
		goto fail;
	}
	if (!S_ISDIR(st.st_mode)) {
		dir_failed(path.data, 0, why);
		goto fail;
	}
	if (not_ours(&st, bad, sizeof(bad)) != NULL) {
		buf_printf(why, "%s %s", path.data, bad);
		goto fail;
	}
	d->path = buf_cstr(&path);
	if (key_load(d, why) < 0) {
		share_dir_close(d);
		return -1;
	}
	return 0;
fail:
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
	buf_free(&path);
	return -1;
}

void
share_dir_close(struct share_dir *d)
{
	if (d->fd >= 0)
		close(d->fd);
	free(d->path);
	memset(d, 0, sizeof(*d));
	d->fd = -1;
}

/*
 * The socket's address: through /proc/self/fd/DIRFD, so that it is the
 * directory as opened and checked, and fits sun_path whatever the
 * directory's path; else (no /proc) by the path, when it fits.  The
 * length to pass, or -1 with why.
 */
int
share_sockaddr(const struct share_dir *d, const char *name, void *addr,
    struct buf *why)
{
	struct sockaddr_un *sun = addr;
	struct stat viaproc, st;
	char via[64];
	int n;

	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	snprintf(via, sizeof(via), "/proc/self/fd/%d", d->fd);
	if (stat(via, &viaproc) == 0 && fstat(d->fd, &st) == 0 &&
	    viaproc.st_dev == st.st_dev && viaproc.st_ino == st.st_ino)
		n = snprintf(sun->sun_path, sizeof(sun->sun_path), "%s/%s",
		    via, name);
	else
		n = snprintf(sun->sun_path, sizeof(sun->sun_path), "%s/%s",
		    d->path, name);
	if (n < 0 || (size_t)n >= sizeof(sun->sun_path)) {
		buf_printf(why, "%s/%s is too long for a socket's address "
		    "(at most %zu bytes) and /proc is not there to shorten it",
		    d->path, name, sizeof(sun->sun_path) - 1);
		return -1;
	}
	return (int)(offsetof(struct sockaddr_un, sun_path) + (size_t)n + 1);
}

/*
 * Identity.
 */

/*
 * A digest of the running executable's bytes.  /proc/self/exe opens
 * the file this process runs, even after an upgrade replaced (renamed
 * over) or removed its path: an old daemon keeps its identity, and a
 * front of the new binary gets another.  0, or -1 with why.
 */
int
share_exe_digest(unsigned char *out, struct buf *why)
{
	static const unsigned char zero[SHARE_KEY_LEN];
	struct siphash h;
	struct stat st;
	char block[65536];
	ssize_t n;
	int fd;

	if ((fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC)) < 0 ||
	    fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		buf_printf(why, "cannot read the running program "
		    "(/proc/self/exe): %s", fd < 0 || errno != 0 ?
		    strerror(errno) : "not a file");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	sip_init(&h, zero);
	while ((n = read(fd, block, sizeof(block))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			buf_printf(why, "cannot read the running program "
			    "(/proc/self/exe): %s", strerror(errno));
			close(fd);
			return -1;
		}
		sip_update(&h, block, (size_t)n);
	}
	close(fd);
	sip_final(&h, out);
	return 0;
}

static void
digest_part(struct siphash *h, const void *p, size_t n)
{
	unsigned char len[8];
	uint64_t v = n;
	int i;

	for (i = 0; i < 8; i++, v >>= 8)
		len[i] = (unsigned char)(v & 0xff);
	sip_update(h, len, sizeof(len));
	sip_update(h, p, n);
}

/*
 * What a daemon serves: the keyed digest of the protocol, the version,
 * the executable's digest and the configuration's text, each part with
 * its length (no two lists of parts give the same bytes).
 */
void
share_identity(struct share_id *s, const unsigned char *key,
    const char *version, const unsigned char *exe, const char *cfg,
    size_t len)
{
	static const char hex[] = "0123456789abcdef";
	static const char what[] = WB_NAME " share";
	unsigned char proto = SHARE_PROTO;
	struct siphash h;
	int i;

	sip_init(&h, key);
	digest_part(&h, what, sizeof(what) - 1);
	digest_part(&h, &proto, 1);
	digest_part(&h, version, strlen(version));
	digest_part(&h, exe, SHARE_ID_LEN);
	digest_part(&h, cfg, len);
	sip_final(&h, s->id);
	for (i = 0; i < SHARE_NAME_LEN / 2; i++) {
		s->name[2 * i] = hex[s->id[i] >> 4];
		s->name[2 * i + 1] = hex[s->id[i] & 15];
	}
	s->name[SHARE_NAME_LEN] = '\0';
}

/* The whole identity in hex (2 * SHARE_ID_LEN + 1 bytes). */
void
share_id_hex(const struct share_id *s, char *out)
{
	static const char hex[] = "0123456789abcdef";
	int i;

	for (i = 0; i < SHARE_ID_LEN; i++) {
		out[2 * i] = hex[s->id[i] >> 4];
		out[2 * i + 1] = hex[s->id[i] & 15];
	}
	out[2 * SHARE_ID_LEN] = '\0';
}

/* Is hex (as given with SHARE_OPT_SERVE) this identity? */
bool
share_id_is(const struct share_id *s, const char *hex)
{
	char mine[2 * SHARE_ID_LEN + 1];

	share_id_hex(s, mine);
	return hex != NULL && strcmp(hex, mine) == 0;
}

/*
 * Small things both sides use.
 */

/*
 * Is the other end of the socket fd a process of this user?  Its pid
 * in pid; false with why when it is not, or cannot be told.
 */
bool
share_peer_ours(int fd, pid_t *pid, struct buf *why)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
	    len != sizeof(cred)) {
		buf_printf(why, "cannot tell who is at the other end: %s",
		    strerror(errno));
		return false;
	}
	*pid = cred.pid;
	if (cred.uid != geteuid()) {
		buf_printf(why, "uid %lu (pid %ld) is not this user (uid %lu)",
		    (unsigned long)cred.uid, (long)cred.pid,
		    (unsigned long)geteuid());
		return false;
	}
	return true;
}

/* Open DIR/NAME.SUFFIX, ours, for flags; -1 with why. */
static int
own_file(const struct share_dir *d, const char *name, const char *suffix,
    int flags, struct buf *why)
{
	char file[SHARE_NAME_LEN + 16], bad[96];
	struct stat st;
	int fd;

	snprintf(file, sizeof(file), "%s.%s", name, suffix);
	fd = openat(d->fd, file, flags | O_CREAT | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC, 0600);
	if (fd < 0) {
		buf_printf(why, "cannot open %s/%s: %s", d->path, file,
		    errno == ELOOP ? "a symbolic link" : strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0)
		buf_printf(why, "cannot open %s/%s: %s", d->path, file,
		    strerror(errno));
	else if (!S_ISREG(st.st_mode))
		buf_printf(why, "%s/%s is not a regular file", d->path, file);
	else if (not_ours(&st, bad, sizeof(bad)) != NULL)
		buf_printf(why, "%s/%s %s", d->path, file, bad);
	else
		return fd;
	close(fd);
	return -1;
}

/* The lock file NAME.lock, opened (not locked); -1 with why. */
int
share_lock_open(const struct share_dir *d, const char *name, struct buf *why)
{
	return own_file(d, name, "lock", O_RDWR, why);
}

/*
 * Is the locked fd still NAME.lock?  A lock file is removed under its
 * lock (by the daemon that exits, and by pruning): who waited on it
 * holds a lock on a file no one else will open, and must open the new
 * one.  Only the holder of the current file may remove it.
 */
bool
share_lock_current(const struct share_dir *d, const char *name, int fd)
{
	char file[SHARE_NAME_LEN + 8];
	struct stat a, b;

	snprintf(file, sizeof(file), "%.16s.lock", name);
	return fstat(fd, &a) == 0 && fstatat(d->fd, file, &b,
	    AT_SYMLINK_NOFOLLOW) == 0 && a.st_dev == b.st_dev &&
	    a.st_ino == b.st_ino;
}

/*
 * The log NAME.log, opened to append, bounded: one over SHARE_LOG_MAX
 * becomes NAME.log.old first.  -1 with why.
 */
int
share_log_open(const struct share_dir *d, const char *name, struct buf *why)
{
	char from[SHARE_NAME_LEN + 16], to[SHARE_NAME_LEN + 16];
	struct stat st;
	int fd, flags;

	if ((fd = own_file(d, name, "log", O_WRONLY | O_APPEND, why)) < 0)
		return -1;
	if (fstat(fd, &st) == 0 && st.st_size > SHARE_LOG_MAX) {
		snprintf(from, sizeof(from), "%s.log", name);
		snprintf(to, sizeof(to), "%s.log.old", name);
		close(fd);
		if (renameat(d->fd, from, d->fd, to) < 0) {
			buf_printf(why, "cannot rename %s/%s: %s", d->path,
			    from, strerror(errno));
			return -1;
		}
		fd = own_file(d, name, "log", O_WRONLY | O_APPEND, why);
	}
	/* A log is written by a blocking write, like any stderr. */
	if (fd >= 0 && (flags = fcntl(fd, F_GETFL)) >= 0)
		fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	return fd;
}

/*
 * Pruning: the files of texts no longer served.
 */

/* Is f a daemon's file (NAME.lock, .log, .log.old or .sock)? */
static bool
daemon_file(const char *f)
{
	static const char *const suffix[] = { "lock", "log", "log.old",
	    "sock" };
	size_t i;

	for (i = 0; i < SHARE_NAME_LEN; i++)
		if (strchr("0123456789abcdef", f[i]) == NULL || f[i] == '\0')
			return false;
	if (f[i++] != '.')
		return false;
	for (size_t k = 0; k < sizeof(suffix) / sizeof(suffix[0]); k++)
		if (strcmp(f + i, suffix[k]) == 0)
			return true;
	return false;
}

/*
 * Does a daemon listen on NAME.sock?  Only a socket that refuses the
 * connection is known dead; anything else (a daemon too busy to
 * accept, a file that is not a socket) is left alone.  The daemon that
 * is there sees a connection end before its hello, and says nothing.
 */
static bool
sock_dead(const struct share_dir *d, const char *name)
{
	char file[SHARE_NAME_LEN + 8];
	struct sockaddr_un sun;
	struct buf why = { 0 };
	struct stat st;
	int fd, len, r = 0;

	snprintf(file, sizeof(file), "%.16s.sock", name);
	if (fstatat(d->fd, file, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT;
	if (!S_ISSOCK(st.st_mode) ||
	    (len = share_sockaddr(d, file, &sun, &why)) < 0 ||
	    (fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) < 0) {
		buf_free(&why);
		return false;
	}
	r = connect(fd, (struct sockaddr *)&sun, (socklen_t)len);
	r = r < 0 && errno == ECONNREFUSED;
	close(fd);
	if (r)
		unlinkat(d->fd, file, 0);
	return r;
}

/* When NAME's log (or its old one) was last written; 0 when none is. */
static time_t
log_written(const struct share_dir *d, const char *name)
{
	static const char *const logs[] = { "log", "log.old" };
	char file[SHARE_NAME_LEN + 16];
	struct stat st;
	time_t t = 0;
	size_t i;

	for (i = 0; i < sizeof(logs) / sizeof(logs[0]); i++) {
		snprintf(file, sizeof(file), "%.16s.%s", name, logs[i]);
		if (fstatat(d->fd, file, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    st.st_mtime > t)
			t = st.st_mtime;
	}
	return t;
}

/*
 * Under NAME's lock (taken without waiting: a front or a daemon busy
 * with it keeps it), a dead daemon's socket and the lock go; the log
 * once it is old, so that what it says can still be read meanwhile.
 * True if something went.
 */
static bool
prune_name(const struct share_dir *d, const char *name, time_t now)
{
	char file[SHARE_NAME_LEN + 16];
	struct buf why = { 0 };
	bool pruned = false;
	int lock;

	if ((lock = share_lock_open(d, name, &why)) < 0) {
		buf_free(&why);
		return false;
	}
	if (flock(lock, LOCK_EX | LOCK_NB) == 0 &&
	    share_lock_current(d, name, lock) && sock_dead(d, name)) {
		pruned = true;
		if (now - log_written(d, name) >= SHARE_PRUNE_MS / 1000) {
			snprintf(file, sizeof(file), "%.16s.log", name);
			unlinkat(d->fd, file, 0);
			snprintf(file, sizeof(file), "%.16s.log.old", name);
			unlinkat(d->fd, file, 0);
		}
		/* Held: a front waiting on it opens it anew. */
		snprintf(file, sizeof(file), "%.16s.lock", name);
		unlinkat(d->fd, file, 0);
	}
	close(lock);
	return pruned;
}

/*
 * Prune the files of names other than own that no daemon serves: at
 * most SHARE_PRUNE_MAX names pruned a time, among the first
 * SHARE_PRUNE_SCAN names read (the rest the next time).  Names that are
 * served or busy do not count, so that they cannot keep the dead ones
 * behind them from ever being reached.  A name met again (its log after
 * its lock) is passed over while it is among the last SHARE_PRUNE_MAX
 * met.
 */
void
share_prune(const struct share_dir *d, const char *own)
{
	char met[SHARE_PRUNE_MAX][SHARE_NAME_LEN + 1];
	struct dirent *e;
	DIR *dir;
	time_t now = time(NULL);
	int fd, n = 0, scanned = 0, pruned = 0, i;

	if ((fd = openat(d->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return;
	if ((dir = fdopendir(fd)) == NULL) {
		close(fd);
		return;
	}
	while (pruned < SHARE_PRUNE_MAX && scanned < SHARE_PRUNE_SCAN &&
	    (e = readdir(dir)) != NULL) {
		if (!daemon_file(e->d_name) ||
		    strncmp(e->d_name, own, SHARE_NAME_LEN) == 0)
			continue;
		for (i = 0; i < SHARE_PRUNE_MAX && i < scanned &&
		    strncmp(met[i], e->d_name, SHARE_NAME_LEN) != 0; i++)
			;
		if (i < SHARE_PRUNE_MAX && i < scanned)
			continue;
		snprintf(met[n], SHARE_NAME_LEN + 1, "%.16s", e->d_name);
		pruned += prune_name(d, met[n], now);
		n = (n + 1) % SHARE_PRUNE_MAX;
		scanned++;
	}
	closedir(dir);
}

/*
 * The names (NAME of NAME.sock) of the daemons' sockets in d, up to max:
 * how many.  Whether one listens is for the caller to find out.
 */
int
share_socket_names(const struct share_dir *d, char (*names)[SHARE_NAME_LEN + 1],
    int max)
{
	struct dirent *e;
	DIR *dir;
	int fd, n = 0;

	if ((fd = openat(d->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return 0;
	if ((dir = fdopendir(fd)) == NULL) {
		close(fd);
		return 0;
	}
	while (n < max && (e = readdir(dir)) != NULL)
		if (daemon_file(e->d_name) &&
		    strcmp(e->d_name + SHARE_NAME_LEN, ".sock") == 0)
			snprintf(names[n++], SHARE_NAME_LEN + 1, "%.16s",
			    e->d_name);
	closedir(dir);
	return n;
}
