/*
 * catalog.c: the tool catalogue on disk.  Each server's last complete
 * lists (tools, and the prompts, resources and templates it offers) are
 * kept in a file of its own under cacheDir, else
 * $XDG_CACHE_HOME/mcp-workbench, else ~/.cache/mcp-workbench, so that
 * open_toolbox can answer at once (the servers start meanwhile) and
 * search_tools can search toolboxes not opened in this session.
 *
 * An entry holds the server's fingerprint (its command, args, env, cwd,
 * inheritEnv and filters as written, before ${VAR} expansion: no value is
 * stored),
 * and is used only for the same fingerprint.  Files are written whole
 * under a temporary name and renamed, 0600 in a 0700 directory.  Nothing
 * about the catalogue stops the workbench: an entry that cannot be read
 * is ignored with a warning, and a directory that cannot be written
 * leaves new lists in memory for the session, with one warning; its
 * entries are still read (a catalogue filled by --probe may be part of a
 * read-only system image).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "workbench.h"

#define CATALOG_VERSION	1
#define ENTRY_MAX	(64u * 1024 * 1024)	/* An entry's file at most. */
#define ENTRY_PIECE	(64u * 1024)		/* Written at a time. */

/* DIR_READ: entries are read, but not written. */
static enum { DIR_UNKNOWN, DIR_OK, DIR_READ, DIR_NONE } dir_state;
static char *dir;

/* mkdir -p, the last level 0700. */
static int
make_dirs(char *path)
{
	char *p;

	for (p = path + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST) {
			*p = '/';
			return -1;
		}
		*p = '/';
	}
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return -1;
	return 0;
}

/* From now on entries are only read: said once. */
static void
read_only(const char *what, const char *why)
{
	wb_log("catalogue: cannot write %s: %s; its entries are read, but new "
	    "tool lists are kept in memory only", what, why);
	dir_state = DIR_READ;
}

/* The directory, made on first use; NULL when there is none to read. */
static const char *
catalog_dir(void)
{
	const char *base;
	struct buf b = { 0 };

	if (dir_state != DIR_UNKNOWN)
		return dir_state == DIR_NONE ? NULL : dir;
	dir_state = DIR_NONE;
	if (wb.cfg.cache_dir != NULL)
		buf_printf(&b, "%s", wb.cfg.cache_dir);
	else if ((base = getenv("XDG_CACHE_HOME")) != NULL && base[0] == '/')
		buf_printf(&b, "%s/mcp-workbench", base);
	else if ((base = getenv("HOME")) != NULL && base[0] == '/')
		buf_printf(&b, "%s/.cache/mcp-workbench", base);
	else {
		wb_log("catalogue: no cacheDir, XDG_CACHE_HOME or HOME; tool "
		    "lists are kept in memory only");
		return NULL;
	}
	dir = buf_cstr(&b);
	/* Entries are opened by name: searching the directory is enough. */
	if (make_dirs(dir) < 0 || access(dir, X_OK) < 0) {
		wb_log("catalogue: %s: %s; tool lists are kept in memory only",
		    dir, strerror(errno));
		return NULL;
	}
	dir_state = DIR_OK;
	if (access(dir, W_OK) < 0)
		read_only(dir, strerror(errno));
	return dir;
}

/* The file of a server's entry: named by its fingerprint's hashes. */
static void
entry_path(const struct server *s, struct buf *out)
{
	const char *fp = s->cfg->fingerprint;
	size_t n = strlen(fp);

	buf_printf(out, "%s/%08lx%08lx.json", dir,
	    hash_bytes(HASH_INIT, fp, n) & 0xffffffffUL,
	    hash_bytes(HASH_INIT ^ 0x5bd1e995UL, fp, n) & 0xffffffffUL);
}

/* Each list's member in an entry, by enum list_kind. */
static const char *const members[LIST_KINDS] = { "tools", "prompts",
    "resources", "resourceTemplates" };

/* The hash of the lists as stored: tells when they changed. */
static unsigned long
lists_hash(const struct server *s)
{
	unsigned long h = HASH_INIT;
	const struct listing *l;
	int i, k;

	for (k = 0; k < LIST_KINDS; k++) {
		l = &s->lists[k];
		for (i = 0; i < l->n; i++) {
			h = hash_bytes(h, l->items[i].json, l->items[i].len);
			h = hash_bytes(h, "", 1);	/* Where it ends. */
		}
		h = hash_bytes(h, members[k], strlen(members[k]));
	}
	return h;
}

/*
 * Is the entry text[0, n) one of ours, for this server?  Else why (NULL
 * for no warning).  It is checked whole, in one pass and without tokens,
 * so that a list of 10,000 tools is then read entry by entry.
 */
static bool
entry_valid(const struct server *s, const char *text, size_t n,
    const char **why)
{
	static const struct field top[] = {
		FIELD("mcpWorkbenchCatalogue", 0, NULL, false),
		FIELD("fingerprint", 1, NULL, false),
		FIELD("tools", 2, NULL, false), FIELD_END };
	struct span v[3];
	char version[16];

	*why = "not valid JSON";
	if (!json_shape(text, n, top, v, 3))
		return false;
	*why = "not a catalogue entry";
	if (v[0].p == NULL || v[0].p[0] < '0' || v[0].p[0] > '9')
		return false;
	*why = "written by another version";
	snprintf(version, sizeof(version), "%d", CATALOG_VERSION);
	if (v[0].n != strlen(version) || memcmp(v[0].p, version, v[0].n) != 0)
		return false;
	*why = NULL;		/* Another configuration's: no warning. */
	if (v[1].p == NULL || !json_span_is(&v[1], s->cfg->fingerprint))
		return false;
	*why = "no tools array";
	return v[2].p != NULL && v[2].p[0] == '[';
}

/*
 * Read a server's entry, once, if it has no list of its own yet: its
 * tools become the server's list until the server lists them itself.
 */
void
catalog_load(struct server *s)
{
	struct buf path = { 0 };
	const char *why;
	size_t len;
	char *text;

	if (s->catalog_read || s->state != SRV_IDLE || !wb.cfg.cache ||
	    catalog_dir() == NULL)
		return;
	s->catalog_read = true;
	entry_path(s, &path);
	if ((text = file_read(buf_cstr(&path), ENTRY_MAX, &len)) == NULL) {
		if (errno != ENOENT)
			wb_log("catalogue: ignoring %s: %s", path.data,
			    strerror(errno));
	} else if (!entry_valid(s, text, len, &why)) {
		if (why != NULL)
			wb_log("catalogue: ignoring %s: %s", path.data, why);
	} else {
		if (list_take_entry(s, text, len))
			text = NULL;	/* A list keeps it. */
		s->catalogued = true;
		s->catalog_hash = lists_hash(s);
	}
	free(text);
	buf_free(&path);
}

/* Write b whole to fd, and empty it.  0, or -1 with errno. */
static int
put_out(int fd, struct buf *b)
{
	size_t off = 0;
	ssize_t n;

	while (off < b->len) {
		if ((n = write(fd, b->data + off, b->len - off)) < 0 &&
		    errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		off += (size_t)n;
	}
	b->len = 0;
	return 0;
}

/* A list's entries to fd, through b, a piece of ENTRY_PIECE at a time. */
static int
put_list(int fd, struct buf *b, const struct listing *l)
{
	int i;

	for (i = 0; i < l->n; i++) {
		if (i > 0)
			buf_putc(b, ',');
		buf_put(b, l->items[i].json, l->items[i].len);
		if (b->len >= ENTRY_PIECE && put_out(fd, b) < 0)
			return -1;
	}
	return 0;
}

/*
 * A server's entry, written to fd as it is made: the lists it holds are
 * as large as the server's, and are not copied whole beside them.
 */
static int
entry_write(int fd, const struct server *s)
{
	struct buf b = { 0 };
	int k, r = 0;

	buf_printf(&b, "{\"mcpWorkbenchCatalogue\":%d,\"fingerprint\":",
	    CATALOG_VERSION);
	json_put_cstr(&b, s->cfg->fingerprint);
	buf_puts(&b, ",\"server\":");
	json_put_cstr(&b, s->label);
	for (k = 0; k < LIST_KINDS && r == 0; k++) {
		buf_printf(&b, ",\"%s\":[", members[k]);
		r = put_list(fd, &b, &s->lists[k]);
		buf_putc(&b, ']');
	}
	buf_puts(&b, "}\n");
	if (r == 0)
		r = put_out(fd, &b);
	buf_free(&b);
	return r;
}

/* Write the entry to path, through a temporary file and a rename. */
static int
write_atomically(const char *path, const struct server *s)
{
	struct buf tmp = { 0 };
	int fd, r = -1, e;

	buf_printf(&tmp, "%s.%ld.tmp", path, (long)getpid());
	fd = open(buf_cstr(&tmp), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600);
	if (fd >= 0) {
		r = entry_write(fd, s);
		if (close(fd) < 0 || (r == 0 && rename(tmp.data, path) < 0))
			r = -1;
		if (r < 0) {
			e = errno;	/* For the warning, not unlink's. */
			unlink(tmp.data);
			errno = e;
		}
	}
	buf_free(&tmp);
	return r;
}

/* A server listed its tools: its entry follows, if they changed. */
void
catalog_store(struct server *s)
{
	struct buf path = { 0 };
	unsigned long h;

	s->catalog_read = true;		/* Its own list is newer. */
	if (!wb.cfg.cache || catalog_dir() == NULL || dir_state != DIR_OK ||
	    (h = lists_hash(s)) == s->catalog_hash)
		return;
	entry_path(s, &path);
	if (write_atomically(buf_cstr(&path), s) < 0)
		read_only(path.data, strerror(errno));
	else
		s->catalog_hash = h;
	buf_free(&path);
}
