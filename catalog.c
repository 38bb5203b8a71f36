/*
 * catalog.c: the tool catalogue on disk.  Each server's last complete
 * lists (tools, and the prompts, resources and templates it offers) are
 * kept in a file of its own under cacheDir, else
 * $XDG_CACHE_HOME/mcp-workbench, else ~/.cache/mcp-workbench, so that
 * open_toolbox can answer at once (the servers start meanwhile) and
 * search_tools can search toolboxes not opened in this session.
 *
 * An entry is named, and says inside that it is, by a keyed digest
 * (SipHash-2-4, the key a random one in the file "key" beside the
 * entries) of what makes the server's lists what they are: its
 * configuration as parsed and expanded (cfg_server_digest), and what of
 * the client's capabilities it was told can change what it offers
 * (era_caps_key); the name's first half is the same for every entry of
 * one configuration of a server.  Nothing of the configuration is
 * stored, in a name or in a file, and a server is never given another
 * configuration's entry.  A server with no entry for its client's
 * capabilities is given its newest for others (what --probe or another
 * client listed), until it lists its tools itself.
 *
 * Nothing on disk is trusted for being there (store.c): the directory
 * must be ours and writable by no one else, entries and the key regular
 * files of ours, opened without following links; an entry holds no line
 * break before its end, since its items are copied into lines on our
 * stdout.  Nothing about the catalogue stops the workbench: an entry
 * that cannot be used is ignored with a warning, and a directory or key
 * that cannot be used leaves the lists in memory, with one warning; a
 * directory that cannot be written is still read (a catalogue filled by
 * --probe may be part of a read-only system image).
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server_int.h"
#include "store.h"

#define CATALOG_VERSION	3
#define ENTRY_MAX	(64u * 1024 * 1024)	/* An entry's file at most. */
#define ENTRY_PIECE	(64u * 1024)		/* Written at a time. */
#define KEY_FILE	"key"
/*
 * Version 1 named its entries by 16 hex digits and held the fingerprint;
 * version 2 by 32, of one digest that no server can be found by.
 */
#define OLD_HEAD	"{\"mcpWorkbenchCatalogue\":1,"
#define V2_HEAD		"{\"mcpWorkbenchCatalogue\":2,"
#define NAME_HEX	32	/* An entry's name: hex digits, */
#define SERVER_HEX	16	/* the first of them the server's. */

/* DIR_READ: entries are read, but not written. */
static enum { DIR_UNKNOWN, DIR_OK, DIR_READ, DIR_NONE } dir_state;
static int dir = -1;
static char *dir_path;			/* For messages. */
static unsigned char key[SIP_KEY];

/* From now on entries are only read: said once. */
static void
read_only(const char *what, const char *why)
{
	wb_log_warn("catalogue: cannot write %s: %s; its entries are read, "
	    "but new tool lists are kept in memory only", what, why);
	dir_state = DIR_READ;
}

/* Where the catalogue is: false when there is no such place. */
static bool
dir_where(struct buf *b)
{
	const char *base;

	if (wb.cfg.cache_dir != NULL)
		buf_puts(b, wb.cfg.cache_dir);
	else if ((base = getenv("XDG_CACHE_HOME")) != NULL && base[0] == '/')
		buf_printf(b, "%s/mcp-workbench", base);
	else if ((base = getenv("HOME")) != NULL && base[0] == '/')
		buf_printf(b, "%s/.cache/mcp-workbench", base);
	else
		return false;
	return true;
}

/*
 * The key file: 1 with the key read; 0 when there is none; -1 when it
 * is not ours to use (*why: a link, another's, open to others); -2 when
 * it is ours but no key (of another size: cut short, or garbage).
 */
static int
key_read(const char **why)
{
	unsigned char k[SIP_KEY + 1];
	ssize_t n;
	size_t len = 0;
	int fd;

	if ((fd = store_open(dir, KEY_FILE, 077, why)) < 0)
		return *why == NULL ? 0 : -1;
	/* One byte more than a key: a longer file is told apart. */
	while (len < sizeof(k) && ((n = read(fd, k + len, sizeof(k) - len)) >
	    0 || (n < 0 && errno == EINTR)))
		if (n > 0)
			len += (size_t)n;
	close(fd);
	if (len != SIP_KEY)
		return -2;
	memcpy(key, k, SIP_KEY);
	return 1;
}

static int
fill_key(int fd, const void *k)
{
	return fd_write_all(fd, k, SIP_KEY);
}

/*
 * A new key in place (replace: of our malformed one), then read back:
 * two processes making one at once use the one that stayed.
 */
static int
key_make(bool replace, const char **why)
{
	unsigned char fresh[SIP_KEY];

	if (!wb_random(fresh, sizeof(fresh))) {
		*why = "no random bytes for a new one";
		return -1;
	}
	if ((replace ? store_replace(dir, KEY_FILE, fill_key, fresh) :
	    store_create(dir, KEY_FILE, fresh, sizeof(fresh))) < 0 &&
	    errno != EEXIST) {
		*why = strerror(errno);
		return -1;
	}
	return key_read(why);
}

/*
 * The key, read; made first if there is none and the directory can be
 * written.  Our own file that holds no key (cut short by a full disk, or
 * garbage) is replaced, as a corrupt entry is, with one warning: the
 * entries made with the key it held are of no use without it anyway.
 * One not ours is never touched.  False, said once, when there is no
 * usable key.
 */
static bool
key_load(bool writable)
{
	const char *why = NULL;
	int r;

	r = key_read(&why);
	if (r == -2 && writable && (r = key_make(true, &why)) == 1)
		wb_log_warn("catalogue: %s/" KEY_FILE ": not a key (16 bytes); "
		    "replaced with a new one", dir_path);
	else if (r == 0 && writable)
		r = key_make(false, &why);
	if (r == 1)
		return true;
	wb_log_warn("catalogue: %s/" KEY_FILE ": %s; tool lists are kept in "
	    "memory only", dir_path, r == -2 ? "not a key (16 bytes)" :
	    why != NULL ? why : "missing, and the directory cannot be "
	    "written");
	return false;
}

/*
 * The version of an entry of an earlier version named name: 1 (16 hex
 * digits and ".json"), 2 (32), or 0.
 */
static int
old_name(const char *name)
{
	size_t n = strspn(name, "0123456789abcdef");

	if (strcmp(name + n, ".json") != 0)
		return 0;
	return n == 16 ? 1 : n == NAME_HEX ? 2 : 0;
}

/*
 * Remove an entry of an earlier version, if name is one of ours
 * (store_names' fn; removed[v - 1] counts those of version v): version
 * 1 holds the configuration of a server in clear, version 2 is named in
 * a way no server is found by now.
 */
static void
remove_old(int d, const char *name, void *arg)
{
	char head[sizeof(OLD_HEAD) - 1];
	const char *why;
	int fd, *removed = arg, v = old_name(name);
	ssize_t n;

	if (v == 0 || (fd = store_open(d, name, 022, &why)) < 0)
		return;
	n = read(fd, head, sizeof(head));
	close(fd);
	if (n == (ssize_t)sizeof(head) && memcmp(head, v == 1 ? OLD_HEAD :
	    V2_HEAD, sizeof(head)) == 0 && store_remove(d, name) > 0)
		removed[v - 1]++;
}

/*
 * The catalogue's directory and key, on first use; false when there is
 * none to use.
 */
static bool
catalog_open(void)
{
	struct buf where = { 0 }, why = { 0 };
	bool writable;
	int e, removed[2] = { 0, 0 };

	if (dir_state != DIR_UNKNOWN)
		return dir_state != DIR_NONE;
	dir_state = DIR_NONE;
	if (!dir_where(&where)) {
		wb_log_warn("catalogue: no cacheDir, XDG_CACHE_HOME or HOME; "
		    "tool lists are kept in memory only");
		return false;
	}
	dir_path = buf_cstr(&where);
	if ((dir = store_dir(dir_path, &why)) < 0) {
		wb_log_warn("catalogue: %s: %s; tool lists are kept in memory "
		    "only", dir_path, buf_cstr(&why));
		buf_free(&why);
		return false;
	}
	writable = store_writable(dir);
	e = errno;
	if (!key_load(writable)) {
		close(dir);
		dir = -1;
		return false;
	}
	dir_state = DIR_OK;
	if (!writable)
		read_only(dir_path, strerror(e));
	else if (store_names(dir, remove_old, removed) && removed[0] > 0)
		wb_log_info("catalogue: %s: removed %d entr%s of an older "
		    "version, which held server configurations in clear",
		    dir_path, removed[0], removed[0] == 1 ? "y" : "ies");
	return true;
}

/* The first n bytes of a keyed digest of the parts, as hex digits. */
static void
digest_hex(const char *domain, const unsigned char *cfg, const struct buf *told,
    char *hex, int n)
{
	unsigned char id[SIP_TAG];
	struct siphash h;
	int i;

	sip_init(&h, key);
	sip_update(&h, domain, strlen(domain) + 1);
	sip_update(&h, cfg, SIP_TAG);
	if (told != NULL)
		sip_update(&h, told->data, told->len);
	sip_final(&h, id);
	for (i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
}

/*
 * The name of the entry of a server told caps (members, as servers are
 * told them): NAME_HEX hex digits, the first SERVER_HEX of them the
 * same for every entry of the server, so that one made for other
 * capabilities can be found (other_read).
 */
static void
entry_name(const struct server *s, const struct buf *caps, char *name)
{
	unsigned char cfg[SIP_TAG];
	struct buf told = { 0 };

	cfg_server_digest(s->cfg, key, cfg);
	era_caps_key(caps, &told);
	digest_hex(WB_NAME " catalogue server 3", cfg, NULL, name,
	    SERVER_HEX / 2);
	digest_hex(WB_NAME " catalogue entry 3", cfg, &told, name + SERVER_HEX,
	    (NAME_HEX - SERVER_HEX) / 2);
	buf_free(&told);
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
 * Is text[0, n) an entry of this version named name?  NULL, or why not.
 * It is checked whole, in one pass and without tokens, so that a list
 * of 10,000 tools is then read entry by entry without checking it again
 * (list_take_entry).  Its items go into lines on our stdout as they
 * are: a line break before its end would end one there.
 */
const char *
catalog_entry_check(const char *text, size_t n, const char *name)
{
	static const struct field top[] = {
		FIELD("mcpWorkbenchCatalogue", 0, NULL, false),
		FIELD("entry", 1, NULL, false),
		FIELD("tools", 2, NULL, false), FIELD_END };
	struct span v[3];
	char version[16];

	if (n > 0 && text[n - 1] == '\n')
		n--;
	if (memchr(text, '\n', n) != NULL || memchr(text, '\r', n) != NULL)
		return "holds a line break";
	if (!json_shape(text, n, top, v, 3))
		return "not valid JSON";
	if (v[0].p == NULL || v[0].p[0] < '0' || v[0].p[0] > '9')
		return "not a catalogue entry";
	snprintf(version, sizeof(version), "%d", CATALOG_VERSION);
	if (v[0].n != strlen(version) || memcmp(v[0].p, version, v[0].n) != 0)
		return "written by another version";
	if (v[1].p == NULL || !json_span_is(&v[1], name))
		return "another entry's file";
	if (v[2].p == NULL || v[2].p[0] != '[')
		return "no tools array";
	return NULL;
}

/*
 * The entry named name, read and checked: its text (n bytes), or NULL,
 * and then why (NULL when there is none).
 */
static char *
entry_read(const struct server *s, const char *name, size_t *n,
    const char **why)
{
	struct buf file = { 0 };
	char *text;

	buf_printf(&file, "%s.json", name);
	text = store_read(dir, file.data, ENTRY_MAX, 022, n, why);
	if (text != NULL && (*why = catalog_entry_check(text, *n, name)) !=
	    NULL) {
		free(text);
		text = NULL;
	}
	if (text == NULL && *why != NULL)
		wb_log_warn("catalogue: ignoring %s/%s (%s): %s", dir_path,
		    file.data, s->label, *why);
	buf_free(&file);
	return text;
}

/* The newest entry of a server but its own (store_names' fn). */
struct other {
	const char	*own;		/* Its own entry's name. */
	char		 name[NAME_HEX + 1];
	struct timespec	 mtime;
};

static bool
newer(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec != b->tv_sec ? a->tv_sec > b->tv_sec :
	    a->tv_nsec > b->tv_nsec;
}

static void
other_entry(int d, const char *name, void *arg)
{
	struct other *o = arg;
	struct stat st;

	if (strncmp(name, o->own, SERVER_HEX) != 0 ||
	    strncmp(name, o->own, NAME_HEX) == 0 ||
	    strspn(name, "0123456789abcdef") != NAME_HEX ||
	    strcmp(name + NAME_HEX, ".json") != 0 ||
	    fstatat(d, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    (o->name[0] != '\0' && !newer(&st.st_mtim, &o->mtime)))
		return;
	memcpy(o->name, name, NAME_HEX);
	o->name[NAME_HEX] = '\0';
	o->mtime = st.st_mtim;
}

/*
 * The server's entry made for other capabilities than its own, the
 * newest (entry_read checks it as any entry).  NULL when there is none.
 */
static char *
other_read(const struct server *s, size_t *len)
{
	struct other o = { .own = s->catalog_name };
	const char *why;

	if (!store_names(dir, other_entry, &o) || o.name[0] == '\0')
		return NULL;
	return entry_read(s, o.name, len, &why);
}

/*
 * What a server's entry is to it (enum catalog_use), moved by the four
 * functions below alone:
 *
 *	UNREAD --catalog_load finds its entry--> ENTRY
 *	UNREAD --catalog_load finds one for other capabilities--> OTHER
 *	UNREAD --catalog_load finds none--> DONE
 *	ENTRY --catalog_told: told other capabilities--> DONE
 *	ENTRY, OTHER --catalog_failed--> DONE
 *	any --catalog_store: it listed its tools--> DONE
 *
 * In ENTRY and OTHER its tools are the entry's (srv_catalogued); an
 * entry is read in UNREAD alone, so never over a list of its own.
 */
/*
 * Read a server's entry, once, if it has no list of its own yet: its
 * tools become the server's list until the server lists them itself.
 * It is the entry for what a server started now for a request of se
 * would be told (srv_told_for).  A server without one is given an entry
 * made for other capabilities (other_read), so that every client opens
 * and searches at once what any client or --probe listed; the server's
 * own list replaces it when the server starts, and the client hears of
 * the change as of any other.
 */
void
catalog_load(struct server *s, const struct session *se)
{
	const struct buf *caps = srv_told_for(se);
	const char *why;
	size_t len;
	char *text;

	if (s->catalog != CATALOG_UNREAD || s->state != SRV_IDLE ||
	    !wb.cfg.cache || !catalog_open())
		return;
	s->catalog = CATALOG_DONE;
	entry_name(s, caps, s->catalog_name);
	if ((text = entry_read(s, s->catalog_name, &len, &why)) != NULL)
		s->catalog = CATALOG_ENTRY;
	else if (why == NULL && (text = other_read(s, &len)) != NULL)
		s->catalog = CATALOG_OTHER;
	else
		return;
	if (list_take_entry(s, text, len))
		text = NULL;	/* A list keeps it. */
	/* Another's entry: the server's own list is stored when it comes. */
	s->catalog_hash = s->catalog == CATALOG_ENTRY ? lists_hash(s) : 0;
	free(text);
}

/*
 * The server is told the client's capabilities caps as it starts: the
 * lists it gives are for them, and are stored under their entry.  An
 * entry read for other capabilities no longer speaks for its tools.
 */
void
catalog_told(struct server *s, const struct buf *caps)
{
	char name[sizeof(s->catalog_name)];

	if (!wb.cfg.cache || !catalog_open())
		return;
	entry_name(s, caps, name);
	if (strcmp(name, s->catalog_name) == 0)
		return;
	memcpy(s->catalog_name, name, sizeof(name));
	if (s->catalog == CATALOG_ENTRY)
		s->catalog = CATALOG_DONE;
	s->catalog_hash = 0;
}

/*
 * The server failed: its tools are no longer vouched for by its entry.
 * If it failed to start, what the entry says is not what it offers now:
 * its entries, for every capability set, are removed, so that later
 * sessions open the server as if there were none and hear why it fails.
 */
struct doomed {
	const char	*server;	/* SERVER_HEX digits. */
	int		 removed;
};

/* Remove an entry of the server (store_names' fn). */
static void
remove_entry(int d, const char *name, void *arg)
{
	struct doomed *x = arg;

	if (strncmp(name, x->server, SERVER_HEX) == 0 &&
	    strspn(name, "0123456789abcdef") == NAME_HEX &&
	    strcmp(name + NAME_HEX, ".json") == 0 && store_remove(d, name) > 0)
		x->removed++;
}

void
catalog_failed(struct server *s)
{
	struct doomed x = { s->catalog_name, 0 };

	if (s->catalog != CATALOG_UNREAD)
		s->catalog = CATALOG_DONE;
	if (srv_serving(s) || s->catalog_name[0] == '\0' || dir_state != DIR_OK)
		return;
	if (store_names(dir, remove_entry, &x) && x.removed > 0)
		wb_log_info("catalogue: %s failed to start; its entr%s removed",
		    s->label, x.removed == 1 ? "y is" : "ies are");
	s->catalog_hash = 0;
}

/*
 * An item as stored: a raw '\r' between its tokens (a server may put
 * one there) is written as a space, which means the same, so that the
 * entry holds no line break.
 */
static void
put_item(struct buf *b, const struct item *it)
{
	const char *p = it->json, *end = p + it->len, *cr;

	while ((cr = memchr(p, '\r', (size_t)(end - p))) != NULL) {
		buf_put(b, p, (size_t)(cr - p));
		buf_putc(b, ' ');
		p = cr + 1;
	}
	buf_put(b, p, (size_t)(end - p));
}

/* Write b whole to fd, and empty it.  0, or -1 with errno. */
static int
put_out(int fd, struct buf *b)
{
	int r = fd_write_all(fd, b->data, b->len);

	b->len = 0;
	return r;
}

/* A list's entries to fd, through b, a piece of ENTRY_PIECE at a time. */
static int
put_list(int fd, struct buf *b, const struct listing *l)
{
	int i;

	for (i = 0; i < l->n; i++) {
		if (i > 0)
			buf_putc(b, ',');
		put_item(b, &l->items[i]);
		if (b->len >= ENTRY_PIECE && put_out(fd, b) < 0)
			return -1;
	}
	return 0;
}

/*
 * A server's entry, written to fd as it is made (store_replace's fill):
 * the lists it holds are as large as the server's, and are not copied
 * whole beside them.
 */
struct entry_out {
	const struct server	*s;
	const char		*name;	/* The entry it is written as. */
};

static int
entry_write(int fd, const void *arg)
{
	const struct entry_out *e = arg;
	const struct server *s = e->s;
	struct buf b = { 0 };
	int k, r = 0;

	buf_printf(&b, "{\"mcpWorkbenchCatalogue\":%d,\"entry\":\"%s\"",
	    CATALOG_VERSION, e->name);
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

/* A server listed its tools: its entry follows, if they changed. */
void
catalog_store(struct server *s)
{
	struct entry_out out = { s, s->catalog_name };
	struct buf file = { 0 }, what = { 0 };
	unsigned long h;
	int e;

	s->catalog = CATALOG_DONE;	/* Its own list is newer. */
	if (!wb.cfg.cache || s->catalog_name[0] == '\0' ||
	    dir_state != DIR_OK || (h = lists_hash(s)) == s->catalog_hash)
		return;
	buf_printf(&file, "%s.json", s->catalog_name);
	if (store_replace(dir, file.data, entry_write, &out) < 0) {
		e = errno;
		buf_printf(&what, "%s/%s", dir_path, file.data);
		read_only(what.data, strerror(e));
		buf_free(&what);
	} else
		s->catalog_hash = h;
	buf_free(&file);
}

/* At exit: the directory is let go, as every other descriptor is. */
void
catalog_close(void)
{
	if (dir >= 0)
		close(dir);
	dir = -1;
	free(dir_path);
	dir_path = NULL;
	dir_state = DIR_NONE;
}
