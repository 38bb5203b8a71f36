/*
 * handshake.c: how a server's process is opened, and the era it is
 * spoken to in: initialize (2025), server/discover (2026-07-28), or, for
 * "protocol": "auto", the probe that finds which (DESIGN.md §5b).  It
 * alone moves a server's enum handshake:
 *
 *	UNKNOWN --started for a modern request--> PROBING
 *	UNKNOWN, LEGACY --started--> the same (initialize sent)
 *	MODERN --started--> DISCOVERING
 *	PROBING, DISCOVERING, MODERN --discover answered--> MODERN
 *	PROBING --an error to discover, as no modern server gives--> PROBED
 *	    (initialize sent)
 *	PROBING --probeTimeoutMs--> SILENT (initialize sent)
 *	SILENT --discover answered--> LATE
 *	SILENT, LATE --initialize answered--> PROBED
 *	UNKNOWN, LEGACY, SILENT, PROBED --initialize refused with
 *	    RPC_UNSUPPORTED_VERSION--> MODERN while a discover is pending,
 *	    else DISCOVERING (discover sent)
 *	LATE --initialize refused--> MODERN
 *	ready, or the process ended: PROBING--> UNKNOWN; SILENT, LATE,
 *	    PROBED--> LEGACY; DISCOVERING--> MODERN
 *
 * "legacy" and "modern" are verdicts the configuration gives; "auto"
 * begins UNKNOWN, and a 2025 client's start leaves it so.  A verdict
 * holds for the server's life; the other states are one process's
 * opening.  An auto server whose process ends while its era is in doubt
 * is taken for a legacy server that exits on a request before initialize
 * (srv_probe_ended).  A server's lists are fetched once its era is
 * settled for the process; only a MODERN one is spoken to with the era's
 * _meta.
 */
#include <stdlib.h>

#include "server_int.h"
#include "mcp.h"

/* Its requests of this kind are given up: their answers will be dropped. */
static void
req_forget(struct server *s, enum req_kind kind)
{
	int i;

	for (i = s->nreq - 1; i >= 0; i--)
		if (s->req[i].kind == kind)
			req_remove(s, i);
}

static bool
req_pending(const struct server *s, enum req_kind kind)
{
	int i;

	for (i = 0; i < s->nreq; i++)
		if (s->req[i].kind == kind)
			return true;
	return false;
}

/* The verdict the configuration gives, if any. */
void
handshake_init(struct server *s)
{
	if (s->cfg->protocol == PROTO_LEGACY)
		s->hs = HS_LEGACY;
	else if (s->cfg->protocol == PROTO_MODERN)
		s->hs = HS_MODERN;
	else
		s->hs = HS_UNKNOWN;
}

/* Does it speak 2026-07-28 (its era settled so)? */
bool
srv_modern(const struct server *s)
{
	return s->hs == HS_MODERN;
}

/*
 * A modern server's request of the workbench's own carries the era's
 * _meta, first, with what the server was told at its start.
 */
void
srv_put_meta(const struct server *s, struct buf *p)
{
	if (srv_modern(s))
		era_put_meta(p, &s->told);
}

static void
send_initialize(struct server *s)
{
	struct buf p = { 0 };

	buf_puts(&p, "{\"protocolVersion\":");
	json_put_cstr(&p, s->protocol);
	buf_puts(&p, ",\"capabilities\":{");
	buf_put(&p, s->told.data, s->told.len);
	catalog_told(s, &s->told);
	buf_printf(&p, "},\"clientInfo\":{\"name\":\"" WB_NAME "\","
	    "\"version\":\"%s\"}}", wb_version);
	srv_send(s, req_add(s, REQ_INIT), MCP_INITIALIZE, p.data, p.len);
	buf_free(&p);
}

/* server/discover carries the era's _meta, whatever the verdict. */
static void
send_discover(struct server *s)
{
	struct buf p = { 0 };

	buf_putc(&p, '{');
	era_put_meta(&p, &s->told);
	catalog_told(s, &s->told);
	buf_putc(&p, '}');
	srv_send(s, req_add(s, REQ_DISCOVER), MCP_SERVER_DISCOVER, p.data,
	    p.len);
	buf_free(&p);
}

/*
 * A process started: its first request.  server/discover for a modern
 * server, and probing an auto one when a modern request starts it;
 * initialize otherwise, which a modern-only server refuses with
 * RPC_UNSUPPORTED_VERSION (on_init_refused), so that a 2025 client's
 * servers see what they always saw.  Auto waits for the probe at most
 * probeTimeoutMs (handshake_check).
 */
void
handshake_open(struct server *s, bool modern)
{
	s->listens = false;
	if (s->hs == HS_MODERN) {
		s->hs = HS_DISCOVERING;
		send_discover(s);
	} else if (s->hs == HS_UNKNOWN && modern) {
		s->hs = HS_PROBING;
		send_discover(s);
		s->probe_at = now_ms() + s->cfg->probe_ms;
	} else
		send_initialize(s);
}

/*
 * Its opening is over: it is ready, or its process ended.  What was in
 * doubt is taken as it stands: a probe unanswered is forgotten, a legacy
 * guess stays, a modern verdict stays.
 */
void
handshake_over(struct server *s)
{
	if (s->hs == HS_PROBING)
		s->hs = HS_UNKNOWN;
	else if (s->hs == HS_SILENT || s->hs == HS_LATE || s->hs == HS_PROBED)
		s->hs = HS_LEGACY;
	else if (s->hs == HS_DISCOVERING)
		s->hs = HS_MODERN;
}

/*
 * Its process ended while it started.  Was its era in doubt: auto probed
 * it, and it has not answered as a modern server?  Then it is taken for a
 * legacy server that exits on a request before initialize (true), and the
 * probe's answer is moot.
 */
bool
handshake_ended(struct server *s)
{
	if (s->cfg->protocol != PROTO_AUTO || (s->hs != HS_PROBING &&
	    s->hs != HS_SILENT && s->hs != HS_LATE && s->hs != HS_PROBED &&
	    s->hs != HS_DISCOVERING))
		return false;
	req_forget(s, REQ_DISCOVER);
	s->hs = HS_LEGACY;
	return true;
}

/* When auto stops waiting for the probe's answer, or 0. */
long long
handshake_deadline(const struct server *s)
{
	return s->hs == HS_PROBING ? s->probe_at : 0;
}

/*
 * No answer to the probe in time: legacy, for its silence, until the
 * answer to the initialize sent now says otherwise.
 */
void
handshake_check(struct server *s, long long now)
{
	if (s->hs != HS_PROBING || now < s->probe_at)
		return;
	wb_log_info("%s: no answer to server/discover in %d ms "
	    "(probeTimeoutMs); sending initialize, whose answer decides the "
	    "era", s->label, s->cfg->probe_ms);
	s->hs = HS_SILENT;
	send_initialize(s);
}

/*
 * What initialize or server/discover says it offers: a capability is an
 * object (a flag within one, true).  Only those are asked for.
 */
static unsigned
declared(const struct json *j, int caps)
{
	static const struct {
		const char	*path;
		enum srv_cap	 cap;
	} offers[] = {
		{ "logging", CAP_LOGGING },
		{ "prompts", CAP_PROMPTS },
		{ "resources", CAP_RESOURCES },
		{ "resources.subscribe", CAP_SUBSCRIBE },
		{ "completions", CAP_COMPLETIONS }
	};
	unsigned c = 0;
	size_t i;
	bool v;
	int t;

	for (i = 0; i < sizeof(offers) / sizeof(offers[0]); i++) {
		t = json_path(j, caps, offers[i].path);
		if (json_is(j, t, JSMN_OBJECT) ||
		    (json_get_bool(j, t, &v) == 0 && v))
			c |= offers[i].cap;
	}
	return c;
}

/* Its tools, and the lists of what else it declared. */
static void
fetch_lists(struct server *s)
{
	int k;

	for (k = 0; k < LIST_KINDS; k++) {
		if (k == LIST_TOOLS || (k == LIST_PROMPTS &&
		    (s->caps & CAP_PROMPTS)) || (k >= LIST_RESOURCES &&
		    (s->caps & CAP_RESOURCES)))
			list_fetch(s, k);
		else
			list_clear(s, k);
	}
}

static void
on_initialize(struct server *s, const struct json *j, int result)
{
	if (!json_is(j, result, JSMN_OBJECT)) {
		srv_fail(s, "protocol error: initialize returned no result "
		    "object");
		return;
	}
	if (s->hs == HS_SILENT || s->hs == HS_LATE) {
		/* Legacy after all: a late server/discover answer is moot. */
		s->hs = HS_PROBED;
		req_forget(s, REQ_DISCOVER);
	}
	s->caps = declared(j, json_get(j, result, "capabilities"));
	srv_remote_ready(s, j, result);
	srv_notify(s, MCP_NOTE_INITIALIZED);
	relay_send_level(s);
	fetch_lists(s);
}

/*
 * A server/discover result.  One that comes after probeTimeoutMs, while
 * the initialize sent then is unanswered, counts: the server's answer to
 * that initialize decides (a modern-only server refuses it; a dual one
 * serves this process in the 2025 era once it accepted it).
 */
static void
on_discover(struct server *s, const struct json *j, int result)
{
	if (!json_is(j, result, JSMN_OBJECT)) {
		srv_fail(s, "protocol error: server/discover returned no "
		    "result object");
		return;
	}
	s->caps = declared(j, json_get(j, result, "capabilities"));
	s->listens = json_path(j, result, "capabilities.tools.listChanged") >=
	    0;
	if (s->hs == HS_SILENT) {
		s->hs = HS_LATE;
		return;
	}
	s->hs = HS_MODERN;
	fetch_lists(s);
}

/*
 * initialize refused: auto's verdict when the refusal is
 * RPC_UNSUPPORTED_VERSION, or any error once the server answered
 * server/discover (a modern-only server).  Its lists are fetched at once
 * when that answer came already, or when it comes.
 */
static bool
on_init_refused(struct server *s, long long code)
{
	if (code != RPC_UNSUPPORTED_VERSION && s->hs != HS_LATE)
		return false;
	if (s->hs == HS_SILENT || s->hs == HS_LATE)
		wb_log_info("%s: refused initialize after its silence on "
		    "server/discover; speaking the 2026-07-28 era to it",
		    s->label);
	if (s->hs == HS_LATE) {
		s->hs = HS_MODERN;
		fetch_lists(s);
	} else if (req_pending(s, REQ_DISCOVER))
		s->hs = HS_MODERN;
	else {
		s->hs = HS_DISCOVERING;
		send_discover(s);
	}
	return true;
}

/*
 * An error that is auto's verdict.  To server/discover, any error but
 * RPC_UNSUPPORTED_VERSION (a modern server without our version, which
 * fails as errors of the modern mode do) means a legacy server, which then
 * gets initialize (sent already, when the error comes after
 * probeTimeoutMs); to initialize, see on_init_refused.
 */
static bool
on_probe_error(struct server *s, enum req_kind kind, const struct json *j,
    int error)
{
	long long code = 0;

	json_get_int(j, json_get(j, error, "code"), &code);
	if (s->cfg->protocol != PROTO_AUTO)
		return false;
	if (kind == REQ_INIT)
		return on_init_refused(s, code);
	if (code == RPC_UNSUPPORTED_VERSION ||
	    (s->hs != HS_PROBING && s->hs != HS_SILENT))
		return false;
	if (s->hs == HS_PROBING) {
		s->hs = HS_PROBED;
		send_initialize(s);
	}
	return true;
}

/* The answer to initialize or server/discover, its tokens in j. */
void
handshake_answer(struct server *s, enum req_kind kind, const struct json *j)
{
	int result = json_get(j, 0, "result"), error = json_get(j, 0, "error");
	struct buf why = { 0 };
	char *msg;

	if (error < 0 && result >= 0) {
		if (kind == REQ_INIT)
			on_initialize(s, j, result);
		else
			on_discover(s, j, result);
		return;
	}
	if (on_probe_error(s, kind, j, error))
		return;
	msg = json_strdup(j, json_get(j, error, "message"));
	buf_printf(&why, "%s failed: %s", kind == REQ_INIT ? MCP_INITIALIZE :
	    MCP_SERVER_DISCOVER, msg != NULL ? msg : "no result");
	srv_fail(s, buf_cstr(&why));
	buf_free(&why);
	free(msg);
}
