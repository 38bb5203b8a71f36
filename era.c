/*
 * era.c: the two protocol eras.  The versions the workbench speaks, the
 * _meta every 2026-07-28 (modern) request carries instead of a session,
 * the client capabilities and log levels both eras share, the _meta the
 * workbench itself puts on modern requests and results, and the _meta a
 * modern request loses on its way to a 2025 server.
 */
#include <stdlib.h>
#include <string.h>

#include "era.h"
#include "jsonrpc.h"
#include "json_out.h"
#include "mcp.h"

/* Newest first: initialize answers an unknown version with the first. */
static const char *const legacy_versions[] = {
	"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", NULL
};

/* The members of a request's _meta that make it a modern one. */
static const char *const envelope[] = { ERA_KEY "protocolVersion",
	ERA_KEY "clientInfo", ERA_KEY "clientCapabilities", ERA_KEY "logLevel",
	NULL };

static const char *const levels[] = { "debug", "info", "notice", "warning",
	"error", "critical", "alert", "emergency", NULL };

bool
era_legacy_supported(const char *v)
{
	int i;

	for (i = 0; legacy_versions[i] != NULL; i++)
		if (strcmp(legacy_versions[i], v) == 0)
			return true;
	return false;
}

/* ["2026-07-28","2025-11-25",...]: what server/discover offers. */
void
era_put_versions(struct buf *b)
{
	int i;

	buf_puts(b, "[\"" WB_PROTOCOL_MODERN "\"");
	for (i = 0; legacy_versions[i] != NULL; i++)
		buf_printf(b, ",\"%s\"", legacy_versions[i]);
	buf_putc(b, ']');
}

/* The rank of a log level (0 is debug), or -1 when it names none. */
int
era_level(const struct json *j, int tok)
{
	int i;

	for (i = 0; levels[i] != NULL; i++)
		if (json_eq(j, tok, levels[i]))
			return i;
	return -1;
}

/* A level's name, by its rank (era_level). */
const char *
era_level_name(int level)
{
	return levels[level];
}

/*
 * The capability a server's request for input needs of the client
 * (sampling, elicitation, roots), or 0 for any other method.
 */
unsigned
era_input_cap(const struct json *j, int method)
{
	if (json_eq(j, method, MCP_SAMPLING_CREATE))
		return CAN_SAMPLE;
	if (json_eq(j, method, MCP_ELICITATION_CREATE))
		return CAN_ELICIT;
	if (json_eq(j, method, MCP_ROOTS_LIST))
		return CAN_ROOTS;
	return 0;
}

/*
 * The capabilities a client declared that the workbench can bridge to
 * its servers (roots, sampling, elicitation): their bits, and the
 * members as declared, for what servers are told.
 */
unsigned
era_caps(const struct json *j, int obj, struct buf *caps)
{
	static const char *const relayed[] = { "roots", "sampling",
	    "elicitation", NULL };
	static const enum client_cap bits[] = { CAN_ROOTS, CAN_SAMPLE,
	    CAN_ELICIT };
	const char *raw;
	unsigned can = 0;
	size_t len;
	int i, v;

	caps->len = 0;
	for (i = 0; relayed[i] != NULL; i++) {
		if (!json_is(j, v = json_get(j, obj, relayed[i]), JSMN_OBJECT))
			continue;
		can |= bits[i];
		if (caps->len > 0)
			buf_putc(caps, ',');
		json_put_key(caps, relayed[i]);
		raw = json_raw(j, v, &len);
		buf_put(caps, raw, len);
	}
	return can;
}

static int
span_cmp(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	int c = memcmp(x->p, y->p, x->n < y->n ? x->n : y->n);

	return c != 0 || x->n == y->n ? c : x->n < y->n ? -1 : 1;
}

/* The names of an object's members, sorted and joined: [a,b]. */
static void
put_member_names(struct buf *out, struct jwalk *w)
{
	struct span *names = NULL, key, v;
	size_t n = 0, i;

	while (json_walk_next(w, &key) > 0 && json_walk_value(w, &v)) {
		names = xrealloc(names, (n + 1) * sizeof(*names));
		names[n++] = key;
	}
	if (n > 1)
		qsort(names, n, sizeof(*names), span_cmp);
	buf_putc(out, '[');
	for (i = 0; i < n; i++) {
		if (i > 0)
			buf_putc(out, ',');
		buf_put(out, names[i].p, names[i].n);
	}
	buf_putc(out, ']');
	free(names);
}

/*
 * What of the capabilities servers are told (caps, from era_caps) can
 * change what a server offers, as one text: which of roots, sampling
 * and elicitation there are, and the sub-capabilities declared in
 * sampling and elicitation (context, tools; form, url), in their names'
 * order.  Roots' members say only whether the client tells of changes.
 * Two clients with the same text are offered the same by any server
 * that follows the specification.
 */
void
era_caps_key(const struct buf *caps, struct buf *out)
{
	struct buf obj = { 0 };
	struct jwalk w, in;
	struct span key, v;

	buf_putc(&obj, '{');
	buf_put(&obj, caps->data, caps->len);
	buf_putc(&obj, '}');
	if (!json_walk(&w, obj.data, obj.len, 0, 1))
		return;
	while (json_walk_next(&w, &key) > 0) {
		buf_put(out, key.p, key.n);
		if (!json_span_is(&key, "roots") &&
		    json_walk(&in, obj.data, obj.len, w.i, 2) && in.object) {
			put_member_names(out, &in);
			w.i = in.i;
		} else if (!json_walk_value(&w, &v))
			break;
		buf_putc(out, ';');
	}
	buf_free(&obj);
}

/* An error of era_check: its code, message, and data (or none). */
static int
era_fail(struct era_error *err, int code, const char *msg)
{
	err->code = code;
	buf_puts(&err->msg, msg);
	return ERA_BAD;
}

/* RPC_UNSUPPORTED_VERSION, saying what is supported and what was asked for. */
static int
era_unsupported(const struct json *j, int v, struct era_error *err)
{
	const char *raw;
	size_t len;

	buf_puts(&err->data, "{\"supported\":[\"" WB_PROTOCOL_MODERN "\"],"
	    "\"requested\":");
	raw = json_raw(j, v, &len);
	buf_put(&err->data, raw, len);
	buf_putc(&err->data, '}');
	return era_fail(err, RPC_UNSUPPORTED_VERSION,
	    "Unsupported protocol version");
}

/*
 * Which era a request is of, from its params._meta: legacy without
 * io.modelcontextprotocol/protocolVersion; modern with it, when it is
 * the supported version and the required fields are there and well
 * typed (e then holds them); ERA_BAD with the error to answer.
 */
int
era_check(const struct json *j, int params, struct era *e,
    struct era_error *err)
{
	int meta = json_get(j, params, "_meta"), v, caps, info, level;

	e->modern = false;
	e->can = 0;
	e->level = -1;
	e->caps.len = 0;
	if ((v = json_get(j, meta, ERA_KEY "protocolVersion")) < 0)
		return ERA_LEGACY;
	caps = json_get(j, meta, ERA_KEY "clientCapabilities");
	info = json_get(j, meta, ERA_KEY "clientInfo");
	level = json_get(j, meta, ERA_KEY "logLevel");
	if (!json_is(j, v, JSMN_STRING))
		return era_fail(err, RPC_INVALID_PARAMS,
		    "Invalid params: _meta "
		    ERA_KEY "protocolVersion must be a string");
	if (!json_eq(j, v, WB_PROTOCOL_MODERN))
		return era_unsupported(j, v, err);
	if (!json_is(j, caps, JSMN_OBJECT))
		return era_fail(err, RPC_INVALID_PARAMS,
		    "Invalid params: _meta "
		    ERA_KEY "clientCapabilities is required and must be an "
		    "object");
	if (info >= 0 && !json_is(j, info, JSMN_OBJECT))
		return era_fail(err, RPC_INVALID_PARAMS,
		    "Invalid params: _meta "
		    ERA_KEY "clientInfo must be an object");
	if (level >= 0 && era_level(j, level) < 0)
		return era_fail(err, RPC_INVALID_PARAMS,
		    "Invalid params: _meta "
		    ERA_KEY "logLevel must be one of debug, info, notice, "
		    "warning, error, critical, alert, emergency");
	e->modern = true;
	e->can = era_caps(j, caps, &e->caps);
	e->level = level >= 0 ? era_level(j, level) : -1;
	return ERA_MODERN;
}

/* "io.modelcontextprotocol/serverInfo":{...}, a member of a _meta. */
void
era_put_server_info_member(struct buf *b)
{
	buf_printf(b, "\"" ERA_KEY "serverInfo\":{\"name\":\"" WB_NAME "\","
	    "\"title\":\"MCP Workbench\",\"version\":\"%s\"}", wb_version);
}

/* "_meta":{"io.modelcontextprotocol/serverInfo":{...}}, for a result. */
void
era_put_server_info(struct buf *b)
{
	buf_puts(b, "\"_meta\":{");
	era_put_server_info_member(b);
	buf_putc(b, '}');
}

/*
 * The members a modern request's _meta must carry: the version, the
 * workbench as the client, and the client capabilities it can bridge
 * (caps: members without braces).
 */
void
era_put_request_meta(struct buf *b, const struct buf *caps)
{
	buf_printf(b, "\"" ERA_KEY "protocolVersion\":\"" WB_PROTOCOL_MODERN
	    "\",\"" ERA_KEY "clientInfo\":{\"name\":\"" WB_NAME "\","
	    "\"version\":\"%s\"},\"" ERA_KEY "clientCapabilities\":{",
	    wb_version);
	buf_put(b, caps->data, caps->len);
	buf_putc(b, '}');
}

/* "_meta":{...}: a modern request's _meta holding only those members. */
void
era_put_meta(struct buf *b, const struct buf *caps)
{
	buf_puts(b, "\"_meta\":{");
	era_put_request_meta(b, caps);
	buf_putc(b, '}');
}

static bool
envelope_key(const struct span *key)
{
	int i;

	for (i = 0; envelope[i] != NULL; i++)
		if (json_span_is(key, envelope[i]))
			return true;
	return false;
}

/*
 * A modern request's _meta (an object as written, checked already: its
 * values are skipped, not checked again) for a 2025 server, written to
 * out without the members that make a request modern: with them a
 * dual-era server serves the request in the 2026-07-28 era, whatever it
 * was told at initialize.  Other members (progressToken and the like)
 * stay as written, without the space between them.  False, with nothing
 * written, when it has none of them.
 */
bool
era_strip_meta(struct buf *out, const char *meta, size_t mlen)
{
	struct span key, v;
	struct jwalk w;
	size_t start = out->len;
	bool cut = false;
	int r;

	if (!json_walk(&w, meta, mlen, 0, 2) || !w.object)
		return false;
	w.checked = true;
	buf_putc(out, '{');
	while ((r = json_walk_next(&w, &key)) == 1) {
		if (!json_walk_value(&w, &v)) {
			r = -1;
			break;
		}
		if (envelope_key(&key)) {
			cut = true;
			continue;
		}
		if (out->data[out->len - 1] != '{')
			buf_putc(out, ',');
		buf_put(out, key.p, key.n);
		buf_putc(out, ':');
		buf_put(out, v.p, v.n);
	}
	if (r != 0 || !cut) {
		out->len = start;
		return false;
	}
	buf_putc(out, '}');
	return true;
}
