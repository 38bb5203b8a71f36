/*
 * listen.c: telling the client that a list changed.  A 2025 session hears
 * of every change; a modern client only of the kinds it asked for with
 * subscriptions/listen, a long-lived request that is acknowledged at once,
 * answered only when it ends (at shutdown), and cancelled like any other.
 * Its notifications carry the request's id as their subscription id.
 * A listener may also ask for the updates of resources, by URI.
 */
#include <stdlib.h>
#include <string.h>

#include "box.h"
#include "mcp.h"

#define LISTENERS_MAX	64
#define URIS_MAX	64	/* resourceSubscriptions per listener. */

static const char *const flag_names[LISTEN_KINDS] = { "toolsListChanged",
    "promptsListChanged", "resourcesListChanged" };
static const char *const methods[LISTEN_KINDS] = {
	MCP_NOTE_TOOLS_CHANGED,
	MCP_NOTE_PROMPTS_CHANGED,
	MCP_NOTE_RESOURCES_CHANGED
};

/* An open subscriptions/listen request. */
struct listener {
	struct session	*sess;		/* Whose request it is. */
	struct text	 id;		/* The request's id, raw. */
	unsigned	 kinds;		/* 1 << enum listen_kind */
	char		*uris[URIS_MAX];	/* Watched (res_watch). */
	int		 nuris;
	bool		 asked_uris;	/* resourceSubscriptions was given. */
};

static struct listener listeners[LISTENERS_MAX];
static int nlisteners;

/* {"subscriptionId": id}, as a notification's or the result's _meta. */
static void
put_subscription(struct buf *b, const struct listener *l)
{
	buf_puts(b, "\"_meta\":{\"io.modelcontextprotocol/subscriptionId\":");
	buf_put(b, text_get(&l->id), l->id.len);
	buf_putc(b, '}');
}

/* Which kinds a listener gets: those asked for that can change here. */
static unsigned
honoured(const struct json *j, int filter)
{
	unsigned kinds = 0;
	bool on;
	int k;

	for (k = 0; k < LISTEN_KINDS; k++)
		if (json_get_bool(j, json_get(j, filter, flag_names[k]), &on) ==
		    0 && on && (k != LISTEN_TOOLS || wb.mode == MODE_DYNAMIC))
			kinds |= 1u << k;
	return kinds;
}

/* The URIs asked for whose updates can be had: each is watched. */
static void
watch_uris(struct listener *l, const struct json *j, int uris,
    struct buf *uri)
{
	int i, k;

	if (!json_is(j, uris, JSMN_ARRAY))
		return;
	l->asked_uris = true;
	for (i = 0, k = uris + 1; i < j->tok[uris].size && l->nuris < URIS_MAX;
	    i++, k = json_next(j, k))
		if (json_str(j, k, uri) != NULL && res_watch(l->sess, uri->data,
		    true))
			l->uris[l->nuris++] = xstrdup(uri->data);
}

static void
acknowledge(const struct listener *l)
{
	struct buf *b = session_out(l->sess);
	int k, n = 0;

	rpc_put_notification(b, MCP_NOTE_LISTEN_ACK);
	buf_puts(b, ",\"params\":{\"notifications\":{");
	for (k = 0; k < LISTEN_KINDS; k++)
		if (l->kinds & (1u << k))
			buf_printf(b, "%s\"%s\":true", n++ > 0 ? "," : "",
			    flag_names[k]);
	if (l->asked_uris) {
		buf_printf(b, "%s\"resourceSubscriptions\":[", n > 0 ? "," :
		    "");
		for (k = 0; k < l->nuris; k++) {
			if (k > 0)
				buf_putc(b, ',');
			json_put_cstr(b, l->uris[k]);
		}
		buf_putc(b, ']');
	}
	buf_puts(b, "},");
	put_subscription(b, l);
	buf_puts(b, "}}\n");
}

/*
 * subscriptions/listen {notifications: {toolsListChanged, ...,
 * resourceSubscriptions: [uri, ...]}}: open until the client cancels it
 * or the workbench ends.  The acknowledgement leaves out what is not
 * honoured.
 */
void
listen_open(struct session *se, const struct json *j, int params,
    const char *id, size_t idlen)
{
	int filter = json_get(j, params, "notifications");
	struct buf uri = { 0 };
	struct listener *l;

	if (!json_is(j, filter, JSMN_OBJECT)) {
		reply_error(se, id, idlen, RPC_INVALID_PARAMS,
		    "Invalid params: notifications must be an object");
		return;
	}
	if (nlisteners == LISTENERS_MAX) {
		reply_error(se, id, idlen, RPC_INTERNAL_ERROR,
		    "Too many open subscriptions (64)");
		return;
	}
	l = &listeners[nlisteners++];
	memset(l, 0, sizeof(*l));
	l->sess = se;
	text_set(&l->id, id, idlen);
	l->kinds = honoured(j, filter);
	watch_uris(l, j, json_get(j, filter, "resourceSubscriptions"), &uri);
	buf_free(&uri);
	acknowledge(l);
}

static void
listener_remove(int i)
{
	struct listener *l = &listeners[i];

	while (l->nuris > 0) {
		res_watch(l->sess, l->uris[--l->nuris], false);
		free(l->uris[l->nuris]);
	}
	text_free(&l->id);
	*l = listeners[--nlisteners];
}

/* The client cancelled a request: if it was a listen, it ends, unanswered. */
void
listen_cancel(const struct session *se, const char *id, size_t idlen)
{
	int i;

	for (i = nlisteners - 1; i >= 0; i--)
		if (listeners[i].sess == se && listeners[i].id.len == idlen &&
		    memcmp(text_get(&listeners[i].id), id, idlen) == 0)
			listener_remove(i);
}

/* A list a session is shown changed: tell it, if it listens for it. */
void
listen_changed(struct session *se, enum listen_kind k)
{
	struct buf *b = session_out(se);
	int i;

	if (session_legacy(se)) {
		rpc_put_notification(b, methods[k]);
		buf_puts(b, "}\n");
	}
	for (i = 0; i < nlisteners; i++) {
		if (listeners[i].sess != se || !(listeners[i].kinds & (1u << k)))
			continue;
		rpc_put_notification(b, methods[k]);
		buf_puts(b, ",\"params\":{");
		put_subscription(b, &listeners[i]);
		buf_puts(b, "}}\n");
	}
}

/* A resource changed (its URI, and the token of it in j): who asked? */
void
listen_updated(const struct server *s, const char *uri, const struct json *j,
    int tok)
{
	struct buf *b;
	const char *raw;
	size_t len;
	int i, k;

	raw = json_raw(j, tok, &len);
	for (i = 0; i < nlisteners; i++)
		for (k = 0; k < listeners[i].nuris; k++) {
			/* Of the instance its session uses, not another's. */
			if (strcmp(listeners[i].uris[k], uri) != 0 ||
			    !srv_used_by(s, listeners[i].sess))
				continue;
			b = session_out(listeners[i].sess);
			wb_log_debug_for(listeners[i].sess, "session %lu <- "
			    "%s: " MCP_NOTE_RESOURCES_UPDATED " (its "
			    MCP_SUBSCRIPTIONS_LISTEN ")",
			    session_serial(listeners[i].sess), srv_label(s));
			rpc_put_notification(b,
			    MCP_NOTE_RESOURCES_UPDATED);
			buf_puts(b, ",\"params\":{\"uri\":");
			buf_put(b, raw, len);
			buf_putc(b, ',');
			put_subscription(b, &listeners[i]);
			buf_puts(b, "}}\n");
			break;
		}
}

/* Shutdown: every subscription ends with its result. */
void
listen_end_all(void)
{
	struct buf *b;

	while (nlisteners > 0) {
		b = session_out(listeners[0].sess);
		rpc_put_result(b, text_get(&listeners[0].id),
		    listeners[0].id.len);
		buf_puts(b, "{\"resultType\":\"complete\",");
		put_subscription(b, &listeners[0]);
		buf_puts(b, "}}\n");
		listener_remove(0);
	}
}

/* A session is gone: its listens end, unanswered. */
void
listen_session_gone(const struct session *se)
{
	int i;

	for (i = nlisteners - 1; i >= 0; i--)
		if (listeners[i].sess == se)
			listener_remove(i);
}
