/*
 * server_remote.c: a server reached over HTTP (remote.h) instead of
 * pipes.  The rest of the layer does not tell the two apart: what is
 * written to a server goes to its queue (proc.io.out) as for a process,
 * and srv_write_in hands each whole line of it to remote_send; what the
 * server says comes to srv_line as a process's lines do.  A remote has
 * no process: its pid stays 0 and it has no descriptors of the
 * server's (remote.c registers its sockets with the loop itself), so
 * reaping, signals and the guardian never meet it.
 *
 * What HTTP adds: a line the server refused (an HTTP error) is answered
 * here as the server would have answered it, with an error saying why
 * (server/discover refused by a 2025 server that wants initialize first
 * is then the "other error" that means legacy, §5b); a session the
 * server forgot (404) fails what was in flight and begins again with
 * initialize on the same remote; a remote that failed fails the server
 * (srv_fail: backoff, then a new remote).
 */
#include <stdlib.h>
#include <string.h>

#include "server_int.h"
#include "remote.h"
#include "mcp.h"

/* The remote's configuration from the server's (headers borrowed). */
static void
remote_config_of(const struct cfg_server *c, struct remote_config *rc,
    struct remote_header **hs)
{
	size_t i, n = 0;

	while (c->headers != NULL && c->headers[n] != NULL)
		n++;
	*hs = xcalloc(n / 2 + 1, sizeof(**hs));
	for (i = 0; i + 1 < n; i += 2) {
		(*hs)[i / 2].name = c->headers[i];
		(*hs)[i / 2].value = c->headers[i + 1];
	}
	memset(rc, 0, sizeof(*rc));
	rc->url = c->url;
	rc->type = c->type == TYPE_SSE ? REMOTE_SSE : REMOTE_HTTP;
	rc->headers = *hs;
	rc->nheaders = (int)(n / 2);
}

/*
 * Can a remote server's configuration be opened (--check: the URL, the
 * headers, and for https the TLS library)?  0, or -1 with why in err.
 */
int
srv_remote_check(const struct cfg_server *c, struct buf *err)
{
	struct remote_config rc;
	struct remote_header *hs;
	int r;

	remote_config_of(c, &rc, &hs);
	r = remote_check(&rc, err);
	free(hs);
	return r;
}

/*
 * A message longer than maxMessageBytes is dropped as a process's line
 * would be: the call it answers (its id at the start or the end) fails.
 */
static void
on_message(void *arg, char *line, size_t n)
{
	struct server *s = arg;
	const char *id;
	size_t idlen, tail = n < 64 ? n : 64;
	char *copy = NULL;

	srv_about(s);
	if (n <= wb.cfg.max_message) {
		srv_ops.line(s, line, n);
	} else {
		if (rpc_scan_id(line, n, &id, &idlen) == 0 ||
		    rpc_scan_id_tail(line + n - tail, tail, &id, &idlen) == 0)
			copy = xstrndup(id, idlen);
		srv_ops.oversize(s, n, copy);
		free(copy);
	}
	srv_about(NULL);
}

/*
 * A line the server did not take.  A request of ours is answered as if
 * the server had refused it, so that whoever waits for it (a call, the
 * handshake, a list) hears why in the usual way; anything else is lost.
 */
static void
on_refused(void *arg, const char *line, size_t n, int code,
    const char *why)
{
	struct server *s = arg;
	struct rpc_top top;
	struct buf b = { 0 };

	srv_about(s);
	if (rpc_scan(line, n, &top) == 0 && top.id != NULL &&
	    top.method != NULL) {
		rpc_put_error(&b, top.id, top.idlen, code != 0 ? code :
		    RPC_INTERNAL_ERROR, why);
		buf_puts(&b, "}}");
		srv_ops.line(s, b.data, b.len);
		buf_free(&b);
	} else
		wb_log_debug("%s: a message the server refused: %s", s->label,
		    why);
	srv_about(NULL);
}

/*
 * Its session begins again on the same remote: its lists are fetched
 * again once initialize is answered; calls wait for them meanwhile.
 */
static void
reopen(struct server *s)
{
	list_stop(s);
	relay_forget(s, 0);	/* Its requests of the old session. */
	ghosts_clear(s);
	handshake_over(s);
	s->state = SRV_STARTING;
	s->caps = 0;
	s->deadline = now_ms() + s->cfg->init_timeout_ms;
	handshake_open(s, false);
}

/*
 * The server forgot our session (404): what was sent is lost; the rest
 * waits while initialize opens a new session on the same remote.
 */
static void
on_session_lost(void *arg)
{
	struct server *s = arg;
	int i;

	srv_about(s);
	for (i = s->nreq - 1; i >= 0; i--) {
		if (!s->req[i].sent)
			continue;
		if (req_is_call(&s->req[i]))
			call_error(s, &s->req[i], "the remote server ended its "
			    "session (HTTP 404); a new one is being opened");
		req_remove(s, i);
	}
	reopen(s);
	srv_about(NULL);
}

static void
on_failed(void *arg, const char *why)
{
	struct server *s = arg;

	srv_about(s);
	srv_fail(s, why);
	srv_about(NULL);
}

static const struct remote_ops remote_ops = {
	on_message, on_refused, on_session_lost, on_failed
};

/* Reach a remote server where a process would be spawned: 0, or -1. */
int
srv_remote_open(struct server *s, struct buf *why)
{
	struct remote_config rc;
	struct remote_header *hs;

	remote_config_of(s->cfg, &rc, &hs);
	s->remote = remote_open(&rc, &remote_ops, s, why);
	free(hs);
	if (s->remote == NULL)
		return -1;
	wb_log_debug("%s: connecting to %s (%s)", s->label, s->cfg->command,
	    s->cfg->type == TYPE_SSE ? "HTTP+SSE" : "Streamable HTTP");
	return 0;
}

/* initialize answered: the session's version goes with each request. */
void
srv_remote_ready(struct server *s, const struct json *j, int result)
{
	char *v;

	if (s->remote == NULL)
		return;
	v = json_strdup(j, json_get(j, result, "protocolVersion"));
	remote_ready(s->remote, v != NULL ? v : "");
	free(v);
}

/* Stopped or failed: its session ends (a DELETE, waited for at exit). */
void
srv_remote_close(struct server *s)
{
	if (s->remote != NULL)
		remote_close(s->remote);
	s->remote = NULL;
}

/*
 * Its queue's whole lines to the remote; what it refuses (it failed, or
 * holds REMOTE_QUEUE_MAX) is dropped, as a broken pipe drops a queue.
 */
void
srv_remote_send(struct server *s)
{
	struct peer *p = &s->proc.io;
	char *at = p->out.data + p->outoff, *end = p->out.data + p->out.len;
	char *nl;

	while (at < end && (nl = memchr(at, '\n', (size_t)(end - at))) !=
	    NULL) {
		if (remote_send(s->remote, at, (size_t)(nl - at)) < 0) {
			wb_log_debug("%s: the remote takes no more now",
			    s->label);
			break;
		}
		at = nl + 1;
	}
	peer_drop_output(p);
}
