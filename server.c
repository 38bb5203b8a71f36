/*
 * server.c: the servers of the toolboxes.  Starting them, initialize and
 * the paged tools/list, calls routed to them and their answers spliced
 * back, the relaying of what they say to the client, their timers, and
 * what happens when one fails or dies.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "workbench.h"

#define LIST_PAGES_MAX	1000
#define EOF_GRACE_MS	250

static void	srv_fail(struct server *, const char *);
static void	srv_relist(struct server *);
static void	box_settle(struct toolbox *);
static void	call_arm(const struct server *, struct request *, long long);
static void	relist_failed(struct server *, const char *);

/*
 * Messages to a server.
 */
static struct request *
req_add(struct server *s, enum req_kind kind)
{
	struct request *r;

	if (s->nreq == s->capreq) {
		s->capreq = s->capreq > 0 ? s->capreq * 2 : 8;
		s->req = xrealloc(s->req, (size_t)s->capreq * sizeof(*s->req));
	}
	r = &s->req[s->nreq++];
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->id = ++s->next_id;
	return r;
}

static void
req_free(struct request *r)
{
	text_free(&r->cid);
	text_free(&r->tool);
	free(r->params);
	free(r->token);
}

static void
req_remove(struct server *s, int i)
{
	req_free(&s->req[i]);
	s->req[i] = s->req[--s->nreq];
}

static int
req_newer_first(const void *a, const void *b)
{
	long long x = ((const struct request *)a)->id;
	long long y = ((const struct request *)b)->id;

	return x < y ? 1 : x > y ? -1 : 0;
}

static int
req_find(struct server *s, long long id)
{
	int i;

	for (i = 0; i < s->nreq; i++)
		if (s->req[i].id == id)
			return i;
	return -1;
}

/*
 * A request's start, {"jsonrpc":"2.0","id":N,"method":M,"params":, in the
 * server's queue; the caller adds the params and "}\n".
 */
static struct buf *
srv_send_head(struct server *s, struct request *r, const char *method)
{
	struct buf *b = &s->proc.io.out;

	r->sent = true;
	buf_puts(b, "{\"jsonrpc\":\"2.0\",\"id\":");
	buf_put_int(b, r->id);
	buf_puts(b, ",\"method\":\"");
	buf_puts(b, method);
	buf_puts(b, "\",\"params\":");
	return b;
}

static void
srv_send(struct server *s, struct request *r, const char *method,
    const char *params, size_t plen)
{
	struct buf *b = srv_send_head(s, r, method);

	buf_put(b, params, plen);
	buf_puts(b, "}\n");
}

void
srv_notify(struct server *s, const char *method)
{
	buf_printf(&s->proc.io.out, "{\"jsonrpc\":\"2.0\",\"method\":\"%s\"}\n",
	    method);
}

/*
 * Ghosts: calls that ended without their answer (cancelled, timed out),
 * which the server may still answer.  A result whose id comes last is
 * passed on as it arrives only while its server has none, so that its id
 * can only name a call in progress; should a call become a ghost while
 * such a result passes, the result ends under that call's client id (a
 * late answer, which JSON-RPC lets the client ignore) rather than cut
 * short.  A ghost goes when its answer comes or its server stops.
 */
static void
ghost_add(struct server *s, const struct request *r)
{
	struct ghost *g;

	if (s->ghosts == NULL)
		s->ghosts = xmalloc(GHOSTS_MAX * sizeof(*s->ghosts));
	if (s->nghosts == GHOSTS_MAX) {
		text_free(&s->ghosts[0].cid);
		memmove(s->ghosts, s->ghosts + 1,
		    (GHOSTS_MAX - 1) * sizeof(*s->ghosts));
		s->nghosts--;
		s->ghosts_lost = true;
	}
	g = &s->ghosts[s->nghosts++];
	g->id = r->id;
	text_set(&g->cid, text_get(&r->cid), r->cid.len);
}

static int
ghost_find(const struct server *s, long long id)
{
	int i;

	for (i = 0; i < s->nghosts; i++)
		if (s->ghosts[i].id == id)
			return i;
	return -1;
}

static void
ghost_remove(struct server *s, int i)
{
	text_free(&s->ghosts[i].cid);
	s->ghosts[i] = s->ghosts[--s->nghosts];
}

/* Its late answer came: it is a ghost no more. */
static void
ghost_answered(struct server *s, long long id)
{
	int i;

	if ((i = ghost_find(s, id)) >= 0)
		ghost_remove(s, i);
}

/* Tell the server to drop a call it was sent. */
static void
srv_send_cancelled(struct server *s, long long id, const char *reason)
{
	buf_printf(&s->proc.io.out, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/cancelled\",\"params\":{\"requestId\":%lld,"
	    "\"reason\":\"%s\"}}\n", id, reason);
}

/* The same, when its answer may still come. */
static void
srv_cancel(struct server *s, const struct request *r, const char *reason)
{
	srv_send_cancelled(s, r->id, reason);
	ghost_add(s, r);
}

void
srv_send_level(struct server *s)
{
	struct buf p = { 0 };

	if (!s->logging || wb.log_level == NULL)
		return;
	buf_printf(&p, "{\"level\":%s}", wb.log_level);
	srv_send(s, req_add(s, REQ_LEVEL), "logging/setLevel", p.data, p.len);
	buf_free(&p);
}

static void
srv_send_initialize(struct server *s)
{
	struct buf p = { 0 };

	buf_puts(&p, "{\"protocolVersion\":");
	json_put_cstr(&p, wb.protocol != NULL ? wb.protocol :
	    WB_PROTOCOL_LATEST);
	buf_puts(&p, ",\"capabilities\":{");
	buf_put(&p, wb.client_caps.data, wb.client_caps.len);
	buf_printf(&p, "},\"clientInfo\":{\"name\":\"" WB_NAME "\","
	    "\"version\":\"%s\"}}", wb_version);
	srv_send(s, req_add(s, REQ_INIT), "initialize", p.data, p.len);
	buf_free(&p);
}

static void
srv_send_list(struct server *s, const char *cursor)
{
	struct buf p = { 0 };

	buf_puts(&p, "{");
	if (cursor != NULL) {
		buf_puts(&p, "\"cursor\":");
		json_put_cstr(&p, cursor);
	}
	buf_puts(&p, "}");
	srv_send(s, req_add(s, REQ_LIST), "tools/list", p.data, p.len);
	buf_free(&p);
}

static void
tool_free(struct tool *t)
{
	free(t->name);
	free(t->json);
	free(t->native);
}

static void
tools_free(struct tool *t, int n)
{
	int i;

	for (i = 0; i < n; i++)
		tool_free(&t[i]);
	free(t);
}

static void
cursors_free(struct server *s)
{
	int i;

	for (i = 0; i < s->ncursors; i++)
		free(s->cursors[i]);
	free(s->cursors);
	s->cursors = NULL;
	s->ncursors = 0;
}

static unsigned long
name_hash(const char *s, size_t n)
{
	unsigned long h = 2166136261u;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
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

/*
 * Index the tool list by name (open addressing, at most half full), so
 * that a call finds its tool at once in a server of 10,000 tools.  A name
 * listed again keeps its first tool and the later ones are dropped:
 * clients refuse a list that names a tool twice.
 */
static void
srv_index(struct server *s)
{
	size_t size = 16, i;
	int t, kept = 0;

	free(s->index);
	while (size < (size_t)s->ntools * 2)
		size *= 2;
	s->index = xmalloc(size * sizeof(*s->index));
	s->nindex = size;
	for (i = 0; i < size; i++)
		s->index[i] = -1;
	for (t = 0; t < s->ntools; t++) {
		i = name_hash(s->tools[t].name, strlen(s->tools[t].name)) &
		    (size - 1);
		while (s->index[i] >= 0 &&
		    strcmp(s->tools[s->index[i]].name, s->tools[t].name) != 0)
			i = (i + 1) & (size - 1);
		if (s->index[i] >= 0) {
			wb_log("%s: tools/list names '%s' more than once; keeping "
			    "the first", s->label, s->tools[t].name);
			tool_free(&s->tools[t]);
			continue;
		}
		s->tools[kept] = s->tools[t];
		s->index[i] = kept++;
	}
	s->ntools = kept;
}

const struct tool *
srv_tool(const struct server *s, const char *name, size_t len)
{
	size_t i;

	if (s->nindex == 0)
		return NULL;
	i = name_hash(name, len) & (s->nindex - 1);
	for (; s->index[i] >= 0; i = (i + 1) & (s->nindex - 1))
		if (name_is(s->tools[s->index[i]].name, name, len))
			return &s->tools[s->index[i]];
	return NULL;
}

/* The text of a failed call, as use_tool promises it. */
static void
call_error(const struct server *s, const struct request *r,
    const char *reason)
{
	struct buf t = { 0 };

	buf_printf(&t, "Error executing tool '%s' in server '%s' "
	    "(toolbox '%s'): %s", text_get(&r->tool), s->cfg->name,
	    s->box->cfg->name, reason);
	reply_text(text_get(&r->cid), r->cid.len, buf_cstr(&t), true);
	buf_free(&t);
}

/* Start (or, on progress, restart) a call's timers. */
static void
call_arm(const struct server *s, struct request *r, long long now)
{
	if (s->cfg->call_timeout_ms > 0)
		r->idle_at = now + s->cfg->call_timeout_ms;
	if (s->cfg->call_max_ms > 0 && r->hard_at == 0)
		r->hard_at = now + s->cfg->call_max_ms;
}

/*
 * Can a call go to its ready server now?  If not it is answered, and
 * removed.  A call routed at once had its tool found by the caller; one
 * that waited for the server is looked for in the list it now has.
 */
static bool
call_sendable(struct server *s, struct request *r, bool waited)
{
	struct buf t = { 0 };

	if (srv_stuck(s, loop_ms())) {
		buf_printf(&t, "the server is not reading its input (%zu bytes "
		    "waiting, none taken for %d ms)", peer_queued(&s->proc.io),
		    STUCK_MS);
		call_error(s, r, buf_cstr(&t));
	} else if (waited && srv_tool(s, text_get(&r->tool), r->tool.len) ==
	    NULL) {
		buf_printf(&t, "Error executing tool: Tool '%s' not found in "
		    "server '%s'", text_get(&r->tool), s->cfg->name);
		reply_text(text_get(&r->cid), r->cid.len, buf_cstr(&t), true);
	}
	if (t.len == 0)
		return true;
	buf_free(&t);
	req_remove(s, (int)(r - s->req));
	return false;
}

/* Send a call that waited for its server to be ready. */
static void
call_dispatch(struct server *s, struct request *r)
{
	if (!call_sendable(s, r, true))
		return;
	srv_send(s, r, "tools/call", r->params, r->plen);
	free(r->params);
	r->params = NULL;
	call_arm(s, r, loop_ms());
}

/* A restart budget keeps a crash loop from spinning. */
static bool
srv_may_start(struct server *s, long long now)
{
	int i, recent = 0;

	for (i = 0; i < s->nstarts && i < RESTARTS_MAX; i++)
		if (now - s->starts[i] < RESTART_WINDOW)
			recent++;
	return recent < RESTARTS_MAX;
}

static void
srv_start(struct server *s)
{
	struct buf why = { 0 };
	long long now = now_ms();

	if (!srv_may_start(s, now)) {
		/* The error that made it fail, quoted once. */
		if (s->refused)
			buf_puts(&why, s->error);
		else
			buf_printf(&why, "restarted %d times within %d s; not "
			    "restarting it again yet (last error: %s)",
			    RESTARTS_MAX, RESTART_WINDOW / 1000,
			    s->error != NULL ? s->error : "none");
		srv_fail(s, buf_cstr(&why));
		s->refused = true;
		buf_free(&why);
		return;
	}
	s->refused = false;
	s->starts[s->nstarts++ % RESTARTS_MAX] = now;
	if (proc_spawn(&s->proc, s->cfg, &why) < 0) {
		srv_fail(s, buf_cstr(&why));
		buf_free(&why);
		return;
	}
	s->state = SRV_STARTING;
	s->logging = false;	/* Until this process's initialize says. */
	s->deadline = now + s->cfg->init_timeout_ms;
	s->drained_at = now;
	srv_send_initialize(s);
}

/* Close our ends and give the process group to the escalation. */
void
srv_stop_process(struct server *s)
{
	stream_abort(s, "the server was stopped");
	if (s->proc.pid > 0)
		proc_retire(s->proc.pid, s->proc.reaped);
	s->proc.pid = 0;
	s->proc.reaped = false;
	s->eof_at = 0;
	proc_close(&s->proc);
	while (s->nghosts > 0)
		ghost_remove(s, s->nghosts - 1);
	s->ghosts_lost = false;
}

/*
 * Requests from servers to the client.
 */
static void
up_remove(int i)
{
	free(wb.up[i].sid);
	wb.up[i] = wb.up[--wb.nup];
}

/* A server is gone: the client need not answer what it asked. */
static void
up_forget(const struct server *s)
{
	int i;

	for (i = wb.nup - 1; i >= 0; i--) {
		if (wb.up[i].srv != s)
			continue;
		buf_printf(client_out(), "{\"jsonrpc\":\"2.0\",\"method\":"
		    "\"notifications/cancelled\",\"params\":{\"requestId\":"
		    "%lld,\"reason\":\"the server stopped\"}}\n", wb.up[i].up);
		up_remove(i);
	}
}

/*
 * The server failed to start, or died: answer everything waiting on it
 * and end its process.  It may be started again later.
 */
static void
srv_fail(struct server *s, const char *reason)
{
	struct buf why = { 0 };
	int i;

	stream_abort(s, reason);
	buf_puts(&why, reason);
	proc_tail(&s->proc, &why);
	free(s->error);
	s->error = xstrdup(buf_cstr(&why));
	buf_free(&why);
	wb_log("%s: %s", s->label, s->error);
	srv_stop_process(s);
	s->state = SRV_FAILED;
	for (i = s->nreq - 1; i >= 0; i--) {
		if (s->req[i].kind == REQ_CALL)
			call_error(s, &s->req[i], s->error);
		req_remove(s, i);
	}
	tools_free(s->fresh, s->nfresh);
	s->fresh = NULL;
	s->nfresh = 0;
	s->relisting = s->relist_again = false;
	cursors_free(s);
	up_forget(s);
	box_settle(s->box);
}

/* Bring a server up if it is not: used by open_toolbox and calls. */
void
srv_ensure(struct server *s)
{
	if (s->state == SRV_IDLE || s->state == SRV_FAILED)
		srv_start(s);
}

/*
 * Answers from a server.
 */
static void
srv_ready(struct server *s)
{
	int i;

	s->relisting = false;
	tools_free(s->tools, s->ntools);
	s->tools = s->fresh;
	s->ntools = s->nfresh;
	s->fresh = NULL;
	s->nfresh = 0;
	srv_index(s);
	cursors_free(s);
	s->state = SRV_READY;
	free(s->error);
	s->error = NULL;
	/*
	 * Calls that waited go in the order they came: newest first in the
	 * array, walked from its end (a call refused moves an already
	 * walked one into its place).
	 */
	qsort(s->req, (size_t)s->nreq, sizeof(*s->req), req_newer_first);
	for (i = s->nreq - 1; i >= 0; i--)
		if (s->req[i].kind == REQ_CALL && !s->req[i].sent)
			call_dispatch(s, &s->req[i]);
	box_settle(s->box);
	dyn_notify();
	if (s->relist_again) {
		s->relist_again = false;
		srv_relist(s);
	}
}

/* Its tools changed: fetch them again, serving the old list meanwhile. */
static void
srv_relist(struct server *s)
{
	if (s->state != SRV_READY)
		return;
	if (s->relisting) {
		s->relist_again = true;
		return;
	}
	s->relisting = true;
	srv_send_list(s, NULL);
}

static void
on_initialize(struct server *s, const struct json *j, int result)
{
	if (!json_is(j, result, JSMN_OBJECT)) {
		srv_fail(s, "protocol error: initialize returned no result "
		    "object");
		return;
	}
	s->logging = json_path(j, result, "capabilities.logging") >= 0;
	srv_notify(s, "notifications/initialized");
	srv_send_level(s);
	srv_send_list(s, NULL);
}

/*
 * Dynamic mode lists a tool as {toolbox}__{server}__{tool}, its description
 * prefixed "[toolbox/server] ", every other member as the server sent it,
 * and _meta extended with where it came from.  NULL when the name cannot
 * be listed (it stays callable through use_tool).
 */
static char *
native_tool(const struct server *s, const struct json *j, int t,
    const char *name)
{
	struct buf b = { 0 };
	char *native = tool_join(s->box->cfg->name, s->cfg->name, name), *d;
	int k, n, v, meta = json_get(j, t, "_meta");
	const char *raw;
	size_t len;

	/* Warn once: not again when a restart lists the same tools. */
	if ((k = tool_listable(native)) != 0 &&
	    srv_tool(s, name, strlen(name)) == NULL)
		wb_log("%s: tool name '%s' %s", s->label, native, k < 0 ?
		    "is longer than 128 characters or has characters outside "
		    "[A-Za-z0-9_.-]: not listed (call it through use_tool)" :
		    "is longer than 64 characters; some clients reject it");
	if (k < 0) {
		free(native);
		return NULL;
	}
	buf_puts(&b, "{\"name\":");
	json_put_cstr(&b, native);
	free(native);
	buf_puts(&b, ",\"description\":");
	d = json_strdup(j, json_get(j, t, "description"));
	native = xmalloc(strlen(s->label) + (d != NULL ? strlen(d) : 0) + 4);
	sprintf(native, "[%s]%s%s", s->label, d != NULL && *d != '\0' ? " " :
	    "", d != NULL ? d : "");
	json_put_cstr(&b, native);
	free(native);
	free(d);
	for (k = t + 1, n = 0; n < j->tok[t].size; n++, k = json_next(j, v)) {
		v = k + 1;
		if (json_eq(j, k, "name") || json_eq(j, k, "description") ||
		    json_eq(j, k, "_meta"))
			continue;
		buf_putc(&b, ',');
		raw = json_raw(j, k, &len);
		buf_put(&b, raw, len);
		buf_putc(&b, ':');
		raw = json_raw(j, v, &len);
		buf_put(&b, raw, len);
	}
	buf_puts(&b, ",\"_meta\":");
	if (json_is(j, meta, JSMN_OBJECT)) {
		raw = json_raw(j, meta, &len);
		json_add_members(&b, raw, len);
	} else
		buf_putc(&b, '{');
	buf_puts(&b, "\"source_server\":");
	json_put_cstr(&b, s->cfg->name);
	buf_puts(&b, ",\"toolbox_name\":");
	json_put_cstr(&b, s->box->cfg->name);
	buf_puts(&b, ",\"original_name\":");
	json_put_cstr(&b, name);
	buf_puts(&b, "}}");
	return buf_cstr(&b);
}

/* Keep one listed tool, if it passes the filters. */
static void
keep_tool(struct server *s, const struct json *j, int t)
{
	const char *raw;
	struct tool *nt;
	size_t len;
	char *name;

	if (!json_is(j, t, JSMN_OBJECT) ||
	    (name = json_strdup(j, json_get(j, t, "name"))) == NULL) {
		wb_log("%s: skipping a tool without a name", s->label);
		return;
	}
	if (!tool_filter_match(s->cfg->filters, name)) {
		free(name);
		return;
	}
	raw = json_raw(j, t, &len);
	s->fresh = xrealloc(s->fresh, ((size_t)s->nfresh + 1) *
	    sizeof(*s->fresh));
	nt = &s->fresh[s->nfresh++];
	nt->name = name;
	nt->json = xstrndup(raw, len);
	nt->len = len;
	nt->native = wb.mode == MODE_DYNAMIC ? native_tool(s, j, t, name) :
	    NULL;
}

/* Has this cursor come before?  Remembers it when not. */
static bool
cursor_seen(struct server *s, const char *cursor)
{
	int i;

	for (i = 0; i < s->ncursors; i++)
		if (strcmp(s->cursors[i], cursor) == 0)
			return true;
	s->cursors = xrealloc(s->cursors, ((size_t)s->ncursors + 1) *
	    sizeof(*s->cursors));
	s->cursors[s->ncursors++] = xstrdup(cursor);
	return false;
}

static void
on_tools_page(struct server *s, const struct json *j, int result)
{
	int tools, t, n, before = s->nfresh;
	char *cursor;

	tools = json_get(j, result, "tools");
	if (!json_is(j, tools, JSMN_ARRAY)) {
		if (s->relisting)
			relist_failed(s, "no tools array");
		else
			srv_fail(s, "protocol error: tools/list returned no "
			    "tools array");
		return;
	}
	for (t = tools + 1, n = 0; n < j->tok[tools].size; n++) {
		keep_tool(s, j, t);
		t = json_next(j, t);
	}
	cursor = json_strdup(j, json_get(j, result, "nextCursor"));
	if (cursor == NULL || cursor[0] == '\0')
		srv_ready(s);
	else if (cursor_seen(s, cursor)) {
		/* A server that loops repeats its pages: drop this one. */
		wb_log("%s: tools/list repeated a cursor; keeping the first %d "
		    "pages", s->label, s->ncursors);
		while (s->nfresh > before)
			tool_free(&s->fresh[--s->nfresh]);
		srv_ready(s);
	} else if (s->ncursors >= LIST_PAGES_MAX) {
		wb_log("%s: tools/list has more than %d pages; keeping the "
		    "first %d", s->label, LIST_PAGES_MAX, LIST_PAGES_MAX);
		srv_ready(s);
	} else
		srv_send_list(s, cursor);
	free(cursor);
}

/*
 * An answer the client can take: "jsonrpc":"2.0", each member once (the
 * tokens alone would not show a second id), and a result that is an
 * object or else an error that is one.
 */
static bool
answer_well_formed(const struct json *j, const char *line, size_t n)
{
	struct rpc_top top;
	int result = json_get(j, 0, "result"), error = json_get(j, 0, "error");

	return rpc_scan(line, n, &top) == 0 && top.v2 &&
	    (json_is(j, result, JSMN_OBJECT) ? error < 0 :
	    result < 0 && json_is(j, error, JSMN_OBJECT));
}

/*
 * A notification is relayed only as one: "jsonrpc":"2.0", no id, and no
 * member rpc_scan knows twice (the SDK client drops or misreads the rest).
 */
static bool
notification_well_formed(const char *line, size_t n)
{
	struct rpc_top top;

	return rpc_scan(line, n, &top) == 0 && top.v2 && top.id == NULL;
}

/*
 * URL elicitation required (2025-11-25): the client needs the error
 * itself, with the URLs in its data, to send the user there and retry.
 */
#define URL_ELICITATION_REQUIRED	(-32042)

static bool
url_elicitation_required(const struct json *j, int error)
{
	long long code;

	return json_get_int(j, json_get(j, error, "code"), &code) &&
	    code == URL_ELICITATION_REQUIRED;
}

/* Splice the client's id into the server's answer and pass it on. */
static void
on_call_result(const struct request *r, const char *line, size_t n,
    const struct json *j)
{
	const char *id;
	size_t idlen;

	id = json_raw(j, json_get(j, 0, "id"), &idlen);
	rpc_splice(client_out(), line, n, id, idlen, text_get(&r->cid),
	    r->cid.len);
	buf_putc(client_out(), '\n');
}

static void
start_failed(struct server *s, enum req_kind kind, const char *msg)
{
	struct buf why = { 0 };

	buf_printf(&why, "%s failed: %s", kind == REQ_INIT ? "initialize" :
	    "tools/list", msg != NULL ? msg : "no result");
	srv_fail(s, buf_cstr(&why));
	buf_free(&why);
}

/* A refetch that fails keeps the tools the server had. */
static void
relist_failed(struct server *s, const char *msg)
{
	wb_log("%s: tools/list after tools/list_changed failed (%s); keeping "
	    "its previous tools", s->label, msg != NULL ? msg : "no result");
	tools_free(s->fresh, s->nfresh);
	s->fresh = NULL;
	s->nfresh = 0;
	cursors_free(s);
	s->relisting = s->relist_again = false;
}

static void
on_response(struct server *s, const struct json *j, int id, const char *line,
    size_t n)
{
	struct request r;
	long long v;
	int i, result, error;
	char *msg;

	if (!json_get_int(j, id, &v) || v <= 0 || (i = req_find(s, v)) < 0) {
		/* Answers to cancelled or timed-out calls end here quietly. */
		if (!json_get_int(j, id, &v) || v <= 0 || v > s->next_id)
			wb_log("%s: dropping an answer to a request it was "
			    "not sent", s->label);
		else
			ghost_answered(s, v);
		return;
	}
	r = s->req[i];
	s->req[i] = s->req[--s->nreq];
	result = json_get(j, 0, "result");
	error = json_get(j, 0, "error");
	if (r.kind == REQ_LEVEL)
		;
	else if (r.kind == REQ_CALL && !answer_well_formed(j, line, n))
		call_error(s, &r, "protocol error: its answer is not a "
		    "JSON-RPC 2.0 response (\"jsonrpc\":\"2.0\", one id, and "
		    "a result object or an error)");
	else if (r.kind == REQ_CALL && url_elicitation_required(j, error))
		on_call_result(&r, line, n, j);
	else if (error >= 0 || result < 0) {
		msg = json_strdup(j, json_get(j, error, "message"));
		if (r.kind == REQ_CALL)
			call_error(s, &r, msg != NULL ? msg :
			    "the server answered with an error");
		else if (s->relisting)
			relist_failed(s, msg);
		else
			start_failed(s, r.kind, msg);
		free(msg);
	} else if (r.kind == REQ_CALL)
		on_call_result(&r, line, n, j);
	else if (r.kind == REQ_INIT)
		on_initialize(s, j, result);
	else
		on_tools_page(s, j, result);
	req_free(&r);
}

/* Is this server request one the client can answer? */
static bool
client_can(const struct json *j, int method)
{
	return (json_eq(j, method, "sampling/createMessage") && wb.can_sample) ||
	    (json_eq(j, method, "elicitation/create") && wb.can_elicit) ||
	    (json_eq(j, method, "roots/list") && wb.can_roots);
}

/*
 * A request from a server: ping is ours to answer; sampling, elicitation
 * and roots go to the client under a fresh id when it can answer them.
 */
static void
on_server_request(struct server *s, const struct json *j, int id,
    int method, const char *line, size_t n)
{
	struct buf *b = &s->proc.io.out;
	struct upreq *u;
	const char *raw;
	char up[24];
	size_t len;

	raw = json_raw(j, id, &len);
	if (client_can(j, method)) {
		wb.up = xrealloc(wb.up, ((size_t)wb.nup + 1) * sizeof(*wb.up));
		u = &wb.up[wb.nup++];
		u->up = ++wb.next_up;
		u->srv = s;
		u->sid = xstrndup(raw, len);
		u->sidlen = len;
		snprintf(up, sizeof(up), "%lld", u->up);
		rpc_splice(client_out(), line, n, raw, len, up, strlen(up));
		buf_putc(client_out(), '\n');
		return;
	}
	buf_puts(b, "{\"jsonrpc\":\"2.0\",\"id\":");
	buf_put(b, raw, len);
	if (json_eq(j, method, "ping"))
		buf_puts(b, ",\"result\":{}}\n");
	else
		buf_puts(b, ",\"error\":{\"code\":-32601,\"message\":"
		    "\"Method not found\"}}\n");
}

/* A server's line goes to the client as it is. */
static void
relay_line(const char *line, size_t n)
{
	buf_put(client_out(), line, n);
	buf_putc(client_out(), '\n');
}

/* Progress for a call: the client's own token goes back in. */
static void
on_progress(struct server *s, const struct json *j, const char *line,
    size_t n)
{
	int t = json_path(j, 0, "params.progressToken"), i;
	const char *raw;
	long long v;
	size_t len;

	if (!json_get_int(j, t, &v) || (i = req_find(s, v)) < 0 ||
	    s->req[i].token == NULL)
		return;
	call_arm(s, &s->req[i], now_ms());
	raw = json_raw(j, t, &len);
	rpc_splice(client_out(), line, n, raw, len, s->req[i].token,
	    s->req[i].tokenlen);
	buf_putc(client_out(), '\n');
}

/* A log message: say which server it came from when it did not. */
static void
on_log_message(struct server *s, const struct json *j, const char *line,
    size_t n)
{
	int params = json_get(j, 0, "params");
	struct buf logger = { 0 };
	const char *at;

	if (!json_is(j, params, JSMN_OBJECT))
		return;
	if (json_get(j, params, "logger") >= 0) {
		relay_line(line, n);
		return;
	}
	json_put_key(&logger, "logger");
	json_put_cstr(&logger, s->label);
	if (j->tok[params].size > 0)
		buf_putc(&logger, ',');
	at = j->js + j->tok[params].start + 1;
	rpc_splice(client_out(), line, n, at, 0, logger.data, logger.len);
	buf_putc(client_out(), '\n');
	buf_free(&logger);
}

/* The server gave up on a request it sent the client: so do we. */
static void
on_server_cancel(const struct server *s, const struct json *j,
    const char *line, size_t n)
{
	int r = json_path(j, 0, "params.requestId"), i;
	const char *raw;
	char up[24];
	size_t len;

	if (r < 0)
		return;
	raw = json_raw(j, r, &len);
	for (i = 0; i < wb.nup; i++)
		if (wb.up[i].srv == s && wb.up[i].sidlen == len &&
		    memcmp(wb.up[i].sid, raw, len) == 0)
			break;
	if (i == wb.nup)
		return;
	snprintf(up, sizeof(up), "%lld", wb.up[i].up);
	rpc_splice(client_out(), line, n, raw, len, up, strlen(up));
	buf_putc(client_out(), '\n');
	up_remove(i);
}

static void
on_server_notification(struct server *s, const struct json *j, int method,
    const char *line, size_t n)
{
	if (json_eq(j, method, "notifications/tools/list_changed"))
		srv_relist(s);
	else if (!notification_well_formed(line, n))
		wb_log("%s: dropping a notification that is not JSON-RPC 2.0 "
		    "(\"jsonrpc\":\"2.0\", no id)", s->label);
	else if (json_eq(j, method, "notifications/progress"))
		on_progress(s, j, line, n);
	else if (json_eq(j, method, "notifications/message"))
		on_log_message(s, j, line, n);
	else if (json_eq(j, method, "notifications/cancelled"))
		on_server_cancel(s, j, line, n);
	else if (json_eq(j, method, "notifications/elicitation/complete") &&
	    wb.can_elicit)
		relay_line(line, n);
}

/*
 * The common case, a call's result, passes without being tokenized: the
 * top level is scanned, the id found and replaced by the client's.  All
 * else takes the full parse.
 */
static bool
pass_result(struct server *s, const char *line, size_t n)
{
	struct rpc_top top;
	long long v;
	int i;

	if (rpc_scan(line, n, &top) < 0 || top.method != NULL ||
	    top.id == NULL || !top.result || top.error || !top.v2 ||
	    line[top.at] != '{' || !rpc_int_id(top.id, top.idlen, &v))
		return false;
	if ((i = req_find(s, v)) < 0 || s->req[i].kind != REQ_CALL)
		return false;
	rpc_splice(client_out(), line, n, top.id, top.idlen,
	    text_get(&s->req[i].cid), s->req[i].cid.len);
	buf_putc(client_out(), '\n');
	req_remove(s, i);
	return true;
}

static void
srv_line(void *ctx, char *line, size_t n)
{
	struct server *s = ctx;
	struct buf fixed = { 0 };
	int id, method;

	if (s->proc.pid == 0)
		return;		/* It failed while this input was read. */
	if (!utf8_valid(line, n)) {
		/* Invalid bytes become U+FFFD, so the client gets valid JSON. */
		utf8_repair(&fixed, line, n);
		srv_line(ctx, fixed.data, fixed.len);
		buf_free(&fixed);
		return;
	}
	if (pass_result(s, line, n))
		return;
	if (json_parse(&wb.j, line, n) != JSON_OK) {
		wb_log("%s: ignoring a line that is not a JSON-RPC message "
		    "(%zu bytes)", s->label, n);
		return;
	}
	id = json_get(&wb.j, 0, "id");
	method = json_get(&wb.j, 0, "method");
	if (json_is(&wb.j, method, JSMN_STRING) && rpc_valid_id(&wb.j, id))
		on_server_request(s, &wb.j, id, method, line, n);
	else if (json_is(&wb.j, method, JSMN_STRING))
		on_server_notification(s, &wb.j, method, line, n);
	else if (id >= 0)
		on_response(s, &wb.j, id, line, n);
	json_release(&wb.j);
}

static void
srv_oversize(void *ctx, size_t size, const char *id)
{
	struct server *s = ctx;
	struct buf why = { 0 };
	long long v;
	int i;

	wb_log("%s: dropped a message of %zu bytes (limit %zu)", s->label,
	    size, wb.cfg.max_message);
	if (id == NULL || (v = strtoll(id, NULL, 10)) <= 0)
		return;
	if ((i = req_find(s, v)) < 0) {
		ghost_answered(s, v);
		return;
	}
	buf_printf(&why, "the result is %zu bytes, more than the %zu-byte "
	    "limit (maxMessageBytes)", size, wb.cfg.max_message);
	if (s->req[i].kind == REQ_CALL)
		call_error(s, &s->req[i], buf_cstr(&why));
	else
		srv_fail(s, buf_cstr(&why));
	if ((i = req_find(s, v)) >= 0)
		req_remove(s, i);
	buf_free(&why);
}

/*
 * Cut-through.  A call's result that passes STREAM_MIN before its newline
 * is passed on as it arrives, checked as it goes (jstream), instead of
 * being held whole: a large result then costs the client no extra wait
 * and us no more memory than what the client has not read yet.  The
 * client's output belongs to the stream until the line ends; whatever
 * else is for the client waits in wb.held (client_out()).  Should the
 * result break off after part of it went out, the client's line is ended
 * where it is (one line the client cannot parse) and the call fails.
 */
static void
stream_finish(struct server *s)
{
	struct stream *st = &s->stream;

	free(st->cid);
	jstream_free(&st->check);
	memset(st, 0, sizeof(*st));
	jstream_init(&st->check, 0);
	wb.streaming = NULL;
	buf_put(&wb.client.out, wb.held.data, wb.held.len);
	wb.held.len = 0;
}

/*
 * End a stream that broke off: the client's line ends where it is and the
 * rest of the server's is dropped.  Returns its call's index, or -1 when
 * the id was to come after the result: then nothing says which call it
 * was, and that call waits for its timeout or its server's failure.
 */
static int
stream_cut(struct server *s, const char *why)
{
	int i;

	buf_putc(&wb.client.out, '\n');
	peer_skip_line(&s->proc.io);
	wb_log("%s: a result being passed on broke off after %zu bytes: %s",
	    s->label, s->stream.total, why);
	i = s->stream.rid > 0 ? req_find(s, s->stream.rid) : -1;
	stream_finish(s);
	return i;
}

/* The same, and its call, if known, fails with why. */
void
stream_abort(struct server *s, const char *why)
{
	struct buf t = { 0 };
	int i;

	if (wb.streaming != s || (i = stream_cut(s, why)) < 0)
		return;
	buf_printf(&t, "its result broke off after part of it was passed on "
	    "(%s)", why);
	call_error(s, &s->req[i], buf_cstr(&t));
	buf_free(&t);
	req_remove(s, i);
}

/*
 * Pass text[from, to) on, the end moved back to a whole UTF-8 character;
 * invalid bytes become U+FFFD.  Returns the new end: what the peer may
 * drop, the stream's check position moving with it.
 */
static size_t
stream_pass(struct server *s, const char *text, size_t from, size_t to)
{
	to = from + utf8_whole(text + from, to - from);
	if (utf8_valid(text + from, to - from))
		buf_put(&wb.client.out, text + from, to - from);
	else
		utf8_repair(&wb.client.out, text + from, to - from);
	s->stream.check.pos -= to;
	s->stream.total += to;
	s->stream.last_at = now_ms();
	return to;
}

/*
 * With the id after the result, is this surely a call's answer?  Only
 * when all the server has in progress are calls: an initialize or a
 * tools/list page must be read whole.
 */
static bool
stream_may_answer_call(const struct server *s)
{
	int i, calls = 0;

	if (s->state != SRV_READY || s->relisting || s->nghosts > 0 ||
	    s->ghosts_lost)
		return false;
	for (i = 0; i < s->nreq; i++) {
		if (s->req[i].sent && s->req[i].kind != REQ_CALL)
			return false;
		calls += s->req[i].sent;
	}
	return calls > 0;
}

/*
 * Should this line be streamed?  It must be an answer with "result" and,
 * before that, at most jsonrpc, an id of a call we sent and other members.
 * Then the start of the line goes out, the id replaced by the client's.
 */
static size_t
stream_start(struct server *s, const char *text, size_t n)
{
	struct stream *st = &s->stream;
	struct rpc_top top = { 0 };
	size_t i = 0;
	long long v = 0;
	int k = -1, r;

	while (i < n && (text[i] == ' ' || text[i] == '\t'))
		i++;
	if (wb.streaming != NULL || i >= n || text[i] != '{' ||
	    rpc_members(text, n, i + 1, true, true, &top) != 1 ||
	    top.method != NULL || top.error || text[top.at] != '{' ||
	    top.jsonrpc != top.v2)
		return PEER_NOSTREAM;
	if (top.id != NULL && (!rpc_int_id(top.id, top.idlen, &v) ||
	    (k = req_find(s, v)) < 0 || s->req[k].kind != REQ_CALL ||
	    !s->req[k].sent))
		return PEER_NOSTREAM;
	if (top.id == NULL && !stream_may_answer_call(s))
		return PEER_NOSTREAM;
	if (!utf8_valid(text, top.at))
		return PEER_NOSTREAM;	/* Whole, it is repaired. */
	jstream_init(&st->check, top.at);
	if ((r = jstream_feed(&st->check, text, n)) == JSON_SYNTAX) {
		jstream_free(&st->check);
		return PEER_NOSTREAM;
	}
	st->done = r == JSON_OK;
	st->v2 = top.v2;
	wb.streaming = s;
	if (k >= 0) {
		st->rid = v;
		st->cid = xstrndup(text_get(&s->req[k].cid),
		    s->req[k].cid.len);
		st->cidlen = s->req[k].cid.len;
		rpc_splice(&wb.client.out, text, top.at, top.id, top.idlen,
		    st->cid, st->cidlen);
	} else
		buf_put(&wb.client.out, text, top.at);
	st->total = 0;
	return stream_pass(s, text, top.at, st->check.pos);
}

/* More of the result: pass on what is checked, up to the result's end. */
static size_t
stream_more(struct server *s, const char *text, size_t n)
{
	struct stream *st = &s->stream;
	long long now = now_ms();
	int i, r = JSON_OK;

	if (!st->done && (r = jstream_feed(&st->check, text, n)) ==
	    JSON_SYNTAX) {
		stream_abort(s, "it is not valid JSON");
		return PEER_DISCARD;
	}
	st->done = r == JSON_OK;
	/* It is working: on this call, or, with the id to come, one of them. */
	if (st->rid > 0 && (i = req_find(s, st->rid)) >= 0)
		call_arm(s, &s->req[i], now);
	else if (st->rid == 0)
		for (i = 0; i < s->nreq; i++)
			if (s->req[i].sent)
				call_arm(s, &s->req[i], now);
	return stream_pass(s, text, 0, st->check.pos);
}

/*
 * The end of the line: the members after the result, which must close
 * the object; an id there says which call it was.
 */
static size_t
stream_end(struct server *s, const char *text, size_t n)
{
	struct stream *st = &s->stream;
	struct rpc_top top = { 0 };
	const struct text *cid;
	size_t at;
	long long v;
	int i = -1, g = -1;

	if (n > 0 && text[n - 1] == '\r')
		n--;
	st->check.last = true;
	if ((at = stream_more(s, text, n)) == PEER_DISCARD)
		return PEER_DISCARD;
	/* "jsonrpc":"2.0" and the id each once: before the result or after. */
	if (!st->done || rpc_members(text + at, n - at, 0, false, false,
	    &top) != 0 || top.result || top.method != NULL || top.error ||
	    !utf8_valid(text + at, n - at) || top.jsonrpc == st->v2 ||
	    top.jsonrpc != top.v2 ||
	    (top.id != NULL) == (st->cid != NULL)) {
		stream_abort(s, "its end is not that of an answer");
		return PEER_DISCARD;
	}
	if (top.id != NULL) {
		if (!rpc_int_id(top.id, top.idlen, &v))
			v = 0;
		if ((i = req_find(s, v)) >= 0 && s->req[i].kind == REQ_CALL)
			cid = &s->req[i].cid;
		else if ((g = ghost_find(s, v)) >= 0)
			cid = &s->ghosts[g].cid;	/* Over while it passed. */
		else {
			(void)stream_cut(s, "it answers no call in progress");
			return PEER_DISCARD;
		}
		rpc_splice(&wb.client.out, text + at, n - at, top.id, top.idlen,
		    text_get(cid), cid->len);
		if (g >= 0) {
			ghost_remove(s, g);
			i = -1;
		}
	} else {
		buf_put(&wb.client.out, text + at, n - at);
		i = req_find(s, st->rid);
	}
	buf_putc(&wb.client.out, '\n');
	if (i >= 0)
		req_remove(s, i);
	stream_finish(s);
	return n;
}

/*
 * Past maxMessageBytes: the client's line ends here and the rest of the
 * server's is counted and dropped, as a line too long always is, so the
 * call fails (srv_oversize) naming the size once its end is known.
 */
static void
stream_oversize(struct server *s)
{
	struct buf id = { 0 };

	buf_putc(&wb.client.out, '\n');
	if (s->stream.rid > 0)
		buf_put_int(&id, s->stream.rid);
	peer_overlong(&s->proc.io, s->stream.total, id.len > 0 ?
	    buf_cstr(&id) : NULL);
	buf_free(&id);
	stream_finish(s);
}

static size_t
srv_stream(void *ctx, char *text, size_t n, bool end)
{
	struct server *s = ctx;

	if (s->proc.pid == 0)
		return PEER_DISCARD;	/* It failed while this was read. */
	if (wb.streaming != s)
		return stream_start(s, text, n);
	if (s->stream.total + n > wb.cfg.max_message) {
		stream_oversize(s);
		return 0;
	}
	return end ? stream_end(s, text, n) : stream_more(s, text, n);
}

static const struct peer_ops srv_ops = { srv_line, srv_oversize, NULL,
    srv_stream, pump_all };

/*
 * Toolboxes.
 */
struct toolbox *
box_find(const char *name, size_t len)
{
	int i;

	for (i = 0; i < wb.nboxes; i++)
		if (name_is(wb.boxes[i].cfg->name, name, len))
			return &wb.boxes[i];
	return NULL;
}

struct server *
box_server(struct toolbox *b, const char *name, size_t len)
{
	int i;

	for (i = 0; i < b->nservers; i++)
		if (name_is(b->servers[i].cfg->name, name, len))
			return &b->servers[i];
	return NULL;
}

/* A tool object with toolbox_name and source_server added. */
static void
put_tool(struct buf *b, const struct server *s, const struct tool *t)
{
	json_add_members(b, t->json, t->len);
	buf_puts(b, "\"toolbox_name\":");
	json_put_cstr(b, s->box->cfg->name);
	buf_puts(b, ",\"source_server\":");
	json_put_cstr(b, s->cfg->name);
	buf_putc(b, '}');
}

/* The open_toolbox result object, for content and structuredContent. */
static int
box_summary(const struct toolbox *b, struct buf *out)
{
	const struct server *s;
	int i, k, ready = 0, failed = 0;

	buf_puts(out, "{\"toolbox\":");
	json_put_cstr(out, b->cfg->name);
	buf_puts(out, ",\"description\":");
	json_put_cstr(out, b->cfg->description);
	for (i = 0; i < b->nservers; i++)
		ready += b->servers[i].state == SRV_READY;
	buf_printf(out, ",\"servers_connected\":%d,\"tools\":[", ready);
	for (i = 0, k = 0; i < b->nservers; i++) {
		s = &b->servers[i];
		for (k = 0; s->state == SRV_READY && k < s->ntools; k++) {
			if (out->data[out->len - 1] != '[')
				buf_putc(out, ',');
			put_tool(out, s, &s->tools[k]);
		}
	}
	buf_putc(out, ']');
	for (i = 0; i < b->nservers; i++) {
		s = &b->servers[i];
		if (s->state == SRV_READY)
			continue;
		buf_puts(out, failed++ == 0 ? ",\"servers_failed\":[" : ",");
		buf_puts(out, "{\"server\":");
		json_put_cstr(out, s->cfg->name);
		buf_puts(out, ",\"error\":");
		json_put_cstr(out, s->error != NULL ? s->error : "not started");
		buf_putc(out, '}');
	}
	buf_puts(out, failed > 0 ? "]}" : "}");
	return ready;
}

static void
box_failure_text(const struct toolbox *b, struct buf *out)
{
	int i;

	buf_printf(out, "Failed to open toolbox '%s': no server could be "
	    "started.", b->cfg->name);
	for (i = 0; i < b->nservers; i++)
		buf_printf(out, "\n- server '%s': %s", b->servers[i].cfg->name,
		    b->servers[i].error != NULL ? b->servers[i].error :
		    "not started");
	if (b->nservers == 0)
		buf_puts(out, " It has no servers configured.");
}

/* Answer everyone waiting for the toolbox once no server is starting. */
static void
box_settle(struct toolbox *b)
{
	struct buf sum = { 0 }, *o;
	int i, ready;

	if (b->nwaiters == 0 || b->starting)
		return;
	for (i = 0; i < b->nservers; i++)
		if (b->servers[i].state == SRV_STARTING)
			return;
	ready = box_summary(b, &sum);
	b->open = b->open || ready > 0;
	if (ready == 0) {
		sum.len = 0;
		box_failure_text(b, &sum);
	}
	for (i = 0; i < b->nwaiters; i++) {
		if (ready == 0)
			reply_text(b->waiters[i].cid, b->waiters[i].cidlen,
			    buf_cstr(&sum), true);
		else {
			o = reply_begin(b->waiters[i].cid,
			    b->waiters[i].cidlen);
			buf_puts(o, "{\"content\":[{\"type\":\"text\","
			    "\"text\":");
			json_put_str(o, sum.data, sum.len);
			buf_puts(o, "}],\"structuredContent\":");
			buf_put(o, sum.data, sum.len);
			buf_puts(o, "}");
			reply_end();
		}
		free(b->waiters[i].cid);
	}
	free(b->waiters);
	b->waiters = NULL;
	b->nwaiters = 0;
	buf_free(&sum);
	dyn_notify();
}

void
box_open(struct toolbox *b, const char *cid, size_t cidlen)
{
	struct waiter *w;
	int i;

	b->waiters = xrealloc(b->waiters, ((size_t)b->nwaiters + 1) *
	    sizeof(*b->waiters));
	w = &b->waiters[b->nwaiters++];
	w->cid = xstrndup(cid, cidlen);
	w->cidlen = cidlen;
	/* A server failing at once must not answer before the rest start. */
	b->starting = true;
	for (i = 0; i < b->nservers; i++)
		srv_ensure(&b->servers[i]);
	b->starting = false;
	box_settle(b);
}

/*
 * A call's params for the server: the tool's own name, the client's
 * arguments and _meta as they came, except that a progressToken is
 * replaced by our request id, unique on that server, and kept to map
 * progress back.
 */
static void
call_params(struct buf *b, struct request *r, const struct call_in *in)
{
	struct buf id = { 0 };

	buf_puts(b, "{\"name\":");
	json_put_str(b, text_get(&r->tool), r->tool.len);
	buf_puts(b, ",\"arguments\":");
	if (in->args != NULL)
		buf_put(b, in->args, in->alen);
	else
		buf_puts(b, "{}");
	if (in->meta != NULL) {
		buf_puts(b, ",\"_meta\":");
		if (in->token == NULL)
			buf_put(b, in->meta, in->mlen);
		else {
			r->token = xstrndup(in->token, in->toklen);
			r->tokenlen = in->toklen;
			buf_put_int(&id, r->id);
			rpc_splice(b, in->meta, in->mlen, in->token, in->toklen,
			    id.data, id.len);
			buf_free(&id);
		}
	}
	buf_putc(b, '}');
}

/*
 * Route a call to a server.  To a ready one it is written straight into
 * the server's queue; otherwise its params wait in the request.
 */
void
call_route(struct server *s, const char *tool, size_t toollen,
    const struct call_in *in, const char *id, size_t idlen)
{
	struct request *r;
	struct buf p = { 0 };

	r = req_add(s, REQ_CALL);
	text_set(&r->cid, id, idlen);
	text_set(&r->tool, tool, toollen);
	if (s->state != SRV_READY) {
		call_params(&p, r, in);
		r->params = p.data;
		r->plen = p.len;
		srv_ensure(s);
	} else if (call_sendable(s, r, false)) {
		call_params(srv_send_head(s, r, "tools/call"), r, in);
		buf_puts(&s->proc.io.out, "}\n");
		call_arm(s, r, loop_ms());
	}
}

/* The client cancels a call (or an open): the server is told, not us. */
void
call_cancel(const char *id, size_t idlen, const char *reason)
{
	struct toolbox *b;
	struct server *s;
	int i, k, r;

	for (i = 0; i < wb.nboxes; i++) {
		b = &wb.boxes[i];
		for (k = b->nwaiters - 1; k >= 0; k--)
			if (b->waiters[k].cidlen == idlen &&
			    memcmp(b->waiters[k].cid, id, idlen) == 0) {
				free(b->waiters[k].cid);
				b->waiters[k] = b->waiters[--b->nwaiters];
			}
		for (k = 0; k < b->nservers; k++) {
			s = &b->servers[k];
			for (r = s->nreq - 1; r >= 0; r--) {
				if (s->req[r].kind != REQ_CALL ||
				    s->req[r].cid.len != idlen ||
				    memcmp(text_get(&s->req[r].cid), id,
				    idlen) != 0)
					continue;
				if (s->req[r].sent)
					srv_cancel(s, &s->req[r], reason);
				req_remove(s, r);
			}
		}
	}
}

/* The client answers a server's request: back it goes, under its id. */
void
up_answer(const struct json *j, int id, const char *line, size_t n)
{
	struct upreq *u;
	const char *raw;
	long long v;
	size_t len;
	int i;

	if (!json_get_int(j, id, &v))
		return;
	for (i = 0; i < wb.nup && wb.up[i].up != v; i++)
		;
	if (i == wb.nup)
		return;
	u = &wb.up[i];
	raw = json_raw(j, id, &len);
	if (u->srv->proc.io.wfd >= 0) {
		rpc_splice(&u->srv->proc.io.out, line, n, raw, len, u->sid,
		    u->sidlen);
		buf_putc(&u->srv->proc.io.out, '\n');
	}
	up_remove(i);
}

static long long
earliest(long long a, long long b)
{
	return a <= 0 ? b : b <= 0 ? a : a < b ? a : b;
}

long long
srv_deadline(const struct server *s)
{
	long long t = s->eof_at;
	int i;

	if (s->state == SRV_STARTING)
		t = earliest(t, s->deadline);
	/* Wake when it turns stuck; once it is, that time stays past. */
	if (srv_busy(s, loop_ms()))
		t = earliest(t, s->drained_at + STUCK_MS);
	for (i = 0; i < s->nreq; i++)
		t = earliest(t, earliest(s->req[i].idle_at, s->req[i].hard_at));
	if (wb.streaming == s) {
		t = earliest(t, s->stream.last_at + STREAM_STALL_MS);
		if (s->stream.held_at > 0)
			t = earliest(t, s->stream.held_at + STREAM_STALL_MS);
	}
	return t > 0 ? t : -1;
}

/* End calls whose time is up; the server is told to stop working on them. */
static void
check_call_timeouts(struct server *s, long long now)
{
	struct request *r;
	struct buf why = { 0 };
	int i;

	for (i = s->nreq - 1; i >= 0; i--) {
		r = &s->req[i];
		if ((r->idle_at <= 0 || now < r->idle_at) &&
		    (r->hard_at <= 0 || now < r->hard_at))
			continue;
		why.len = 0;
		if (r->hard_at > 0 && now >= r->hard_at)
			buf_printf(&why, "timed out after %d ms "
			    "(callMaxTimeoutMs)", s->cfg->call_max_ms);
		else
			buf_printf(&why, "timed out after %d ms (callTimeoutMs)",
			    s->cfg->call_timeout_ms);
		if (wb.streaming == s && s->stream.rid == r->id) {
			/* Its answer is the line cut: no late one will come. */
			srv_send_cancelled(s, r->id, "timed out");
			stream_abort(s, buf_cstr(&why));	/* Fails it. */
			continue;
		}
		call_error(s, r, buf_cstr(&why));
		srv_cancel(s, r, "timed out");
		req_remove(s, i);
	}
	buf_free(&why);
}

struct server *
srv_by_pid(pid_t pid)
{
	int i, k;

	for (i = 0; i < wb.nboxes; i++)
		for (k = 0; k < wb.boxes[i].nservers; k++)
			if (wb.boxes[i].servers[k].proc.pid == pid)
				return &wb.boxes[i].servers[k];
	return NULL;
}

/*
 * A server process ended: take its last words, then fail what waits.
 * They are at most what its pipes hold (64 KiB by default, 1 MiB at most:
 * pipe-max-size); more comes from a process it left behind, which must
 * not hold the loop up.
 */
#define LAST_READS	64

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
		srv_fail(s, buf_cstr(&why));
		buf_free(&why);
	}
}

/* The timers of one server: its start, its calls, a closed stdout. */
/*
 * A stream must keep moving, and must not keep the client's other
 * messages waiting long: STREAM_STALL_MS without a byte of it, or with
 * others held back, ends it.  Neither clock runs while the client is the
 * slow one.
 */
static void
stream_check(struct server *s, long long now)
{
	struct stream *st = &s->stream;
	struct buf why = { 0 };

	if (peer_queued(&wb.client) > HIGH_WATER) {
		st->last_at = now;
		st->held_at = 0;
		return;
	}
	if (wb.held.len == 0)
		st->held_at = 0;
	else if (st->held_at == 0)
		st->held_at = now;
	if (now >= st->last_at + STREAM_STALL_MS)
		buf_printf(&why, "no more of it came for %d ms",
		    STREAM_STALL_MS);
	else if (st->held_at > 0 && now >= st->held_at + STREAM_STALL_MS)
		buf_printf(&why, "it kept the client's other messages waiting "
		    "for %d ms", STREAM_STALL_MS);
	else
		return;
	stream_abort(s, buf_cstr(&why));
	buf_free(&why);
}

void
srv_check_timers(struct server *s, long long now)
{
	struct buf why = { 0 };

	if (s->eof_at > 0 && now >= s->eof_at) {
		srv_fail(s, "closed its standard output");
		return;
	}
	if (wb.streaming == s)
		stream_check(s, now);
	check_call_timeouts(s, now);
	if (s->state != SRV_STARTING || now < s->deadline)
		return;
	buf_printf(&why, "timed out after %d ms waiting for it to initialize "
	    "and list its tools (initTimeoutMs)", s->cfg->init_timeout_ms);
	srv_fail(s, buf_cstr(&why));
	buf_free(&why);
}

/* Its stdout is readable: handle what it said. */
void
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
	/* The call fails with the server, whose exit status says more. */
	if (wb.streaming == s)
		(void)stream_cut(s, "its output ended before the result did");
}

/* The child's exec report: nothing (it runs) or why it could not. */
void
srv_read_exec(struct server *s)
{
	struct buf why = { 0 };

	if (proc_exec_status(&s->proc, s->cfg, &why) < 0)
		srv_fail(s, buf_cstr(&why));
	buf_free(&why);
}

void
srv_read_err(struct server *s)
{
	if (proc_drain_stderr(&s->proc, s->label) == 0) {
		close(s->proc.errfd);
		s->proc.errfd = -1;
	}
}

/*
 * Write what is queued for its stdin; a broken pipe drops the queue.  An
 * empty queue, or any byte taken, counts as the server keeping up.
 */
void
srv_write_in(struct server *s, long long now)
{
	size_t before = peer_queued(&s->proc.io);

	if (s->proc.io.wfd >= 0 && peer_flush(&s->proc.io) < 0) {
		close(s->proc.io.wfd);
		s->proc.io.wfd = -1;
		s->proc.io.out.len = s->proc.io.outoff = 0;
	}
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
