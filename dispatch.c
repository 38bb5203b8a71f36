/*
 * dispatch.c: the client's lines, checked and dispatched through the
 * method table; the common use_tool call takes a fast path straight from
 * its bytes.  The methods of the workbench itself (initialize, ping,
 * tools/list and tools/call, logging/setLevel, server/discover) are here.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "workbench.h"
#include "mcp.h"

/* What the workbench offers, in either era. */
#define WB_CAPS		"{\"tools\":{\"listChanged\":true},\"prompts\":" \
	"{\"listChanged\":true},\"resources\":{\"subscribe\":true," \
	"\"listChanged\":true},\"completions\":{},\"logging\":{}}"

/*
 * How long a client may keep what it was told (modern results): the
 * instructions and the meta-tools change only with a restart; the tools
 * of dynamic mode change as toolboxes open, said by list_changed.
 */
#define DISCOVER_TTL_MS	3600000
#define LIST_TTL_MS	(wb.mode == MODE_DYNAMIC ? 0 : DISCOVER_TTL_MS)

static struct json j;			/* The line being handled. */
static struct buf called;		/* A tools/call's name, unescaped. */
static struct buf instructions;		/* Escaped, ready to splice. */

static bool
optional_object(int obj, const char *key)
{
	int v = json_get(&j, obj, key);

	return v < 0 || json_is(&j, v, JSMN_OBJECT);
}

/*
 * The client's requests.
 */
static void
m_initialize(struct session *se, int params, const char *id, size_t idlen)
{
	struct buf *b;
	char *v;

	if (session_legacy(se)) {
		reply_error(se, id, idlen, RPC_INVALID_REQUEST,
		    "Invalid Request: already initialized");
		return;
	}
	if ((v = json_strdup(&j, json_get(&j, params, "protocolVersion"))) ==
	    NULL) {
		reply_error(se, id, idlen, RPC_INVALID_PARAMS,
		    "Invalid params: protocolVersion must be a string");
		return;
	}
	if (!optional_object(params, "capabilities") ||
	    !optional_object(params, "clientInfo")) {
		reply_error(se, id, idlen, RPC_INVALID_PARAMS,
		    "Invalid params: capabilities and clientInfo must be "
		    "objects");
		free(v);
		return;
	}
	session_initialize(se, v, &j, json_get(&j, params, "capabilities"));
	free(v);
	b = reply_begin(se, id, idlen);
	buf_puts(b, "{\"protocolVersion\":");
	json_put_cstr(b, session_protocol(se));
	buf_printf(b, ",\"capabilities\":" WB_CAPS ",\"serverInfo\":{"
	    "\"name\":\"" WB_NAME "\","
	    "\"title\":\"MCP Workbench\",\"version\":\"%s\"},"
	    "\"instructions\":", wb_version);
	buf_put(b, instructions.data, instructions.len);
	buf_putc(b, '}');
	reply_end(se);
}

static void
m_ping(struct session *se, int params, const char *id, size_t idlen)
{
	(void)params;
	reply_raw(se, id, idlen, "{}");
}

static void
m_tools_list(struct session *se, int params, const char *id, size_t idlen)
{
	struct buf *b;

	(void)params;
	b = reply_begin(se, id, idlen);
	buf_puts(b, "{\"tools\":[");
	box_put_tools(b);
	search_put_tool(b);
	dyn_put_tools(se, b);
	buf_putc(b, ']');
	reply_cache_hints(se, b, LIST_TTL_MS);
	buf_putc(b, '}');
	reply_end(se);
}

/* server/discover (modern): what initialize says, without a session. */
static void
m_discover(struct session *se, int params, const char *id, size_t idlen)
{
	struct buf *b = reply_begin(se, id, idlen);

	(void)params;
	buf_puts(b, "{\"supportedVersions\":");
	era_put_versions(b);
	buf_puts(b, ",\"capabilities\":" WB_CAPS ",\"instructions\":");
	buf_put(b, instructions.data, instructions.len);
	buf_printf(b, ",\"ttlMs\":%d,\"cacheScope\":\"private\"}",
	    DISCOVER_TTL_MS);
	reply_end(se);
}

static void
m_tools_call(struct session *se, int params, const char *id, size_t idlen)
{
	static const char *const keys[] = { "name", "arguments", NULL };
	struct buf t = { 0 };
	int v[2], args;
	const char *tool;

	json_members(&j, params, keys, v);
	args = v[1];
	if ((tool = json_str(&j, v[0], &called)) == NULL) {
		reply_error(se, id, idlen, RPC_INVALID_PARAMS,
		    "Invalid params: name must be a string");
		return;
	}
	if (strcmp(tool, "open_toolbox") == 0)
		box_open_tool(se, &j, args, id, idlen);
	else if (strcmp(tool, "use_tool") == 0)
		box_use_tool(se, &j, args, params, id, idlen);
	else if (strcmp(tool, "search_tools") == 0 && wb.cfg.search_tool)
		search_tool(se, &j, args, id, idlen);
	else if (wb.mode == MODE_DYNAMIC)
		dyn_call(se, &j, tool, args, params, id, idlen);
	else {
		buf_printf(&t, "Unknown tool: %s", tool);
		reply_error(se, id, idlen, RPC_INVALID_PARAMS, buf_cstr(&t));
		buf_free(&t);
	}
}

static void
m_set_level(struct session *se, int params, const char *id, size_t idlen)
{
	int level = json_get(&j, params, "level");

	if (era_level(&j, level) < 0) {
		reply_error(se, id, idlen, RPC_INVALID_PARAMS,
		    "Invalid params: level must be one of debug, info, notice, "
		    "warning, error, critical, alert, emergency");
		return;
	}
	session_set_level(se, era_level(&j, level));
	relay_set_level();
	reply_raw(se, id, idlen, "{}");
}

#define IN_LEGACY	1	/* A method of the 2025 era, */
#define IN_MODERN	2	/* of the 2026-07-28 era. */
#define IN_BOTH		(IN_LEGACY | IN_MODERN)

/* Methods of this file (fn) and of resources.c (res), given the line. */
static const struct method {
	const char	*name;
	void		(*fn)(struct session *, int, const char *, size_t);
	void		(*res)(struct session *, const struct json *, int,
			    const char *, size_t);
	unsigned	 eras;
	bool		 before_init;
} methods[] = {
	{ MCP_INITIALIZE, m_initialize, NULL, IN_LEGACY, true },
	{ MCP_PING, m_ping, NULL, IN_LEGACY, true },
	{ MCP_TOOLS_LIST, m_tools_list, NULL, IN_BOTH, false },
	{ MCP_TOOLS_CALL, m_tools_call, NULL, IN_BOTH, false },
	{ MCP_LOGGING_SET_LEVEL, m_set_level, NULL, IN_LEGACY, false },
	{ MCP_SERVER_DISCOVER, m_discover, NULL, IN_MODERN, false },
	{ MCP_PROMPTS_LIST, NULL, res_list, IN_BOTH, false },
	{ MCP_PROMPTS_GET, NULL, res_prompts_get, IN_BOTH, false },
	{ MCP_RESOURCES_LIST, NULL, res_list, IN_BOTH, false },
	{ MCP_RESOURCES_TEMPLATES_LIST, NULL, res_list, IN_BOTH, false },
	{ MCP_RESOURCES_READ, NULL, res_resources_read, IN_BOTH, false },
	{ MCP_RESOURCES_SUBSCRIBE, NULL, res_subscribe, IN_LEGACY, false },
	{ MCP_RESOURCES_UNSUBSCRIBE, NULL, res_unsubscribe, IN_LEGACY, false },
	{ MCP_COMPLETION_COMPLETE, NULL, res_complete, IN_BOTH, false },
	{ MCP_SUBSCRIPTIONS_LISTEN, NULL, listen_open, IN_MODERN, false },
	{ NULL, NULL, NULL, 0, false }
};

static void
method_call(struct session *se, const struct method *m, int params,
    const char *id, size_t idlen)
{
	if (m->fn != NULL)
		m->fn(se, params, id, idlen);
	else
		m->res(se, &j, params, id, idlen);
}

/*
 * A modern request is served on its own: no session needed, its _meta in
 * era while it is handled, its replies stamped as modern.
 */
static void
modern_request(struct session *se, const struct method *m, int params,
    const char *id, size_t idlen)
{
	if ((m->eras & IN_MODERN) == 0)
		reply_error(se, id, idlen, RPC_METHOD_NOT_FOUND,
		    "Method not found");
	else {
		session_modern_begin(se);
		method_call(se, m, params, id, idlen);
	}
	session_request_end(se);
}

/* Which era; false when the request was answered with an error. */
static bool
request_era(struct session *se, int params, const char *id, size_t idlen)
{
	struct era_error err = { 0 };
	int r = era_check(&j, params, session_era_slot(se), &err);

	if (r == ERA_BAD)
		reply_error_data(se, id, idlen, err.code, buf_cstr(&err.msg),
		    err.data.len > 0 ? err.data.data : NULL, err.data.len);
	buf_free(&err.msg);
	buf_free(&err.data);
	return r != ERA_BAD;
}

static void
client_request(struct session *se, int id, int method)
{
	const struct method *m;
	const char *raw;
	size_t len;
	int params;

	raw = json_raw(&j, id, &len);
	for (m = methods; m->name != NULL; m++)
		if (json_eq(&j, method, m->name))
			break;
	if (m->name == NULL) {
		reply_error(se, raw, len, RPC_METHOD_NOT_FOUND,
		    "Method not found");
		return;
	}
	params = json_get(&j, 0, "params");
	if (params >= 0 && !json_is(&j, params, JSMN_OBJECT)) {
		reply_error(se, raw, len, RPC_INVALID_PARAMS,
		    "Invalid params: params must be an object");
		return;
	}
	if (!request_era(se, params, raw, len))
		return;
	if (session_era(se) != NULL) {
		modern_request(se, m, params, raw, len);
		return;
	}
	if ((m->eras & IN_LEGACY) == 0) {
		reply_error(se, raw, len, RPC_METHOD_NOT_FOUND,
		    "Method not found");
		return;
	}
	if (!session_legacy(se) && !m->before_init) {
		reply_error(se, raw, len, RPC_INVALID_REQUEST,
		    "Invalid Request: the session is not initialized; send "
		    "initialize first");
		return;
	}
	method_call(se, m, params, raw, len);
}

static void
client_notification(struct session *se, int method)
{
	int r = json_path(&j, 0, "params.requestId");
	const char *raw;
	size_t len;

	if (json_eq(&j, method, MCP_NOTE_CANCELLED) &&
	    rpc_valid_id(&j, r)) {
		raw = json_raw(&j, r, &len);
		box_cancel(se, raw, len);
		listen_cancel(se, raw, len);
		call_cancel(se, raw, len, "cancelled by the client");
	} else if (json_eq(&j, method, MCP_NOTE_ROOTS_CHANGED))
		relay_roots_changed(se);
	else if (json_eq(&j, method, MCP_NOTE_INITIALIZED))
		relay_roots_ask(se);
}

/*
 * The fast path.
 */
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
	return v->p != NULL && rpc_raw_id(v->p, v->n);
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

enum { F_JSONRPC, F_ID, F_METHOD, F_PARAMS, F_CALLED, F_USE, F_META,
    F_RESPONSES, F_STATE, F_TOOL, F_ARGS, F_BOX, F_SERVER, F_NAME, F_TOKEN,
    F_VERSION, F_CAPS, F_INFO, F_LEVEL, F_ROOTS, F_SAMPLE, F_ELICIT,
    F_SLOTS };

/* The fields of a use_tool request, read by json_shape. */
static bool
use_tool_shape(const char *line, size_t n, struct span *v)
{
	static const struct field ident[] = { FIELD("toolbox", F_BOX, NULL,
	    false), FIELD("server", F_SERVER, NULL, false), FIELD("name",
	    F_NAME, NULL, false), FIELD_END };
	static const struct field use[] = { FIELD("tool", F_TOOL, ident,
	    true), FIELD("arguments", F_ARGS, NULL, false), FIELD_END };
	static const struct field offers[] = { FIELD("roots", F_ROOTS, NULL,
	    false), FIELD("sampling", F_SAMPLE, NULL, false),
	    FIELD("elicitation", F_ELICIT, NULL, false), FIELD_END };
	static const struct field meta[] = { FIELD("progressToken", F_TOKEN,
	    NULL, false), FIELD(ERA_KEY "protocolVersion", F_VERSION, NULL,
	    false), FIELD(ERA_KEY "clientCapabilities", F_CAPS, offers, false),
	    FIELD(ERA_KEY "clientInfo", F_INFO, NULL, false),
	    FIELD(ERA_KEY "logLevel", F_LEVEL, NULL, false), FIELD_END };
	static const struct field params[] = { FIELD("name", F_CALLED, NULL,
	    false), FIELD("arguments", F_USE, use, true), FIELD("_meta",
	    F_META, meta, false), FIELD("inputResponses", F_RESPONSES, NULL,
	    false), FIELD("requestState", F_STATE, NULL, false), FIELD_END };
	static const struct field top[] = { FIELD("jsonrpc", F_JSONRPC, NULL,
	    false), FIELD("id", F_ID, NULL, false), FIELD("method", F_METHOD,
	    NULL, false), FIELD("params", F_PARAMS, params, false),
	    FIELD_END };

	return json_shape(line, n, top, v, F_SLOTS) &&
	    span_is(&v[F_JSONRPC], "\"2.0\"") && span_id(&v[F_ID]) &&
	    span_is(&v[F_METHOD], MCP_QUOTED(MCP_TOOLS_CALL)) &&
	    span_is(&v[F_CALLED], "\"use_tool\"") &&
	    (v[F_ARGS].p == NULL || v[F_ARGS].p[0] == '{') &&
	    (v[F_TOKEN].p == NULL || span_id(&v[F_TOKEN])) &&
	    v[F_RESPONSES].p == NULL && v[F_STATE].p == NULL;
}

/* Is the span absent, or an object? */
static bool
span_object_or_none(const struct span *v)
{
	return v->p == NULL || v->p[0] == '{';
}

/*
 * The era of a use_tool on the fast path: a 2025 session's, or a modern
 * request whose _meta holds what era_check would pass without a word
 * (its capabilities then apply while it is routed).  False sends it the
 * tokenizing way.
 */
static bool
fast_era(struct session *se, const struct span *v)
{
	struct era *era = session_era_slot(se);

	if (v[F_VERSION].p == NULL)
		return session_legacy(se);
	if (!span_is(&v[F_VERSION], "\"" WB_PROTOCOL_MODERN "\"") ||
	    v[F_CAPS].p == NULL || v[F_CAPS].p[0] != '{' ||
	    !span_object_or_none(&v[F_INFO]) || v[F_LEVEL].p != NULL ||
	    !span_object_or_none(&v[F_ROOTS]) ||
	    !span_object_or_none(&v[F_SAMPLE]) ||
	    !span_object_or_none(&v[F_ELICIT]))
		return false;
	era->modern = true;
	era->can = (v[F_ROOTS].p != NULL ? CAN_ROOTS : 0) |
	    (v[F_SAMPLE].p != NULL ? CAN_SAMPLE : 0) |
	    (v[F_ELICIT].p != NULL ? CAN_ELICIT : 0);
	era->level = -1;
	era->caps.len = 0;	/* Only a server's start needs them. */
	session_modern_begin(se);
	return true;
}

/* A use_tool of the fast path to its server, when it is ready. */
static bool
fast_route(struct session *se, const struct span *v)
{
	struct span box, srv, name;
	struct call_in in = { 0 };
	struct server *s;

	if (!span_name(&v[F_BOX], &box) || !span_name(&v[F_SERVER], &srv) ||
	    !span_name(&v[F_NAME], &name) ||
	    (s = box_target(se, box.p, box.n, srv.p, srv.n, name.p, name.n,
	    NULL)) == NULL || !srv_serving(s))
		return false;
	in.args = v[F_ARGS].p;
	in.alen = v[F_ARGS].n;
	in.meta = v[F_META].p;
	in.mlen = v[F_META].n;
	in.token = v[F_TOKEN].p;
	in.toklen = v[F_TOKEN].n;
	box_open_on_use(se, box_of(s));
	call_route(s, se, name.p, name.n, &in, v[F_ID].p, v[F_ID].n);
	return true;
}

/*
 * The common request, use_tool with plain names to a ready server, is
 * checked and routed straight from the bytes of its line, without
 * tokenizing it: the same checks (box_target) on spans of the line.
 * Anything else, errors and retries of input-required calls included,
 * returns false and goes the tokenizing way, which words every error.
 */
static bool
fast_use_tool(struct session *se, const char *line, size_t n)
{
	struct span v[F_SLOTS];
	bool routed = false;

	if (use_tool_shape(line, n, v) && fast_era(se, v))
		routed = fast_route(se, v);
	session_request_end(se);
	return routed;
}

/*
 * Lines.
 */
/* A line that is JSON but no single message: say why, under its id. */
static void
reply_not_message(struct session *se, int r, const char *line, size_t n)
{
	const char *raw = NULL;
	size_t len = 0;

	/* Well-formed but too big or deep: its id can still be found. */
	if (r == JSON_OK || (rpc_scan_id(line, n, &raw, &len) < 0 &&
	    rpc_scan_id_tail(line, n, &raw, &len) < 0))
		raw = NULL;
	reply_error(se, raw, len, RPC_INVALID_REQUEST, r == JSON_TOOBIG ?
	    "Invalid Request: too many JSON tokens" : r == JSON_TOODEEP ?
	    "Invalid Request: nested deeper than 1000 levels" :
	    j.tok[0].type == JSMN_ARRAY ? "Invalid Request: batch "
	    "requests are not supported" : "Invalid Request: expected "
	    "a JSON object");
}

/* A JSON-RPC message: a request, a notification, or an answer. */
static void
client_message(struct session *se, const char *line, size_t n)
{
	static const char *const keys[] = { "id", "method", "jsonrpc",
	    NULL };
	const char *raw = NULL;
	size_t len = 0;
	int v[3], id, method, version;

	json_members(&j, 0, keys, v);
	id = v[0];
	method = v[1];
	version = v[2];
	if (rpc_valid_id(&j, id))
		raw = json_raw(&j, id, &len);
	if (!json_eq(&j, version, "2.0") || (id >= 0 && raw == NULL) ||
	    (method >= 0 && !json_is(&j, method, JSMN_STRING)))
		reply_error(se, raw, len, RPC_INVALID_REQUEST,
		    "Invalid Request");
	else if (method >= 0 && id >= 0)
		client_request(se, id, method);
	else if (method >= 0)
		client_notification(se, method);
	else if (id >= 0 && (json_get(&j, 0, "result") >= 0 ||
	    json_get(&j, 0, "error") >= 0))
		relay_answer(se, &j, id, line, n);
	else
		reply_error(se, raw, len, RPC_INVALID_REQUEST,
		    "Invalid Request: no method");
}

/*
 * A line of a session's client: checked, then the fast path or the
 * method table.  The loop's peer hands lines here (client_line); so can
 * any other transport that frames them.
 */
void
dispatch_line(struct session *se, char *line, size_t n)
{
	int r;

	if (loop_stopping())
		return;
	if (!utf8_valid(line, n)) {
		reply_error(se, NULL, 0, RPC_PARSE_ERROR,
		    "Parse error: not valid UTF-8");
		return;
	}
	if (fast_use_tool(se, line, n))
		return;
	if ((r = json_parse_any(&j, line, n)) == JSON_SYNTAX)
		reply_error(se, NULL, 0, RPC_PARSE_ERROR,
		    "Parse error: not valid JSON");
	else if (r != JSON_OK || j.tok[0].type != JSMN_OBJECT)
		reply_not_message(se, r, line, n);
	else
		client_message(se, line, n);
	json_release(&j);
}

static void
client_line(void *ctx, char *line, size_t n)
{
	dispatch_line(ctx, line, n);
}

static void
client_oversize(void *ctx, size_t size, const char *id)
{
	struct session *se = ctx;
	struct buf t = { 0 };

	buf_printf(&t, "Invalid Request: message of %zu bytes exceeds the "
	    "%zu-byte limit (maxMessageBytes); discarded", size,
	    wb.cfg.max_message);
	reply_error(se, id, id != NULL ? strlen(id) : 0, RPC_INVALID_REQUEST,
	    buf_cstr(&t));
	buf_free(&t);
}

/*
 * While the client does not read our answers, or a server is still
 * working through a large queue of input, the client's requests wait.
 */
bool
dispatch_busy(const struct session *se)
{
	return session_full(se) || srv_any_busy(loop_ms());
}

/* Busy: the session's further lines wait, its input unread. */
static bool
client_hold(void *ctx)
{
	if (!dispatch_busy(ctx))
		return false;
	clients_hold(ctx);
	return true;
}

static const struct peer_ops client_ops = { client_line, client_oversize,
    client_hold, NULL, srv_pump };

/* The session's input is readable: 0 at its end. */
ssize_t
dispatch_read(struct session *se)
{
	return peer_read(session_peer(se), wb.cfg.max_message, &client_ops,
	    se);
}

/* Requests held while the client was not reading. */
void
dispatch_resume(struct session *se)
{
	struct peer *p = session_peer(se);

	if (p->in.len > 0 && !dispatch_busy(se) && !loop_stopping())
		peer_input(p, wb.cfg.max_message, &client_ops, se);
}

/* A session without a client (--probe's, the unit tests'). */
static int
no_client_flush(struct session *se)
{
	session_drop(se);
	return 0;
}

static void
no_client_left(struct session *se, bool gone)
{
	(void)se;
	(void)gone;
}

static const struct session_io no_client = { "none", no_client_flush, NULL,
    no_client_left, NULL };

/*
 * Sessions begin and end here, where every layer can be told: what the
 * layers above the session keep for it goes before it does.  A session
 * over pipes (io NULL: one without a client) has its input watched.
 */
struct session *
dispatch_open(int rfd, int wfd, const struct session_io *io, void *carrier)
{
	struct session *se = session_new(rfd, wfd, io != NULL ? io :
	    &no_client, carrier);

	box_session_begin(se);
	clients_watch(se);
	return se;
}

/* A session another transport carries (http_host.c). */
struct session *
dispatch_open_by(const struct session_io *io, void *carrier)
{
	struct session *se = session_new_by(io, carrier);

	box_session_begin(se);
	return se;
}

void
dispatch_close(struct session *se)
{
	wb_log_debug_for(se, "session %lu closed", session_serial(se));
	clients_forget(se);
	box_session_gone(se);
	srv_session_gone(se);
	session_free(se);
	relay_level_gone();
}

/*
 * Startup: the instructions initialize gives, built once.
 */
static void
no_toolboxes(struct buf *t)
{
	buf_printf(t, "mcp-workbench is running, but no toolboxes are "
	    "configured, so there are no tools to open yet. Add "
	    "toolboxes under \"toolboxes\" in %s, for example:\n"
	    "{\"toolboxes\": {\"dev\": {\"description\": \"Development "
	    "tools\", \"mcpServers\": {\"filesystem\": {\"command\": "
	    "\"npx\", \"args\": [\"-y\", "
	    "\"@modelcontextprotocol/server-filesystem\", \".\"]}}}}}\n"
	    "then restart the workbench (see man mcp-workbench).",
	    wb.cfg.path);
}

/*
 * Every word here is read by the model every turn: the toolboxes, each
 * with its description once, and how to reach a tool.
 */
static void
list_toolboxes(struct buf *t)
{
	const struct cfg_toolbox *b;
	int i;

	buf_puts(t, "Tools are grouped in toolboxes, whose servers start "
	    "when used:\n");
	for (i = 0; i < wb.cfg.nboxes; i++) {
		b = &wb.cfg.boxes[i];
		buf_printf(t, "- %s%s%s\n", b->name, b->description[0] !=
		    '\0' ? ": " : "", b->description);
	}
	if (wb.cfg.search_tool)
		buf_puts(t, "search_tools finds a tool and gives its "
		    "inputSchema; ");
	buf_puts(t, "open_toolbox lists a toolbox's tools; use_tool calls "
	    "one.");
	if (!wb.cfg.open_on_use)
		buf_puts(t, " A toolbox must be opened before use_tool.");
	if (wb.mode == MODE_DYNAMIC)
		buf_puts(t, " Opened tools are also listed as "
		    "{toolbox}__{server}__{tool}.");
}

void
dispatch_init(void)
{
	struct buf t = { 0 };

	if (wb.cfg.nboxes == 0)
		no_toolboxes(&t);
	else
		list_toolboxes(&t);
	json_put_str(&instructions, t.data, t.len);
	buf_free(&t);
}
