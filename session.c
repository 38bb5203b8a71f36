/*
 * session.c: the client's session: its output queue and the replies
 * written into it, and what initialize or a modern request's _meta set
 * up (protocol, capabilities, the era of the request being handled).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "session.h"

static struct peer client = { .rfd = -1, .wfd = -1 };
static bool initialized;
static char *protocol;
static struct buf caps;			/* What servers are told we have. */
static unsigned can;			/* enum client_cap */
static struct era era;			/* The modern request being handled. */
static bool modern_reply;		/* The next reply answers a modern one. */

/* The queue itself, for the message that owns it meanwhile (pace.c). */
struct buf *
client_queue(void)
{
	return &client.out;
}

/*
 * Where a message for the client goes: its queue, or while a long message
 * owns that, the held queue behind it.
 */
struct buf *
client_out(void)
{
	struct buf *held = pace_held();

	return held != NULL ? held : &client.out;
}

/* A line from a server that goes to the client as it is. */
void
client_send_line(const char *line, size_t n)
{
	buf_put(client_out(), line, n);
	buf_putc(client_out(), '\n');
}

struct buf *
reply_begin(const char *id, size_t idlen)
{
	struct buf *b = client_out();

	rpc_put_result(b, id, idlen);
	return b;
}

/*
 * Which era the next reply answers, when it is not the request being
 * handled: a reply made later, to a request kept (a call, a waiter).
 */
void
reply_era(bool modern)
{
	modern_reply = modern;
}

/* The era of a reply made later (a paced one): it is taken now. */
bool
reply_take_era(void)
{
	bool modern = modern_reply;

	modern_reply = era.modern;
	return modern;
}

/*
 * The end of a result.  A modern one gets its resultType (type) and
 * serverInfo last, inside the result object just written.
 */
void
reply_end_as(const char *type)
{
	struct buf *b = client_out();

	if (modern_reply) {
		/* Its start may be out already (a paced reply): not empty. */
		b->len--;
		if (b->len == 0 || b->data[b->len - 1] != '{')
			buf_putc(b, ',');
		buf_printf(b, "\"resultType\":\"%s\",", type);
		era_put_server_info(b);
		buf_putc(b, '}');
	}
	modern_reply = era.modern;
	buf_puts(b, "}\n");
}

void
reply_end(void)
{
	reply_end_as("complete");
}

/*
 * A modern list result says how long it may be kept, for this client
 * alone (the instructions name its toolboxes).
 */
void
reply_cache_hints(struct buf *b, int ttl_ms)
{
	if (era.modern)
		buf_printf(b, ",\"ttlMs\":%d,\"cacheScope\":\"private\"",
		    ttl_ms);
}

void
reply_raw(const char *id, size_t idlen, const char *result)
{
	buf_puts(reply_begin(id, idlen), result);
	reply_end();
}

/* An error; data, when not NULL, is a JSON value as written. */
void
reply_error_data(const char *id, size_t idlen, int code, const char *msg,
    const char *data, size_t dlen)
{
	struct buf *b = client_out();

	rpc_put_error(b, id, idlen, code, msg);
	if (data != NULL) {
		buf_puts(b, ",\"data\":");
		buf_put(b, data, dlen);
	}
	buf_puts(b, "}}\n");
	modern_reply = era.modern;
}

void
reply_error(const char *id, size_t idlen, int code, const char *msg)
{
	reply_error_data(id, idlen, code, msg, NULL, 0);
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
 * A tool result whose JSON object is given as text and as itself, made
 * as the client reads it: the object is written twice, by put, a piece
 * at a time (see struct pieces).
 */
enum structured_phase { S_HEAD, S_TEXT, S_OBJECT };

struct structured {
	char			*cid;		/* The client's id, raw. */
	size_t			 cidlen;
	bool			 modern;	/* The era of the request. */
	struct pieces		 obj;
	size_t			 at;		/* The next piece's place. */
	enum structured_phase	 phase;
	struct buf		 raw;		/* A piece, before escaping. */
};

static bool
structured_step(void *ctx)
{
	struct structured *r = ctx;
	struct buf *out = client_out();
	bool more;

	switch (r->phase) {
	case S_HEAD:
		buf_puts(reply_begin(r->cid, r->cidlen),
		    "{\"content\":[{\"type\":\"text\",\"text\":\"");
		r->phase = S_TEXT;
		return true;
	case S_TEXT:
		more = r->obj.put(&r->raw, r->obj.arg, &r->at);
		json_put_chars(out, r->raw.data, r->raw.len);
		r->raw.len = 0;
		if (!more) {
			buf_puts(out, "\"}],\"structuredContent\":");
			r->phase = S_OBJECT;
			r->at = 0;
		}
		return true;
	case S_OBJECT:
		if (r->obj.put(out, r->obj.arg, &r->at))
			return true;
		buf_putc(out, '}');
		reply_era(r->modern);
		reply_end();
		return false;
	}
	return false;
}

static void
structured_release(void *ctx)
{
	struct structured *r = ctx;

	if (r->obj.release != NULL)
		r->obj.release(r->obj.arg);
	free(r->cid);
	buf_free(&r->raw);
	free(r);
}

void
reply_structured_by(const char *id, size_t idlen, const struct pieces *obj)
{
	struct structured *r = xcalloc(1, sizeof(*r));

	r->cid = id != NULL ? xstrndup(id, idlen) : NULL;
	r->cidlen = idlen;
	r->modern = reply_take_era();
	r->obj = *obj;
	pace_reply(structured_step, structured_release, r);
}

/* An object made already, in one piece (a copy is written). */
static bool
put_whole(struct buf *out, const void *arg, size_t *at)
{
	const struct buf *b = arg;

	buf_put(out, b->data, b->len);
	(void)at;
	return false;
}

static void
free_whole(void *arg)
{
	buf_free(arg);
	free(arg);
}

void
reply_structured(const char *id, size_t idlen, const struct buf *obj)
{
	struct buf *copy = xcalloc(1, sizeof(*copy));
	struct pieces p = { put_whole, free_whole, copy };

	buf_put(copy, obj->data, obj->len);
	reply_structured_by(id, idlen, &p);
}

/*
 * The session.
 */
/* Has a 2025 session been set up with initialize? */
bool
client_session(void)
{
	return initialized;
}

const char *
client_protocol(void)
{
	return protocol != NULL ? protocol : WB_PROTOCOL_LATEST;
}

/*
 * What the client can answer, as servers are told it: while a modern
 * request is handled, what that request declared; otherwise what
 * initialize declared.  A server keeps what it was told at its start
 * (srv_start_for_client), whatever is handled when it is sent later.
 */
const struct buf *
client_caps(void)
{
	return era.modern ? &era.caps : &caps;
}

/*
 * --probe has no client: its servers are told the capabilities members
 * (as era_caps makes them), so that they list what they offer a client
 * that has them.  No one is there to answer: can stays empty, and their
 * requests for them are refused.
 */
void
client_assume(const struct buf *members)
{
	caps.len = 0;
	buf_put(&caps, members->data, members->len);
}

/* What the 2025 session declared, whatever request is being handled. */
const struct buf *
client_session_caps(void)
{
	return &caps;
}

bool
client_has(enum client_cap c)
{
	return ((era.modern ? era.can : can) & c) != 0;
}

/* The modern request being handled, or NULL (a 2025 one, or none). */
const struct era *
client_era(void)
{
	return era.modern ? &era : NULL;
}

/*
 * What dispatch.c sets as it handles a request.
 */
/* Where era_check writes what a modern request's _meta says. */
struct era *
client_era_slot(void)
{
	return &era;
}

/* The request being handled is modern: so are its replies. */
void
client_modern_begin(void)
{
	modern_reply = true;
}

/* The request is handled: what comes next is of the session's era. */
void
client_request_end(void)
{
	era.modern = modern_reply = false;
}

/*
 * initialize: the version asked for (or the latest, when it is not one
 * we speak) and the capabilities of j's token caps.
 */
void
client_initialize(const char *version, const struct json *j, int caps_tok)
{
	protocol = xstrdup(era_legacy_supported(version) ? version :
	    WB_PROTOCOL_LATEST);
	can = era_caps(j, caps_tok, &caps);
	initialized = true;
}

/* The client's two descriptors. */
void
client_open(int rfd, int wfd)
{
	client.rfd = rfd;
	client.wfd = wfd;
}

struct peer *
client_peer(void)
{
	return &client;
}

/* Is the client so far behind that what it asks for next must wait? */
bool
client_full(void)
{
	return peer_queued(&client) > HIGH_WATER || pace_holds_much();
}

/*
 * Between lines (peer_ops.pump): the client's queue is written once it
 * holds PUMP_BYTES; errors are left to the loop (workbench.c).
 */
void
client_pump(void)
{
	if (peer_queued(&client) >= PUMP_BYTES)
		(void)peer_flush(&client);
}
