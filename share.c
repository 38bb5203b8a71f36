/*
 * share.c: the transport of a shared workbench, the daemon's side: the
 * directory and its key, identities and names, the wire, the listening
 * socket and the handshake of each connection.  The front's side (the
 * lock, starting the daemon, the handover and the wait) is in front.c.
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
 * NAME is 16 hex digits of the identity: the keyed SipHash-2-4 of the
 * version, of a digest of the running executable's bytes and of the
 * configuration's text.  Without the key, a name tells nothing of the
 * configuration; an edited configuration or another build makes another
 * name, so another daemon, while the old one serves its sessions to the
 * end.  Nothing else is written: the configuration, the environment and
 * the identity travel only over the socket.
 *
 * The wire: a Unix stream socket, messages of a header of 8 bytes,
 * big-endian (the body's length:4, type:2, SHARE_PROTO:2), and a body:
 *
 *	front			daemon
 *	HELLO (+ fds 0, 1, 2)	  the kernel gives the front's uid and pid
 *				  (SO_PEERCRED); another uid is closed
 *		<- WELCOME	  a session; or REFUSE "why", then closed
 *	GO ->			  the session begins: the daemon owns the
 *				  stdio now, the socket stays as a lifeline
 *		<- END status	  the session ended; the front exits status
 *
 * A status request is a HELLO of kind status without descriptors; it is
 * answered with STATUS (the daemon's JSON, from its callback) or REFUSE,
 * then closed.  The HELLO's body is fields of tag:2, length:4 and value:
 * KIND (1 byte: 1 session, 2 status), ID (the 16-byte identity, which
 * must be the daemon's), CWD (absolute path), ENV ("NAME=value", one per
 * variable) and OPT ("name=value", the options that matter); the whole
 * at most 1 MiB.  Descriptors come with a session's first byte, exactly
 * three; any others are closed and the connection dropped.  The daemon
 * touches none of them before GO: a front that gives up (a timeout)
 * closes instead, keeps its stdio and runs on its own; the daemon then
 * closes its copies unused.  A front whose daemon closes before WELCOME
 * (it was going away) tries again under the lock.  Everything that
 * comes is bounded and checked, and each connection has SHARE_HANDSHAKE_MS
 * from accept to GO; a daemon never blocks on one.
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
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "workbench.h"
#include "share.h"
#include "share_int.h"

#define SHARE_BACKLOG		64
#define SHARE_FDS_MAX		8	/* Room to receive, more than 3. */
#define SHARE_READ_MAX		65536	/* One read of a hello. */
#define SHARE_STARVE_MS		1000	/* Out of fds: stop accepting. */

enum share_field {
	FIELD_KIND = 1,
	FIELD_ID = 2,
	FIELD_CWD = 3,
	FIELD_ENV = 4,
	FIELD_OPT = 5
};

/*
 * The digest: keyed SipHash-2-4 with its 128-bit output, as util.c's
 * sip_init, sip_update and sip_final on the catalogue branch: once that
 * is merged, these three become calls to those (the unit test of
 * share_digest holds the reference vectors both must give).
 */
struct digest {
	uint64_t	 v[4];
	uint64_t	 tail;
	size_t		 n;
};

#define ROTL(x, b)	(((x) << (b)) | ((x) >> (64 - (b))))

static void
sip_round(uint64_t *v)
{
	v[0] += v[1];
	v[1] = ROTL(v[1], 13);
	v[1] ^= v[0];
	v[0] = ROTL(v[0], 32);
	v[2] += v[3];
	v[3] = ROTL(v[3], 16);
	v[3] ^= v[2];
	v[0] += v[3];
	v[3] = ROTL(v[3], 21);
	v[3] ^= v[0];
	v[2] += v[1];
	v[1] = ROTL(v[1], 17);
	v[1] ^= v[2];
	v[2] = ROTL(v[2], 32);
}

static uint64_t
le64(const unsigned char *p)
{
	uint64_t w = 0;
	int i;

	for (i = 7; i >= 0; i--)
		w = w << 8 | p[i];
	return w;
}

static void
sip_word(struct digest *h, uint64_t m)
{
	h->v[3] ^= m;
	sip_round(h->v);
	sip_round(h->v);
	h->v[0] ^= m;
}

static void
digest_init(struct digest *h, const unsigned char *key)
{
	uint64_t k0 = le64(key), k1 = le64(key + 8);

	h->v[0] = k0 ^ 0x736f6d6570736575ULL;
	h->v[1] = k1 ^ 0x646f72616e646f6dULL ^ 0xee;	/* 128-bit output */
	h->v[2] = k0 ^ 0x6c7967656e657261ULL;
	h->v[3] = k1 ^ 0x7465646279746573ULL;
	h->tail = 0;
	h->n = 0;
}

static void
digest_update(struct digest *h, const void *p, size_t n)
{
	const unsigned char *c = p;

	/* Finish a word begun, then whole words, then begin the next. */
	while (n > 0 && h->n % 8 != 0) {
		h->tail |= (uint64_t)*c++ << (8 * (h->n++ % 8));
		n--;
		if (h->n % 8 == 0) {
			sip_word(h, h->tail);
			h->tail = 0;
		}
	}
	for (; n >= 8; n -= 8, c += 8, h->n += 8)
		sip_word(h, le64(c));
	for (; n > 0; n--)
		h->tail |= (uint64_t)*c++ << (8 * (h->n++ % 8));
}

static void
digest_final(struct digest *h, unsigned char *out)
{
	uint64_t w;
	int i, half, k;

	sip_word(h, h->tail | (uint64_t)(h->n & 0xff) << 56);
	h->v[2] ^= 0xee;
	for (half = 0; half < 2; half++) {
		for (i = 0; i < 4; i++)
			sip_round(h->v);
		w = h->v[0] ^ h->v[1] ^ h->v[2] ^ h->v[3];
		for (k = 0; k < 8; k++, w >>= 8)
			out[8 * half + k] = (unsigned char)(w & 0xff);
		h->v[1] ^= 0xdd;
	}
	memset(h, 0, sizeof(*h));
}

/* The digest of p[0, n) under key, in one call. */
void
share_digest(const unsigned char *key, const void *p, size_t n,
    unsigned char *out)
{
	struct digest h;

	digest_init(&h, key);
	digest_update(&h, p, n);
	digest_final(&h, out);
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
	struct digest h;
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
	digest_init(&h, zero);
	while ((n = read(fd, block, sizeof(block))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			buf_printf(why, "cannot read the running program "
			    "(/proc/self/exe): %s", strerror(errno));
			close(fd);
			return -1;
		}
		digest_update(&h, block, (size_t)n);
	}
	close(fd);
	digest_final(&h, out);
	return 0;
}

static void
digest_part(struct digest *h, const void *p, size_t n)
{
	unsigned char len[8];
	uint64_t v = n;
	int i;

	for (i = 0; i < 8; i++, v >>= 8)
		len[i] = (unsigned char)(v & 0xff);
	digest_update(h, len, sizeof(len));
	digest_update(h, p, n);
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
	struct digest h;
	int i;

	digest_init(&h, key);
	digest_part(&h, what, sizeof(what) - 1);
	digest_part(&h, &proto, 1);
	digest_part(&h, version, strlen(version));
	digest_part(&h, exe, SHARE_ID_LEN);
	digest_part(&h, cfg, len);
	digest_final(&h, s->id);
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
 * The wire.
 */

static void
put16(unsigned char *p, unsigned v)
{
	p[0] = (unsigned char)(v >> 8);
	p[1] = (unsigned char)(v & 0xff);
}

static void
put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16 & 0xff);
	p[2] = (unsigned char)(v >> 8 & 0xff);
	p[3] = (unsigned char)(v & 0xff);
}

/* Append a message of type with body[0, n). */
void
share_msg(struct buf *b, int type, const void *body, size_t n)
{
	unsigned char h[SHARE_HDR];

	put32(h, (uint32_t)n);
	put16(h + 4, (unsigned)type);
	put16(h + 6, SHARE_PROTO);
	buf_put(b, h, sizeof(h));
	buf_put(b, body, n);
}

static void
put_field(struct buf *b, int tag, const void *p, size_t n)
{
	unsigned char h[6];

	put16(h, (unsigned)tag);
	put32(h + 2, (uint32_t)n);
	buf_put(b, h, sizeof(h));
	buf_put(b, p, n);
}

/* "NAME=value" with a name: what ENV and OPT carry. */
static bool
is_assignment(const char *s, size_t n)
{
	const char *eq = memchr(s, '=', n);

	return eq != NULL && eq != s && memchr(s, '\0', n) == NULL;
}

/*
 * Append a HELLO: kind, identity, cwd (NULL for none), env and opt
 * (NULL-terminated, or NULL).  Variables that are not NAME=value are
 * left out, as a decoder would refuse them.  0, or -1 (EMSGSIZE, b as
 * it was) when it would be larger than a daemon takes.
 */
int
share_hello_encode(struct buf *b, enum share_kind kind,
    const unsigned char *id, const char *cwd, char *const *env,
    char *const *opt)
{
	unsigned char k = (unsigned char)kind;
	size_t start = b->len, i;

	share_msg(b, MSG_HELLO, NULL, 0);
	put_field(b, FIELD_KIND, &k, 1);
	put_field(b, FIELD_ID, id, SHARE_ID_LEN);
	if (cwd != NULL)
		put_field(b, FIELD_CWD, cwd, strlen(cwd));
	for (i = 0; env != NULL && env[i] != NULL; i++)
		if (is_assignment(env[i], strlen(env[i])))
			put_field(b, FIELD_ENV, env[i], strlen(env[i]));
	for (i = 0; opt != NULL && opt[i] != NULL; i++)
		put_field(b, FIELD_OPT, opt[i], strlen(opt[i]));
	if (b->len - start - SHARE_HDR > SHARE_HELLO_MAX) {
		b->len = start;
		errno = EMSGSIZE;
		return -1;
	}
	put32((unsigned char *)b->data + start,
	    (uint32_t)(b->len - start - SHARE_HDR));
	return 0;
}

/* What a hello holds, counted by a first walk. */
struct tally {
	int		 kind, id, cwd;
	size_t		 nenv, nopt, bytes;
};

/* Check one field; 0, or -1 with why. */
static int
field_check(struct tally *t, unsigned tag, const unsigned char *v, size_t n,
    struct buf *why)
{
	switch (tag) {
	case FIELD_KIND:
		if (t->kind++ > 0 || n != 1 || (v[0] != SHARE_SESSION &&
		    v[0] != SHARE_STATUS))
			break;
		return 0;
	case FIELD_ID:
		if (t->id++ > 0 || n != SHARE_ID_LEN)
			break;
		return 0;
	case FIELD_CWD:
		if (t->cwd++ > 0 || n == 0 || n >= PATH_MAX || v[0] != '/' ||
		    memchr(v, '\0', n) != NULL)
			break;
		t->bytes += n + 1;
		return 0;
	case FIELD_ENV:
	case FIELD_OPT:
		if (!is_assignment((const char *)v, n) ||
		    (tag == FIELD_ENV ? ++t->nenv > SHARE_ENV_MAX :
		    ++t->nopt > SHARE_OPT_MAX))
			break;
		t->bytes += n + 1;
		return 0;
	default:
		buf_printf(why, "a field of unknown tag %u", tag);
		return -1;
	}
	buf_printf(why, "a bad field of tag %u (%zu bytes)", tag, n);
	return -1;
}

/* Walk the fields of body; with h, fill it (after a checking walk). */
static int
fields_walk(const unsigned char *p, size_t len, struct tally *t,
    struct share_hello *h, struct buf *why)
{
	char *s = NULL;
	unsigned tag;
	size_t off = 0, n;

	if (h != NULL)
		s = (char *)(h->env + t->nenv + 1 + t->nopt + 1);
	while (off < len) {
		if (len - off < 6) {
			buf_printf(why, "a field cut short");
			return -1;
		}
		tag = share_get16(p + off);
		n = share_get32(p + off + 2);
		off += 6;
		if (n > len - off) {
			buf_printf(why, "a field longer than the hello");
			return -1;
		}
		if (h == NULL && field_check(t, tag, p + off, n, why) < 0)
			return -1;
		if (h != NULL && tag == FIELD_KIND)
			h->kind = (enum share_kind)p[off];
		else if (h != NULL && tag == FIELD_ID)
			memcpy(h->id, p + off, SHARE_ID_LEN);
		else if (h != NULL) {
			memcpy(s, p + off, n);
			s[n] = '\0';
			if (tag == FIELD_CWD)
				h->cwd = s;
			else if (tag == FIELD_ENV)
				h->env[h->nenv++] = s;
			else
				h->opt[h->nopt++] = s;
			s += n + 1;
		}
		off += n;
	}
	return 0;
}

/*
 * Decode a HELLO's body into h, all of it in one block (h->mem, freed
 * by share_hello_free).  0, or -1 with why; h's descriptors are left
 * as they were.
 */
int
share_hello_decode(struct share_hello *h, const void *body, size_t len,
    struct buf *why)
{
	struct tally t = { 0, 0, 0, 0, 0, 0 };
	size_t ptrs;

	h->mem = NULL;
	h->env = h->opt = NULL;
	h->cwd = NULL;
	h->nenv = h->nopt = 0;
	if (len > SHARE_HELLO_MAX) {
		buf_printf(why, "a hello of %zu bytes (at most %d)", len,
		    SHARE_HELLO_MAX);
		return -1;
	}
	if (fields_walk(body, len, &t, NULL, why) < 0)
		return -1;
	if (t.kind == 0 || t.id == 0) {
		buf_printf(why, "a hello without its %s", t.kind == 0 ?
		    "kind" : "identity");
		return -1;
	}
	ptrs = (t.nenv + 1 + t.nopt + 1) * sizeof(char *);
	h->mem = xmalloc(ptrs + t.bytes);
	h->env = (char **)(void *)h->mem;
	h->opt = h->env + t.nenv + 1;
	(void)fields_walk(body, len, &t, h, why);
	h->env[h->nenv] = NULL;
	h->opt[h->nopt] = NULL;
	if (h->kind == SHARE_SESSION && h->cwd == NULL) {
		buf_printf(why, "a session's hello without its directory");
		share_hello_free(h);
		return -1;
	}
	return 0;
}

void
share_hello_free(struct share_hello *h)
{
	free(h->mem);
	h->mem = NULL;
	h->env = h->opt = NULL;
	h->cwd = NULL;
	h->nenv = h->nopt = 0;
}

/*
 * Small things both sides use.
 */

/* Close every descriptor from lowfd up (in a new child). */
void
share_close_from(int lowfd)
{
	long max, fd;

#ifdef SYS_close_range
	if (syscall(SYS_close_range, lowfd, ~0U, 0) == 0)
		return;
#endif
	max = sysconf(_SC_OPEN_MAX);
	if (max < 0 || max > 65536)
		max = 65536;
	for (fd = lowfd; fd < max; fd++)
		close((int)fd);
}

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
 * The daemon.
 */

enum conn_state {
	CONN_HELLO,		/* Reading the hello. */
	CONN_GO,		/* WELCOME sent: waiting for GO. */
	CONN_FLUSH		/* Writing an answer, then closing. */
};

/* A session as the daemon keeps it: h first, so one points to both. */
struct session {
	struct share_hello	 h;
	int			 fl[3];		/* Flags as handed over. */
	dev_t			 dev[3];	/* What each fd is. */
	ino_t			 ino[3];
	struct session		*next;
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
	struct session	*s;		/* Between WELCOME and GO. */
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
	struct session		*ready;		/* Begun, not taken yet. */
	struct session		*live;		/* Taken. */
	struct ratelog		 rl;
};

/* A warning about a connection: any process of ours can repeat it. */
static void __attribute__((format(printf, 3, 4)))
warn(struct share_server *srv, long long now, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	if (!ratelog_allow(&srv->rl, now, "shared workbench"))
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	wb_log("shared workbench: %s", line);
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
	ssize_t n;

	while (c->out.len > 0) {
		n = send(c->fd, c->out.data, c->out.len, MSG_DONTWAIT |
		    MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n <= 0)
			return -1;
		buf_consume(&c->out, (size_t)n);
	}
	return 0;
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
	struct session *s = xcalloc(1, sizeof(*s));
	const char *bad;
	int i;

	if (share_hello_decode(&s->h, c->in.data + SHARE_HDR,
	    c->in.len - SHARE_HDR, why) < 0) {
		free(s);
		return -1;
	}
	if (memcmp(s->h.id, srv->id.id, SHARE_ID_LEN) != 0)
		conn_refuse(srv, c, now, "it serves another build or "
		    "configuration");
	else if (s->h.kind == SHARE_STATUS && c->nfds > 0)
		buf_printf(why, "a status request with descriptors");
	else if (s->h.kind == SHARE_STATUS)
		status_answer(srv, c, now);
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
	size_t need = SHARE_HDR;
	unsigned version;
	char text[96];
	int r;

	if (c->in.len >= SHARE_HDR)
		need += share_get32((unsigned char *)c->in.data);
	if ((r = conn_read(c, need - c->in.len, why)) <= 0)
		return r;
	if (c->in.len == SHARE_HDR) {
		version = share_get16((unsigned char *)c->in.data + 6);
		need = SHARE_HDR + share_get32((unsigned char *)c->in.data);
		if (version != SHARE_PROTO) {
			snprintf(text, sizeof(text), "it speaks version %u of "
			    "the protocol, not %u", (unsigned)SHARE_PROTO,
			    version);
			conn_refuse(srv, c, now, text);
			return 0;
		}
		if (share_get16((unsigned char *)c->in.data + 4) != MSG_HELLO) {
			buf_printf(why, "a message before its hello");
			return -1;
		}
		if (need - SHARE_HDR > SHARE_HELLO_MAX) {
			buf_printf(why, "a hello of %zu bytes (at most %d)",
			    need - SHARE_HDR, SHARE_HELLO_MAX);
			return -1;
		}
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
	struct session *s = c->s, **p;
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
	struct session *s = srv->ready;

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
 * Put back the flags of s's descriptors, unless another session holds
 * the same file (two fronts started with one stderr): then that one
 * puts them back when it ends, with the flags s found.
 */
static void
flags_restore(struct share_server *srv, struct session *s)
{
	struct session *lists[2] = { srv->ready, srv->live }, *o;
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
	struct session *s = (struct session *)h, **p;
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
 * front replaces it under the lock.  Sessions still there end with
 * status 1: the caller ends its own first.
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
		    fstatat(srv->dir.fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    st.st_dev == srv->sock_dev && st.st_ino == srv->sock_ino)
			unlinkat(srv->dir.fd, name, 0);
		close(srv->fd);
		srv->fd = -1;
		if (lock >= 0)
			close(lock);
	}
	buf_free(&why);
	while (srv->nconn > 0)
		conn_drop(srv, srv->nconn - 1, 0, NULL);
	while (srv->live != NULL)
		share_session_end(srv, &srv->live->h, 1);
	while (srv->ready != NULL)
		share_session_end(srv, &srv->ready->h, 1);
	share_dir_close(&srv->dir);
	free(srv);
}
