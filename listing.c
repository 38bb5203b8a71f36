/*
 * listing.c: a server's lists.  Tools, prompts, resources and resource
 * templates are fetched by one mechanism: every page (nextCursor) up to
 * LIST_PAGES_MAX, a repeated cursor ending the walk; each entry kept if
 * it passes the server's filters, and indexed by its key (a name, a URI
 * or a URI template).  The previous list serves until the new one is
 * complete; a fetch asked for while one is under way starts again when
 * it ends, so that the last change is always seen.  A list_changed the
 * server sends starts such a fetch (list_changed); a page's answer comes
 * here, read without the tokenizer (list_page) or tokenized
 * (list_answered), and a complete list goes back to server.c
 * (srv_listed), which moves the server's state on.
 */
#include <stdlib.h>
#include <string.h>

#include "server_int.h"
#include "mcp.h"

#define LIST_PAGES_MAX	1000
#define TEMPLATES_MAX	1000	/* Resource templates kept per server. */
#define PAGE_WHOLE	(64 * 1024)	/* A page this long may be kept whole. */

enum list_status {
	LIST_MORE,		/* The next page was asked for. */
	LIST_DONE,		/* Complete: the new list is in place. */
	LIST_FAILED,		/* The previous list stays; why says why. */
	LIST_INVALID		/* Not a well-formed answer: nothing changed. */
};

static const struct kind {
	const char	*method;
	const char	*array;		/* The result's member that lists. */
	const char	*key;		/* Each entry's member that names it. */
	const char	*noun;		/* What it lists, for messages. */
	const char	*changed;	/* The notification that refetches. */
	int		 max;		/* Entries kept, or 0: no bound. */
} kinds[LIST_KINDS] = {
	{ MCP_TOOLS_LIST, "tools", "name", "tools", "tools/list_changed", 0 },
	{ MCP_PROMPTS_LIST, "prompts", "name", "prompts",
	    "prompts/list_changed", 0 },
	{ MCP_RESOURCES_LIST, "resources", "uri", "resources",
	    "resources/list_changed", 0 },
	/* Templates are tried one by one for a URI: a server's are few. */
	{ MCP_RESOURCES_TEMPLATES_LIST, "resourceTemplates", "uriTemplate",
	    "resource templates", "resources/list_changed", TEMPLATES_MAX }
};

static void
send_page(struct server *s, enum list_kind k, const char *cursor)
{
	struct buf p = { 0 };
	struct request *r;

	buf_puts(&p, "{");
	srv_put_meta(s, &p);
	if (cursor != NULL) {
		if (p.len > 1)
			buf_putc(&p, ',');
		buf_puts(&p, "\"cursor\":");
		json_put_cstr(&p, cursor);
	}
	buf_puts(&p, "}");
	r = req_add(s, REQ_LIST);
	r->list = k;
	srv_send(s, r, kinds[k].method, p.data, p.len);
	buf_free(&p);
}

/*
 * Fetch a list (again): at once, or when the fetch under way ends.  Its
 * fetch goes IDLE --list_fetch--> PAGING --list_fetch--> AGAIN; the end
 * of a fetch (paging_free: the list installed, abandoned, cleared or
 * stopped) makes it IDLE, and one that was AGAIN is fetched again when
 * its list was installed or abandoned.
 */
void
list_fetch(struct server *s, enum list_kind k)
{
	struct listing *l = &s->lists[k];

	if (l->fetch != FETCH_IDLE)
		l->fetch = FETCH_AGAIN;
	else {
		l->fetch = FETCH_PAGING;
		send_page(s, k, NULL);
	}
}

bool
list_paging(const struct server *s)
{
	int k;

	for (k = 0; k < LIST_KINDS; k++)
		if (s->lists[k].fetch != FETCH_IDLE)
			return true;
	return false;
}

/*
 * Entries.
 */
/* What an entry holds beside its list's arena. */
static void
item_free(struct item *it)
{
	free(it->native);
	free(it->index);
}

static void
items_free(struct item *it, int n)
{
	int i;

	for (i = 0; i < n; i++)
		item_free(&it[i]);
	free(it);
}

/* Forget a list being paged in. */
static void
paging_free(struct listing *l)
{
	int i;

	items_free(l->fresh, l->nfresh);
	l->fresh = NULL;
	l->nfresh = 0;
	arena_free(&l->fmem);
	for (i = 0; i < l->ncursors; i++)
		free(l->cursors[i]);
	free(l->cursors);
	l->cursors = NULL;
	l->ncursors = 0;
	l->fetch = FETCH_IDLE;
	l->full = false;
}

/* The server stopped: no page will come.  The lists it had stay. */
void
list_stop(struct server *s)
{
	int k;

	for (k = 0; k < LIST_KINDS; k++)
		paging_free(&s->lists[k]);
}

static size_t
key_slot(const char *key, size_t len, size_t size)
{
	return hash_bytes(HASH_INIT, key, len) & (size - 1);
}

/*
 * Index a list by key (open addressing, at most half full), so that a
 * call finds its tool at once in a server of 10,000 tools.  A key listed
 * again keeps its first entry and the later ones are dropped: clients
 * refuse a list that names a tool twice.
 */
static void
list_index(struct server *s, enum list_kind k)
{
	struct listing *l = &s->lists[k];
	size_t size = 16, i;
	int t, kept = 0;

	free(l->index);
	while (size < (size_t)l->n * 2)
		size *= 2;
	l->index = xmalloc(size * sizeof(*l->index));
	l->nindex = size;
	for (i = 0; i < size; i++)
		l->index[i] = -1;
	for (t = 0; t < l->n; t++) {
		i = key_slot(l->items[t].key, strlen(l->items[t].key), size);
		while (l->index[i] >= 0 &&
		    strcmp(l->items[l->index[i]].key, l->items[t].key) != 0)
			i = (i + 1) & (size - 1);
		if (l->index[i] >= 0) {
			srv_warn(s, "%s names '%s' more than once; keeping the "
			    "first", kinds[k].method, l->items[t].key);
			item_free(&l->items[t]);
			continue;
		}
		l->items[kept] = l->items[t];
		l->index[i] = kept++;
	}
	l->n = kept;
}

/* The entry of this key, key[0, len) without NULs, or NULL. */
/* The entries of its last complete list of kind k, *n of them. */
struct item *
list_items(const struct server *s, enum list_kind k, int *n)
{
	*n = s->lists[k].n;
	return s->lists[k].items;
}

/* How many entries its last complete list of kind k has. */
int
list_count(const struct server *s, enum list_kind k)
{
	return s->lists[k].n;
}

/* Has it a list of kind k, indexed (even an empty one)? */
bool
list_indexed(const struct server *s, enum list_kind k)
{
	return s->lists[k].nindex > 0;
}

const struct item *
list_find(const struct server *s, enum list_kind k, const char *key,
    size_t len)
{
	const struct listing *l = &s->lists[k];
	const char *n;
	size_t i;

	if (l->nindex == 0)
		return NULL;
	i = key_slot(key, len, l->nindex);
	for (; l->index[i] >= 0; i = (i + 1) & (l->nindex - 1)) {
		n = l->items[l->index[i]].key;
		if (strncmp(n, key, len) == 0 && n[len] == '\0')
			return &l->items[l->index[i]];
	}
	return NULL;
}

/*
 * Lists replaced while a paced reply is made or waits (an open_toolbox
 * answer reads the lists it names as it goes) are kept until none is,
 * so that the answer gives each list as it was when it began.
 */
static struct retired {
	struct item	*items;
	int		 n;
	struct arena	 mem;
} *retired;
static int nretired;

static void
list_retire(struct listing *l)
{
	/* The array grows by doubling: its size follows from the count. */
	if (nretired == 0 || (nretired >= 4 && (nretired & (nretired - 1)) ==
	    0))
		retired = xrealloc(retired, (size_t)(nretired < 4 ? 4 :
		    2 * nretired) * sizeof(*retired));
	retired[nretired].items = l->items;
	retired[nretired].n = l->n;
	retired[nretired++].mem = l->mem;
}

/* The server goes: its lists go once no paced reply reads them. */
void
list_release(struct server *s)
{
	int k;

	for (k = 0; k < LIST_KINDS; k++) {
		list_retire(&s->lists[k]);
		free(s->lists[k].index);
		memset(&s->lists[k], 0, sizeof(s->lists[k]));
	}
}

/* No paced reply is left: the lists kept for them go. */
void
list_free_retired(void)
{
	while (nretired > 0) {
		nretired--;
		items_free(retired[nretired].items, retired[nretired].n);
		arena_free(&retired[nretired].mem);
	}
	free(retired);
	retired = NULL;
}

/* The new list (paged in, or read from the catalogue) replaces the old. */
static void
list_install(struct server *s, enum list_kind k)
{
	struct listing *l = &s->lists[k];

	if (sessions_pacing())
		list_retire(l);
	else {
		items_free(l->items, l->n);
		arena_free(&l->mem);
	}
	l->items = l->fresh;
	l->n = l->nfresh;
	l->mem = l->fmem;
	l->fresh = NULL;
	l->nfresh = 0;
	memset(&l->fmem, 0, sizeof(l->fmem));
	list_index(s, k);
	paging_free(l);
}

/* A server that no longer offers a kind lists none of it. */
void
list_clear(struct server *s, enum list_kind k)
{
	struct listing *l = &s->lists[k];

	paging_free(l);
	list_install(s, k);
}

static char *const *
filters_of(const struct server *s, enum list_kind k)
{
	if (k == LIST_TOOLS)
		return s->cfg->filters;
	return k == LIST_PROMPTS ? s->cfg->prompt_filters :
	    s->cfg->resource_filters;
}

/*
 * Add an entry, of key key (NULL when it has none; copied), to the list
 * being paged in, if it passes the filters.  Its text raw[0, len) stays
 * where it is: in the page, kept with the list (keep_page), or copied by
 * the caller.  The array grows by doubling: its size follows from the
 * count.
 */
static struct item *
add_item(struct server *s, enum list_kind k, const char *key,
    const char *raw, size_t len)
{
	struct listing *l = &s->lists[k];
	size_t n = (size_t)l->nfresh;
	struct item *it;

	if (key == NULL) {
		srv_warn(s, "%s: skipping an entry without a %s",
		    kinds[k].method, kinds[k].key);
		return NULL;
	}
	if (!tool_filter_match(filters_of(s, k), key))
		return NULL;
	if (kinds[k].max > 0 && l->nfresh == kinds[k].max) {
		if (!l->full)
			srv_warn(s, "%s lists more than %d %s; keeping the "
			    "first %d", kinds[k].method, kinds[k].max,
			    kinds[k].noun, kinds[k].max);
		l->full = true;
		return NULL;
	}
	if (n == 0 || (n >= 16 && (n & (n - 1)) == 0))
		l->fresh = xrealloc(l->fresh, (n < 16 ? 16 : 2 * n) *
		    sizeof(*l->fresh));
	it = &l->fresh[l->nfresh++];
	memset(it, 0, sizeof(*it));
	it->key = arena_strndup(&l->fmem, key, strlen(key));
	it->json = raw;
	it->len = (unsigned int)len;	/* At most maxMessageBytes. */
	return it;
}

/* Names are unescaped here before they are kept, if they are. */
static struct buf unescaped;

/* An entry, token t of j, added (add_item) with its native form. */
static struct item *
keep_tokens(struct server *s, enum list_kind k, const struct json *j, int t)
{
	struct item *it;
	const char *raw, *key = NULL;
	size_t len;

	if (json_is(j, t, JSMN_OBJECT))
		key = json_str(j, json_get(j, t, kinds[k].key), &unescaped);
	raw = json_raw(j, t, &len);
	if ((it = add_item(s, k, key, raw, len)) != NULL)
		it->native = srv_native(s, k, j, t, it->key);
	return it;
}

/*
 * Paging.
 */
/* Forget the entries kept since a page began. */
static void
drop_fresh(struct listing *l, int before)
{
	while (l->nfresh > before) {
		l->nfresh--;
		item_free(&l->fresh[l->nfresh]);
	}
}

/* Has this cursor come before?  Remembers it when not. */
static bool
cursor_seen(struct listing *l, const char *cursor)
{
	int i;

	for (i = 0; i < l->ncursors; i++)
		if (strcmp(l->cursors[i], cursor) == 0)
			return true;
	l->cursors = xrealloc(l->cursors, ((size_t)l->ncursors + 1) *
	    sizeof(*l->cursors));
	l->cursors[l->ncursors++] = xstrdup(cursor);
	return false;
}

/*
 * The entries of a page, from before on, point into its text[0, n), which
 * goes away after it is handled: their text is kept with the list.  A
 * page mostly kept is kept whole, without a copy: take gives up the
 * buffer that holds it (the server's input, or a catalogue entry read),
 * which goes with the list; true then.  Otherwise each entry is copied,
 * so that a filter keeping a few tools of many does not keep them all.
 */
static bool
keep_page(struct server *s, enum list_kind k, const char *text, size_t n,
    int before, char *(*take)(struct server *, const char *, size_t))
{
	struct listing *l = &s->lists[k];
	struct item *it;
	size_t kept = 0;
	char *page;
	int i;

	for (i = before; i < l->nfresh; i++)
		kept += l->fresh[i].len;
	if (n >= PAGE_WHOLE && kept >= n / 2 && take != NULL &&
	    (page = take(s, text, n)) != NULL) {
		arena_adopt(&l->fmem, page);
		return true;
	}
	for (i = before; i < l->nfresh; i++) {
		it = &l->fresh[i];
		it->json = arena_strndup(&l->fmem, it->json, it->len);
	}
	return false;
}

/* A page from the server's input, which gives up its buffer for it. */
static char *
take_line(struct server *s, const char *text, size_t n)
{
	return peer_give_line(&s->proc.io, text, n);
}

/* After a page, its line text[0, n): the next one, or the list is done. */
static int
next_page(struct server *s, enum list_kind k, const char *text, size_t n,
    const char *cursor, int before)
{
	struct listing *l = &s->lists[k];
	bool more = cursor != NULL && cursor[0] != '\0', again;

	if (more && cursor_seen(l, cursor)) {
		/* A server that loops repeats its pages: drop this one. */
		srv_warn(s, "%s repeated a cursor; keeping the first %d pages",
		    kinds[k].method, l->ncursors);
		drop_fresh(l, before);
	} else {
		(void)keep_page(s, k, text, n, before, take_line);
		if (more && l->ncursors >= LIST_PAGES_MAX)
			srv_warn(s, "%s has more than %d pages; keeping the "
			    "first %d", kinds[k].method, LIST_PAGES_MAX,
			    LIST_PAGES_MAX);
		else if (more) {
			send_page(s, k, cursor);
			return LIST_MORE;
		}
	}
	again = l->fetch == FETCH_AGAIN;
	list_install(s, k);		/* The fetch ends: FETCH_IDLE. */
	if (again)
		list_fetch(s, k);
	return LIST_DONE;
}

/* A page lost (its answer too big): the previous list stays. */
void
list_abandon(struct server *s, enum list_kind k)
{
	struct listing *l = &s->lists[k];
	bool again = l->fetch == FETCH_AGAIN;

	paging_free(l);
	if (again)
		list_fetch(s, k);
}

/*
 * The entry at a->i, checked: its span in *v and its key (the first
 * member of that name, unescaped; NULL when it is not a string or the
 * entry not an object) in *key, found by walking its members rather than
 * tokenizing it.  False when it is not JSON.
 */
static bool
entry_key(struct jwalk *a, enum list_kind k, struct span *v,
    const char **key)
{
	struct jwalk e;
	struct span mk, mv;
	bool seen = false;
	int r;

	*key = NULL;
	if (!json_walk(&e, a->s, a->n, a->i, a->level + 1) || !e.object)
		return json_walk_value(a, v);
	e.checked = a->checked;
	while ((r = json_walk_next(&e, &mk)) > 0 && json_walk_value(&e, &mv))
		if (!seen && json_span_is(&mk, kinds[k].key)) {
			*key = json_span_str(&mv, &unescaped);
			seen = true;
		}
	if (r != 0)
		return false;
	v->p = a->s + a->i;
	v->n = e.i - a->i;
	a->i = e.i;
	return true;
}

/*
 * Keep an entry of a page.  It is tokenized only when the client is shown
 * it under a name of its own (dyn_native).  False when it has more tokens
 * than the cap.
 */
static bool
keep_entry(struct server *s, enum list_kind k, const struct span *v,
    const char *key)
{
	static struct json entry;

	if (!srv_renames(k)) {
		(void)add_item(s, k, key, v->p, v->n);
		return true;
	}
	if (json_tokenize_span(&entry, v) != JSON_OK)
		return false;
	(void)keep_tokens(s, k, &entry, 0);
	json_release(&entry);
	return true;
}

/*
 * Take a page's entries: the kind's array in the result object at
 * text[at], each entry checked and kept alone, so that a list of 10,000
 * tools never needs the tokens of all of them at once.  Returns where the
 * result ends, 0 when it is not JSON; *found says whether it had the
 * array (the first member of that name), *cursor gets nextCursor (the
 * first).
 */
static size_t
page_entries(struct server *s, enum list_kind k, const char *text, size_t n,
    size_t at, bool checked, bool *found, char **cursor)
{
	struct jwalk w, a;
	struct span key, v;
	bool array = false, next = false;
	const char *name;
	int r, e;

	if (!json_walk(&w, text, n, at, 2) || !w.object)
		return 0;
	w.checked = checked;
	while ((r = json_walk_next(&w, &key)) > 0) {
		if (!array && json_span_is(&key, kinds[k].array) &&
		    json_walk(&a, text, n, w.i, 3) && !a.object) {
			a.checked = checked;
			while ((e = json_walk_next(&a, NULL)) > 0 &&
			    entry_key(&a, k, &v, &name) &&
			    keep_entry(s, k, &v, name))
				;
			if (e != 0)
				return 0;
			w.i = a.i;
			*found = array = true;
			continue;
		}
		if (!json_walk_value(&w, &v))
			return 0;
		array |= json_span_is(&key, kinds[k].array);
		if (!next && json_span_is(&key, "nextCursor")) {
			*cursor = json_span_strdup(&v);
			next = true;
		}
	}
	return r == 0 ? w.i : 0;
}

/*
 * A page that failed: the previous list stays.  why gets the server's
 * message, or says that its result had no array of the kind.
 */
static int
list_failed(struct server *s, enum list_kind k, bool result, const char *msg,
    struct buf *why)
{
	if (result)
		buf_printf(why, "no %s array", kinds[k].array);
	else
		buf_puts(why, msg != NULL ? msg : "no result");
	list_abandon(s, k);
	return LIST_FAILED;
}

/*
 * The answer to a page: the line text[0, n), its result object at
 * text[at].  With top (the members before the result, as rpc_scan_head
 * left them) the rest of the line is checked too; without, the line was
 * checked whole.  checked: the whole line was checked already (by the
 * tokenizer), so its entries are walked without being checked again.
 * LIST_MORE when the next page was asked for, LIST_DONE
 * when the list is complete, LIST_FAILED with the reason in why, or
 * LIST_INVALID when the line is not a well-formed answer: nothing changed.
 */
static int
list_answer(struct server *s, enum list_kind k, const char *text, size_t n,
    size_t at, bool checked, struct rpc_top *top, struct buf *why)
{
	int before = s->lists[k].nfresh, st;
	char *cursor = NULL;
	bool found = false;
	size_t end;

	end = page_entries(s, k, text, n, at, checked, &found, &cursor);
	if (end == 0 || (top != NULL && (rpc_members(text, n, end, false,
	    false, top) != 0 || top->error || top->method != NULL))) {
		drop_fresh(&s->lists[k], before);
		free(cursor);
		return LIST_INVALID;
	}
	if (!found)
		st = list_failed(s, k, true, NULL, why);
	else
		st = next_page(s, k, text, n, cursor, before);
	free(cursor);
	return st;
}

/* A catalogue entry read, whose buffer is the text itself. */
static char *
take_text(struct server *s, const char *text, size_t n)
{
	(void)s;
	(void)n;
	return (char *)text;	/* The caller's, given up (list_take_entry). */
}

/*
 * Take a server's lists from a catalogue entry, the object text[0, n)
 * checked already: each kind's array entry by entry, as a page.  True
 * when a list kept the text itself, which is then no longer the caller's
 * to free.
 */
bool
list_take_entry(struct server *s, char *text, size_t n)
{
	enum list_kind k;
	bool found, taken = false;
	char *cursor;

	for (k = 0; k < LIST_KINDS; k++) {
		found = false;
		cursor = NULL;
		if (page_entries(s, k, text, n, 0, true, &found, &cursor) ==
		    0 || !found) {
			drop_fresh(&s->lists[k], 0);
			free(cursor);
			continue;
		}
		free(cursor);
		taken |= keep_page(s, k, text, n, 0, taken ? NULL : take_text);
		list_install(s, k);
	}
	return taken;
}

/* Why a list that failed is not what the server offers; not fatal. */
void
list_warn(struct server *s, enum list_kind k, const char *reason,
    bool starting)
{
	if (starting)
		srv_warn(s, "%s failed (%s); it lists no %s, and keeps its "
		    "tools", kinds[k].method, reason, kinds[k].noun);
	else
		srv_warn(s, "%s after %s failed (%s); keeping its previous %s",
		    kinds[k].method, kinds[k].changed, reason, kinds[k].noun);
}

/* A list changed: fetch it again, serving the old one meanwhile. */
static void
refetch(struct server *s, enum list_kind k)
{
	if (!srv_serving(s))
		return;
	s->state = SRV_RELISTING;
	list_fetch(s, k);
}

/*
 * A list_changed of a list it declared, the method's token in j: that
 * list is fetched again.  False when the method is no list_changed.
 */
bool
list_changed(struct server *s, const struct json *j, int method)
{
	if (json_eq(j, method, MCP_NOTE_TOOLS_CHANGED))
		refetch(s, LIST_TOOLS);
	else if (json_eq(j, method, MCP_NOTE_PROMPTS_CHANGED)) {
		if (s->caps & CAP_PROMPTS)
			refetch(s, LIST_PROMPTS);
	} else if (json_eq(j, method,
	    MCP_NOTE_RESOURCES_CHANGED)) {
		if (s->caps & CAP_RESOURCES) {
			refetch(s, LIST_RESOURCES);
			refetch(s, LIST_TEMPLATES);
		}
	} else
		return false;
	return true;
}

/*
 * Tools the server cannot list fail its start; any other failed list
 * leaves it what it had.
 */
bool
list_fatal(const struct server *s, enum list_kind k)
{
	return k == LIST_TOOLS && s->state == SRV_STARTING;
}

/* After a page: the server fails, or its lists may be complete. */
static void
after_page(struct server *s, enum list_kind k, int st, struct buf *why)
{
	struct buf fail = { 0 };

	if (st == LIST_FAILED && list_fatal(s, k)) {
		buf_printf(&fail, MCP_TOOLS_LIST " failed: %s", buf_cstr(why));
		srv_fail(s, buf_cstr(&fail));
		buf_free(&fail);
	} else if (st != LIST_MORE) {
		if (st == LIST_FAILED)
			list_warn(s, k, buf_cstr(why),
			    s->state == SRV_STARTING);
		srv_listed(s);
	}
}

/* A page's answer by the general path, its tokens in j. */
void
list_answered(struct server *s, enum list_kind k, const struct json *j,
    const char *line, size_t n)
{
	int result = json_get(j, 0, "result"), error = json_get(j, 0, "error");
	struct buf why = { 0 };
	char *msg;
	int st = LIST_INVALID;

	if (error < 0 && json_is(j, result, JSMN_OBJECT))
		st = list_answer(s, k, line, n, (size_t)j->tok[result].start,
		    true, NULL, &why);
	if (st == LIST_INVALID) {
		msg = json_strdup(j, json_get(j, error, "message"));
		st = list_failed(s, k, error < 0 && result >= 0, msg, &why);
		free(msg);
	}
	after_page(s, k, st, &why);
	buf_free(&why);
}

/*
 * A page is read without tokenizing the whole line (list_answer), its id
 * found before its result or, as the TypeScript SDK writes it, as the
 * last member (which list_answer then checks with the rest).  False for
 * any other line, and for one that is not well-formed, which the general
 * path then handles.
 */
bool
list_page(struct server *s, const char *line, size_t n)
{
	struct rpc_top top;
	struct request r;
	struct buf why = { 0 };
	enum list_kind k;
	const char *id;
	size_t idlen;
	long long v;
	int i, st;

	if (rpc_scan_head(line, n, &top) != 1 || top.method != NULL ||
	    top.error || line[top.at] != '{')
		return false;
	id = top.id;
	idlen = top.idlen;
	if ((id == NULL && rpc_scan_id_tail(line, n, &id, &idlen) < 0) ||
	    !rpc_int_id(id, idlen, &v) || (i = req_find(s, v)) < 0 ||
	    s->req[i].kind != REQ_LIST)
		return false;
	k = s->req[i].list;
	if ((st = list_answer(s, k, line, n, top.at, false, &top, &why)) ==
	    LIST_INVALID)
		return false;
	req_take(s, req_find(s, v), &r);
	after_page(s, k, st, &why);
	req_free(&r);
	buf_free(&why);
	return true;
}
