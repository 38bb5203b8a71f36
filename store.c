/*
 * store.c: files of our own in a directory other users may reach (a
 * cache under /tmp, a shared XDG_CACHE_HOME).  Nothing there is trusted
 * for being there: the directory must be a real directory of this user
 * that no one else can write, each file is opened without following a
 * link or waiting on a FIFO and must be a regular file of this user, and
 * a file is written under a fresh name made exclusively, then renamed
 * (or linked) into place.  Everything is done relative to the directory
 * as opened, so that a path changed meanwhile changes nothing.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json.h"
#include "store.h"

#define TMP_TRIES	8	/* Fresh names tried before giving up. */

static char why_text[96];	/* A reason with a number in it. */

/* mkdir -p, each level made 0700; a level there already is left as is. */
static int
make_dirs(char *path)
{
	char *p;

	for (p = path + 1; *p != '\0'; p++) {
		if (*p != '/' || p[-1] == '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0700) < 0 && errno != EEXIST) {
			*p = '/';
			return -1;
		}
		*p = '/';
	}
	return mkdir(path, 0700) < 0 && errno != EEXIST ? -1 : 0;
}

/*
 * Is the file (or directory) st ours, and not changeable by anyone else
 * through the bits in forbid?  NULL, or why not.
 */
static const char *
not_ours(const struct stat *st, mode_t forbid)
{
	if (st->st_uid != geteuid()) {
		snprintf(why_text, sizeof(why_text), "owned by uid %lu, not by "
		    "this user (uid %lu)", (unsigned long)st->st_uid,
		    (unsigned long)geteuid());
		return why_text;
	}
	if ((st->st_mode & forbid) != 0) {
		snprintf(why_text, sizeof(why_text), "%s group or others "
		    "(mode %04o)", (forbid & 044) != 0 ? "open to" :
		    "writable by", (unsigned)(st->st_mode & 07777));
		return why_text;
	}
	return NULL;
}

/*
 * The directory at path, made (with its missing parents, 0700) when it
 * is not there, opened for use with the other store_ functions: a
 * descriptor, or -1 with the reason in why.  It must be a directory
 * itself, not a link to one, of this user, and writable by no one else.
 */
int
store_dir(const char *path, struct buf *why)
{
	char *copy = xstrdup(path);
	const char *bad = NULL;
	struct stat st;
	int fd, r;

	r = make_dirs(copy);
	free(copy);
	if (r < 0) {
		buf_puts(why, strerror(errno));
		return -1;
	}
	/* O_PATH: searching it is all we need of it. */
	fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		buf_puts(why, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (S_ISLNK(st.st_mode))
		bad = "a symbolic link, not a directory";
	else if (!S_ISDIR(st.st_mode))
		bad = strerror(ENOTDIR);
	else
		bad = not_ours(&st, 022);
	if (bad != NULL) {
		buf_puts(why, bad);
		close(fd);
		return -1;
	}
	return fd;
}

/* Can we make files in it?  False with errno. */
bool
store_writable(int dir)
{
	return faccessat(dir, ".", W_OK, AT_EACCESS) == 0;
}

/*
 * Open name in dir for reading: a descriptor, or -1 with *why saying
 * why (NULL when it does not exist).  It must be a regular file of ours
 * without the mode bits in forbid.  O_NONBLOCK: a FIFO put there does
 * not keep us waiting; it is then refused like any other non-file.
 */
int
store_open(int dir, const char *name, mode_t forbid, const char **why)
{
	struct stat st;
	int fd;

	fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY |
	    O_CLOEXEC);
	if (fd < 0) {
		*why = errno == ENOENT ? NULL : errno == ELOOP ?
		    "a symbolic link" : strerror(errno);
		return -1;
	}
	if (fstat(fd, &st) < 0)
		*why = strerror(errno);
	else if (!S_ISREG(st.st_mode))
		*why = "not a regular file";
	else if ((*why = not_ours(&st, forbid)) == NULL)
		return fd;
	close(fd);
	return -1;
}

/*
 * A file of ours (store_open), whole, NUL-terminated, of at most max
 * bytes: NULL with *why saying why (NULL when it does not exist).
 */
char *
store_read(int dir, const char *name, size_t max, mode_t forbid,
    size_t *len, const char **why)
{
	char *text;
	int fd;

	if ((fd = store_open(dir, name, forbid, why)) < 0)
		return NULL;
	if ((text = fd_read_all(fd, max, len)) == NULL)
		*why = errno == EFBIG ? "too large" : strerror(errno);
	close(fd);
	return text;
}

/* A new file of ours under a fresh name: its descriptor, the name in tmp. */
static int
make_temp(int dir, const char *name, struct buf *tmp)
{
	unsigned char r[8];
	int fd = -1, tries, i;

	for (tries = 0; tries < TMP_TRIES && fd < 0; tries++) {
		if (!wb_random(r, sizeof(r))) {
			errno = EIO;
			return -1;
		}
		tmp->len = 0;
		buf_printf(tmp, "%s.", name);
		for (i = 0; i < (int)sizeof(r); i++)
			buf_printf(tmp, "%02x", r[i]);
		buf_puts(tmp, ".tmp");
		fd = openat(dir, buf_cstr(tmp), O_WRONLY | O_CREAT | O_EXCL |
		    O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST)
			return -1;
	}
	return fd;
}

/*
 * Write a file through fill (which writes it to the descriptor it is
 * given: 0, or -1 with errno) under a fresh name, then put it in place:
 * in place of name (replace), or only if name is not there (else
 * EEXIST).  0, or -1 with errno; nothing is left behind on failure.
 */
static int
store_put(int dir, const char *name, bool replace,
    int (*fill)(int, const void *), const void *arg)
{
	struct buf tmp = { 0 };
	int fd, r, e;

	if ((fd = make_temp(dir, name, &tmp)) < 0) {
		buf_free(&tmp);
		return -1;
	}
	r = fill(fd, arg);
	if (close(fd) < 0)
		r = -1;
	if (r == 0)
		r = replace ? renameat(dir, tmp.data, dir, name) :
		    linkat(dir, tmp.data, dir, name, 0);
	if (r < 0 || !replace) {
		e = errno;	/* For the caller, not unlink's. */
		unlinkat(dir, tmp.data, 0);
		errno = e;
	}
	buf_free(&tmp);
	return r;
}

int
store_replace(int dir, const char *name, int (*fill)(int, const void *),
    const void *arg)
{
	return store_put(dir, name, true, fill, arg);
}

/* The bytes of a span, as store_put's fill. */
static int
fill_bytes(int fd, const void *arg)
{
	const struct span *b = arg;

	return fd_write_all(fd, b->p, b->n);
}

/* A file made whole, or EEXIST when one is there already. */
int
store_create(int dir, const char *name, const void *p, size_t n)
{
	struct span b = { p, n };

	return store_put(dir, name, false, fill_bytes, &b);
}

/* Remove name: 1, or 0 when it was not there, or -1 with errno. */
int
store_remove(int dir, const char *name)
{
	if (unlinkat(dir, name, 0) == 0)
		return 1;
	return errno == ENOENT ? 0 : -1;
}

/*
 * Call fn with each name in dir (but . and ..); false when it cannot be
 * listed (a directory we may search but not read).
 */
bool
store_names(int dir, void (*fn)(int, const char *, void *), void *arg)
{
	struct dirent *d;
	DIR *list;
	int fd;

	if ((fd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return false;
	if ((list = fdopendir(fd)) == NULL) {
		close(fd);
		return false;
	}
	while ((d = readdir(list)) != NULL)
		if (strcmp(d->d_name, ".") != 0 && strcmp(d->d_name, "..") != 0)
			fn(dir, d->d_name, arg);
	closedir(list);
	return true;
}
