/*
 * dynamic.c: dynamic mode.  The tools of the open toolboxes' servers are
 * listed natively as {toolbox}__{server}__{tool} and called by that name;
 * the client gets one tools/list_changed for each change of that list.
 * The listed tools are those of each server's last complete list, so a
 * server that died keeps its tools listed (a call restarts it).  Prompts
 * (named the same way) and resources are shown to the client in both
 * modes, as objects built here the same way as native tools.
 */
#include <stdlib.h>
#include <string.h>

#include "box.h"


/* Warn once of a name clients may refuse: not again on a restart. */
static int
check_listable(const struct server *s, enum list_kind kind,
    const char *native, const char *name)
{
	int k = tool_listable(native);

	if (k != 0 && list_find(s, kind, name, strlen(name)) == NULL)
		wb_log_warn("%s: %s name '%s' %s", srv_label(s),
		    kind == LIST_TOOLS ? "tool" : "prompt", native, k < 0 ?
		    "is longer than 128 characters or has characters outside "
		    "[A-Za-z0-9_.-]: not listed (call it through use_tool)" :
		    "is longer than 64 characters; some clients reject it");
	return k;
}

/* The description, prefixed "[toolbox/server] ". */
static void
put_description(struct buf *b, const struct server *s, const struct json *j,
    int t)
{
	char *d = json_strdup(j, json_get(j, t, "description"));
	struct buf text = { 0 };

	buf_printf(&text, "[%s]%s%s", srv_label(s), d != NULL && *d != '\0' ?
	    " " : "", d != NULL ? d : "");
	buf_puts(b, ",\"description\":");
	json_put_str(b, text.data, text.len);
	buf_free(&text);
	free(d);
}

/* The members of entry t but name, description and _meta, as they came. */
static void
put_other_members(struct buf *b, const struct json *j, int t)
{
	const char *raw;
	size_t len;
	int k, n, v;

	for (k = t + 1, n = 0; n < j->tok[t].size; n++, k = json_next(j, v)) {
		v = k + 1;
		if (json_eq(j, k, "name") || json_eq(j, k, "description") ||
		    json_eq(j, k, "_meta"))
			continue;
		buf_putc(b, ',');
		raw = json_raw(j, k, &len);
		buf_put(b, raw, len);
		buf_putc(b, ':');
		raw = json_raw(j, v, &len);
		buf_put(b, raw, len);
	}
}

/* _meta, extended with where the entry came from. */
static void
put_meta(struct buf *b, const struct server *s, const struct json *j, int t,
    const char *name)
{
	int meta = json_get(j, t, "_meta");
	const char *raw;
	size_t len;

	buf_puts(b, ",\"_meta\":");
	if (json_is(j, meta, JSMN_OBJECT)) {
		raw = json_raw(j, meta, &len);
		json_add_members(b, raw, len);
	} else
		buf_putc(b, '{');
	buf_puts(b, "\"source_server\":");
	json_put_cstr(b, srv_name(s));
	buf_puts(b, ",\"toolbox_name\":");
	json_put_cstr(b, box_of(s)->cfg->name);
	buf_puts(b, ",\"original_name\":");
	json_put_cstr(b, name);
	buf_putc(b, '}');
}

/*
 * Entry t of a server's list as the client is shown it: named native
 * (or, when NULL, by its own name), its description prefixed, every
 * other member as the server sent it, and _meta extended.
 */
static char *
dyn_object(const struct server *s, const struct json *j, int t,
    const char *native, const char *original)
{
	struct buf b = { 0 };

	buf_puts(&b, "{\"name\":");
	json_put_cstr(&b, native != NULL ? native : original);
	put_description(&b, s, j, t);
	put_other_members(&b, j, t);
	put_meta(&b, s, j, t, original);
	buf_putc(&b, '}');
	return buf_cstr(&b);
}

/* Is the client shown entries of this kind as objects of our own? */
bool
dyn_renames(enum list_kind k)
{
	return k != LIST_TOOLS || wb.mode == MODE_DYNAMIC;
}

/*
 * Entry t, of key key, of a server's list as the client is shown it, or
 * NULL.  Tools (in dynamic mode) and prompts are named
 * {toolbox}__{server}__{name}, and not shown when that name cannot be
 * (a tool stays callable through use_tool); resources and templates keep
 * their names and URIs, which clients hand back as they are.
 */
char *
dyn_native(const struct server *s, enum list_kind k, const struct json *j,
    int t, const char *key)
{
	char *native = NULL, *name = NULL, *o;

	if (!dyn_renames(k))
		return NULL;
	if (k == LIST_TOOLS || k == LIST_PROMPTS) {
		native = tool_join(box_of(s)->cfg->name, srv_name(s), key);
		if (check_listable(s, k, native, key) < 0) {
			free(native);
			return NULL;
		}
	} else
		name = json_strdup(j, json_get(j, t, "name"));
	o = dyn_object(s, j, t, native, name != NULL ? name : key);
	free(native);
	free(name);
	return o;
}

/* What tools/list shows a session, hashed to tell when it changed. */
static unsigned long
dyn_hash(const struct session *se)
{
	return wb.mode == MODE_DYNAMIC ? res_hash(se, LIST_TOOLS) :
	    HASH_INIT;
}

/* A new session knows what its tools/list shows now. */
void
dyn_begin(struct session *se)
{
	session_listed(se)[SESSION_TOOLS] = dyn_hash(se);
}

/* The listed tools, each after a comma, for tools/list. */
void
dyn_put_tools(const struct session *se, struct buf *b)
{
	if (wb.mode == MODE_DYNAMIC)
		res_put(se, LIST_TOOLS, b);
}

/* One tools/list_changed for each change of the list, none otherwise. */
void
dyn_notify(struct session *se)
{
	unsigned long *listed = session_listed(se), h;

	if (wb.mode != MODE_DYNAMIC ||
	    (h = dyn_hash(se)) == listed[SESSION_TOOLS])
		return;
	listed[SESSION_TOOLS] = h;
	listen_changed(se, LISTEN_TOOLS);
}

/*
 * A name that is not a listed tool: say why, and what it should be.  The
 * old {toolbox}__{server}_{tool} is suggested a fix only where the name
 * does not already name a configured server.
 */
static void
reply_unknown_tool(struct session *se, const char *id, size_t idlen,
    const char *name, bool malformed, bool suggest)
{
	char *fix = suggest ? cfg_legacy_fix(&wb.cfg, name) : NULL;
	struct buf t = { 0 };

	if (!malformed && fix == NULL)
		buf_printf(&t, "Unknown tool: %s", name);
	else
		buf_printf(&t, "Invalid tool name format '%s'. Expected "
		    "format: {toolbox}__{server}__{tool}", name);
	if (fix != NULL)
		buf_printf(&t, ". Did you mean '%s'? Tool names changed in "
		    "mcp-workbench 0.1.0: see CHANGELOG.md.", fix);
	reply_error(se, id, idlen, RPC_INVALID_PARAMS, buf_cstr(&t));
	buf_free(&t);
	free(fix);
}

/* tools/call of {toolbox}__{server}__{tool}: routed as use_tool routes. */
void
dyn_call(struct session *se, const struct json *j, const char *name,
    int args, int params, const char *id, size_t idlen)
{
	char *box, *srv, *tool;
	const struct item *t = NULL;
	struct call_in in;
	struct toolbox *b;
	struct server *s = NULL;
	bool later = false;	/* Its tool is looked for once it is up. */

	if (tool_split(name, &box, &srv, &tool) < 0) {
		reply_unknown_tool(se, id, idlen, name, true, true);
		return;
	}
	if ((b = box_find(box, strlen(box))) != NULL)
		s = box_server(se, b, srv, strlen(srv));
	if (s != NULL && !box_seen(se, b) && session_era(se) != NULL) {
		box_open_on_use(se, b);
		later = true;
	} else if (s != NULL && box_seen(se, b))
		t = list_find(s, LIST_TOOLS, tool, strlen(tool));
	/* What tools/list does not show cannot be called by that name. */
	if (!later && (t == NULL || t->native == NULL))
		reply_unknown_tool(se, id, idlen, name, false, s == NULL);
	else if (args >= 0 && !json_is(j, args, JSMN_OBJECT))
		reply_error(se, id, idlen, RPC_INVALID_PARAMS,
		    "Invalid params: arguments must be an object");
	else {
		call_in_tokens(j, args, params, &in);
		call_route(s, se, tool, strlen(tool), &in, id, idlen);
	}
	free(box);
	free(srv);
	free(tool);
}
