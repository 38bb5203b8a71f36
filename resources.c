/*
 * resources.c: what the client is shown besides tools.  The prompts,
 * resources and resource templates of the open toolboxes' servers are
 * listed in configuration order, in one page; prompts/get, resources/read,
 * subscriptions and completion/complete go to the server that owns the
 * name or URI, and come back verbatim (call.c); resources/updated reaches
 * the client for the URIs it subscribed to; and it gets one list_changed
 * of each kind for each change of what is listed, none otherwise.
 *
 * A URI, or a URI template, offered by two servers belongs to the first;
 * the other's is not listed, and this is said once on standard error.
 */
#include <stdlib.h>
#include <string.h>

#include "box.h"
#include "mcp.h"

#define SUBS_MAX		4096	/* URIs subscribed at once. */
#define MATCH_URI_MAX		8192	/* Longer URIs match no template. */
#define MATCH_EXPR_MAX		32	/* Nor do templates with more {}. */
#define MATCH_STEPS		1000000	/* A lookup's budget, all templates. */

/* What prompts/list and resources/list with templates show, hashed. */
#define BOTH(r, t)	((r) * 31 + (t))

/* A URI a 2025 session subscribed to. */
/*
 * A subscription is to a URI of an instance: the one of configured
 * server n that its session uses (one per session: a shared workbench
 * runs several instances of a server, for sessions that differ).
 */
struct sub {
	struct session	*sess;
	int		 n;
	char		*uri;
};

static struct sub *subs;		/* Every session's. */
static int nsubs;
static struct buf text;			/* A name or URI, unescaped. */

/*
 * What is listed.
 */
/* Has the session opened the toolbox of this server? */
static bool
sees(const struct session *se, const struct server *s)
{
	return session_box_open(se, srv_box(s)) && srv_used_by(s, se);
}

/*
 * The first server of a toolbox the session opened that lists this key,
 * or NULL.
 */
static struct server *
owner(const struct session *se, enum list_kind k, const char *key,
    size_t len)
{
	const struct item *it;
	struct server *s;

	SRV_EACH(s)
		if (sees(se, s) && (it = list_find(s, k, key, len)) != NULL &&
		    it->native != NULL)
			return s;
	return NULL;
}

/* Is the entry listed (not shadowed by a server before it)?  Says so once. */
static bool
shown(const struct session *se, const struct server *s, enum list_kind k,
    struct item *it)
{
	const struct server *o;

	if (k != LIST_RESOURCES && k != LIST_TEMPLATES)
		return true;
	if ((o = owner(se, k, it->key, strlen(it->key))) == s)
		return true;
	if (!it->shadowed)
		wb_log_warn("%s: %s '%s' is also offered by %s, which comes "
		    "first; it goes there", srv_label(s), k == LIST_RESOURCES ?
		    "resource" : "resource template", it->key, srv_label(o));
	it->shadowed = true;
	return false;
}

/* Every entry of kind k that the session is shown, in order. */
static void
res_each(const struct session *se, enum list_kind k,
    void (*fn)(struct item *, void *), void *arg)
{
	struct server *s;
	struct item *items, *it;
	int i, n;

	SRV_EACH(s)
		for (i = 0, items = list_items(s, k, &n); sees(se, s) && i < n;
		    i++) {
			it = &items[i];
			if (it->native != NULL && shown(se, s, k, it))
				fn(it, arg);
		}
}

static void
put_item(struct item *it, void *arg)
{
	struct buf *b = arg;

	if (b->data[b->len - 1] != '[')
		buf_putc(b, ',');
	buf_puts(b, it->native);
}

/* The entries of kind k shown, after an '[' or with a comma each. */
void
res_put(const struct session *se, enum list_kind k, struct buf *b)
{
	res_each(se, k, put_item, b);
}

static void
hash_item(struct item *it, void *arg)
{
	unsigned long *h = arg;

	*h = hash_bytes(*h, it->native, strlen(it->native) + 1);
}

unsigned long
res_hash(const struct session *se, enum list_kind k)
{
	unsigned long h = HASH_INIT;

	res_each(se, k, hash_item, &h);
	return h;
}

/*
 * One list_changed of each kind for each change of what the session is
 * shown, none otherwise; begin takes what it is shown now as told.
 */
static void
res_changes(struct session *se, bool begin)
{
	unsigned long *listed = session_listed(se);
	unsigned long p = res_hash(se, LIST_PROMPTS);
	unsigned long r = BOTH(res_hash(se, LIST_RESOURCES),
	    res_hash(se, LIST_TEMPLATES));

	if (!begin && p != listed[SESSION_PROMPTS])
		listen_changed(se, LISTEN_PROMPTS);
	if (!begin && r != listed[SESSION_RESOURCES])
		listen_changed(se, LISTEN_RESOURCES);
	listed[SESSION_PROMPTS] = p;
	listed[SESSION_RESOURCES] = r;
}

void
res_notify(struct session *se)
{
	res_changes(se, false);
}

void
res_begin(struct session *se)
{
	res_changes(se, true);
}

/*
 * prompts/list, resources/list, resources/templates/list: everything in
 * one page (a client's cursor, which we never gave, is moot).
 */
void
res_list(struct session *se, const struct json *j, int params,
    const char *id, size_t idlen)
{
	static const struct {
		const char	*method;
		const char	*member;
		enum list_kind	 k;
	} lists[] = {
		{ MCP_PROMPTS_LIST, "prompts", LIST_PROMPTS },
		{ MCP_RESOURCES_LIST, "resources", LIST_RESOURCES },
		{ MCP_RESOURCES_TEMPLATES_LIST, "resourceTemplates",
		    LIST_TEMPLATES }
	};
	int method = json_get(j, 0, "method"), i;
	struct buf *b;

	(void)params;
	for (i = 0; i < 2 && !json_eq(j, method, lists[i].method); i++)
		;
	b = reply_begin(se, id, idlen);
	buf_printf(b, "{\"%s\":[", lists[i].member);
	res_put(se, lists[i].k, b);
	buf_putc(b, ']');
	reply_cache_hints(se, b, 0);	/* They change as toolboxes open. */
	buf_putc(b, '}');
	reply_end(se);
}

/*
 * URI templates (RFC 6570).  A simple expression ({var}, {a,b}) stands
 * for one or more characters other than / ? #, as its expansion has; one
 * with an operator ({+var}, {/var}, {?q}, ...) for any, or none.  Both
 * the URI and the templates come from outside: the URI's length and the
 * expressions of a template are bounded, and a lookup has one budget of
 * steps for every template it tries, each character looked at costing
 * one, so that no number or shape of templates can stall the loop.
 */
/* The '}' that ends the expression at t, or NULL. */
static const char *
expr_end(const char *t, int *steps)
{
	for (t++; *t != '}'; t++)
		if (*t == '\0' || --*steps < 0)
			return NULL;
	return t;
}

static bool
match_from(const char *t, const char *u, int depth, int *steps)
{
	const char *end;
	bool op;
	size_t n;

	for (;; t++, u++) {
		if (--*steps < 0)
			return false;
		if (*t == '{' && (end = expr_end(t, steps)) != NULL)
			break;
		if (*t != *u)
			return false;
		if (*t == '\0')
			return true;
	}
	if (depth == MATCH_EXPR_MAX)
		return false;		/* No URI matches it. */
	op = strchr("+#./;?&", t[1]) != NULL;	/* t[1] is not NUL. */
	for (n = 0;; n++) {
		if ((op || n > 0) && match_from(end + 1, u + n, depth + 1,
		    steps))
			return true;
		if (u[n] == '\0' || (!op && strchr("/?#", u[n]) != NULL) ||
		    --*steps < 0)
			return false;
	}
}

/*
 * The server of a URI (len bytes): the one listing it, else the first
 * whose template it matches (or, when tpl, that is the template itself).
 */
static struct server *
uri_server(const struct session *se, const char *uri, size_t len, bool tpl)
{
	static bool said;
	const struct item *t;
	struct server *s;
	int i, n, steps = MATCH_STEPS;

	if ((s = owner(se, LIST_RESOURCES, uri, len)) != NULL ||
	    (tpl && (s = owner(se, LIST_TEMPLATES, uri, len)) != NULL))
		return s;
	if (strlen(uri) != len || len > MATCH_URI_MAX)
		return NULL;		/* A NUL inside, or too long. */
	SRV_EACH(s) {
		t = list_items(s, LIST_TEMPLATES, &n);
		for (i = 0; sees(se, s) && i < n && steps >= 0; i++)
			if (t[i].native != NULL &&
			    match_from(t[i].key, uri, 0, &steps))
				return s;
		if (steps < 0 && !said) {
			wb_log_warn("%s: its resource templates took all the "
			    "%d steps a URI's lookup may take; a URI not "
			    "matched by then is not found", srv_label(s),
			    MATCH_STEPS);
			said = true;
		}
		if (steps < 0)
			return NULL;
	}
	return NULL;
}

/*
 * Routing.
 */
static void
pass(struct server *s, struct session *se, const char *method,
    const struct json *j, int params, int name, const char *original,
    const char *id, size_t idlen)
{
	struct pass_in in = { 0 };
	int bind = name >= 0 ? name : json_get(j, params, "uri");

	in.method = method;
	if (params >= 0)
		in.params = json_raw(j, params, &in.plen);
	if (name >= 0) {
		in.name.p = json_raw(j, name, &in.name.n);
		in.original = original;
	}
	if (bind >= 0)
		in.bind.p = json_raw(j, bind, &in.bind.n);
	call_in_tokens(j, -1, params, &in.retry);
	in.token.p = in.retry.token;
	in.token.n = in.retry.toklen;
	call_pass(s, se, &in, id, idlen);
}

/*
 * The server and own name of a prompt the client was shown by its
 * native name (tok), or NULL with the client's error sent.
 */
static struct server *
prompt_target(struct session *se, const struct json *j, int tok, char **own,
    const char *id, size_t idlen)
{
	char *box = NULL, *srv = NULL, *name = NULL;
	const struct item *it = NULL;
	struct server *s = NULL;
	struct toolbox *b;
	const char *full;
	struct buf t = { 0 };

	if ((full = json_str(j, tok, &text)) == NULL) {
		reply_error(se, id, idlen, RPC_INVALID_PARAMS,
		    "Invalid params: name must be a string without \\u0000");
		return NULL;
	}
	if (tool_split(full, &box, &srv, &name) == 0 &&
	    (b = box_find(box, strlen(box))) != NULL && box_seen(se, b) &&
	    (s = box_server(se, b, srv, strlen(srv))) != NULL)
		it = list_find(s, LIST_PROMPTS, name, strlen(name));
	free(box);
	free(srv);
	if (it == NULL || it->native == NULL) {
		buf_printf(&t, "Unknown prompt: %s", full);
		reply_error(se, id, idlen, RPC_INVALID_PARAMS, buf_cstr(&t));
		buf_free(&t);
		free(name);
		return NULL;
	}
	*own = name;
	return s;
}

void
res_prompts_get(struct session *se, const struct json *j, int params,
    const char *id, size_t idlen)
{
	int name = json_get(j, params, "name");
	struct server *s;
	char *own;

	if ((s = prompt_target(se, j, name, &own, id, idlen)) == NULL)
		return;
	pass(s, se, MCP_PROMPTS_GET, j, params, name, own, id, idlen);
	free(own);
}

static void
reply_not_found(struct session *se, const char *id, size_t idlen,
    const char *uri)
{
	struct buf data = { 0 };

	buf_puts(&data, "{\"uri\":");
	json_put_cstr(&data, uri);
	buf_putc(&data, '}');
	reply_error_data(se, id, idlen, RPC_RESOURCE_NOT_FOUND,
	    "Resource not found", data.data, data.len);
	buf_free(&data);
}

/* The server of params.uri, or NULL with the client's error sent. */
static struct server *
resource_target(struct session *se, const struct json *j, int params,
    const char *id, size_t idlen)
{
	int v = json_get(j, params, "uri");
	struct server *s;
	const char *uri;

	if ((uri = json_str(j, v, &text)) == NULL) {
		reply_error(se, id, idlen, RPC_INVALID_PARAMS,
		    "Invalid params: uri must be a string without \\u0000");
		return NULL;
	}
	if ((s = uri_server(se, uri, text.len, false)) == NULL)
		reply_not_found(se, id, idlen, uri);
	return s;
}

void
res_resources_read(struct session *se, const struct json *j, int params,
    const char *id, size_t idlen)
{
	struct server *s;

	if ((s = resource_target(se, j, params, id, idlen)) != NULL)
		pass(s, se, MCP_RESOURCES_READ, j, params, -1, NULL, id, idlen);
}

/*
 * Subscriptions: the URIs each 2025 session subscribed to are kept, so
 * that only their updates reach it.
 */
/* Is subs[i] to this URI of instance s? */
static bool
sub_is(int i, const struct server *s, const char *uri)
{
	return subs[i].n == srv_index(s) && srv_used_by(s, subs[i].sess) &&
	    strcmp(subs[i].uri, uri) == 0;
}

/*
 * A session's subscription to the URI of s (any session's, se NULL), or
 * -1.
 */
static int
sub_find(const struct session *se, const struct server *s, const char *uri)
{
	int i;

	for (i = 0; i < nsubs; i++)
		if ((se == NULL || subs[i].sess == se) && sub_is(i, s, uri))
			return i;
	return -1;
}

/* Does another session subscribe to the URI of subs[i]'s instance too? */
static bool
sub_shared(int i)
{
	const struct server *s = srv_for(subs[i].sess, subs[i].n);
	int k;

	for (k = 0; k < nsubs; k++)
		if (k != i && sub_is(k, s, subs[i].uri))
			return true;
	return false;
}

static void
sub_remove(int i)
{
	free(subs[i].uri);
	subs[i] = subs[--nsubs];
}

static void
subscribe(struct session *se, const struct json *j, int params,
    const char *id, size_t idlen, bool on)
{
	struct server *s;
	int i;

	if ((s = resource_target(se, j, params, id, idlen)) == NULL)
		return;
	if ((srv_caps(s) & CAP_SUBSCRIBE) == 0) {
		reply_error(se, id, idlen, RPC_METHOD_NOT_FOUND,
		    "Method not found: the server of this resource does not "
		    "offer subscriptions");
		return;
	}
	i = sub_find(se, s, text.data);
	if (on && i < 0 && nsubs == SUBS_MAX) {
		reply_error(se, id, idlen, RPC_INTERNAL_ERROR,
		    "Internal error: too many subscriptions");
		return;
	}
	if (on && i < 0) {
		subs = xrealloc(subs, ((size_t)nsubs + 1) * sizeof(*subs));
		subs[nsubs].sess = se;
		subs[nsubs].n = srv_index(s);
		subs[nsubs++].uri = xstrdup(text.data);
	} else if (!on && i >= 0)
		sub_remove(i);
	pass(s, se, on ? MCP_RESOURCES_SUBSCRIBE : MCP_RESOURCES_UNSUBSCRIBE, j,
	    params, -1, NULL, id, idlen);
}

void
res_subscribe(struct session *se, const struct json *j, int params,
    const char *id, size_t idlen)
{
	subscribe(se, j, params, id, idlen, true);
}

void
res_unsubscribe(struct session *se, const struct json *j, int params,
    const char *id, size_t idlen)
{
	subscribe(se, j, params, id, idlen, false);
}

/*
 * A server's resources/updated: to each 2025 session that subscribed to
 * the URI on that instance it goes on; to a modern listener of that URI
 * whose session uses the instance, tagged as its own.  Never by the URI
 * alone: another instance's resource of the same URI is another's.
 */
void
res_updated(const struct server *s, const struct json *j, const char *line,
    size_t n)
{
	int uri = json_path(j, 0, "params.uri"), i;

	if (json_str(j, uri, &text) == NULL)
		return;
	for (i = 0; i < nsubs; i++)
		if (sub_is(i, s, text.data)) {
			wb_log_debug_for(subs[i].sess, "session %lu <- %s: "
			    MCP_NOTE_RESOURCES_UPDATED,
			    session_serial(subs[i].sess), srv_label(s));
			session_send_line(subs[i].sess, line, n);
		}
	listen_updated(s, text.data, j, uri);
}

/*
 * Watches: the URIs modern listeners want updates of.  The server of
 * each is asked once for all of them (resources/subscribe, or for a
 * modern server a subscriptions/listen of its own), and told when the
 * last is gone.
 */
struct watch {
	char		*uri;
	struct server	*srv;
	int		 holders;
	long long	 listen;	/* A modern server's listen for it. */
};

static struct watch *watches;
static int nwatches;

static int
watch_find(const char *uri)
{
	int i;

	for (i = 0; i < nwatches; i++)
		if (strcmp(watches[i].uri, uri) == 0)
			return i;
	return -1;
}

/* {"uri": uri} as members, without the braces. */
static void
uri_members(struct buf *b, const char *uri)
{
	b->len = 0;
	buf_puts(b, "\"uri\":");
	json_put_cstr(b, uri);
}

/*
 * Ask a server for a URI's updates, or (on false) to stop: a modern one
 * with a subscriptions/listen of its own, ended by cancelling it.
 */
static void
watch_tell(struct watch *w, bool on)
{
	struct server *s = w->srv;
	struct buf p = { 0 };

	if (srv_modern(s) && !on)
		srv_cancel(s, w->listen, "unsubscribed");
	else if (srv_modern(s)) {
		buf_puts(&p, "\"notifications\":{\"resourceSubscriptions\":[");
		json_put_cstr(&p, w->uri);
		buf_puts(&p, "]}");
		w->listen = srv_request_open(s, MCP_SUBSCRIPTIONS_LISTEN,
		    p.data, p.len);
	} else if (on || sub_find(NULL, s, w->uri) < 0) {
		/* Not while a 2025 session still wants it. */
		uri_members(&p, w->uri);
		srv_request(s, on ? MCP_RESOURCES_SUBSCRIBE :
		    MCP_RESOURCES_UNSUBSCRIBE, p.data, p.len);
	}
	buf_free(&p);
}

/*
 * A listener's interest in a URI (on) or its end.  True when it is
 * honoured: an open toolbox's server lists the URI (or a template of
 * it) and offers subscriptions.
 */
bool
res_watch(const struct session *se, const char *uri, bool on)
{
	struct server *s;
	int i = watch_find(uri);

	if (!on) {
		if (i >= 0 && --watches[i].holders == 0) {
			watch_tell(&watches[i], false);
			free(watches[i].uri);
			watches[i] = watches[--nwatches];
		}
		return true;
	}
	if (i >= 0) {
		watches[i].holders++;
		return true;
	}
	if ((s = uri_server(se, uri, strlen(uri), false)) == NULL ||
	    !srv_serving(s) || (srv_caps(s) & CAP_SUBSCRIBE) == 0 ||
	    nwatches == SUBS_MAX)
		return false;
	watches = xrealloc(watches, ((size_t)nwatches + 1) *
	    sizeof(*watches));
	watches[nwatches] = (struct watch){ xstrdup(uri), s, 1, 0 };
	watch_tell(&watches[nwatches++], true);
	return true;
}

/*
 * completion/complete: a prompt's argument by the prompt's native name,
 * or a template's by its URI template (or a URI it matches).  A server
 * that offers no completions has none: an empty list.
 */
void
res_complete(struct session *se, const struct json *j, int params,
    const char *id, size_t idlen)
{
	int ref = json_get(j, params, "ref"), v;
	struct server *s;
	char *own = NULL;
	const char *uri;

	if (json_eq(j, json_get(j, ref, "type"), "ref/prompt")) {
		v = json_get(j, ref, "name");
		if ((s = prompt_target(se, j, v, &own, id, idlen)) == NULL)
			return;
	} else if (json_eq(j, json_get(j, ref, "type"), "ref/resource")) {
		v = -1;
		if ((uri = json_str(j, json_get(j, ref, "uri"), &text)) ==
		    NULL || (s = uri_server(se, uri, text.len, true)) == NULL) {
			reply_not_found(se, id, idlen, uri != NULL ? uri : "");
			return;
		}
	} else {
		reply_error(se, id, idlen, RPC_INVALID_PARAMS,
		    "Invalid params: ref must be a ref/prompt or a "
		    "ref/resource");
		return;
	}
	if ((srv_caps(s) & CAP_COMPLETIONS) == 0) {
		buf_puts(reply_begin(se, id, idlen), "{\"completion\":"
		    "{\"values\":[],\"hasMore\":false}}");
		reply_end(se);
	} else
		pass(s, se, MCP_COMPLETION_COMPLETE, j, params, v, own, id,
		    idlen);
	free(own);
}

/*
 * A session is gone: its subscriptions go, and a URI no one else wants
 * any more is unsubscribed at its server.
 */
void
res_session_gone(struct session *se)
{
	struct buf p = { 0 };
	struct server *s;
	int i;

	for (i = nsubs - 1; i >= 0; i--) {
		if (subs[i].sess != se)
			continue;
		if (!sub_shared(i) && watch_find(subs[i].uri) < 0 &&
		    (s = uri_server(se, subs[i].uri, strlen(subs[i].uri),
		    false)) != NULL && srv_serving(s)) {
			uri_members(&p, subs[i].uri);
			srv_request(s, MCP_RESOURCES_UNSUBSCRIBE, p.data,
			    p.len);
		}
		sub_remove(i);
	}
	buf_free(&p);
}
