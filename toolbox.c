/*
 * toolbox.c: the toolboxes and their servers.  open_toolbox starts a
 * toolbox's servers and answers everyone waiting once none is starting;
 * use_tool finds the server of a call (box_target, shared with the fast
 * path) and hands the call to call.c.  The meta-tools are described here.
 */
#include <stdlib.h>
#include <string.h>

#include "box.h"

static struct toolbox *boxes;
static int nboxes;
static struct buf names[3];		/* use_tool's names, unescaped. */

static void	box_settle(struct toolbox *);

/*
 * The meta-tools.  Descriptions are written for a model that has nothing
 * else to go on.
 */
static const char meta_tools[] =
	"{\"name\":\"open_toolbox\",\"title\":\"Open a toolbox\","
	"\"description\":\"List a toolbox's tools with their input schemas, "
	"starting its servers.\","
	"\"inputSchema\":{\"type\":\"object\",\"properties\":{"
	"\"toolbox_name\":{\"type\":\"string\",\"minLength\":1}},"
	"\"required\":[\"toolbox_name\"],\"additionalProperties\":false},"
	"\"annotations\":{\"title\":\"Open a toolbox\",\"readOnlyHint\":false,"
	"\"destructiveHint\":false,\"idempotentHint\":true,"
	"\"openWorldHint\":false}},"
	"{\"name\":\"use_tool\",\"title\":\"Use a tool of a toolbox\","
	"\"description\":\"Call a tool found by search_tools or open_toolbox, "
	"with arguments matching its inputSchema. Returns the tool's "
	"result.\","
	"\"inputSchema\":{\"type\":\"object\",\"properties\":{"
	"\"tool\":{\"type\":\"object\",\"properties\":{"
	"\"toolbox\":{\"type\":\"string\",\"minLength\":1},"
	"\"server\":{\"type\":\"string\",\"minLength\":1},"
	"\"name\":{\"type\":\"string\",\"minLength\":1}},"
	"\"required\":[\"toolbox\",\"server\",\"name\"],"
	"\"additionalProperties\":false},"
	"\"arguments\":{\"type\":\"object\"}},"
	"\"required\":[\"tool\"],\"additionalProperties\":false},"
	"\"annotations\":{\"title\":\"Use a tool of a toolbox\","
	"\"readOnlyHint\":false,\"destructiveHint\":true,"
	"\"idempotentHint\":false,\"openWorldHint\":true}}";

void
box_put_tools(struct buf *b)
{
	buf_puts(b, meta_tools);
}

/* The toolboxes, over the servers in configuration order (server.c). */
/*
 * The box layer's step: toolboxes whose servers settled answer their
 * waiters, and sessions hear of changes to what they are shown
 * (box_before_poll); at shutdown, the listens end.
 */
static const struct loop_step box_step = {
	LOOP_SERVE, box_before_poll, listen_end_all, NULL, NULL, NULL
};

void
box_init(void)
{
	struct toolbox *b;
	static const struct srv_upcalls up = { dyn_renames, dyn_native,
	    res_updated, box_uses };
	int i, n = 0;

	srv_init_all();
	srv_upcalls(&up);
	loop_step_add(&box_step);
	nboxes = wb.cfg.nboxes;
	boxes = xcalloc((size_t)nboxes, sizeof(*boxes));
	for (i = 0; i < nboxes; i++) {
		b = &boxes[i];
		b->cfg = &wb.cfg.boxes[i];
		b->nservers = b->cfg->nservers;
		b->first = n;
		n += b->nservers;
	}
}

/* The i-th server of a toolbox, the instance the session uses. */
struct server *
box_srv(const struct session *se, const struct toolbox *b, int i)
{
	return srv_for(se, b->first + i);
}

/* The toolbox of a server. */
struct toolbox *
box_of(const struct server *s)
{
	return &boxes[srv_box(s)];
}

/* Has the session opened the toolbox? */
bool
box_seen(const struct session *se, const struct toolbox *b)
{
	return session_box_open(se, (int)(b - boxes));
}

/*
 * Does the session use the server: its toolbox open, or being opened?
 * (What the server says on its standard error goes to such sessions.)
 */
bool
box_uses(const struct session *se, const struct server *s)
{
	const struct toolbox *b = box_of(s);
	int i;

	if (!srv_used_by(s, se))
		return false;
	if (box_seen(se, b))
		return true;
	for (i = 0; i < b->nwaiters; i++)
		if (b->waiters[i].sess == se)
			return true;
	return false;
}

/* Each session hears of changes to what it is shown (list_changed). */
static void
box_notify(void)
{
	struct session *se;

	SESSION_EACH(se) {
		dyn_notify(se);
		res_notify(se);
	}
}

/*
 * Before the loop polls: everyone waiting for a toolbox whose servers
 * settled is answered, and each session told what its lists now hold.
 * Servers say so (srv_take_changed) rather than call up to here.
 */
void
box_before_poll(void)
{
	int i;

	if (!srv_take_changed())
		return;
	for (i = 0; i < nboxes; i++)
		box_settle(&boxes[i]);
	box_notify();
}

/* A new session: what it is shown now (nothing open) it knows. */
void
box_session_begin(struct session *se)
{
	dyn_begin(se);
	res_begin(se);
}

/*
 * Is the name, s[0, n) without NULs, this C string?  (Names arrive as
 * spans of a request's bytes, and are compared there, without a copy.)
 */
static bool
name_is(const char *cstr, const char *s, size_t n)
{
	return strncmp(cstr, s, n) == 0 && cstr[n] == '\0';
}

struct toolbox *
box_find(const char *name, size_t len)
{
	int i;

	for (i = 0; i < nboxes; i++)
		if (name_is(boxes[i].cfg->name, name, len))
			return &boxes[i];
	return NULL;
}

struct server *
box_server(const struct session *se, struct toolbox *b, const char *name,
    size_t len)
{
	int i;

	for (i = 0; i < b->nservers; i++)
		if (name_is(srv_name(box_srv(se, b, i)), name, len))
			return box_srv(se, b, i);
	return NULL;
}

static void
toolbox_names(struct buf *out)
{
	int i;

	for (i = 0; i < nboxes; i++)
		buf_printf(out, "%s%s", i > 0 ? ", " : "", boxes[i].cfg->name);
	if (nboxes == 0)
		buf_puts(out, "(none configured)");
}

/*
 * The server a call of {toolbox, server, name} goes to, each name checked
 * in turn.  NULL when there is none, with use_tool's words for why in why
 * (unless NULL).  A server not ready yet is returned: its tool is looked
 * for once it is.
 */
struct server *
box_target(const struct session *se, const char *box, size_t boxlen,
    const char *srv, size_t srvlen, const char *name, size_t namelen,
    struct buf *why)
{
	struct buf ignored = { 0 }, *t = why != NULL ? why : &ignored;
	struct toolbox *b;
	struct server *s = NULL;

	if (boxlen == 0)
		buf_puts(t, "toolbox: Toolbox name cannot be empty");
	else if (srvlen == 0)
		buf_puts(t, "server: Server name cannot be empty");
	else if (namelen == 0)
		buf_puts(t, "name: Tool name cannot be empty");
	else if ((b = box_find(box, boxlen)) == NULL) {
		buf_printf(t, "Error executing tool: Toolbox '%.*s' is not "
		    "configured. Available toolboxes: ", (int)boxlen, box);
		toolbox_names(t);
	} else if (!box_seen(se, b) && session_era(se) == NULL &&
	    !wb.cfg.open_on_use)
		buf_printf(t, "Error executing tool: Toolbox '%.*s' is not "
		    "open; call open_toolbox first in this session (or set "
		    "\"openOnUse\": true in the configuration)", (int)boxlen,
		    box);
	else if ((s = box_server(se, b, srv, srvlen)) == NULL)
		buf_printf(t, "Error executing tool: Server '%.*s' not found "
		    "in toolbox '%.*s'", (int)srvlen, srv, (int)boxlen, box);
	else if (srv_serving(s) && list_find(s, LIST_TOOLS, name, namelen) ==
	    NULL) {
		buf_printf(t, "Error executing tool: Tool '%.*s' not found in "
		    "server '%.*s'", (int)namelen, name, (int)srvlen, srv);
		s = NULL;
	}
	buf_free(&ignored);
	return s;
}

/*
 * A tool object: lean (lean.c), or as its server gave it with
 * "toolDetail": "full".  Its server is the group it is written in.
 */
static void
put_tool(struct buf *b, const struct item *t)
{
	if (wb.cfg.detail == DETAIL_LEAN)
		lean_put_tool(b, t);
	else
		buf_put(b, t->json, t->len);
}

/* Still starting, its tools known from the catalogue. */
static bool
from_catalogue(const struct server *s)
{
	return srv_known(s) && !srv_serving(s);
}

static bool
unknown(const struct server *s)
{
	return !srv_known(s);
}

static void
put_name(struct buf *out, const struct server *s)
{
	json_put_cstr(out, srv_name(s));
}

static void
put_failure(struct buf *out, const struct server *s)
{
	buf_puts(out, "{\"server\":");
	json_put_cstr(out, srv_name(s));
	buf_puts(out, ",\"error\":");
	json_put_cstr(out, srv_error(s) != NULL ? srv_error(s) :
	    "not started");
	buf_putc(out, '}');
}

/*
 * What a server offers the user besides tools, after its tools: prompts
 * and resources are not in the model's tool list, so their counts say
 * they exist.  A count of none is not written.
 */
static void
put_offers(struct buf *out, const struct server *s)
{
	static const struct {
		const char	*member;
		enum list_kind	 kind;
	} offers[] = {
		{ "prompts", LIST_PROMPTS },
		{ "resources", LIST_RESOURCES },
		{ "resource_templates", LIST_TEMPLATES },
	};
	size_t i;
	int n;

	for (i = 0; i < sizeof(offers) / sizeof(offers[0]); i++)
		if ((n = list_count(s, offers[i].kind)) > 0)
			buf_printf(out, ",\"%s\":%d", offers[i].member, n);
}

/*
 * ,"member":[...]: put for each server that keep accepts; with none, the
 * member only when always.
 */
static void
put_servers(struct buf *out, const struct session *se,
    const struct toolbox *b, const char *member,
    bool (*keep)(const struct server *),
    void (*put)(struct buf *, const struct server *), bool always)
{
	int i, n = 0;

	if (always)
		buf_printf(out, ",\"%s\":[", member);
	for (i = 0; i < b->nservers; i++) {
		if (!keep(box_srv(se, b, i)))
			continue;
		if (n++ > 0)
			buf_putc(out, ',');
		else if (!always)
			buf_printf(out, ",\"%s\":[", member);
		put(out, box_srv(se, b, i));
	}
	if (n > 0 || always)
		buf_putc(out, ']');
}

/* Tools written in one piece of the answer. */
#define TOOLS_PER_PIECE	64

/*
 * The open_toolbox result object, for content and structuredContent,
 * written a piece at a time as the client reads it (reply_structured_by):
 * its head, each server whose tools are known with its tools (a few at a
 * time), its tail.  A tool's server and toolbox are said once, for the
 * group, not for each tool.  What it says is fixed when it begins: each
 * server's list as it was then, which is kept until the answer ends even
 * if a new one replaces it (list_install).
 */
struct summary {
	const struct toolbox	*b;
	const struct session	*se;		/* Whose answer it is. */
	int			 ready;		/* servers_connected: known */
	const struct item	**items;	/* Each server's tools, */
	int			*count;		/* so many, or -1: unknown. */
	int			 srv;		/* The server being written, */
	int			 next;		/* its next tool. */
	int			 groups;	/* Servers written so far. */
	struct buf		 tail;		/* After the servers. */
};

static void
put_head(struct buf *out, const struct summary *m)
{
	buf_puts(out, "{\"toolbox\":");
	json_put_cstr(out, m->b->cfg->name);
	buf_puts(out, ",\"description\":");
	json_put_cstr(out, m->b->cfg->description);
	buf_printf(out, ",\"servers_connected\":%d,\"servers\":[", m->ready);
}

/* The first server from i on whose tools are known, or nservers. */
static int
next_known(const struct summary *m, int i)
{
	while (i < m->b->nservers && m->count[i] < 0)
		i++;
	return i;
}

/*
 * A piece of the current server's group: its head before its first tool,
 * then tools, then its offers once its tools are written; then on to the
 * next server whose tools are known.
 */
static void
put_group(struct buf *out, struct summary *m)
{
	const struct server *s = box_srv(m->se, m->b, m->srv);
	int n;

	if (m->next == 0) {
		buf_puts(out, m->groups++ > 0 ? ",{\"server\":" :
		    "{\"server\":");
		json_put_cstr(out, srv_name(s));
		buf_puts(out, ",\"tools\":[");
	}
	for (n = 0; n < TOOLS_PER_PIECE && m->next < m->count[m->srv]; n++) {
		if (m->next > 0)
			buf_putc(out, ',');
		put_tool(out, &m->items[m->srv][m->next++]);
	}
	if (m->next < m->count[m->srv])
		return;
	buf_putc(out, ']');
	put_offers(out, s);
	buf_putc(out, '}');
	m->next = 0;
	m->srv = next_known(m, m->srv + 1);
}

/*
 * Piece *at: 0 the head, then the servers' groups, then the tail.  The
 * object is written twice, as text and as structuredContent: the head
 * begins the walk over the servers anew.
 */
static bool
put_summary(struct buf *out, const void *arg, size_t *at)
{
	struct summary *m = (struct summary *)arg;

	if (*at == 0) {
		put_head(out, m);
		m->srv = next_known(m, 0);
		m->next = m->groups = 0;
	} else if (m->srv < m->b->nservers)
		put_group(out, m);
	else {
		buf_put(out, m->tail.data, m->tail.len);
		return false;
	}
	++*at;
	return true;
}

static struct summary *
summary_new(const struct session *se, const struct toolbox *b)
{
	struct summary *m = xcalloc(1, sizeof(*m));
	const struct server *s;
	int i;

	m->b = b;
	m->se = se;
	m->items = xcalloc((size_t)b->nservers, sizeof(*m->items));
	m->count = xcalloc((size_t)b->nservers, sizeof(*m->count));
	for (i = 0; i < b->nservers; i++) {
		s = box_srv(se, b, i);
		m->items[i] = list_items(s, LIST_TOOLS, &m->count[i]);
		if (!srv_known(s))
			m->count[i] = -1;
		m->ready += srv_known(s);
	}
	buf_putc(&m->tail, ']');
	put_servers(&m->tail, se, b, "from_catalogue", from_catalogue,
	    put_name, false);
	put_servers(&m->tail, se, b, "servers_failed", unknown, put_failure,
	    false);
	buf_putc(&m->tail, '}');
	return m;
}

static void
summary_free(void *arg)
{
	struct summary *m = arg;

	free(m->items);
	free(m->count);
	buf_free(&m->tail);
	free(m);
}

static void
reply_summary(struct session *se, const struct toolbox *b, const char *cid,
    size_t cidlen)
{
	struct pieces p = { put_summary, summary_free, summary_new(se, b) };

	reply_structured_by(se, cid, cidlen, &p);
}

/* How many servers' tools open_toolbox would list to the session. */
static int
box_known(const struct session *se, const struct toolbox *b)
{
	int i, known = 0;

	for (i = 0; i < b->nservers; i++)
		known += srv_known(box_srv(se, b, i));
	return known;
}

static void
box_failure_text(const struct session *se, const struct toolbox *b,
    struct buf *out)
{
	const struct server *s;
	int i;

	buf_printf(out, "Failed to open toolbox '%s': no server could be "
	    "started.", b->cfg->name);
	for (i = 0; i < b->nservers; i++) {
		s = box_srv(se, b, i);
		buf_printf(out, "\n- server '%s': %s", srv_name(s),
		    srv_error(s) != NULL ? srv_error(s) : "not started");
	}
	if (b->nservers == 0)
		buf_puts(out, " It has no servers configured.");
}

/* Is a server of the toolbox, as the session uses it, still starting? */
static bool
box_starting(const struct session *se, const struct toolbox *b)
{
	const struct server *s;
	int i;

	for (i = 0; i < b->nservers; i++) {
		s = box_srv(se, b, i);
		if (srv_state(s) == SRV_STARTING && !srv_known(s))
			return true;
	}
	return false;
}

static void
box_answer(struct toolbox *b, struct waiter *w)
{
	struct buf failed = { 0 };
	int ready = box_known(w->sess, b);

	if (ready > 0)
		session_open_box(w->sess, (int)(b - boxes));
	reply_era(w->sess, w->modern);
	if (ready == 0) {
		box_failure_text(w->sess, b, &failed);
		reply_text(w->sess, w->cid, w->cidlen, buf_cstr(&failed),
		    true);
	} else
		reply_summary(w->sess, b, w->cid, w->cidlen);
	free(w->cid);
	buf_free(&failed);
}

/*
 * Answer everyone waiting for the toolbox once none of the servers it
 * uses is starting, or at once when the tools of those starting are
 * known from the catalogue; in the order they asked.
 */
static void
box_settle(struct toolbox *b)
{
	int i, k = 0, was = b->nwaiters;

	if (b->nwaiters == 0 || b->starting)
		return;
	for (i = 0; i < b->nwaiters; i++)
		if (box_starting(b->waiters[i].sess, b))
			b->waiters[k++] = b->waiters[i];
		else
			box_answer(b, &b->waiters[i]);
	b->nwaiters = k;
	if (k == 0) {
		free(b->waiters);
		b->waiters = NULL;
	}
	if (k < was)
		box_notify();
}

/*
 * Start the toolbox's servers for the session, each given its catalogue
 * entry first (the tools known while it starts).
 */
static void
box_start(struct session *se, struct toolbox *b)
{
	int i;

	for (i = 0; i < b->nservers; i++)
		catalog_load(box_srv(se, b, i), se);
	/* A server failing at once must not answer before the rest start. */
	b->starting = true;
	for (i = 0; i < b->nservers; i++)
		srv_open(box_srv(se, b, i), se);
	b->starting = false;
}

static void
box_open(struct session *se, struct toolbox *b, const char *cid,
    size_t cidlen)
{
	struct waiter *w;

	b->waiters = xrealloc(b->waiters, ((size_t)b->nwaiters + 1) *
	    sizeof(*b->waiters));
	w = &b->waiters[b->nwaiters++];
	w->sess = se;
	w->cid = xstrndup(cid, cidlen);
	w->cidlen = cidlen;
	w->modern = session_era(se) != NULL;
	box_start(se, b);
	box_settle(b);
}

/*
 * The session's waiters for an open_toolbox of this id (any id, id
 * NULL) go: a cancelled one is simply not answered.
 */
static void
box_drop_waiters(const struct session *se, const char *id, size_t idlen)
{
	struct toolbox *b;
	int i, k;

	for (i = 0; i < nboxes; i++) {
		b = &boxes[i];
		for (k = b->nwaiters - 1; k >= 0; k--)
			if (b->waiters[k].sess == se && (id == NULL ||
			    (b->waiters[k].cidlen == idlen &&
			    memcmp(b->waiters[k].cid, id, idlen) == 0))) {
				free(b->waiters[k].cid);
				b->waiters[k] = b->waiters[--b->nwaiters];
			}
	}
}

/* The client cancelled an open_toolbox. */
void
box_cancel(const struct session *se, const char *id, size_t idlen)
{
	box_drop_waiters(se, id, idlen);
}

/*
 * A session is gone: it waits for no toolbox, listens to nothing, and is
 * subscribed to nothing any more.
 */
void
box_session_gone(struct session *se)
{
	box_drop_waiters(se, NULL, 0);
	listen_session_gone(se);
	res_session_gone(se);
}

/*
 * A call that names a toolbox not open opens it when the request is
 * modern (stateless: the server it calls starts as the call needs it)
 * or "openOnUse" is set: then as open_toolbox does, from the catalogue
 * and by starting its servers, without waiting for them.
 */
void
box_open_on_use(struct session *se, struct toolbox *b)
{
	if ((session_era(se) == NULL && !wb.cfg.open_on_use) ||
	    box_seen(se, b))
		return;
	session_open_box(se, (int)(b - boxes));
	if (session_era(se) != NULL)
		return;
	box_start(se, b);
	/* A 2025 session hears that its lists grew, as after open_toolbox. */
	dyn_notify(se);
	res_notify(se);
}

/*
 * The meta-tools' calls.
 */
void
box_open_tool(struct session *se, const struct json *j, int args,
    const char *id, size_t idlen)
{
	struct toolbox *b;
	struct buf t = { 0 };
	char *name;
	int k;

	k = json_get(j, args, "toolbox_name");
	if (k < 0)
		k = json_get(j, args, "toolbox");
	if ((name = json_strdup(j, k)) == NULL || name[0] == '\0') {
		reply_text(se, id, idlen, "Invalid tool invocation parameters: "
		    "toolbox_name: expected a non-empty string (the name of "
		    "the toolbox to open)", true);
		free(name);
		return;
	}
	if ((b = box_find(name, strlen(name))) == NULL) {
		buf_printf(&t, "Toolbox '%s' not found. Available toolboxes: ",
		    name);
		toolbox_names(&t);
		reply_text(se, id, idlen, buf_cstr(&t), true);
		buf_free(&t);
	} else
		box_open(se, b, id, idlen);
	free(name);
}

/* use_tool: the identifier checked (toolname.c), then its names. */
void
box_use_tool(struct session *se, const struct json *j, int args, int params,
    const char *id, size_t idlen)
{
	struct buf t = { 0 }, details = { 0 };
	struct server *s;
	const char *box, *srv, *name;
	struct call_in in;
	int top[2], ident[3];

	if (!tool_ident_valid(j, args, top, ident, &details))
		buf_printf(&t, "Invalid tool invocation parameters: %s",
		    buf_cstr(&details));
	else if ((box = json_str(j, ident[U_BOX], &names[0])) == NULL ||
	    (srv = json_str(j, ident[U_SERVER], &names[1])) == NULL ||
	    (name = json_str(j, ident[U_NAME], &names[2])) == NULL)
		buf_puts(&t, "Invalid tool invocation parameters: names must "
		    "not contain \\u0000");
	else if ((s = box_target(se, box, strlen(box), srv, strlen(srv), name,
	    strlen(name), &t)) != NULL) {
		box_open_on_use(se, box_of(s));
		call_in_tokens(j, top[U_ARGS], params, &in);
		call_route(s, se, name, strlen(name), &in, id, idlen);
	}
	if (t.len > 0)
		reply_text(se, id, idlen, buf_cstr(&t), true);
	buf_free(&t);
	buf_free(&details);
}
