/*
 * mcp-workbench: a stdio MCP server that aggregates other stdio MCP
 * servers.  main, the single poll() loop, the client's requests, and the
 * routing of calls to the servers of opened toolboxes.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "workbench.h"

#ifndef WB_VERSION
#define WB_VERSION	"0.0.0"
#endif

#define HIGH_WATER	(4u * 1024 * 1024)	/* Stop reading above this. */
#define LIST_PAGES_MAX	1000
#define RESTARTS_MAX	5
#define RESTART_WINDOW	60000
#define SHUTDOWN_MS	1900
#define EOF_GRACE_MS	250

enum srv_state {
	SRV_IDLE,		/* Never started. */
	SRV_STARTING,		/* initialize or tools/list under way. */
	SRV_READY,
	SRV_FAILED		/* Failed to start, or died. */
};

enum req_kind {
	REQ_INIT,
	REQ_LIST,
	REQ_CALL,
	REQ_LEVEL		/* logging/setLevel: the answer is dropped. */
};

/* A downstream tool as its server listed it. */
struct tool {
	char	*name;
	char	*json;		/* The Tool object, raw. */
	size_t	 len;
	char	*native;	/* Dynamic mode: as we list it, or NULL. */
};

/* A request to a server: sent, or waiting for the server to be ready. */
struct request {
	long long	 id;		/* Ours, on the server. */
	enum req_kind	 kind;
	bool		 sent;
	char		*cid;		/* The client's id, raw. */
	size_t		 cidlen;
	char		*tool;		/* The tool's own name. */
	char		*args;		/* Raw arguments, while waiting. */
	char		*meta;		/* Raw params._meta, while waiting. */
	char		*token;		/* The client's progressToken, raw. */
	size_t		 tokenlen;
	long long	 idle_at;	/* callTimeoutMs; progress resets it. */
	long long	 hard_at;	/* callMaxTimeoutMs. */
};

/* A request from a server to the client, under our upstream id. */
struct upreq {
	long long	 up;
	struct server	*srv;
	char		*sid;		/* The server's id, raw. */
	size_t		 sidlen;
};

struct toolbox;

struct server {
	struct toolbox		*box;
	const struct cfg_server	*cfg;
	char			*label;		/* "toolbox/server" */
	enum srv_state		 state;
	struct proc		 proc;
	long long		 next_id;
	struct request		*req;
	int			 nreq;
	struct tool		*tools;		/* The last complete list. */
	int			 ntools;
	struct tool		*fresh;		/* The list being paged in. */
	int			 nfresh;
	char			**cursors;	/* Cursors seen while paging. */
	int			 ncursors;
	char			*error;		/* Why it is SRV_FAILED. */
	long long		 deadline;	/* Of starting. */
	long long		 eof_at;	/* When its stdout closed. */
	long long		 starts[RESTARTS_MAX];
	int			 nstarts;
	bool			 logging;	/* It declared logging. */
	bool			 relisting;	/* Refetching its tools. */
	bool			 relist_again;
};

/* A client request waiting for a toolbox to finish opening. */
struct waiter {
	char	*cid;
	size_t	 cidlen;
};

struct toolbox {
	const struct cfg_toolbox *cfg;
	struct server		*servers;
	int			 nservers;
	bool			 open;
	struct waiter		*waiters;
	int			 nwaiters;
	bool			 starting;	/* Inside box_open's loop. */
};

static struct {
	struct cfg	 cfg;
	enum tool_mode	 mode;
	struct toolbox	*boxes;
	int		 nboxes;
	struct peer	 client;
	struct json	 j;
	struct buf	 instructions;	/* Escaped, ready to splice. */
	bool		 initialized;
	char		*protocol;
	struct buf	 client_caps;	/* What children are told we have. */
	bool		 can_sample;	/* The client's capabilities. */
	bool		 can_elicit;
	bool		 can_roots;
	char		*log_level;	/* Raw, from logging/setLevel. */
	struct upreq	*up;
	int		 nup;
	long long	 next_up;
	unsigned long	 listed;	/* Hash of the dynamic tool names. */
	bool		 stopping;
	long long	 stop_at;
	int		 sigfd;
	int		 saved_fl[3];
} wb;

static const char *const protocols[] = {
	"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", NULL
};

/*
 * The meta-tools.  Descriptions are written for a model that has nothing
 * else to go on.
 */
static const char meta_tools[] =
	"{\"name\":\"open_toolbox\",\"title\":\"Open a toolbox\","
	"\"description\":\"Open a toolbox by name: starts its MCP servers "
	"(if not already running) and returns every tool they offer, with "
	"each tool's server name and input schema. Call this before use_tool. "
	"The available toolboxes are listed in the server instructions. "
	"Opening an open toolbox again is cheap and returns the same list.\","
	"\"inputSchema\":{\"type\":\"object\",\"properties\":{"
	"\"toolbox_name\":{\"type\":\"string\",\"minLength\":1,"
	"\"description\":\"Name of the toolbox to open, e.g. \\\"dev\\\".\"}},"
	"\"required\":[\"toolbox_name\"],\"additionalProperties\":false},"
	"\"annotations\":{\"title\":\"Open a toolbox\",\"readOnlyHint\":false,"
	"\"destructiveHint\":false,\"idempotentHint\":true,"
	"\"openWorldHint\":false}},"
	"{\"name\":\"use_tool\",\"title\":\"Use a tool of an open toolbox\","
	"\"description\":\"Call a tool of an opened toolbox. Identify the tool "
	"with the toolbox name, the server name (source_server in the "
	"open_toolbox result) and the tool's own name, and pass the tool's "
	"arguments as an object matching its input schema. Example: "
	"{\\\"tool\\\": {\\\"toolbox\\\": \\\"dev\\\", \\\"server\\\": "
	"\\\"filesystem\\\", \\\"name\\\": \\\"read_file\\\"}, "
	"\\\"arguments\\\": {\\\"path\\\": \\\"/tmp/notes.txt\\\"}}. "
	"The tool's result is returned unchanged.\","
	"\"inputSchema\":{\"type\":\"object\",\"properties\":{"
	"\"tool\":{\"type\":\"object\",\"description\":\"Which tool to call.\","
	"\"properties\":{"
	"\"toolbox\":{\"type\":\"string\",\"minLength\":1,"
	"\"description\":\"Toolbox name, as passed to open_toolbox.\"},"
	"\"server\":{\"type\":\"string\",\"minLength\":1,"
	"\"description\":\"Server name within the toolbox (the tool's "
	"source_server).\"},"
	"\"name\":{\"type\":\"string\",\"minLength\":1,"
	"\"description\":\"The tool's name as listed by open_toolbox.\"}},"
	"\"required\":[\"toolbox\",\"server\",\"name\"],"
	"\"additionalProperties\":false},"
	"\"arguments\":{\"type\":\"object\",\"description\":\"Arguments for "
	"the tool, matching its inputSchema. Defaults to {}.\","
	"\"additionalProperties\":true}},"
	"\"required\":[\"tool\"],\"additionalProperties\":false},"
	"\"annotations\":{\"title\":\"Use a tool of an open toolbox\","
	"\"readOnlyHint\":false,\"destructiveHint\":true,"
	"\"idempotentHint\":false,\"openWorldHint\":true}}";

static void	srv_fail(struct server *, const char *);
static void	srv_relist(struct server *);
static void	box_settle(struct toolbox *);
static void	dyn_notify(void);
static void	call_arm(const struct server *, struct request *, long long);

/*
 * Replies to the client.  Each builds one whole line in the output queue.
 */
/* {"jsonrpc":"2.0","id":ID,"member": -- an id we cannot know is null. */
static struct buf *
reply_head(const char *id, size_t idlen, const char *member)
{
	struct buf *b = &wb.client.out;

	buf_puts(b, "{\"jsonrpc\":\"2.0\",\"id\":");
	if (id == NULL)
		buf_puts(b, "null");
	else
		buf_put(b, id, idlen);
	buf_printf(b, ",\"%s\":", member);
	return b;
}

static struct buf *
reply_begin(const char *id, size_t idlen)
{
	return reply_head(id, idlen, "result");
}

static void
reply_end(void)
{
	buf_puts(&wb.client.out, "}\n");
}

static void
reply_raw(const char *id, size_t idlen, const char *result)
{
	buf_puts(reply_begin(id, idlen), result);
	reply_end();
}

static void
reply_error(const char *id, size_t idlen, int code, const char *msg)
{
	struct buf *b = reply_head(id, idlen, "error");

	buf_printf(b, "{\"code\":%d,\"message\":", code);
	json_put_cstr(b, msg);
	buf_puts(b, "}}\n");
}

/* A tool result holding one text. */
static void
reply_text(const char *id, size_t idlen, const char *text, bool error)
{
	struct buf *b = reply_begin(id, idlen);

	buf_puts(b, "{\"content\":[{\"type\":\"text\",\"text\":");
	json_put_cstr(b, text);
	buf_puts(b, error ? "}],\"isError\":true}" : "}]}");
	reply_end();
}

/*
 * Messages to a server.
 */
static struct request *
req_add(struct server *s, enum req_kind kind)
{
	struct request *r;

	s->req = xrealloc(s->req, ((size_t)s->nreq + 1) * sizeof(*s->req));
	r = &s->req[s->nreq++];
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->id = ++s->next_id;
	return r;
}

static void
req_free(struct request *r)
{
	free(r->cid);
	free(r->tool);
	free(r->args);
	free(r->meta);
	free(r->token);
}

static void
req_remove(struct server *s, int i)
{
	req_free(&s->req[i]);
	s->req[i] = s->req[--s->nreq];
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

/* Send a request: {"jsonrpc":"2.0","id":N,"method":M,"params":P}. */
static void
srv_send(struct server *s, struct request *r, const char *method,
    const char *params, size_t plen)
{
	struct buf *b = &s->proc.io.out;

	r->sent = true;
	buf_printf(b, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"method\":\"%s\","
	    "\"params\":", r->id, method);
	buf_put(b, params, plen);
	buf_puts(b, "}\n");
}

static void
srv_notify(struct server *s, const char *method)
{
	buf_printf(&s->proc.io.out, "{\"jsonrpc\":\"2.0\",\"method\":\"%s\"}\n",
	    method);
}

static void
srv_cancel(struct server *s, long long id, const char *reason)
{
	buf_printf(&s->proc.io.out, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/cancelled\",\"params\":{\"requestId\":%lld,"
	    "\"reason\":\"%s\"}}\n", id, reason);
}

static void
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
	buf_puts(&p, "},\"clientInfo\":{\"name\":\"" WB_NAME "\","
	    "\"version\":\"" WB_VERSION "\"}}");
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
tools_free(struct tool *t, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		free(t[i].name);
		free(t[i].json);
		free(t[i].native);
	}
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

static const struct tool *
srv_tool(const struct server *s, const char *name)
{
	int i;

	for (i = 0; i < s->ntools; i++)
		if (strcmp(s->tools[i].name, name) == 0)
			return &s->tools[i];
	return NULL;
}

/* The text of a failed call, as use_tool promises it. */
static void
call_error(const struct server *s, const struct request *r,
    const char *reason)
{
	struct buf t = { 0 };

	buf_printf(&t, "Error executing tool '%s' in server '%s' "
	    "(toolbox '%s'): %s", r->tool, s->cfg->name, s->box->cfg->name,
	    reason);
	reply_text(r->cid, r->cidlen, buf_cstr(&t), true);
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
 * Send a call to a ready server, or answer it when the tool is not (or
 * no longer) there.  The request keeps only what routing the answer needs.
 */
static void
call_dispatch(struct server *s, struct request *r)
{
	struct buf p = { 0 }, t = { 0 };

	if (srv_tool(s, r->tool) == NULL) {
		buf_printf(&t, "Error executing tool: Tool '%s' not found in "
		    "server '%s'", r->tool, s->cfg->name);
		reply_text(r->cid, r->cidlen, buf_cstr(&t), true);
		buf_free(&t);
		req_remove(s, (int)(r - s->req));
		return;
	}
	buf_puts(&p, "{\"name\":");
	json_put_cstr(&p, r->tool);
	buf_puts(&p, ",\"arguments\":");
	buf_puts(&p, r->args != NULL ? r->args : "{}");
	if (r->meta != NULL) {
		buf_puts(&p, ",\"_meta\":");
		buf_puts(&p, r->meta);
	}
	buf_puts(&p, "}");
	srv_send(s, r, "tools/call", p.data, p.len);
	free(r->args);
	free(r->meta);
	r->args = r->meta = NULL;
	buf_free(&p);
	call_arm(s, r, now_ms());
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
		buf_printf(&why, "restarted %d times within %d s; not "
		    "restarting it again yet (last error: %s)", RESTARTS_MAX,
		    RESTART_WINDOW / 1000, s->error != NULL ? s->error :
		    "none");
		srv_fail(s, buf_cstr(&why));
		buf_free(&why);
		return;
	}
	s->starts[s->nstarts++ % RESTARTS_MAX] = now;
	if (proc_spawn(&s->proc, s->cfg, &why) < 0) {
		srv_fail(s, buf_cstr(&why));
		buf_free(&why);
		return;
	}
	s->state = SRV_STARTING;
	s->deadline = now + s->cfg->init_timeout_ms;
	srv_send_initialize(s);
}

/* Close our ends and give the process group to the escalation. */
static void
srv_stop_process(struct server *s)
{
	if (s->proc.pid > 0)
		proc_retire(s->proc.pid, s->proc.reaped);
	s->proc.pid = 0;
	s->proc.reaped = false;
	s->eof_at = 0;
	proc_close(&s->proc);
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
up_forget(struct server *s)
{
	int i;

	for (i = wb.nup - 1; i >= 0; i--) {
		if (wb.up[i].srv != s)
			continue;
		buf_printf(&wb.client.out, "{\"jsonrpc\":\"2.0\",\"method\":"
		    "\"notifications/cancelled\",\"params\":{\"requestId\":"
		    "%lld,\"reason\":\"the server exited\"}}\n", wb.up[i].up);
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
static void
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
	cursors_free(s);
	s->state = SRV_READY;
	free(s->error);
	s->error = NULL;
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

	if ((k = tool_listable(native)) != 0)
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
	sprintf(native, "[%s]%s%s", s->label, d != NULL ? " " : "",
	    d != NULL ? d : "");
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
		srv_fail(s, "protocol error: tools/list returned no tools "
		    "array");
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
		while (s->nfresh > before) {
			s->nfresh--;
			free(s->fresh[s->nfresh].name);
			free(s->fresh[s->nfresh].json);
		}
		srv_ready(s);
	} else if (s->ncursors >= LIST_PAGES_MAX) {
		wb_log("%s: tools/list has more than %d pages; keeping the "
		    "first %d", s->label, LIST_PAGES_MAX, LIST_PAGES_MAX);
		srv_ready(s);
	} else
		srv_send_list(s, cursor);
	free(cursor);
}

/* Splice the client's id into the server's answer and pass it on. */
static void
on_call_result(const struct request *r, const char *line, size_t n,
    const struct json *j)
{
	const char *id;
	size_t idlen;

	id = json_raw(j, json_get(j, 0, "id"), &idlen);
	rpc_splice(&wb.client.out, line, n, id, idlen, r->cid, r->cidlen);
	buf_putc(&wb.client.out, '\n');
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
		return;
	}
	r = s->req[i];
	s->req[i] = s->req[--s->nreq];
	result = json_get(j, 0, "result");
	error = json_get(j, 0, "error");
	if (r.kind == REQ_LEVEL)
		;
	else if (error >= 0 || result < 0) {
		msg = json_strdup(j, json_get(j, error, "message"));
		if (r.kind == REQ_CALL)
			call_error(s, &r, msg != NULL ? msg :
			    "the server answered with an error");
		else {
			struct buf why = { 0 };

			buf_printf(&why, "%s failed: %s", r.kind == REQ_INIT ?
			    "initialize" : "tools/list", msg != NULL ? msg :
			    "no result");
			srv_fail(s, buf_cstr(&why));
			buf_free(&why);
		}
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
		rpc_splice(&wb.client.out, line, n, raw, len, up, strlen(up));
		buf_putc(&wb.client.out, '\n');
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
	rpc_splice(&wb.client.out, line, n, raw, len, s->req[i].token,
	    s->req[i].tokenlen);
	buf_putc(&wb.client.out, '\n');
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
		buf_put(&wb.client.out, line, n);
		buf_putc(&wb.client.out, '\n');
		return;
	}
	json_put_key(&logger, "logger");
	json_put_cstr(&logger, s->label);
	if (j->tok[params].size > 0)
		buf_putc(&logger, ',');
	at = j->js + j->tok[params].start + 1;
	rpc_splice(&wb.client.out, line, n, at, 0, logger.data, logger.len);
	buf_putc(&wb.client.out, '\n');
	buf_free(&logger);
}

/* The server gave up on a request it sent the client: so do we. */
static void
on_server_cancel(struct server *s, const struct json *j, const char *line,
    size_t n)
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
	rpc_splice(&wb.client.out, line, n, raw, len, up, strlen(up));
	buf_putc(&wb.client.out, '\n');
	up_remove(i);
}

static void
on_server_notification(struct server *s, const struct json *j, int method,
    const char *line, size_t n)
{
	if (json_eq(j, method, "notifications/progress"))
		on_progress(s, j, line, n);
	else if (json_eq(j, method, "notifications/message"))
		on_log_message(s, j, line, n);
	else if (json_eq(j, method, "notifications/tools/list_changed"))
		srv_relist(s);
	else if (json_eq(j, method, "notifications/cancelled"))
		on_server_cancel(s, j, line, n);
}

static void
srv_line(void *ctx, char *line, size_t n)
{
	struct server *s = ctx;
	int id, method;

	if (s->proc.pid == 0)
		return;		/* It failed while this input was read. */
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
	if (id == NULL || (v = strtoll(id, NULL, 10)) <= 0 ||
	    (i = req_find(s, v)) < 0)
		return;
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

static const struct peer_ops srv_ops = { srv_line, srv_oversize };

/*
 * Toolboxes.
 */
static struct toolbox *
box_find(const char *name)
{
	int i;

	for (i = 0; i < wb.nboxes; i++)
		if (strcmp(wb.boxes[i].cfg->name, name) == 0)
			return &wb.boxes[i];
	return NULL;
}

static struct server *
box_server(struct toolbox *b, const char *name)
{
	int i;

	for (i = 0; i < b->nservers; i++)
		if (strcmp(b->servers[i].cfg->name, name) == 0)
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

static void
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
 * The meta-tools.
 */
static void
toolbox_names(struct buf *out)
{
	int i;

	for (i = 0; i < wb.nboxes; i++)
		buf_printf(out, "%s%s", i > 0 ? ", " : "",
		    wb.boxes[i].cfg->name);
	if (wb.nboxes == 0)
		buf_puts(out, "(none configured)");
}

static void
tool_open_toolbox(const struct json *j, int args, const char *id,
    size_t idlen)
{
	struct toolbox *b;
	struct buf t = { 0 };
	char *name;
	int k;

	k = json_get(j, args, "toolbox_name");
	if (k < 0)
		k = json_get(j, args, "toolbox");
	if ((name = json_strdup(j, k)) == NULL || name[0] == '\0') {
		reply_text(id, idlen, "Invalid tool invocation parameters: "
		    "toolbox_name: expected a non-empty string (the name of "
		    "the toolbox to open)", true);
		free(name);
		return;
	}
	if ((b = box_find(name)) == NULL) {
		buf_printf(&t, "Toolbox '%s' not found. Available toolboxes: ",
		    name);
		toolbox_names(&t);
		reply_text(id, idlen, buf_cstr(&t), true);
		buf_free(&t);
	} else
		box_open(b, id, idlen);
	free(name);
}

/* Check the use_tool input; details are appended to out. */
static void
check_field(const struct json *j, int obj, const char *key,
    const char *path, struct buf *out)
{
	int v = json_get(j, obj, key);

	if (v < 0)
		buf_printf(out, "%s%s: Required", out->len > 0 ? "; " : "",
		    path);
	else if (!json_is(j, v, JSMN_STRING))
		buf_printf(out, "%s%s: Expected string", out->len > 0 ?
		    "; " : "", path);
}

static void
check_keys(const struct json *j, int obj, const char *const *allowed,
    const char *prefix, struct buf *out)
{
	int i, n, k;
	char *key;

	for (i = obj + 1, n = 0; n < j->tok[obj].size; n++) {
		key = json_strdup(j, i);
		for (k = 0; allowed[k] != NULL; k++)
			if (key != NULL && strcmp(key, allowed[k]) == 0)
				break;
		if (allowed[k] == NULL)
			buf_printf(out, "%s%s%s: Unrecognized key",
			    out->len > 0 ? "; " : "", prefix,
			    key != NULL ? key : "?");
		free(key);
		i = json_next(j, i + 1);
	}
}

static bool
use_tool_valid(const struct json *j, int args, struct buf *details)
{
	static const char *const top[] = { "tool", "arguments", NULL };
	static const char *const ident[] = { "toolbox", "server", "name",
	    NULL };
	int tool, a;

	if (args < 0) {
		buf_puts(details, "tool: Required");
		return false;
	}
	if (!json_is(j, args, JSMN_OBJECT)) {
		buf_puts(details, "Expected object, received a non-object");
		return false;
	}
	check_keys(j, args, top, "", details);
	tool = json_get(j, args, "tool");
	if (tool < 0)
		buf_printf(details, "%stool: Required", details->len > 0 ?
		    "; " : "");
	else if (!json_is(j, tool, JSMN_OBJECT))
		buf_printf(details, "%stool: Expected object", details->len >
		    0 ? "; " : "");
	else {
		check_field(j, tool, "toolbox", "tool.toolbox", details);
		check_field(j, tool, "server", "tool.server", details);
		check_field(j, tool, "name", "tool.name", details);
		check_keys(j, tool, ident, "tool.", details);
	}
	a = json_get(j, args, "arguments");
	if (a >= 0 && !json_is(j, a, JSMN_OBJECT))
		buf_printf(details, "%sarguments: Expected object",
		    details->len > 0 ? "; " : "");
	return details->len == 0;
}

/*
 * The call's _meta for the server.  A progressToken is replaced by our
 * request id, unique on that server, and kept to map progress back.
 */
static char *
call_meta(const struct json *j, int meta, struct request *r)
{
	int t = json_get(j, meta, "progressToken");
	struct buf b = { 0 };
	const char *raw, *tok;
	char id[24];
	size_t len, toklen;

	raw = json_raw(j, meta, &len);
	if (!rpc_valid_id(j, t))
		return xstrndup(raw, len);
	tok = json_raw(j, t, &toklen);
	r->token = xstrndup(tok, toklen);
	r->tokenlen = toklen;
	snprintf(id, sizeof(id), "%lld", r->id);
	rpc_splice(&b, raw, len, tok, toklen, id, strlen(id));
	return buf_cstr(&b);
}

/* Route a call to a server: now, or once it is ready. */
static void
call_route(struct server *s, const char *tool, const struct json *j,
    int args, int meta, const char *id, size_t idlen)
{
	struct request *r;
	const char *raw;
	size_t len;

	r = req_add(s, REQ_CALL);
	r->cid = xstrndup(id, idlen);
	r->cidlen = idlen;
	r->tool = xstrdup(tool);
	if (args >= 0) {
		raw = json_raw(j, args, &len);
		r->args = xstrndup(raw, len);
	}
	if (json_is(j, meta, JSMN_OBJECT))
		r->meta = call_meta(j, meta, r);
	if (s->state == SRV_READY)
		call_dispatch(s, r);
	else
		srv_ensure(s);
}

/* The toolbox, server and tool names, each checked in turn. */
static void
tool_use_tool(const struct json *j, int args, int meta, const char *id,
    size_t idlen)
{
	struct buf t = { 0 }, details = { 0 };
	struct toolbox *b;
	struct server *s = NULL;
	char *box = NULL, *srv = NULL, *name = NULL;
	int tool;

	if (!use_tool_valid(j, args, &details)) {
		buf_printf(&t, "Invalid tool invocation parameters: %s",
		    buf_cstr(&details));
		goto fail;
	}
	tool = json_get(j, args, "tool");
	box = json_strdup(j, json_get(j, tool, "toolbox"));
	srv = json_strdup(j, json_get(j, tool, "server"));
	name = json_strdup(j, json_get(j, tool, "name"));
	if (box == NULL || srv == NULL || name == NULL)
		buf_puts(&t, "Invalid tool invocation parameters: names must "
		    "not contain \\u0000");
	else if (box[0] == '\0')
		buf_puts(&t, "toolbox: Toolbox name cannot be empty");
	else if (srv[0] == '\0')
		buf_puts(&t, "server: Server name cannot be empty");
	else if (name[0] == '\0')
		buf_puts(&t, "name: Tool name cannot be empty");
	else if ((b = box_find(box)) == NULL) {
		buf_printf(&t, "Error executing tool: Toolbox '%s' is not "
		    "configured. Available toolboxes: ", box);
		toolbox_names(&t);
	} else if (!b->open)
		buf_printf(&t, "Error executing tool: Toolbox '%s' is not "
		    "open", box);
	else if ((s = box_server(b, srv)) == NULL)
		buf_printf(&t, "Error executing tool: Server '%s' not found "
		    "in toolbox '%s'", srv, box);
	else if (s->state == SRV_READY && srv_tool(s, name) == NULL)
		buf_printf(&t, "Error executing tool: Tool '%s' not found in "
		    "server '%s'", name, srv);
	else
		call_route(s, name, j, json_get(j, args, "arguments"), meta,
		    id, idlen);
fail:
	if (t.len > 0)
		reply_text(id, idlen, buf_cstr(&t), true);
	buf_free(&t);
	buf_free(&details);
	free(box);
	free(srv);
	free(name);
}

/*
 * The client's requests.
 */
static bool
protocol_supported(const char *v)
{
	int i;

	for (i = 0; protocols[i] != NULL; i++)
		if (strcmp(protocols[i], v) == 0)
			return true;
	return false;
}

/* Children are told of the client capabilities that can reach them. */
static void
keep_client_caps(const struct json *j, int caps)
{
	static const char *const relayed[] = { "roots", "sampling",
	    "elicitation", NULL };
	const char *raw;
	size_t len;
	int i, v;

	wb.client_caps.len = 0;
	wb.can_roots = json_is(j, json_get(j, caps, "roots"), JSMN_OBJECT);
	wb.can_sample = json_is(j, json_get(j, caps, "sampling"), JSMN_OBJECT);
	wb.can_elicit = json_is(j, json_get(j, caps, "elicitation"),
	    JSMN_OBJECT);
	for (i = 0; relayed[i] != NULL; i++) {
		if ((v = json_get(j, caps, relayed[i])) < 0 ||
		    !json_is(j, v, JSMN_OBJECT))
			continue;
		if (wb.client_caps.len > 0)
			buf_putc(&wb.client_caps, ',');
		json_put_key(&wb.client_caps, relayed[i]);
		raw = json_raw(j, v, &len);
		buf_put(&wb.client_caps, raw, len);
	}
}

static void
m_initialize(const struct json *j, int params, const char *id, size_t idlen)
{
	struct buf *b;
	char *v;

	if (wb.initialized) {
		reply_error(id, idlen, -32600, "Invalid Request: already "
		    "initialized");
		return;
	}
	if ((v = json_strdup(j, json_get(j, params, "protocolVersion"))) ==
	    NULL) {
		reply_error(id, idlen, -32602, "Invalid params: "
		    "protocolVersion must be a string");
		return;
	}
	wb.protocol = xstrdup(protocol_supported(v) ? v : WB_PROTOCOL_LATEST);
	free(v);
	keep_client_caps(j, json_get(j, params, "capabilities"));
	wb.initialized = true;
	b = reply_begin(id, idlen);
	buf_puts(b, "{\"protocolVersion\":");
	json_put_cstr(b, wb.protocol);
	buf_puts(b, ",\"capabilities\":{\"tools\":{\"listChanged\":true},"
	    "\"logging\":{}},\"serverInfo\":{\"name\":\"" WB_NAME "\","
	    "\"title\":\"MCP Workbench\",\"version\":\"" WB_VERSION "\"},"
	    "\"instructions\":");
	buf_put(b, wb.instructions.data, wb.instructions.len);
	buf_putc(b, '}');
	reply_end();
}

static void
m_ping(const struct json *j, int params, const char *id, size_t idlen)
{
	(void)j;
	(void)params;
	reply_raw(id, idlen, "{}");
}

/*
 * Dynamic mode.  The listed tools are those of the open toolboxes' servers
 * as last listed, so a server that died keeps its tools listed (a call
 * restarts it).
 */
static void
dyn_each(void (*fn)(const struct tool *, void *), void *arg)
{
	const struct server *s;
	int i, k, t;

	if (wb.mode != MODE_DYNAMIC)
		return;
	for (i = 0; i < wb.nboxes; i++)
		for (k = 0; wb.boxes[i].open && k < wb.boxes[i].nservers; k++) {
			s = &wb.boxes[i].servers[k];
			for (t = 0; t < s->ntools; t++)
				if (s->tools[t].native != NULL)
					fn(&s->tools[t], arg);
		}
}

static void
put_native(const struct tool *t, void *arg)
{
	struct buf *b = arg;

	buf_putc(b, ',');
	buf_puts(b, t->native);
}

/* FNV-1a over what tools/list shows, to tell when it changed. */
static void
hash_native(const struct tool *t, void *arg)
{
	unsigned long *h = arg;
	const unsigned char *c;

	for (c = (const unsigned char *)t->native; *c != '\0'; c++)
		*h = (*h ^ *c) * 16777619u;
	*h = (*h ^ 0xff) * 16777619u;
}

static unsigned long
dyn_hash(void)
{
	unsigned long h = 2166136261u;

	dyn_each(hash_native, &h);
	return h;
}

/* One tools/list_changed for each change of the list, none otherwise. */
static void
dyn_notify(void)
{
	unsigned long h;

	if (wb.mode != MODE_DYNAMIC || (h = dyn_hash()) == wb.listed)
		return;
	wb.listed = h;
	buf_puts(&wb.client.out, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/tools/list_changed\"}\n");
}

/* A name that is not a listed tool: say why, and what it should be. */
static void
reply_unknown_tool(const char *id, size_t idlen, const char *name,
    bool malformed)
{
	char *fix = tool_legacy_fix(&wb.cfg, name);
	struct buf t = { 0 };

	if (!malformed && fix == NULL)
		buf_printf(&t, "Unknown tool: %s", name);
	else
		buf_printf(&t, "Invalid tool name format '%s'. Expected "
		    "format: {toolbox}__{server}__{tool}", name);
	if (fix != NULL)
		buf_printf(&t, ". Did you mean '%s'? Tool names changed in "
		    "mcp-workbench 0.1.0: see CHANGELOG.md.", fix);
	reply_error(id, idlen, -32602, buf_cstr(&t));
	buf_free(&t);
	free(fix);
}

/* tools/call of {toolbox}__{server}__{tool}: routed as use_tool routes. */
static void
tool_native(const struct json *j, const char *name, int args, int meta,
    const char *id, size_t idlen)
{
	char *box, *srv, *tool;
	struct toolbox *b;
	struct server *s = NULL;

	if (tool_split(name, &box, &srv, &tool) < 0) {
		reply_unknown_tool(id, idlen, name, true);
		return;
	}
	if ((b = box_find(box)) != NULL && b->open)
		s = box_server(b, srv);
	if (s == NULL || srv_tool(s, tool) == NULL)
		reply_unknown_tool(id, idlen, name, false);
	else if (args >= 0 && !json_is(j, args, JSMN_OBJECT))
		reply_error(id, idlen, -32602, "Invalid params: arguments "
		    "must be an object");
	else
		call_route(s, tool, j, args, meta, id, idlen);
	free(box);
	free(srv);
	free(tool);
}

static void
m_tools_list(const struct json *j, int params, const char *id, size_t idlen)
{
	struct buf *b;

	(void)j;
	(void)params;
	b = reply_begin(id, idlen);
	buf_puts(b, "{\"tools\":[");
	buf_puts(b, meta_tools);
	dyn_each(put_native, b);
	buf_puts(b, "]}");
	reply_end();
}

static void
m_tools_call(const struct json *j, int params, const char *id, size_t idlen)
{
	struct buf t = { 0 };
	int name, args;
	char *tool;

	name = json_get(j, params, "name");
	args = json_get(j, params, "arguments");
	if ((tool = json_strdup(j, name)) == NULL) {
		reply_error(id, idlen, -32602, "Invalid params: name must be "
		    "a string");
		return;
	}
	if (strcmp(tool, "open_toolbox") == 0)
		tool_open_toolbox(j, args, id, idlen);
	else if (strcmp(tool, "use_tool") == 0)
		tool_use_tool(j, args, json_get(j, params, "_meta"), id, idlen);
	else if (wb.mode == MODE_DYNAMIC)
		tool_native(j, tool, args, json_get(j, params, "_meta"), id,
		    idlen);
	else {
		buf_printf(&t, "Unknown tool: %s", tool);
		reply_error(id, idlen, -32602, buf_cstr(&t));
		buf_free(&t);
	}
	free(tool);
}

static void
m_set_level(const struct json *j, int params, const char *id, size_t idlen)
{
	int level = json_get(j, params, "level"), i, k;
	struct server *s;
	const char *raw;
	size_t len;

	if (!json_is(j, level, JSMN_STRING)) {
		reply_error(id, idlen, -32602, "Invalid params: level must be "
		    "a string");
		return;
	}
	raw = json_raw(j, level, &len);
	free(wb.log_level);
	wb.log_level = xstrndup(raw, len);
	for (i = 0; i < wb.nboxes; i++)
		for (k = 0; k < wb.boxes[i].nservers; k++) {
			s = &wb.boxes[i].servers[k];
			if (s->state == SRV_READY)
				srv_send_level(s);
		}
	reply_raw(id, idlen, "{}");
}

static const struct method {
	const char	*name;
	void		(*fn)(const struct json *, int, const char *, size_t);
	bool		 before_init;
} methods[] = {
	{ "initialize", m_initialize, true },
	{ "ping", m_ping, true },
	{ "tools/list", m_tools_list, false },
	{ "tools/call", m_tools_call, false },
	{ "logging/setLevel", m_set_level, false },
	{ NULL, NULL, false }
};

static void
client_request(const struct json *j, int id, int method)
{
	const struct method *m;
	const char *raw;
	size_t len;
	int params;

	raw = json_raw(j, id, &len);
	for (m = methods; m->name != NULL; m++)
		if (json_eq(j, method, m->name))
			break;
	if (m->name == NULL) {
		reply_error(raw, len, -32601, "Method not found");
		return;
	}
	params = json_get(j, 0, "params");
	if (params >= 0 && !json_is(j, params, JSMN_OBJECT)) {
		reply_error(raw, len, -32602, "Invalid params: params must be "
		    "an object");
		return;
	}
	if (!wb.initialized && !m->before_init) {
		reply_error(raw, len, -32600, "Invalid Request: the session "
		    "is not initialized; send initialize first");
		return;
	}
	m->fn(j, params, raw, len);
}

/* The client cancels a call (or an open): the server is told, not us. */
static void
cancel_request(const char *id, size_t idlen, const char *reason)
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
				    s->req[r].cidlen != idlen ||
				    memcmp(s->req[r].cid, id, idlen) != 0)
					continue;
				if (s->req[r].sent)
					srv_cancel(s, s->req[r].id, reason);
				req_remove(s, r);
			}
		}
	}
}

static void
client_notification(const struct json *j, int method)
{
	int r = json_path(j, 0, "params.requestId"), i, k;
	const char *raw;
	size_t len;

	if (json_eq(j, method, "notifications/cancelled") &&
	    rpc_valid_id(j, r)) {
		raw = json_raw(j, r, &len);
		cancel_request(raw, len, "cancelled by the client");
	} else if (json_eq(j, method, "notifications/roots/list_changed"))
		for (i = 0; i < wb.nboxes; i++)
			for (k = 0; k < wb.boxes[i].nservers; k++)
				if (wb.boxes[i].servers[k].state == SRV_READY)
					srv_notify(&wb.boxes[i].servers[k],
					    "notifications/roots/list_changed");
}

/* The client answers a server's request: back it goes, under its id. */
static void
client_response(const struct json *j, int id, const char *line, size_t n)
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

static void
client_line(void *ctx, char *line, size_t n)
{
	const char *raw = NULL;
	size_t len = 0;
	int r, id, method, version;

	(void)ctx;
	if (wb.stopping)
		return;
	if ((r = json_parse_any(&wb.j, line, n)) == JSON_SYNTAX) {
		reply_error(NULL, 0, -32700, "Parse error: not valid JSON");
		json_release(&wb.j);
		return;
	}
	if (r != JSON_OK || wb.j.tok[0].type != JSMN_OBJECT) {
		reply_error(NULL, 0, -32600, r == JSON_TOOBIG ?
		    "Invalid Request: too many JSON tokens" :
		    wb.j.tok[0].type == JSMN_ARRAY ? "Invalid Request: batch "
		    "requests are not supported" : "Invalid Request: expected "
		    "a JSON object");
		json_release(&wb.j);
		return;
	}
	id = json_get(&wb.j, 0, "id");
	method = json_get(&wb.j, 0, "method");
	version = json_get(&wb.j, 0, "jsonrpc");
	if (rpc_valid_id(&wb.j, id))
		raw = json_raw(&wb.j, id, &len);
	if (!json_eq(&wb.j, version, "2.0") || (id >= 0 && raw == NULL) ||
	    (method >= 0 && !json_is(&wb.j, method, JSMN_STRING)))
		reply_error(raw, len, -32600, "Invalid Request");
	else if (method >= 0 && id >= 0)
		client_request(&wb.j, id, method);
	else if (method >= 0)
		client_notification(&wb.j, method);
	else if (id >= 0 && (json_get(&wb.j, 0, "result") >= 0 ||
	    json_get(&wb.j, 0, "error") >= 0))
		client_response(&wb.j, id, line, n);
	else
		reply_error(raw, len, -32600, "Invalid Request: no method");
	json_release(&wb.j);
}

static void
client_oversize(void *ctx, size_t size, const char *id)
{
	struct buf t = { 0 };

	(void)ctx;
	buf_printf(&t, "Invalid Request: message of %zu bytes exceeds the "
	    "%zu-byte limit (maxMessageBytes); discarded", size,
	    wb.cfg.max_message);
	reply_error(id, id != NULL ? strlen(id) : 0, -32600, buf_cstr(&t));
	buf_free(&t);
}

static const struct peer_ops client_ops = { client_line, client_oversize };

/*
 * Startup.
 */
static void
build_instructions(void)
{
	const struct cfg_toolbox *b;
	struct buf t = { 0 };
	int i;

	if (wb.cfg.nboxes == 0) {
		buf_printf(&t, "mcp-workbench is running, but no toolboxes are "
		    "configured, so there are no tools to open yet. Add "
		    "toolboxes under \"toolboxes\" in %s, for example:\n"
		    "{\"toolboxes\": {\"dev\": {\"description\": \"Development "
		    "tools\", \"mcpServers\": {\"filesystem\": {\"command\": "
		    "\"npx\", \"args\": [\"-y\", "
		    "\"@modelcontextprotocol/server-filesystem\", \".\"]}}}}}\n"
		    "then restart the workbench (see man mcp-workbench).",
		    wb.cfg.path);
		json_put_str(&wb.instructions, t.data, t.len);
		buf_free(&t);
		return;
	}
	buf_puts(&t, "mcp-workbench groups MCP servers into toolboxes. A "
	    "toolbox's servers start only when you open it.\n\n"
	    "Available toolboxes:\n");
	for (i = 0; i < wb.cfg.nboxes; i++) {
		b = &wb.cfg.boxes[i];
		buf_printf(&t, "%s (%d server%s)\n", b->name, b->nservers,
		    b->nservers == 1 ? "" : "s");
		if (b->description[0] != '\0')
			buf_printf(&t, "  Description: %s\n", b->description);
	}
	b = &wb.cfg.boxes[0];
	buf_printf(&t, "\nTo use a toolbox: first call open_toolbox with "
	    "{\"toolbox_name\": \"%s\"}; it starts the toolbox's servers and "
	    "lists their tools, each with its source_server and inputSchema. "
	    "Then call use_tool with the tool's toolbox, server and name, "
	    "for example {\"tool\": {\"toolbox\": \"%s\", \"server\": \"%s\", "
	    "\"name\": \"<tool name from open_toolbox>\"}, \"arguments\": "
	    "{}}.", b->name, b->name, b->nservers > 0 ?
	    b->servers[0].name : "<server>");
	if (wb.mode == MODE_DYNAMIC)
		buf_puts(&t, " Opened tools also appear in your tool list as "
		    "{toolbox}__{server}__{tool} and can be called directly.");
	json_put_str(&wb.instructions, t.data, t.len);
	buf_free(&t);
}

static void
build_boxes(void)
{
	struct toolbox *b;
	struct server *s;
	int i, k;

	wb.nboxes = wb.cfg.nboxes;
	wb.boxes = xcalloc((size_t)wb.nboxes, sizeof(*wb.boxes));
	for (i = 0; i < wb.nboxes; i++) {
		b = &wb.boxes[i];
		b->cfg = &wb.cfg.boxes[i];
		b->nservers = b->cfg->nservers;
		b->servers = xcalloc((size_t)b->nservers, sizeof(*b->servers));
		for (k = 0; k < b->nservers; k++) {
			s = &b->servers[k];
			s->box = b;
			s->cfg = &b->cfg->servers[k];
			s->label = xmalloc(strlen(b->cfg->name) +
			    strlen(s->cfg->name) + 2);
			sprintf(s->label, "%s/%s", b->cfg->name, s->cfg->name);
			s->proc.io.rfd = s->proc.io.wfd = s->proc.errfd = -1;
		}
	}
}

/* A new pipe must never land on fds 0-2: keep them open. */
static void
guard_std_fds(void)
{
	int fd;

	while ((fd = open("/dev/null", O_RDWR | O_CLOEXEC)) >= 0 && fd <= 2)
		fcntl(fd, F_SETFD, 0);
	if (fd > 2)
		close(fd);
}

static void
set_std_nonblock(void)
{
	int i;

	for (i = 0; i < 3; i++) {
		wb.saved_fl[i] = fcntl(i, F_GETFL);
		fcntl(i, F_SETFL, wb.saved_fl[i] | O_NONBLOCK);
	}
}

/* O_NONBLOCK on 0-2 is shared with whoever started us: give it back. */
static void
restore_std_fds(void)
{
	int i;

	for (i = 0; i < 3; i++)
		if (wb.saved_fl[i] >= 0)
			fcntl(i, F_SETFL, wb.saved_fl[i]);
}

/*
 * The loop.
 */
enum slot_kind {
	SLOT_SIGNAL,
	SLOT_STDIN,
	SLOT_STDOUT,
	SLOT_OUT,		/* A server's stdout. */
	SLOT_IN,		/* A server's stdin. */
	SLOT_ERR		/* A server's stderr. */
};

struct slot {
	enum slot_kind	 kind;
	struct server	*srv;
};

static struct pollfd *pfd;
static struct slot *slots;
static int npfd, cappfd;

static void
watch(int fd, short events, enum slot_kind kind, struct server *s)
{
	if (fd < 0 || events == 0)
		return;
	if (npfd == cappfd) {
		cappfd = cappfd == 0 ? 16 : cappfd * 2;
		pfd = xrealloc(pfd, (size_t)cappfd * sizeof(*pfd));
		slots = xrealloc(slots, (size_t)cappfd * sizeof(*slots));
	}
	pfd[npfd].fd = fd;
	pfd[npfd].events = events;
	pfd[npfd].revents = 0;
	slots[npfd].kind = kind;
	slots[npfd].srv = s;
	npfd++;
}

/* Stop reading while what we must write piles up (backpressure). */
static bool
congested(void)
{
	int i, k;

	if (peer_queued(&wb.client) > HIGH_WATER)
		return true;
	for (i = 0; i < wb.nboxes; i++)
		for (k = 0; k < wb.boxes[i].nservers; k++)
			if (peer_queued(&wb.boxes[i].servers[k].proc.io) >
			    HIGH_WATER)
				return true;
	return false;
}

static void
build_pollfds(void)
{
	struct server *s;
	bool full = congested();
	int i, k;

	npfd = 0;
	watch(wb.sigfd, POLLIN, SLOT_SIGNAL, NULL);
	if (!wb.client.eof && !wb.stopping && !full)
		watch(STDIN_FILENO, POLLIN, SLOT_STDIN, NULL);
	if (peer_queued(&wb.client) > 0)
		watch(STDOUT_FILENO, POLLOUT, SLOT_STDOUT, NULL);
	for (i = 0; i < wb.nboxes; i++)
		for (k = 0; k < wb.boxes[i].nservers; k++) {
			s = &wb.boxes[i].servers[k];
			if (!full || wb.stopping)
				watch(s->proc.io.rfd, POLLIN, SLOT_OUT, s);
			if (peer_queued(&s->proc.io) > 0)
				watch(s->proc.io.wfd, POLLOUT, SLOT_IN, s);
			watch(s->proc.errfd, POLLIN, SLOT_ERR, s);
		}
}

static long long
earliest(long long a, long long b)
{
	return a <= 0 ? b : b <= 0 ? a : a < b ? a : b;
}

static long long
server_deadline(const struct server *s)
{
	long long t = s->eof_at;
	int i;

	if (s->state == SRV_STARTING)
		t = earliest(t, s->deadline);
	for (i = 0; i < s->nreq; i++)
		t = earliest(t, earliest(s->req[i].idle_at, s->req[i].hard_at));
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
		call_error(s, r, buf_cstr(&why));
		srv_cancel(s, r->id, "timed out");
		req_remove(s, i);
	}
	buf_free(&why);
}

static long long
next_deadline(void)
{
	long long t = proc_deadline(), d;
	int i, k;

	for (i = 0; i < wb.nboxes; i++)
		for (k = 0; k < wb.boxes[i].nservers; k++) {
			d = server_deadline(&wb.boxes[i].servers[k]);
			if (d >= 0 && (t < 0 || d < t))
				t = d;
		}
	if (wb.stopping && (t < 0 || wb.stop_at < t))
		t = wb.stop_at;
	return t;
}

static void
check_timeouts(long long now)
{
	struct server *s;
	struct buf why = { 0 };
	int i, k;

	proc_tick(now);
	for (i = 0; i < wb.nboxes; i++)
		for (k = 0; k < wb.boxes[i].nservers; k++) {
			s = &wb.boxes[i].servers[k];
			if (s->eof_at > 0 && now >= s->eof_at) {
				srv_fail(s, "closed its standard output");
				continue;
			}
			check_call_timeouts(s, now);
			if (s->state != SRV_STARTING || now < s->deadline)
				continue;
			why.len = 0;
			buf_printf(&why, "timed out after %d ms waiting for "
			    "it to initialize and list its tools "
			    "(initTimeoutMs)",
			    s->cfg->init_timeout_ms);
			srv_fail(s, buf_cstr(&why));
		}
	buf_free(&why);
}

static struct server *
server_by_pid(pid_t pid)
{
	int i, k;

	for (i = 0; i < wb.nboxes; i++)
		for (k = 0; k < wb.boxes[i].nservers; k++)
			if (wb.boxes[i].servers[k].proc.pid == pid)
				return &wb.boxes[i].servers[k];
	return NULL;
}

/* A server process ended: take its last words, then fail what waits. */
static void
srv_exited(struct server *s, int status)
{
	struct buf why = { 0 };

	s->proc.reaped = true;
	while (s->proc.io.rfd >= 0 && s->proc.pid > 0 &&
	    peer_read(&s->proc.io, wb.cfg.max_message, &srv_ops, s) > 0)
		;
	while (s->proc.pid > 0 && proc_drain_stderr(&s->proc, s->label) > 0)
		;
	if (s->proc.pid > 0) {
		proc_status(status, &why);
		srv_fail(s, buf_cstr(&why));
		buf_free(&why);
	}
}

static void
reap(void)
{
	struct server *s;
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		if ((s = server_by_pid(pid)) != NULL)
			srv_exited(s, status);
		else
			proc_reaped(pid);
	}
}

static void
begin_shutdown(void)
{
	struct server *s;
	int i, k;

	if (wb.stopping)
		return;
	wb.stopping = true;
	wb.stop_at = now_ms() + SHUTDOWN_MS;
	for (i = 0; i < wb.nboxes; i++)
		for (k = 0; k < wb.boxes[i].nservers; k++) {
			s = &wb.boxes[i].servers[k];
			if (s->proc.pid > 0)
				srv_stop_process(s);
		}
}

static void
on_server_event(struct server *s, enum slot_kind kind, short revents)
{
	if (kind == SLOT_ERR) {
		if (proc_drain_stderr(&s->proc, s->label) == 0) {
			close(s->proc.errfd);
			s->proc.errfd = -1;
		}
	} else if (kind == SLOT_IN) {
		if (peer_flush(&s->proc.io) < 0 || (revents & POLLERR)) {
			close(s->proc.io.wfd);
			s->proc.io.wfd = -1;
			s->proc.io.out.len = s->proc.io.outoff = 0;
		}
	} else if (peer_read(&s->proc.io, wb.cfg.max_message, &srv_ops, s) ==
	    0 && s->proc.pid > 0) {
		/*
		 * Usually the process is exiting: give its exit status a
		 * moment to arrive, since that is the better report.
		 */
		close(s->proc.io.rfd);
		s->proc.io.rfd = -1;
		s->eof_at = now_ms() + EOF_GRACE_MS;
	}
}

static void
dispatch(long long now)
{
	int i;

	for (i = 0; i < npfd; i++) {
		if (pfd[i].revents == 0)
			continue;
		switch (slots[i].kind) {
		case SLOT_SIGNAL:
			if (proc_signal_take())
				begin_shutdown();
			reap();
			break;
		case SLOT_STDIN:
			if (peer_read(&wb.client, wb.cfg.max_message,
			    &client_ops, NULL) == 0 ||
			    (pfd[i].revents & (POLLHUP | POLLERR) &&
			    !(pfd[i].revents & POLLIN)))
				begin_shutdown();
			break;
		case SLOT_STDOUT:
			break;
		default:
			/* The server may have been stopped meanwhile. */
			if (pfd[i].fd == slots[i].srv->proc.io.rfd ||
			    pfd[i].fd == slots[i].srv->proc.io.wfd ||
			    pfd[i].fd == slots[i].srv->proc.errfd)
				on_server_event(slots[i].srv, slots[i].kind,
				    pfd[i].revents);
		}
	}
	check_timeouts(now);
}

static void
flush_all(void)
{
	struct server *s;
	int i, k;

	if (peer_flush(&wb.client) < 0) {
		wb.client.out.len = wb.client.outoff = 0;
		begin_shutdown();
	}
	for (i = 0; i < wb.nboxes; i++)
		for (k = 0; k < wb.boxes[i].nservers; k++) {
			s = &wb.boxes[i].servers[k];
			if (s->proc.io.wfd >= 0 && peer_flush(&s->proc.io) < 0) {
				close(s->proc.io.wfd);
				s->proc.io.wfd = -1;
				s->proc.io.out.len = s->proc.io.outoff = 0;
			}
		}
	wb_log_flush();
}

static void
run(void)
{
	long long deadline, now;
	int timeout;

	for (;;) {
		flush_all();
		now = now_ms();
		if (wb.stopping && (proc_dying() == 0 || now >= wb.stop_at))
			break;
		build_pollfds();
		deadline = next_deadline();
		timeout = deadline < 0 ? -1 : deadline <= now ? 0 :
		    (int)(deadline - now);
		if (poll(pfd, (nfds_t)npfd, timeout) < 0 && errno != EINTR) {
			wb_log("poll: %s", strerror(errno));
			break;
		}
		dispatch(now_ms());
	}
	proc_kill_all();
	reap();
}

/*
 * Command line.
 */
static void
usage(FILE *f)
{
	fprintf(f, "usage: " WB_NAME " [-c FILE] [--mode proxy|dynamic] "
	    "[--check] [-V|--version] [-h|--help]\n");
}

static void
help(void)
{
	usage(stdout);
	printf("\nA stdio MCP server that groups other stdio MCP servers "
	    "into toolboxes.\n\n"
	    "  -c, --config FILE  configuration file (default: "
	    "$WORKBENCH_CONFIG,\n"
	    "                     else ./workbench-config.json)\n"
	    "      --mode MODE    proxy (meta-tools only) or dynamic (also "
	    "list opened\n"
	    "                     tools natively); overrides toolMode\n"
	    "      --check        validate the configuration, list its "
	    "toolboxes, exit\n"
	    "  -V, --version      print the version and exit\n"
	    "  -h, --help         print this help and exit\n\n"
	    "Exit status: 0 success, 1 invalid configuration, 2 usage error, "
	    "3 cannot start.\nSee mcp-workbench(1).\n");
}

static void
print_check(const struct cfg *c)
{
	const struct cfg_toolbox *b;
	int i, k;

	printf("%s: OK, %d toolbox%s, mode %s\n", c->path, c->nboxes,
	    c->nboxes == 1 ? "" : "es", wb.mode == MODE_DYNAMIC ? "dynamic" :
	    "proxy");
	for (i = 0; i < c->nboxes; i++) {
		b = &c->boxes[i];
		printf("%s (%d server%s)%s%s\n", b->name, b->nservers,
		    b->nservers == 1 ? "" : "s", b->description[0] != '\0' ?
		    ": " : "", b->description);
		for (k = 0; k < b->nservers; k++)
			printf("  %s: %s\n", b->servers[k].name,
			    b->servers[k].command);
	}
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "mode", required_argument, NULL, 'm' },
		{ "check", no_argument, NULL, 'k' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *path = NULL, *mode = NULL;
	bool check = false;
	int ch;

	wb.saved_fl[0] = wb.saved_fl[1] = wb.saved_fl[2] = -1;
	guard_std_fds();
	while ((ch = getopt_long(argc, argv, "c:Vh", longopts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			path = optarg;
			break;
		case 'm':
			mode = optarg;
			break;
		case 'k':
			check = true;
			break;
		case 'V':
			printf(WB_NAME " " WB_VERSION "\n");
			return 0;
		case 'h':
			help();
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc || (mode != NULL && strcmp(mode, "proxy") != 0 &&
	    strcmp(mode, "dynamic") != 0)) {
		fprintf(stderr, WB_NAME ": %s\n", optind < argc ?
		    "unexpected argument" : "--mode takes proxy or dynamic");
		usage(stderr);
		return 2;
	}
	if (path == NULL && (path = getenv("WORKBENCH_CONFIG")) == NULL)
		path = "workbench-config.json";
	if (cfg_load(&wb.cfg, path, stderr) > 0) {
		fprintf(stderr, WB_NAME ": %s: configuration is invalid\n",
		    path);
		return 1;
	}
	wb.mode = mode != NULL ? (strcmp(mode, "dynamic") == 0 ?
	    MODE_DYNAMIC : MODE_PROXY) : wb.cfg.mode;
	if (check) {
		print_check(&wb.cfg);
		return 0;
	}
	if ((wb.sigfd = proc_signals()) < 0) {
		fprintf(stderr, WB_NAME ": cannot set up signals: %s\n",
		    strerror(errno));
		return 3;
	}
	build_instructions();
	build_boxes();
	wb.listed = dyn_hash();
	wb.client.rfd = STDIN_FILENO;
	wb.client.wfd = STDOUT_FILENO;
	set_std_nonblock();
	run();
	restore_std_fds();
	return 0;
}
