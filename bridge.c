/*
 * bridge.c: a server's need for input during a request (sampling,
 * elicitation, roots), bridged across the protocol eras.
 *
 * A 2025 server asks by sending requests of its own while it works on a
 * call, but a 2026-07-28 client can be asked only in the answer to its
 * call (MRTR).  So the call is parked: the client's call is answered
 * with the server's requests as inputRequests and a requestState minted
 * here, while the server goes on waiting.  The retry that bears the
 * state answers the server's requests and takes the call over, and its
 * result, or the next round of questions, answers the retry.
 *
 * A modern server asks with an InputRequiredResult, but a 2025 client
 * can be asked only with requests.  So each input is asked of the client
 * as a request of the workbench's own, and once all are answered the call
 * is retried on the server with them: the client sees one call.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server_int.h"

#define PARKED_MAX	64	/* Calls waiting for a modern client's retry. */
#define ASKED_MAX	16	/* Questions from the server at once, per call. */
#define ROUNDS_MAX	16	/* A modern server's rounds of asking, per call. */
#define STATE_PREFIX	"wb1."
#define STATE_RANDOM	16	/* Bytes of randomness, written in hex. */
#define STATE_LEN	(sizeof(STATE_PREFIX) - 1 + 2 * STATE_RANDOM)

/* A legacy server's request, for a modern client to answer. */
struct asked {
	char		*sid;		/* The server's id, raw. */
	size_t		 sidlen;
	char		*body;		/* {"method":...,"params":...} */
	size_t		 blen;
	int		 key;		/* "in<key>" in inputRequests. */
};

/* A modern client's call on a legacy server, waiting for the retry. */
struct park {
	char		 state[STATE_LEN + 1];	/* Empty once used. */
	long long	 expires;
	struct session	*sess;		/* Whose call it is: whose retry. */
	struct server	*srv;
	long long	 rid;		/* The call's id on the server. */
	const char	*method;
	enum req_kind	 kind;
	struct text	 name;		/* The tool, prompt or URI it is for. */
	struct asked	 asked[ASKED_MAX];
	int		 nasked;
	size_t		 bytes;		/* Of the asked bodies, at most a message. */
	int		 next_key;
	bool		 ended;		/* The call is over: */
	char		*answer;	/* its answer, */
	size_t		 alen;
	char		*failed;	/* or why it failed. */
};

/* A modern server's questions, asked of a 2025 client for one call. */
struct ask {
	char		*state;		/* The server's requestState, raw. */
	size_t		 slen;
	struct buf	 answers;	/* "key":result,... */
	int		 waiting;	/* Questions not answered yet. */
	int		 rounds;
};

static struct park *parks[PARKED_MAX];
static int nparks;
static size_t parked_bytes;		/* Their questions and answers. */
static struct json j;			/* A stored answer, or responses. */

/*
 * Parked calls.
 */
/*
 * What parked calls may hold in all, their servers' questions and answers
 * together: a few large answers, not PARKED_MAX of them.
 */
static size_t
park_room(void)
{
	return 2 * wb.cfg.max_message;
}

/* A state nobody can guess: random bytes, in hex, after our prefix. */
static bool
mint(struct park *p)
{
	unsigned char r[STATE_RANDOM];
	size_t i;

	if (!wb_random(r, sizeof(r)))
		return false;
	memcpy(p->state, STATE_PREFIX, sizeof(STATE_PREFIX) - 1);
	for (i = 0; i < sizeof(r); i++)
		snprintf(p->state + sizeof(STATE_PREFIX) - 1 + 2 * i, 3,
		    "%02x", r[i]);
	p->expires = loop_ms() + wb.cfg.state_ttl_ms;
	return true;
}

static void
asked_remove(struct park *p, int i)
{
	p->bytes -= p->asked[i].blen;
	parked_bytes -= p->asked[i].blen;
	free(p->asked[i].sid);
	free(p->asked[i].body);
	memmove(&p->asked[i], &p->asked[i + 1],
	    (size_t)(p->nasked - i - 1) * sizeof(p->asked[0]));
	p->nasked--;
}

/* The server's questions will not be answered: it is told so. */
static void
asked_refuse_all(struct park *p, const char *why)
{
	while (p->nasked > 0) {
		if (!p->ended)
			relay_refuse(p->srv, p->asked[0].sid,
			    p->asked[0].sidlen, RPC_INTERNAL_ERROR, why);
		asked_remove(p, 0);
	}
}

static void
park_free(struct park *p)
{
	int i;

	for (i = 0; i < nparks && parks[i] != p; i++)
		;
	if (i < nparks)
		parks[i] = parks[--nparks];
	asked_refuse_all(p, "the client did not answer");
	parked_bytes -= p->alen;
	text_free(&p->name);
	free(p->answer);
	free(p->failed);
	free(p);
}

static struct park *
park_new(struct server *s, const struct request *r)
{
	struct park *p;

	if (nparks == PARKED_MAX)
		return NULL;
	p = xcalloc(1, sizeof(*p));
	if (!mint(p)) {
		free(p);
		return NULL;
	}
	p->sess = r->sess;
	p->srv = s;
	p->rid = r->id;
	p->method = r->method;
	p->kind = r->kind;
	text_set(&p->name, text_get(&r->tool), r->tool.len);
	parks[nparks++] = p;
	return p;
}

/* Equal, in a time that does not tell how much of it matched. */
static bool
state_equal(const char *a, const char *b, size_t n)
{
	unsigned char d = 0;
	size_t i;

	for (i = 0; i < n; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return d == 0;
}

/* Does a requestState (raw) look like one the workbench issues? */
static bool
state_ours(const char *raw, size_t len)
{
	return len >= sizeof(STATE_PREFIX) &&
	    memcmp(raw, "\"" STATE_PREFIX, sizeof(STATE_PREFIX)) == 0;
}

/*
 * The park of a requestState (raw, quotes included) that a session was
 * given, or NULL.
 */
static struct park *
park_find(const struct session *se, const char *raw, size_t len)
{
	int i;

	if (len != STATE_LEN + 2)
		return NULL;
	for (i = 0; i < nparks; i++)
		if (parks[i]->state[0] != '\0' && parks[i]->sess == se &&
		    state_equal(parks[i]->state, raw + 1, STATE_LEN))
			return parks[i];
	return NULL;
}

/* The call's answer: its questions, and the state to retry with. */
static void
reply_input_required(struct park *p, const char *id, size_t idlen)
{
	struct buf *b = reply_begin(p->sess, id, idlen);
	int i;

	buf_puts(b, "{\"inputRequests\":{");
	for (i = 0; i < p->nasked; i++) {
		buf_printf(b, "%s\"in%d\":", i > 0 ? "," : "", p->asked[i].key);
		buf_put(b, p->asked[i].body, p->asked[i].blen);
	}
	buf_printf(b, "},\"requestState\":\"%s\"}", p->state);
	reply_era(p->sess, true);
	reply_end_as(p->sess, "input_required");
}

/*
 * Park the call: its answer is the questions, and until the retry it
 * has no client id, no progress and no timers but the state's expiry.
 */
static void
park_call(struct request *r)
{
	call_debug(r->park->srv, r, false, "input required, parked for the "
	    "retry");
	reply_input_required(r->park, text_get(&r->cid), r->cid.len);
	text_free(&r->cid);
	free(r->token);
	r->token = NULL;
	r->idle_at = r->hard_at = 0;
}

/*
 * A call whose first question was refused is not parked: it goes on as
 * it was, its answer the client's.
 */
static void
park_unused(struct request *r)
{
	if (r->park->nasked == 0 && r->cid.len > 0) {
		park_free(r->park);
		r->park = NULL;
	}
}

/*
 * A question of the server's, kept for the client; or why it cannot be,
 * in why.  Its body is kept at its size, which is what parked_bytes
 * counts.
 */
static const char *
park_ask(struct park *p, const struct json *js, int id, int method,
    struct buf *why)
{
	struct asked *a;
	struct buf body = { 0 };
	const char *raw;
	size_t len;
	int params = json_get(js, 0, "params");

	if (p->nasked == ASKED_MAX)
		return "too many requests for input in one call";
	buf_puts(&body, "{\"method\":");
	raw = json_raw(js, method, &len);
	buf_put(&body, raw, len);
	if (json_is(js, params, JSMN_OBJECT)) {
		buf_puts(&body, ",\"params\":");
		raw = json_raw(js, params, &len);
		buf_put(&body, raw, len);
	}
	buf_putc(&body, '}');
	if (p->bytes + body.len > wb.cfg.max_message / 2) {
		buf_free(&body);	/* Its InputRequiredResult must fit. */
		return "its requests for input in one call are too large";
	}
	if (parked_bytes + body.len > park_room()) {
		buf_free(&body);
		buf_printf(why, "mcp-workbench keeps at most %zu bytes for "
		    "calls waiting for the client's input (twice "
		    "maxMessageBytes); try again once they are answered",
		    park_room());
		return buf_cstr(why);
	}
	a = &p->asked[p->nasked++];
	raw = json_raw(js, id, &len);
	a->sid = xstrndup(raw, len);
	a->sidlen = len;
	a->body = xrealloc(body.data, body.len);
	a->blen = body.len;
	p->bytes += body.len;
	parked_bytes += body.len;
	a->key = ++p->next_key;
	return NULL;
}

/*
 * The modern client's call a server's request is part of: the only one
 * in progress on that server.  *n counts them.
 */
static struct request *
asking_call(struct server *s, int *n)
{
	struct request *r = NULL;
	int i;

	*n = 0;
	for (i = 0; i < s->nreq; i++)
		if (req_is_call(&s->req[i]) && s->req[i].modern &&
		    s->req[i].sent) {
			r = &s->req[i];
			(*n)++;
		}
	return r;
}

/*
 * A legacy server asks for input while a modern client's call is in
 * progress on it: the call is parked, or, parked already, the question
 * joins the others.  False when it is no such request.
 */
bool
bridge_server_request(struct server *s, const struct json *js, int id,
    int method)
{
	unsigned need = era_input_cap(js, method);
	struct buf why = { 0 };
	struct request *r;
	const char *raw, *refused;
	size_t len;
	int n;

	if (need == 0 || (r = asking_call(s, &n)) == NULL)
		return false;
	raw = json_raw(js, id, &len);
	if (n > 1)
		relay_refuse(s, raw, len, RPC_INTERNAL_ERROR,
		    "mcp-workbench cannot tell which of the calls in progress "
		    "this request is for");
	else if ((r->can & need) == 0)
		relay_refuse(s, raw, len, RPC_METHOD_NOT_FOUND,
		    "Method not found");
	else if (r->park == NULL && (r->park = park_new(s, r)) == NULL)
		relay_refuse(s, raw, len, RPC_INTERNAL_ERROR,
		    "too many calls are waiting for the client's input");
	else if ((refused = park_ask(r->park, js, id, method, &why)) != NULL) {
		relay_refuse(s, raw, len, RPC_INTERNAL_ERROR, refused);
		park_unused(r);
	} else if (r->cid.len > 0)
		park_call(r);
	buf_free(&why);
	return true;
}

/*
 * The parked call's answer came: the retry will get it, or, when it does
 * not fit beside what other parked calls hold, why it did not.
 */
void
bridge_answered(struct park *p, const char *line, size_t n)
{
	struct buf why = { 0 };

	p->ended = true;
	asked_refuse_all(p, "the call is over");
	if (parked_bytes + n > park_room()) {
		buf_printf(&why, "its answer (%zu bytes) did not fit in the %zu "
		    "bytes mcp-workbench keeps for calls waiting for the "
		    "client's retry (twice maxMessageBytes)", n, park_room());
		p->failed = buf_cstr(&why);
		return;
	}
	p->answer = xstrndup(line, n);
	p->alen = n;
	parked_bytes += n;
}

/* The parked call failed: the retry will be told why. */
void
bridge_failed(struct park *p, const char *reason)
{
	p->ended = true;
	p->failed = xstrdup(reason);
	asked_refuse_all(p, "the call is over");
}

/* An ended call's outcome, for the retry. */
static void
park_deliver(struct park *p, const char *id, size_t idlen)
{
	struct request t = { .kind = p->kind, .method = p->method,
	    .modern = true, .sess = p->sess };

	text_set(&t.cid, id, idlen);
	text_set(&t.tool, text_get(&p->name), p->name.len);
	if (p->failed == NULL && json_parse(&j, p->answer, p->alen) ==
	    JSON_OK)
		call_answered(p->srv, &t, &j, p->answer, p->alen);
	else
		call_error(p->srv, &t, p->failed != NULL ? p->failed :
		    "the call ended without an answer");
	json_release(&j);
	req_free(&t);
}

/* The retry's inputResponses answer the questions they name. */
static void
park_answer(struct park *p, const struct call_in *in)
{
	struct buf *out = &p->srv->proc.io.out;
	const char *raw;
	char key[16];
	size_t len;
	int i, v;

	if (in->responses == NULL ||
	    json_parse(&j, in->responses, in->rlen) != JSON_OK) {
		json_release(&j);
		return;
	}
	for (i = p->nasked - 1; i >= 0; i--) {
		snprintf(key, sizeof(key), "in%d", p->asked[i].key);
		if (!json_is(&j, v = json_get(&j, 0, key), JSMN_OBJECT))
			continue;
		rpc_put_result(out, p->asked[i].sid, p->asked[i].sidlen);
		raw = json_raw(&j, v, &len);
		buf_put(out, raw, len);
		buf_puts(out, "}\n");
		asked_remove(p, i);
	}
	json_release(&j);
}

/* Why a requestState cannot resume this request, or NULL. */
static const char *
park_refused(const struct park *p, const struct server *s,
    const char *method, const char *name, size_t namelen)
{
	if (p->srv != s || strcmp(p->method, method) != 0 ||
	    p->name.len != namelen ||
	    memcmp(text_get(&p->name), name, namelen) != 0)
		return "Invalid params: this requestState was issued for "
		    "another request";
	if (loop_ms() >= p->expires)
		return "Invalid params: this requestState has expired "
		    "(requestStateTtlMs)";
	return NULL;
}

/*
 * A modern client's retry: with a state of ours, its answers go to the
 * server and it takes the call over (or gets its outcome, or the next
 * questions).  False when the state is none of ours and the request
 * goes on to a modern server, whose state it is.
 */
bool
bridge_resume(struct server *s, struct session *se, const char *method,
    const char *name, size_t namelen, const struct call_in *in,
    const char *id, size_t idlen)
{
	struct park *p = park_find(se, in->state, in->slen);
	struct request *r;
	const char *why;
	int i;

	if (p == NULL) {
		if (!state_ours(in->state, in->slen) &&
		    !(srv_serving(s) && !srv_modern(s)))
			return false;
		reply_error(se, id, idlen, RPC_INVALID_PARAMS,
		    "Invalid params: unknown requestState (not issued by "
		    "mcp-workbench, used already, or expired)");
		return true;
	}
	if ((why = park_refused(p, s, method, name, namelen)) != NULL) {
		reply_error(se, id, idlen, RPC_INVALID_PARAMS, why);
		return true;
	}
	p->state[0] = '\0';		/* Used. */
	if (p->ended || (i = req_find(s, p->rid)) < 0) {
		park_deliver(p, id, idlen);
		park_free(p);
		return true;
	}
	park_answer(p, in);
	r = &s->req[i];
	if (p->nasked > 0 && mint(p)) {
		reply_input_required(p, id, idlen);
		return true;
	}
	text_set(&r->cid, id, idlen);
	call_debug(s, r, true, "the retry with its input: the parked call "
	    "goes on");
	if (in->token != NULL && r->ptok != 0) {	/* The server has one. */
		r->token = xstrndup(in->token, in->toklen);
		r->tokenlen = in->toklen;
	}
	r->park = NULL;
	park_free(p);
	call_arm(s, r, loop_ms());
	return true;
}

/* When the next state expires, or 0. */
long long
bridge_deadline(void)
{
	long long t = 0;
	int i;

	for (i = 0; i < nparks; i++)
		t = earliest(t, parks[i]->expires);
	return t;
}

/*
 * States never used expire: a call still parked is cancelled on its
 * server, its questions refused.
 */
void
bridge_check(long long now)
{
	struct park *p;
	int i, k;

	for (i = nparks - 1; i >= 0; i--) {
		if (now < (p = parks[i])->expires)
			continue;
		if (!p->ended && (k = req_find(p->srv, p->rid)) >= 0) {
			asked_refuse_all(p, "the client did not answer in "
			    "time");
			call_tell_cancelled(p->srv, p->rid, "the client did not "
			    "retry in time");
			req_remove(p->srv, k);
		}
		park_free(p);
	}
}

/*
 * A session is gone: its parked calls go (their calls were cancelled at
 * their servers, call_session_gone), their questions refused.
 */
void
bridge_session_gone(const struct session *se)
{
	int i;

	for (i = nparks - 1; i >= 0; i--)
		if (parks[i]->sess == se)
			park_free(parks[i]);
}

/*
 * A modern server's questions for a 2025 client.
 */
void
bridge_ask_free(struct ask *a)
{
	if (a == NULL)
		return;
	free(a->state);
	buf_free(&a->answers);
	free(a);
}

/* Does this answer of a modern server ask a 2025 client's call for input? */
bool
bridge_asks(const struct server *s, const struct request *r,
    const char *line, size_t n)
{
	return srv_modern(s) && !r->modern &&
	    memmem(line, n, "\"input_required\"", 16) != NULL;
}

/* Why the questions cannot be asked of the client, or NULL. */
static const char *
ask_refused(const struct session *se, const struct json *js, int reqs,
    int state, int rounds, struct buf *why)
{
	const char *raw;
	size_t len;
	int i, k, m;

	if ((reqs >= 0 && !json_is(js, reqs, JSMN_OBJECT)) ||
	    (state >= 0 && !json_is(js, state, JSMN_STRING)) ||
	    (reqs < 0 && state < 0))
		return "protocol error: its InputRequiredResult has no "
		    "inputRequests object or requestState string";
	if (rounds >= ROUNDS_MAX) {
		buf_printf(why, "the server asked for input more than %d "
		    "times", ROUNDS_MAX);
		return buf_cstr(why);
	}
	if (reqs >= 0 && js->tok[reqs].size > ASKED_MAX) {
		buf_printf(why, "the server asked for more than %d inputs at "
		    "once", ASKED_MAX);
		return buf_cstr(why);
	}
	for (i = 0, k = reqs + 1; reqs >= 0 && i < js->tok[reqs].size;
	    i++, k = json_next(js, k + 1)) {
		m = json_get(js, k + 1, "method");
		if (!json_is(js, k + 1, JSMN_OBJECT) ||
		    !json_is(js, m, JSMN_STRING))
			return "protocol error: an input request is not "
			    "{\"method\", \"params\"}";
		if (!session_has(se, era_input_cap(js, m))) {
			raw = json_raw(js, m, &len);
			buf_printf(why, "the server asked the client for %.*s, "
			    "which the client did not declare", (int)len, raw);
			return buf_cstr(why);
		}
	}
	return NULL;
}

/* Every question answered: the call goes to the server again. */
static void
ask_retry(struct server *s, struct request *r)
{
	struct buf *b;

	call_debug(s, r, true, "again, with the client's input");
	b = srv_send_head(s, r, r->method);

	json_add_members(b, r->params, r->plen);
	buf_puts(b, "\"inputResponses\":{");
	buf_put(b, r->ask->answers.data, r->ask->answers.len);
	buf_putc(b, '}');
	if (r->ask->state != NULL) {
		buf_puts(b, ",\"requestState\":");
		buf_put(b, r->ask->state, r->ask->slen);
	}
	buf_puts(b, "}}\n");
}

/* The call again, under a new id, to wait for the client's answers. */
static struct request *
ask_again(struct server *s, struct request *old)
{
	struct request *r = req_add(s, old->kind);

	r->method = old->method;
	r->sess = old->sess;
	text_set(&r->cid, text_get(&old->cid), old->cid.len);
	text_set(&r->tool, text_get(&old->tool), old->tool.len);
	r->token = old->token;
	r->tokenlen = old->tokenlen;
	r->ptok = old->ptok;
	r->params = old->params;
	r->plen = old->plen;
	r->ask = old->ask != NULL ? old->ask : xcalloc(1, sizeof(*r->ask));
	old->token = old->params = NULL;
	old->ask = NULL;
	call_arm(s, r, loop_ms());
	return r;
}

/*
 * A modern server answered a 2025 client's call (taken from the table)
 * with an InputRequiredResult: each question is asked of the client.
 */
void
bridge_ask_client(struct server *s, struct request *old,
    const struct json *js, int result)
{
	int reqs = json_get(js, result, "inputRequests"), i, k, n;
	int state = json_get(js, result, "requestState");
	struct buf why = { 0 };
	struct request *r;
	const char *msg, *raw;
	size_t len;

	msg = ask_refused(old->sess, js, reqs, state, old->ask != NULL ?
	    old->ask->rounds : 0, &why);
	if (msg != NULL || old->params == NULL) {
		call_error(s, old, msg != NULL ? msg : "its call was not kept");
		buf_free(&why);
		return;
	}
	r = ask_again(s, old);
	r->ask->rounds++;
	r->ask->answers.len = 0;
	free(r->ask->state);
	r->ask->state = NULL;
	if (state >= 0) {
		raw = json_raw(js, state, &len);
		r->ask->state = xstrndup(raw, len);
		r->ask->slen = len;
	}
	n = reqs >= 0 ? js->tok[reqs].size : 0;
	for (i = 0, k = reqs + 1; i < n; i++, k = json_next(js, k + 1))
		relay_ask(s, r->id, js, k);
	if ((r->ask->waiting = n) == 0)
		ask_retry(s, r);
}

/*
 * The client answered a question (its key, raw): the answers gather
 * until the last; an error fails the call.
 */
void
bridge_client_answer(struct server *s, long long rid, const char *key,
    size_t keylen, const struct json *js)
{
	int i = req_find(s, rid), result = json_get(js, 0, "result");
	struct buf why = { 0 };
	struct request *r;
	const char *raw;
	char *msg;
	size_t len;

	if (i < 0 || (r = &s->req[i])->ask == NULL)
		return;
	if (!json_is(js, result, JSMN_OBJECT)) {
		msg = json_strdup(js, json_path(js, 0, "error.message"));
		buf_printf(&why, "the client did not answer the server's "
		    "request for input: %s", msg != NULL ? msg : "no result");
		call_error(s, r, buf_cstr(&why));
		req_remove(s, i);
		free(msg);
		buf_free(&why);
		return;
	}
	if (r->ask->answers.len > 0)
		buf_putc(&r->ask->answers, ',');
	buf_put(&r->ask->answers, key, keylen);
	buf_putc(&r->ask->answers, ':');
	raw = json_raw(js, result, &len);
	buf_put(&r->ask->answers, raw, len);
	if (--r->ask->waiting == 0)
		ask_retry(s, r);
}
