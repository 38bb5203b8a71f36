/*
 * call.c: the requests in flight on a server.  Each gets a fresh id of
 * ours; a call keeps the client's id, spliced back into the answer
 * byte for byte.  Calls are routed here, timed, cancelled, and failed
 * with use_tool's words; ghosts are calls that ended before their
 * answer came, which may still come.  The client's other requests for a
 * server (prompts/get, resources/read and the like) go the same way,
 * their answers passed back verbatim, errors included.
 */
#include <stdlib.h>
#include <string.h>

#include "server_int.h"
#include "mcp.h"

/*
 * The request table of a server.
 */
struct request *
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

void
req_free(struct request *r)
{
	text_free(&r->cid);
	text_free(&r->tool);
	free(r->params);
	free(r->token);
	bridge_ask_free(r->ask);
}

/* The one way out of the table: the last request takes its place. */
void
req_take(struct server *s, int i, struct request *out)
{
	*out = s->req[i];
	s->req[i] = s->req[--s->nreq];
}

void
req_remove(struct server *s, int i)
{
	struct request r;

	if (s->req[i].ask != NULL)	/* Its questions need no answer. */
		relay_forget(s, s->req[i].id);
	req_take(s, i, &r);
	req_free(&r);
}

int
req_find(const struct server *s, long long id)
{
	int i;

	for (i = 0; i < s->nreq; i++)
		if (s->req[i].id == id)
			return i;
	return -1;
}

/* The request whose progress carries this token of ours. */
int
req_find_token(const struct server *s, long long token)
{
	int i;

	for (i = 0; i < s->nreq; i++)
		if (s->req[i].ptok == token)
			return i;
	return -1;
}

static int
req_newer_first(const void *a, const void *b)
{
	long long x = ((const struct request *)a)->id;
	long long y = ((const struct request *)b)->id;

	return x < y ? 1 : x > y ? -1 : 0;
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

int
ghost_find(const struct server *s, long long id)
{
	int i;

	for (i = 0; i < s->nghosts; i++)
		if (s->ghosts[i].id == id)
			return i;
	return -1;
}

void
ghost_remove(struct server *s, int i)
{
	text_free(&s->ghosts[i].cid);
	s->ghosts[i] = s->ghosts[--s->nghosts];
}

/* Its late answer came: it is a ghost no more. */
void
ghost_answered(struct server *s, long long id)
{
	int i;

	if ((i = ghost_find(s, id)) < 0)
		return;
	wb_log_debug("%s: a late answer to our id %lld dropped: its call "
	    "ended", s->label, id);
	ghost_remove(s, i);
}

/* The server stopped: no late answer can come now. */
void
ghosts_clear(struct server *s)
{
	while (s->nghosts > 0)
		ghost_remove(s, s->nghosts - 1);
	s->ghosts_lost = false;
}

/* Tell the server to drop a call it was sent. */
void
call_tell_cancelled(struct server *s, long long id, const char *reason)
{
	struct buf *b = &s->proc.io.out;

	rpc_put_notification(b, MCP_NOTE_CANCELLED);
	buf_printf(b, ",\"params\":{\"requestId\":%lld,\"reason\":\"%s\"}}\n",
	    id, reason);
}

/* The same, when its answer may still come. */
static void
call_drop(struct server *s, const struct request *r, const char *reason)
{
	call_tell_cancelled(s, r->id, reason);
	ghost_add(s, r);
}

/*
 * Calls.
 */
/*
 * At debug, a line for the request's session alone: the request going
 * to its server (->) or its answer coming back (<-), with the client's
 * id, which the client chose (so bounded), and ours; then what became
 * of it.  Never its arguments nor its result.
 */
void
call_debug(const struct server *s, const struct request *r, bool to,
    const char *what)
{
	const char *tool = r->kind == REQ_CALL ? text_get(&r->tool) : "";
	size_t toollen = r->kind == REQ_CALL ? r->tool.len : 0;

	wb_log_debug_for(r->sess, "session %lu %s %s: %s " LOG_PEER_FMT "%sid "
	    LOG_PEER_FMT " (as %lld)%s%s", session_serial(r->sess),
	    to ? "->" : "<-", s->label, r->method, LOG_PEER(tool, toollen),
	    toollen > 0 ? " " : "", LOG_PEER(text_get(&r->cid), r->cid.len),
	    r->id, what != NULL ? ": " : "", what != NULL ? what : "");
}

/*
 * The text of a failed call, as use_tool promises it; another request
 * that failed gets a JSON-RPC error naming the server.
 */
void
call_error(const struct server *s, const struct request *r,
    const char *reason)
{
	struct buf t = { 0 };

	/* Not why: a server's own error message may quote what it got. */
	call_debug(s, r, false, "failed");
	if (r->park != NULL) {
		bridge_failed(r->park, reason);
		return;
	}
	reply_era(r->sess, r->modern);
	if (r->kind == REQ_PASS) {
		buf_printf(&t, "Error in server '%s' (toolbox '%s'): %s",
		    s->cfg->name, s->boxcfg->name, reason);
		reply_error(r->sess, text_get(&r->cid), r->cid.len,
		    RPC_INTERNAL_ERROR, buf_cstr(&t));
	} else {
		buf_printf(&t, "Error executing tool '%s' in server '%s' "
		    "(toolbox '%s'): %s", text_get(&r->tool), s->cfg->name,
		    s->boxcfg->name, reason);
		reply_text(r->sess, text_get(&r->cid), r->cid.len,
		    buf_cstr(&t), true);
	}
	buf_free(&t);
}

/* The server failed: every request fails with it, each call answered. */
void
call_fail_all(struct server *s, const char *reason)
{
	int i;

	for (i = s->nreq - 1; i >= 0; i--) {
		if (req_is_call(&s->req[i]))
			call_error(s, &s->req[i], reason);
		req_remove(s, i);
	}
}

/* Start (or, on progress, restart) a call's timers. */
void
call_arm(const struct server *s, struct request *r, long long now)
{
	if (s->cfg->call_timeout_ms > 0)
		r->idle_at = now + s->cfg->call_timeout_ms;
	if (s->cfg->call_max_ms > 0 && r->hard_at == 0)
		r->hard_at = now + s->cfg->call_max_ms;
}

/*
 * A call's arguments, and from the params of its tools/call its _meta and
 * a retry's inputResponses and requestState (which go to the server as
 * they came: the server minted that state).
 */
void
call_in_tokens(const struct json *j, int args, int params, struct call_in *in)
{
	int t, meta = json_get(j, params, "_meta");

	memset(in, 0, sizeof(*in));
	if (args >= 0)
		in->args = json_raw(j, args, &in->alen);
	if (json_is(j, t = json_get(j, params, "inputResponses"), JSMN_OBJECT))
		in->responses = json_raw(j, t, &in->rlen);
	if (json_is(j, t = json_get(j, params, "requestState"), JSMN_STRING))
		in->state = json_raw(j, t, &in->slen);
	if (json_is(j, meta, JSMN_OBJECT)) {
		in->meta = json_raw(j, meta, &in->mlen);
		if (rpc_valid_id(j, t = json_get(j, meta, "progressToken")))
			in->token = json_raw(j, t, &in->toklen);
	}
}

/*
 * A call's params for the server: the tool's own name, the client's
 * arguments and _meta as they came, except that a progressToken is
 * replaced by our request id, unique on that server, and kept to map
 * progress back.
 */
static void
call_params(struct buf *b, const struct server *s, struct request *r,
    const void *arg)
{
	const struct call_in *in = arg;
	struct buf id = { 0 };

	(void)s;
	buf_puts(b, "{\"name\":");
	json_put_str(b, text_get(&r->tool), r->tool.len);
	buf_puts(b, ",\"arguments\":");
	if (in->args != NULL)
		buf_put(b, in->args, in->alen);
	else
		buf_puts(b, "{}");
	if (in->meta != NULL)
		buf_puts(b, ",\"_meta\":");
	if (in->meta != NULL && in->token == NULL)
		buf_put(b, in->meta, in->mlen);
	else if (in->meta != NULL) {
		r->token = xstrndup(in->token, in->toklen);
		r->tokenlen = in->toklen;
		r->ptok = r->id;
		buf_put_int(&id, r->id);
		rpc_splice(b, in->meta, in->mlen, in->token, in->toklen,
		    id.data, id.len);
		buf_free(&id);
	}
	if (r->modern && in->responses != NULL) {
		buf_puts(b, ",\"inputResponses\":");
		buf_put(b, in->responses, in->rlen);
	}
	if (r->modern && in->state != NULL) {
		buf_puts(b, ",\"requestState\":");
		buf_put(b, in->state, in->slen);
	}
	buf_putc(b, '}');
}

/*
 * A 2025 client's request to a modern server is bridged: its params get
 * the era's _meta when it is sent (only then is the server's era sure),
 * and are kept after: should the server ask for input, the request is
 * sent again with the answers (bridge.c).
 */
static bool
call_keeps(const struct server *s, const struct request *r)
{
	return srv_modern(s) && !r->modern;
}

/*
 * A modern client's request to a 2025 server crosses the eras the other
 * way: its params lose the era's _meta members when it is sent (with
 * them a dual-era server would serve it in the 2026-07-28 era), and its
 * result gains resultType and serverInfo on the way back.
 */
static bool
call_stamps(const struct server *s, const struct request *r)
{
	return r->modern && !srv_modern(s);
}

/* Is the object at p (its '{') empty? */
static bool
object_empty(const char *p)
{
	for (p++; json_space(*p); p++)
		;
	return *p == '}';
}

/*
 * The span of the params' _meta (p NULL: none), or false if not an object.
 * The params are the client's, checked when they came, or the workbench's
 * own: their values are skipped, not checked again (a large argument is
 * passed over at the speed of memchr).
 */
static bool
params_meta(const char *params, size_t plen, struct span *meta)
{
	struct span key, v;
	struct jwalk w;

	meta->p = NULL;
	if (!json_walk(&w, params, plen, 0, 1))
		return true;
	w.checked = true;
	while (json_walk_next(&w, &key) == 1 && json_walk_value(&w, &v))
		if (json_span_is(&key, "_meta")) {
			*meta = v;
			break;
		}
	return meta->p == NULL || meta->p[0] == '{';
}

/*
 * Send a bridged request (call_keeps), its params taken over: the era's
 * members go into the _meta they have, or a _meta is put first.
 */
static void
send_bridged(struct server *s, struct request *r, char *params, size_t plen)
{
	struct buf with = { 0 }, out = { 0 };
	struct span meta;
	struct cut c;
	const char *obj;

	if (!params_meta(params, plen, &meta)) {
		srv_send(s, r, r->method, params, plen);	/* As it came. */
		r->params = params;
		r->plen = plen;
		return;
	}
	obj = meta.p != NULL ? meta.p : params;
	if (meta.p == NULL)
		era_put_meta(&with, session_legacy_caps(r->sess));
	else
		era_put_request_meta(&with, session_legacy_caps(r->sess));
	if (!object_empty(obj))
		buf_putc(&with, ',');
	c = (struct cut){ { obj + 1, 0 }, with.data, with.len };
	rpc_splice_cuts(&out, params, plen, &c, 1);
	free(params);
	buf_free(&with);
	srv_send(s, r, r->method, out.data, out.len);
	r->params = out.data;
	r->plen = out.len;
}

/*
 * A modern request's params just written to b from start lose the era's
 * _meta members, in place: what is left is shorter.
 */
static void
strip_era(struct buf *b, size_t start)
{
	struct buf meta = { 0 };
	struct span m;
	size_t at, end;

	if (params_meta(b->data + start, b->len - start, &m) && m.p != NULL &&
	    era_strip_meta(&meta, m.p, m.n) && meta.len <= m.n) {
		at = (size_t)(m.p - b->data);
		end = at + m.n;
		memmove(b->data + at + meta.len, b->data + end, b->len - end);
		memcpy(b->data + at, meta.data, meta.len);
		b->len -= m.n - meta.len;
	}
	buf_free(&meta);
}

/* What writes a request's params into a buffer. */
typedef void	(*put_params)(struct buf *, const struct server *,
		    struct request *, const void *);

/*
 * Send a request, its params written by put straight into the server's
 * queue; a modern one to a 2025 server (call_stamps) then loses the era's
 * _meta members.
 */
static void
send_put(struct server *s, struct request *r, put_params put,
    const void *in)
{
	struct buf *b = srv_send_head(s, r, r->method);
	size_t start = b->len;

	put(b, s, r, in);
	if (call_stamps(s, r))
		strip_era(b, start);
	buf_puts(b, "}\n");
}

/* The params a request kept while its server started. */
static void
put_kept(struct buf *b, const struct server *s, struct request *r,
    const void *arg)
{
	(void)s;
	(void)arg;
	buf_put(b, r->params, r->plen);
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
	} else if (waited && r->kind == REQ_CALL && list_find(s, LIST_TOOLS,
	    text_get(&r->tool), r->tool.len) == NULL) {
		buf_printf(&t, "Error executing tool: Tool '%s' not found in "
		    "server '%s'", text_get(&r->tool), s->cfg->name);
		reply_era(r->sess, r->modern);
		reply_text(r->sess, text_get(&r->cid), r->cid.len,
		    buf_cstr(&t), true);
	}
	if (t.len == 0)
		return true;
	buf_free(&t);
	req_remove(s, (int)(r - s->req));
	return false;
}

/*
 * The server is ready: the calls that waited for it go, in the order
 * they came.  Newest first in the array, walked from its end, since a
 * call refused moves an already walked one into its place.
 */
void
call_send_waiting(struct server *s)
{
	struct request *r;
	int i;

	qsort(s->req, (size_t)s->nreq, sizeof(*s->req), req_newer_first);
	for (i = s->nreq - 1; i >= 0; i--) {
		r = &s->req[i];
		if (!req_for_client(r) || r->sent || r->ask != NULL ||
		    !call_sendable(s, r, true))
			continue;
		call_debug(s, r, true, "sent, the server started");
		if (call_keeps(s, r))
			send_bridged(s, r, r->params, r->plen);
		else {
			send_put(s, r, put_kept, NULL);
			free(r->params);
			r->params = NULL;
		}
		call_arm(s, r, loop_ms());
	}
}

/*
 * Route a request to a server, its params written by put.  To a ready
 * server they are written straight into the queue (and fitted to its era
 * there, which is sure only now); to a server not ready they wait in the
 * request.
 */
static void
route(struct server *s, struct request *r, put_params put, const void *in)
{
	struct buf p = { 0 };

	if (srv_backing_off(s, loop_ms(), &p)) {
		call_error(s, r, buf_cstr(&p));
		buf_free(&p);
		req_remove(s, (int)(r - s->req));
	} else if (!srv_serving(s)) {
		put(&p, s, r, in);
		r->params = p.data;
		r->plen = p.len;
		call_debug(s, r, true, "waits for the server to start");
		srv_ensure(s, r->sess);
	} else if (call_sendable(s, r, false)) {
		call_debug(s, r, true, NULL);
		if (call_keeps(s, r)) {
			put(&p, s, r, in);
			send_bridged(s, r, p.data, p.len);
		} else
			send_put(s, r, put, in);
		call_arm(s, r, loop_ms());
	}
}

void
call_route(struct server *s, struct session *se, const char *tool,
    size_t toollen, const struct call_in *in, const char *id, size_t idlen)
{
	const struct era *e = session_era(se);
	struct request *r;

	if (e != NULL && in->state != NULL && bridge_resume(s, se,
	    MCP_TOOLS_CALL, tool, toollen, in, id, idlen))
		return;
	r = req_add(s, REQ_CALL);
	s->ncalls++;
	r->sess = se;
	r->method = MCP_TOOLS_CALL;
	r->modern = e != NULL;
	r->can = e != NULL ? e->can : 0;
	r->level = e != NULL ? e->level : -1;
	text_set(&r->cid, id, idlen);
	text_set(&r->tool, tool, toollen);
	route(s, r, call_params, in);
}

/*
 * The params of a passed request: the client's, with the name it was
 * shown (a prompt's) replaced by the server's own, and a progressToken
 * by our request id, kept to map progress back.
 */
static void
pass_params(struct buf *b, const struct server *s, struct request *r,
    const void *arg)
{
	const struct pass_in *in = arg;
	struct buf name = { 0 }, id = { 0 };
	struct pass_in none;
	struct cut cut[2];
	int n = 0;

	(void)s;

	if (in->params == NULL) {
		none = *in;
		none.params = "{}";
		none.plen = 2;
		in = &none;
	}
	if (in->name.p != NULL) {
		json_put_cstr(&name, in->original);
		cut[n++] = (struct cut){ in->name, name.data, name.len };
	}
	if (in->token.p != NULL) {
		r->token = xstrndup(in->token.p, in->token.n);
		r->tokenlen = in->token.n;
		r->ptok = r->id;
		buf_put_int(&id, r->id);
		cut[n++] = (struct cut){ in->token, id.data, id.len };
	}
	rpc_splice_cuts(b, in->params, in->plen, cut, n);
	buf_free(&name);
	buf_free(&id);
}

/* A request of the client's for one server: its answer comes back as is. */
void
call_pass(struct server *s, struct session *se, const struct pass_in *in,
    const char *id, size_t idlen)
{
	const struct era *e = session_era(se);
	struct request *r;

	if (e != NULL && in->retry.state != NULL && bridge_resume(s, se,
	    in->method, in->bind.p, in->bind.n, &in->retry, id, idlen))
		return;
	r = req_add(s, REQ_PASS);
	r->sess = se;
	r->method = in->method;
	r->modern = e != NULL;
	r->can = e != NULL ? e->can : 0;
	r->level = e != NULL ? e->level : -1;
	text_set(&r->cid, id, idlen);
	if (in->bind.p != NULL)
		text_set(&r->tool, in->bind.p, in->bind.n);
	route(s, r, pass_params, in);
}

/* The client cancels a call: the server is told, and its answer dropped. */
void
call_cancel(const struct session *se, const char *id, size_t idlen,
    const char *reason)
{
	struct server *s;
	int r;

	SRV_EACH(s)
		for (r = s->nreq - 1; r >= 0; r--) {
			if (!req_for_client(&s->req[r]) ||
			    s->req[r].sess != se ||
			    s->req[r].cid.len != idlen ||
			    memcmp(text_get(&s->req[r].cid), id, idlen) != 0)
				continue;
			call_debug(s, &s->req[r], true, "cancelled");
			if (s->req[r].sent)
				call_drop(s, &s->req[r], reason);
			req_remove(s, r);
		}
}

/*
 * The session is gone: its calls are cancelled at their servers (their
 * late answers dropped as a ghost's are), its other requests forgotten.
 */
void
call_session_gone(const struct session *se)
{
	struct server *s;
	int r;

	SRV_EACH(s)
		for (r = s->nreq - 1; r >= 0; r--) {
			if (s->req[r].sess != se)
				continue;
			if (s->req[r].sent && s->req[r].park == NULL)
				call_drop(s, &s->req[r], "the client left");
			else if (s->req[r].sent)
				call_tell_cancelled(s, s->req[r].id,
				    "the client left");
			req_remove(s, r);
		}
}

/*
 * Answers.
 */
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
 * URL elicitation required (2025-11-25): the client needs the error
 * itself, with the URLs in its data, to send the user there and retry.
 */

static bool
url_elicitation_required(const struct json *j, int error)
{
	long long code;

	return json_get_int(j, json_get(j, error, "code"), &code) &&
	    code == RPC_URL_ELICITATION_REQUIRED;
}

/*
 * Is a call's result read whole, not cut through (stream.c)?  One to be
 * stamped is, and one that may ask a 2025 client for input.
 */
bool
call_reads_whole(const struct server *s, const struct request *r)
{
	return call_stamps(s, r) || call_keeps(s, r);
}

/* What a result has of the members a modern one may need added. */
enum { R_RESULT, R_META, R_TTL, R_SCOPE, R_SLOTS };

static void
result_members(const char *line, size_t n, struct span *v)
{
	static const struct field inner[] = { FIELD("_meta", R_META, NULL,
	    false), FIELD("ttlMs", R_TTL, NULL, false), FIELD("cacheScope",
	    R_SCOPE, NULL, false), FIELD_END };
	static const struct field top[] = { FIELD("result", R_RESULT, inner,
	    false), FIELD_END };
	int i;

	if (!json_shape(line, n, top, v, R_SLOTS))
		for (i = 0; i < R_SLOTS; i++)
			v[i].p = NULL;
	if (v[R_META].p != NULL && v[R_META].p[0] != '{')
		v[R_META].p = NULL;
}

/*
 * Is a modern result of this method cacheable (CacheableResult: ttlMs and
 * cacheScope required)?  Of those, only resources/read is answered by a
 * server; the lists and server/discover the workbench answers itself.
 */
static bool
method_cacheable(const char *method)
{
	return strcmp(method, MCP_RESOURCES_READ) == 0;
}

/*
 * An answer goes back under the client's id.  A legacy server's result
 * (its '{' at offset at, or 0 for an error) to a modern client gets what
 * that era's results carry: resultType first in the object, the
 * workbench's serverInfo in its _meta, and for a cacheable one the cache
 * hints it lacks: ttlMs 0 and cacheScope private, since a 2025 server
 * says nothing of how long its answer holds, nor for whom.
 */
static void
call_reply(const struct server *s, const struct request *r,
    const char *line, size_t n, const char *id, size_t idlen, size_t at)
{
	struct buf stamp = { 0 }, info = { 0 };
	struct span v[R_SLOTS];
	struct cut cut[3] = { { { id, idlen }, text_get(&r->cid),
	    r->cid.len } };
	int nc = 1;

	call_debug(s, r, false, at == 0 ? "an error" : NULL);
	if (at == 0 || !call_stamps(s, r)) {
		rpc_splice_line(session_out(r->sess), line, n, id, idlen,
		    text_get(&r->cid), r->cid.len);
		return;
	}
	result_members(line, n, v);
	buf_puts(&stamp, "\"resultType\":\"complete\"");
	if (method_cacheable(r->method) && v[R_TTL].p == NULL)
		buf_puts(&stamp, ",\"ttlMs\":0");
	if (method_cacheable(r->method) && v[R_SCOPE].p == NULL)
		buf_puts(&stamp, ",\"cacheScope\":\"private\"");
	if (v[R_META].p == NULL) {
		buf_putc(&stamp, ',');
		era_put_server_info(&stamp);
	} else {
		era_put_server_info_member(&info);
		if (!object_empty(v[R_META].p))
			buf_putc(&info, ',');
		cut[nc++] = (struct cut){ { v[R_META].p + 1, 0 }, info.data,
		    info.len };
	}
	if (!object_empty(line + at))
		buf_putc(&stamp, ',');
	cut[nc++] = (struct cut){ { line + at + 1, 0 }, stamp.data,
	    stamp.len };
	rpc_splice_cuts(session_out(r->sess), line, n, cut, nc);
	buf_putc(session_out(r->sess), '\n');
	buf_free(&stamp);
	buf_free(&info);
}

/*
 * A call's answer, taken from the table: its result (or the error the
 * client must see) goes back under the client's id; any other error
 * becomes a failed call.
 */
void
call_answered(struct server *s, struct request *r, const struct json *j,
    const char *line, size_t n)
{
	int error = json_get(j, 0, "error"), id = json_get(j, 0, "id");
	int result = json_get(j, 0, "result");
	const char *raw;
	size_t len;
	char *msg;

	if (r->park != NULL)
		bridge_answered(r->park, line, n);
	else if (!answer_well_formed(j, line, n))
		call_error(s, r, "protocol error: its answer is not a "
		    "JSON-RPC 2.0 response (\"jsonrpc\":\"2.0\", one id, and "
		    "a result object or an error)");
	else if (error < 0 && call_keeps(s, r) &&
	    json_eq(j, json_get(j, result, "resultType"), "input_required"))
		bridge_ask_client(s, r, j, result);
	else if (error < 0 || r->kind == REQ_PASS ||
	    url_elicitation_required(j, error)) {
		raw = json_raw(j, id, &len);
		call_reply(s, r, line, n, raw, len, error < 0 ?
		    (size_t)j->tok[result].start : 0);
	} else {
		msg = json_strdup(j, json_get(j, error, "message"));
		call_error(s, r, msg != NULL ? msg :
		    "the server answered with an error");
		free(msg);
	}
}

/*
 * The common case, a call's result, passes without being tokenized: the
 * top level is scanned, the id found and replaced by the client's.  All
 * else takes the full parse.
 */
bool
call_pass_result(struct server *s, const char *line, size_t n)
{
	struct rpc_top top;
	long long v;
	int i;

	if (rpc_scan(line, n, &top) < 0 || top.method != NULL ||
	    top.id == NULL || !top.result || top.error || !top.v2 ||
	    line[top.at] != '{' || !rpc_int_id(top.id, top.idlen, &v))
		return false;
	if ((i = req_find(s, v)) < 0 || !req_for_client(&s->req[i]) ||
	    bridge_asks(s, &s->req[i], line, n))
		return false;
	call_reply(s, &s->req[i], line, n, top.id, top.idlen, top.at);
	req_remove(s, i);
	return true;
}

/*
 * Timers.
 */
/* The nearest call deadline on the server, or 0. */
long long
call_deadline(const struct server *s)
{
	long long t = 0;
	int i;

	for (i = 0; i < s->nreq; i++)
		t = earliest(t, earliest(s->req[i].idle_at, s->req[i].hard_at));
	return t;
}

static void
timeout_reason(const struct server *s, const struct request *r,
    long long now, struct buf *why)
{
	why->len = 0;
	if (r->hard_at > 0 && now >= r->hard_at)
		buf_printf(why, "timed out after %d ms (callMaxTimeoutMs)",
		    s->cfg->call_max_ms);
	else
		buf_printf(why, "timed out after %d ms (callTimeoutMs)",
		    s->cfg->call_timeout_ms);
}

/* End calls whose time is up; the server is told to stop working on them. */
void
call_check_timeouts(struct server *s, long long now)
{
	struct request *r;
	struct buf why = { 0 };
	int i;

	for (i = s->nreq - 1; i >= 0; i--) {
		r = &s->req[i];
		if ((r->idle_at <= 0 || now < r->idle_at) &&
		    (r->hard_at <= 0 || now < r->hard_at))
			continue;
		timeout_reason(s, r, now, &why);
		if (stream_of_call(s, r->id)) {
			/* Its answer is the line cut: no late one will come. */
			call_tell_cancelled(s, r->id, "timed out");
			stream_abort(s, buf_cstr(&why));	/* Fails it. */
			continue;
		}
		call_error(s, r, buf_cstr(&why));
		if (r->sent)	/* Not when it waits for the client's input. */
			call_drop(s, r, "timed out");
		req_remove(s, i);
	}
	buf_free(&why);
}
