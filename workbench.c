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

struct workbench wb;
const char wb_version[] = WB_VERSION;

#define SHUTDOWN_MS	1900
#define TRIM_IDLE_MS	1000


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


/*
 * Replies to the client.  Each builds one whole line in the output queue.
 */
/* {"jsonrpc":"2.0","id":ID,"member": -- an id we cannot know is null. */
/*
 * Where a message for the client goes: its queue, or while a server's
 * result is being streamed into that, wb.held until the stream ends.
 */
struct buf *
client_out(void)
{
	return wb.streaming != NULL ? &wb.held : &wb.client.out;
}

static struct buf *
reply_head(const char *id, size_t idlen, const char *member)
{
	struct buf *b = client_out();

	buf_puts(b, "{\"jsonrpc\":\"2.0\",\"id\":");
	if (id == NULL)
		buf_puts(b, "null");
	else
		buf_put(b, id, idlen);
	buf_printf(b, ",\"%s\":", member);
	return b;
}

struct buf *
reply_begin(const char *id, size_t idlen)
{
	return reply_head(id, idlen, "result");
}

void
reply_end(void)
{
	buf_puts(client_out(), "}\n");
}

static void
reply_raw(const char *id, size_t idlen, const char *result)
{
	buf_puts(reply_begin(id, idlen), result);
	reply_end();
}

void
reply_error(const char *id, size_t idlen, int code, const char *msg)
{
	struct buf *b = reply_head(id, idlen, "error");

	buf_printf(b, "{\"code\":%d,\"message\":", code);
	json_put_cstr(b, msg);
	buf_puts(b, "}}\n");
}

/* A tool result holding one text. */
void
reply_text(const char *id, size_t idlen, const char *text, bool error)
{
	struct buf *b = reply_begin(id, idlen);

	buf_puts(b, "{\"content\":[{\"type\":\"text\",\"text\":");
	json_put_cstr(b, text);
	buf_puts(b, error ? "}],\"isError\":true}" : "}]}");
	reply_end();
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
	if ((b = box_find(name, strlen(name))) == NULL) {
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
check_field(const struct json *j, int v, const char *path, struct buf *out)
{
	if (v < 0)
		buf_printf(out, "%s%s: Required", out->len > 0 ? "; " : "",
		    path);
	else if (!json_is(j, v, JSMN_STRING))
		buf_printf(out, "%s%s: Expected string", out->len > 0 ?
		    "; " : "", path);
}

/* Name the keys of obj that are not allowed (only when there are some). */
static void
check_keys(const struct json *j, int obj, const char *const *allowed,
    const char *prefix, struct buf *out)
{
	int i, n, k;
	char *key;

	for (i = obj + 1, n = 0; n < j->tok[obj].size; n++) {
		for (k = 0; allowed[k] != NULL; k++)
			if (json_eq(j, i, allowed[k]))
				break;
		if (allowed[k] == NULL) {
			key = json_strdup(j, i);
			buf_printf(out, "%s%s%s: Unrecognized key",
			    out->len > 0 ? "; " : "", prefix,
			    key != NULL ? key : "?");
			free(key);
		}
		i = json_next(j, i + 1);
	}
}

/* use_tool's arguments: {"tool":{"toolbox","server","name"},"arguments"}. */
enum { U_TOOL, U_ARGS, U_BOX = 0, U_SERVER, U_NAME };

static bool
use_tool_valid(const struct json *j, int args, int top[2], int id[3],
    struct buf *details)
{
	static const char *const top_keys[] = { "tool", "arguments", NULL };
	static const char *const id_keys[] = { "toolbox", "server", "name",
	    NULL };
	int others;

	if (args < 0) {
		buf_puts(details, "tool: Required");
		return false;
	}
	if (!json_is(j, args, JSMN_OBJECT)) {
		buf_puts(details, "Expected object, received a non-object");
		return false;
	}
	if (json_members(j, args, top_keys, top) > 0)
		check_keys(j, args, top_keys, "", details);
	if (top[U_TOOL] < 0)
		buf_printf(details, "%stool: Required", details->len > 0 ?
		    "; " : "");
	else if (!json_is(j, top[U_TOOL], JSMN_OBJECT))
		buf_printf(details, "%stool: Expected object", details->len >
		    0 ? "; " : "");
	else {
		others = json_members(j, top[U_TOOL], id_keys, id);
		check_field(j, id[U_BOX], "tool.toolbox", details);
		check_field(j, id[U_SERVER], "tool.server", details);
		check_field(j, id[U_NAME], "tool.name", details);
		if (others > 0)
			check_keys(j, top[U_TOOL], id_keys, "tool.", details);
	}
	if (top[U_ARGS] >= 0 && !json_is(j, top[U_ARGS], JSMN_OBJECT))
		buf_printf(details, "%sarguments: Expected object",
		    details->len > 0 ? "; " : "");
	return details->len == 0;
}

/* A call's arguments and _meta, from their tokens. */
static void
call_in_tokens(const struct json *j, int args, int meta, struct call_in *in)
{
	int t;

	memset(in, 0, sizeof(*in));
	if (args >= 0)
		in->args = json_raw(j, args, &in->alen);
	if (json_is(j, meta, JSMN_OBJECT)) {
		in->meta = json_raw(j, meta, &in->mlen);
		if (rpc_valid_id(j, t = json_get(j, meta, "progressToken")))
			in->token = json_raw(j, t, &in->toklen);
	}
}

/* The toolbox, server and tool names, each checked in turn. */
static void
tool_use_tool(const struct json *j, int args, int meta, const char *id,
    size_t idlen)
{
	struct buf t = { 0 }, details = { 0 };
	struct toolbox *b;
	struct server *s = NULL;
	const char *box, *srv, *name;
	struct call_in in;
	int top[2], ident[3];

	if (!use_tool_valid(j, args, top, ident, &details)) {
		buf_printf(&t, "Invalid tool invocation parameters: %s",
		    buf_cstr(&details));
		goto fail;
	}
	box = json_str(j, ident[U_BOX], &wb.names[0]);
	srv = json_str(j, ident[U_SERVER], &wb.names[1]);
	name = json_str(j, ident[U_NAME], &wb.names[2]);
	if (box == NULL || srv == NULL || name == NULL)
		buf_puts(&t, "Invalid tool invocation parameters: names must "
		    "not contain \\u0000");
	else if (box[0] == '\0')
		buf_puts(&t, "toolbox: Toolbox name cannot be empty");
	else if (srv[0] == '\0')
		buf_puts(&t, "server: Server name cannot be empty");
	else if (name[0] == '\0')
		buf_puts(&t, "name: Tool name cannot be empty");
	else if ((b = box_find(box, strlen(box))) == NULL) {
		buf_printf(&t, "Error executing tool: Toolbox '%s' is not "
		    "configured. Available toolboxes: ", box);
		toolbox_names(&t);
	} else if (!b->open)
		buf_printf(&t, "Error executing tool: Toolbox '%s' is not "
		    "open", box);
	else if ((s = box_server(b, srv, strlen(srv))) == NULL)
		buf_printf(&t, "Error executing tool: Server '%s' not found "
		    "in toolbox '%s'", srv, box);
	else if (s->state == SRV_READY && srv_tool(s, name, strlen(name)) ==
	    NULL)
		buf_printf(&t, "Error executing tool: Tool '%s' not found in "
		    "server '%s'", name, srv);
	else {
		call_in_tokens(j, top[U_ARGS], meta, &in);
		call_route(s, name, strlen(name), &in, id, idlen);
	}
fail:
	if (t.len > 0)
		reply_text(id, idlen, buf_cstr(&t), true);
	buf_free(&t);
	buf_free(&details);
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

static bool
optional_object(const struct json *j, int obj, const char *key)
{
	int v = json_get(j, obj, key);

	return v < 0 || json_is(j, v, JSMN_OBJECT);
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
	if (!optional_object(j, params, "capabilities") ||
	    !optional_object(j, params, "clientInfo")) {
		reply_error(id, idlen, -32602, "Invalid params: capabilities "
		    "and clientInfo must be objects");
		free(v);
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
void
dyn_notify(void)
{
	unsigned long h;

	if (wb.mode != MODE_DYNAMIC || (h = dyn_hash()) == wb.listed)
		return;
	wb.listed = h;
	buf_puts(client_out(), "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/tools/list_changed\"}\n");
}

/*
 * A name that is not a listed tool: say why, and what it should be.  The
 * old {toolbox}__{server}_{tool} is suggested a fix only where the name
 * does not already name a configured server.
 */
static void
reply_unknown_tool(const char *id, size_t idlen, const char *name,
    bool malformed, bool suggest)
{
	char *fix = suggest ? tool_legacy_fix(&wb.cfg, name) : NULL;
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
	const struct tool *t = NULL;
	struct call_in in;
	struct toolbox *b;
	struct server *s = NULL;

	if (tool_split(name, &box, &srv, &tool) < 0) {
		reply_unknown_tool(id, idlen, name, true, true);
		return;
	}
	if ((b = box_find(box, strlen(box))) != NULL)
		s = box_server(b, srv, strlen(srv));
	if (s != NULL && b->open)
		t = srv_tool(s, tool, strlen(tool));
	/* What tools/list does not show cannot be called by that name. */
	if (t == NULL || t->native == NULL)
		reply_unknown_tool(id, idlen, name, false, s == NULL);
	else if (args >= 0 && !json_is(j, args, JSMN_OBJECT))
		reply_error(id, idlen, -32602, "Invalid params: arguments "
		    "must be an object");
	else {
		call_in_tokens(j, args, meta, &in);
		call_route(s, tool, strlen(tool), &in, id, idlen);
	}
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
	static const char *const keys[] = { "name", "arguments", "_meta",
	    NULL };
	struct buf t = { 0 };
	int v[3], args, meta;
	const char *tool;

	json_members(j, params, keys, v);
	args = v[1];
	meta = v[2];
	if ((tool = json_str(j, v[0], &wb.names[3])) == NULL) {
		reply_error(id, idlen, -32602, "Invalid params: name must be "
		    "a string");
		return;
	}
	if (strcmp(tool, "open_toolbox") == 0)
		tool_open_toolbox(j, args, id, idlen);
	else if (strcmp(tool, "use_tool") == 0)
		tool_use_tool(j, args, meta, id, idlen);
	else if (wb.mode == MODE_DYNAMIC)
		tool_native(j, tool, args, meta, id, idlen);
	else {
		buf_printf(&t, "Unknown tool: %s", tool);
		reply_error(id, idlen, -32602, buf_cstr(&t));
		buf_free(&t);
	}
}

static void
m_set_level(const struct json *j, int params, const char *id, size_t idlen)
{
	static const char *const levels[] = { "debug", "info", "notice",
	    "warning", "error", "critical", "alert", "emergency", NULL };
	int level = json_get(j, params, "level"), i, k;
	struct server *s;
	const char *raw;
	size_t len;

	for (i = 0; levels[i] != NULL && !json_eq(j, level, levels[i]); i++)
		;
	if (levels[i] == NULL) {
		reply_error(id, idlen, -32602, "Invalid params: level must be "
		    "one of debug, info, notice, warning, error, critical, "
		    "alert, emergency");
		return;
	}
	raw = json_raw(j, level, &len);
	free(wb.log_level);
	wb.log_level = xstrndup(raw, len);
	for (i = 0; i < wb.nboxes; i++)
		for (k = 0; k < wb.boxes[i].nservers; k++) {
			s = &wb.boxes[i].servers[k];
			if (s->proc.pid > 0)
				srv_send_level(s);	/* If initialized. */
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


static void
client_notification(const struct json *j, int method)
{
	int r = json_path(j, 0, "params.requestId"), i, k;
	const char *raw;
	size_t len;

	if (json_eq(j, method, "notifications/cancelled") &&
	    rpc_valid_id(j, r)) {
		raw = json_raw(j, r, &len);
		call_cancel(raw, len, "cancelled by the client");
	} else if (json_eq(j, method, "notifications/roots/list_changed"))
		for (i = 0; i < wb.nboxes; i++)
			for (k = 0; k < wb.boxes[i].nservers; k++)
				if (wb.boxes[i].servers[k].state == SRV_READY)
					srv_notify(&wb.boxes[i].servers[k],
					    "notifications/roots/list_changed");
}


/* Is the span this JSON text, byte for byte? */
static bool
span_is(const struct span *v, const char *text)
{
	return v->p != NULL && v->n == strlen(text) &&
	    memcmp(v->p, text, v->n) == 0;
}

/* A string or an integer, as the ids the tokenizing path accepts. */
static bool
span_id(const struct span *v)
{
	size_t i;

	if (v->p == NULL || v->n == 0)
		return false;
	if (v->p[0] == '"')
		return true;
	i = v->p[0] == '-' ? 1 : 0;
	if (i == v->n)
		return false;
	for (; i < v->n; i++)
		if (v->p[i] < '0' || v->p[i] > '9')
			return false;
	return true;
}

/* A non-empty string without escapes: its text, inside the quotes. */
static bool
span_name(const struct span *v, struct span *name)
{
	if (v->p == NULL || v->n < 3 || v->p[0] != '"' ||
	    memchr(v->p, '\\', v->n) != NULL)
		return false;
	name->p = v->p + 1;
	name->n = v->n - 2;
	return true;
}

/*
 * The common request, use_tool with plain names to a ready server, is
 * checked and routed straight from the bytes of its line, without
 * tokenizing it.  Anything else, errors included, returns false and goes
 * the tokenizing way, which words every error.
 */
enum { F_JSONRPC, F_ID, F_METHOD, F_PARAMS, F_CALLED, F_USE, F_META,
    F_TOOL, F_ARGS, F_BOX, F_SERVER, F_NAME, F_TOKEN, F_SLOTS };

static bool
fast_use_tool(const char *line, size_t n)
{
	static const struct field ident[] = { FIELD("toolbox", F_BOX, NULL,
	    false), FIELD("server", F_SERVER, NULL, false), FIELD("name",
	    F_NAME, NULL, false), FIELD_END };
	static const struct field use[] = { FIELD("tool", F_TOOL, ident,
	    true), FIELD("arguments", F_ARGS, NULL, false), FIELD_END };
	static const struct field meta[] = { FIELD("progressToken", F_TOKEN,
	    NULL, false), FIELD_END };
	static const struct field params[] = { FIELD("name", F_CALLED, NULL,
	    false), FIELD("arguments", F_USE, use, true), FIELD("_meta",
	    F_META, meta, false), FIELD_END };
	static const struct field top[] = { FIELD("jsonrpc", F_JSONRPC, NULL,
	    false), FIELD("id", F_ID, NULL, false), FIELD("method", F_METHOD,
	    NULL, false), FIELD("params", F_PARAMS, params, false),
	    FIELD_END };
	struct span v[F_SLOTS];
	struct call_in in = { 0 };
	struct span box, srv, name;
	struct toolbox *b;
	struct server *s;

	if (!wb.initialized || !json_shape(line, n, top, v, F_SLOTS) ||
	    !span_is(&v[F_JSONRPC], "\"2.0\"") || !span_id(&v[F_ID]) ||
	    !span_is(&v[F_METHOD], "\"tools/call\"") ||
	    !span_is(&v[F_CALLED], "\"use_tool\"") ||
	    (v[F_ARGS].p != NULL && v[F_ARGS].p[0] != '{') ||
	    (v[F_TOKEN].p != NULL && !span_id(&v[F_TOKEN])) ||
	    !span_name(&v[F_BOX], &box) || !span_name(&v[F_SERVER], &srv) ||
	    !span_name(&v[F_NAME], &name) ||
	    (b = box_find(box.p, box.n)) == NULL || !b->open ||
	    (s = box_server(b, srv.p, srv.n)) == NULL ||
	    s->state != SRV_READY || srv_tool(s, name.p, name.n) == NULL)
		return false;
	in.args = v[F_ARGS].p;
	in.alen = v[F_ARGS].n;
	in.meta = v[F_META].p;
	in.mlen = v[F_META].n;
	in.token = v[F_TOKEN].p;
	in.toklen = v[F_TOKEN].n;
	call_route(s, name.p, name.n, &in, v[F_ID].p, v[F_ID].n);
	return true;
}

static void
client_line(void *ctx, char *line, size_t n)
{
	static const char *const keys[] = { "id", "method", "jsonrpc",
	    NULL };
	const char *raw = NULL;
	size_t len = 0;
	int r, v[3], id, method, version;

	(void)ctx;
	if (wb.stopping)
		return;
	if (!utf8_valid(line, n)) {
		reply_error(NULL, 0, -32700, "Parse error: not valid UTF-8");
		return;
	}
	if (fast_use_tool(line, n))
		return;
	if ((r = json_parse_any(&wb.j, line, n)) == JSON_SYNTAX) {
		reply_error(NULL, 0, -32700, "Parse error: not valid JSON");
		json_release(&wb.j);
		return;
	}
	if (r != JSON_OK || wb.j.tok[0].type != JSMN_OBJECT) {
		/* Well-formed but too big or deep: its id can still be found. */
		if (r == JSON_OK || (rpc_scan_id(line, n, &raw, &len) < 0 &&
		    rpc_scan_id_tail(line, n, &raw, &len) < 0))
			raw = NULL;
		reply_error(raw, len, -32600, r == JSON_TOOBIG ?
		    "Invalid Request: too many JSON tokens" : r == JSON_TOODEEP ?
		    "Invalid Request: nested deeper than 1000 levels" :
		    wb.j.tok[0].type == JSMN_ARRAY ? "Invalid Request: batch "
		    "requests are not supported" : "Invalid Request: expected "
		    "a JSON object");
		json_release(&wb.j);
		return;
	}
	json_members(&wb.j, 0, keys, v);
	id = v[0];
	method = v[1];
	version = v[2];
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
		up_answer(&wb.j, id, line, n);
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

/*
 * While the client does not read our answers, or a server is still
 * working through a large queue of input, the client's requests wait.
 */
static bool
client_busy(void *ctx)
{
	long long now = loop_ms();
	int i, k;

	(void)ctx;
	if (peer_queued(&wb.client) > HIGH_WATER || wb.held.len > HIGH_WATER)
		return true;
	for (i = 0; i < wb.nboxes; i++)
		for (k = 0; k < wb.boxes[i].nservers; k++)
			if (srv_busy(&wb.boxes[i].servers[k], now))
				return true;
	return false;
}

static const struct peer_ops client_ops = { client_line, client_oversize,
    client_busy, NULL, pump_all };

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
			s->proc.execfd = -1;
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
	SLOT_ERR,		/* A server's stderr. */
	SLOT_EXEC		/* A server's exec report. */
};

struct slot {
	enum slot_kind	 kind;
	struct server	*srv;
	pid_t		 pid;		/* The server's process when watched. */
};

static struct pollfd *pfd;
static struct slot *slots;
static int npfd, cappfd;

/* Poll fd for events; with none, for its hang-up and errors alone. */
static void
watch(int fd, short events, enum slot_kind kind, struct server *s)
{
	if (fd < 0)
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
	slots[npfd].pid = s != NULL ? s->proc.pid : 0;
	npfd++;
}

/*
 * Backpressure: while the client does not read, we read neither it nor
 * the servers.  A server that does not read its stdin is not waited for:
 * calls to it fail once its queue is full (call_dispatch).
 */
static void
build_pollfds(void)
{
	bool client_full = peer_queued(&wb.client) > HIGH_WATER;
	bool held_full = wb.held.len > HIGH_WATER;
	struct server *s;
	int i, k;

	npfd = 0;
	watch(wb.sigfd, POLLIN, SLOT_SIGNAL, NULL);
	/*
	 * While the client does not read, neither do we; but it may have
	 * left (end of file), and that must still begin the shutdown.
	 */
	if (!wb.client.eof && !wb.stopping)
		watch(STDIN_FILENO, client_busy(NULL) ? 0 : POLLIN, SLOT_STDIN,
		    NULL);
	if (peer_queued(&wb.client) > 0)
		watch(STDOUT_FILENO, POLLOUT, SLOT_STDOUT, NULL);
	for (i = 0; i < wb.nboxes; i++)
		for (k = 0; k < wb.boxes[i].nservers; k++) {
			s = &wb.boxes[i].servers[k];
			/* While one result streams, the others wait for it. */
			if ((!client_full && (!held_full || s == wb.streaming)) ||
			    wb.stopping)
				watch(s->proc.io.rfd, POLLIN, SLOT_OUT, s);
			if (peer_queued(&s->proc.io) > 0)
				watch(s->proc.io.wfd, POLLOUT, SLOT_IN, s);
			watch(s->proc.errfd, POLLIN, SLOT_ERR, s);
			watch(s->proc.execfd, POLLIN, SLOT_EXEC, s);
		}
}

static long long
next_deadline(void)
{
	long long t = proc_deadline(), d;
	int i, k;

	for (i = 0; i < wb.nboxes; i++)
		for (k = 0; k < wb.boxes[i].nservers; k++) {
			d = srv_deadline(&wb.boxes[i].servers[k]);
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
	int i, k;

	proc_tick(now);
	for (i = 0; i < wb.nboxes; i++)
		for (k = 0; k < wb.boxes[i].nservers; k++)
			srv_check_timers(&wb.boxes[i].servers[k], now);
}



static void
reap(void)
{
	struct server *s;
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		if ((s = srv_by_pid(pid)) != NULL)
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
	if (kind == SLOT_ERR)
		srv_read_err(s);
	else if (kind == SLOT_EXEC)
		srv_read_exec(s);
	else if (kind == SLOT_OUT)
		srv_read_out(s);
	else if (revents & POLLERR) {
		close(s->proc.io.wfd);
		s->proc.io.wfd = -1;
		s->proc.io.out.len = s->proc.io.outoff = 0;
	} else
		srv_write_in(s, now_ms());
}

/* The descriptor a server's slot of this kind watches now, or -1. */
static int
slot_fd(const struct server *s, enum slot_kind kind)
{
	switch (kind) {
	case SLOT_OUT:
		return s->proc.io.rfd;
	case SLOT_IN:
		return s->proc.io.wfd;
	case SLOT_ERR:
		return s->proc.errfd;
	default:
		return s->proc.execfd;
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
			/* Watched for its hang-up alone: the client left. */
			if (pfd[i].events == 0 ||
			    peer_read(&wb.client, wb.cfg.max_message,
			    &client_ops, NULL) == 0 ||
			    (pfd[i].revents & (POLLHUP | POLLERR) &&
			    !(pfd[i].revents & POLLIN)))
				begin_shutdown();
			break;
		case SLOT_STDOUT:
			break;
		default:
			/*
			 * The server may have been stopped meanwhile, and even
			 * started again on the same descriptor numbers: the old
			 * process's events are not the new one's.
			 */
			if (slots[i].srv->proc.pid == slots[i].pid &&
			    pfd[i].fd == slot_fd(slots[i].srv, slots[i].kind))
				on_server_event(slots[i].srv, slots[i].kind,
				    pfd[i].revents);
		}
	}
	check_timeouts(now);
}

static void
flush_all(void)
{
	long long now = now_ms();
	int i, k;

	if (peer_flush(&wb.client) < 0) {
		wb.client.out.len = wb.client.outoff = 0;
		begin_shutdown();
	}
	for (i = 0; i < wb.nboxes; i++)
		for (k = 0; k < wb.boxes[i].nservers; k++)
			srv_write_in(&wb.boxes[i].servers[k], now);
	wb_log_flush();
}

/*
 * Between lines (peer_ops.pump), write the queues that hold PUMP_BYTES or
 * more: one write per destination per few dozen messages, so that eight
 * servers do not each wake for every other call.  A server's queue goes
 * the usual way (srv_write_in); the client's errors are left to flush_all,
 * between reads, since ending the session could stop the very server whose
 * lines are being handled.
 */
void
pump_all(void)
{
	struct server *s;
	int i, k;

	if (peer_queued(&wb.client) >= PUMP_BYTES)
		(void)peer_flush(&wb.client);
	for (i = 0; i < wb.nboxes; i++)
		for (k = 0; k < wb.boxes[i].nservers; k++) {
			s = &wb.boxes[i].servers[k];
			if (peer_queued(&s->proc.io) >= PUMP_BYTES)
				srv_write_in(s, loop_ms());
		}
}

/* Apply fn to the client and every server's peer; true if any said so. */
static bool
each_peer(bool (*fn)(struct peer *))
{
	bool any = fn(&wb.client);
	int i, k;

	for (i = 0; i < wb.nboxes; i++)
		for (k = 0; k < wb.boxes[i].nservers; k++)
			any |= fn(&wb.boxes[i].servers[k].proc.io);
	return any;
}

static void
run(void)
{
	long long deadline, now;
	int timeout, n;
	bool trim;

	for (;;) {
		flush_all();
		/* Requests held while the client was not reading. */
		if (wb.client.in.len > 0 && !client_busy(NULL) && !wb.stopping)
			peer_input(&wb.client, wb.cfg.max_message, &client_ops,
			    NULL);
		now = now_ms();
		if (wb.stopping && (proc_dying() == 0 || now >= wb.stop_at))
			break;
		build_pollfds();
		deadline = next_deadline();
		timeout = deadline < 0 ? -1 : deadline <= now ? 0 :
		    (int)(deadline - now);
		/* After a second of quiet, large buffers are given back. */
		trim = (timeout < 0 || timeout > TRIM_IDLE_MS) &&
		    each_peer(peer_bloated);
		if (trim)
			timeout = TRIM_IDLE_MS;
		if ((n = poll(pfd, (nfds_t)npfd, timeout)) < 0 &&
		    errno != EINTR) {
			wb_log("poll: %s", strerror(errno));
			break;
		}
		if (n == 0 && trim)
			each_peer(peer_trim);
		loop_tick();
		dispatch(loop_ms());
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
