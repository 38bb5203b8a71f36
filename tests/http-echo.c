/*
 * http-echo: the HTTP layer (http.c) behind a small loop, for the
 * end-to-end tests (tests/e2e/http.test.mjs) and the round-trip figure
 * (bench/http-rtt.c).  Not MCP: just enough of it for the SDKs' Streamable
 * HTTP transports to talk to it.
 *
 *	http-echo [--listen HOST:PORT] [--token T] [--origin O]...
 *	    [--max-body N] [--max-conns N] [--request-ms N] [--idle-ms N]
 *	    [--send-ms N] [--linger-ms N] [--out-limit N]
 *	http-echo --stdio
 *
 * Prints "listening on PORT" once it listens.  Each POSTed JSON-RPC
 * request is answered as JSON: initialize with a session (Mcp-Session-Id)
 * and the version asked for, ping with {}, any other method with
 * {"method": M, "echo": PARAMS}; "echo/sse" is answered as a stream, a log
 * notification before the answer; "push" sends its params as a log
 * notification on the session's GET stream; "flood" {count, size} queues
 * that many events of that size on it, to a client that may not read
 * them.  Notifications and responses get 202.  GET opens the session's
 * stream, DELETE ends the session; an unknown session is a 404.
 * --stdio answers the same way one line at a time on stdin and stdout.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../util.h"
#include "../json.h"
#include "../json_out.h"
#include "../jsonrpc.h"
#include "../peer.h"
#include "../proc.h"
#include "../config.h"
#include "../era.h"
#include "../store.h"
#include "../terms.h"
#include "../http.h"

#define SESSIONS	256

struct session {
	char		 id[33];
	struct http_conn *get;		/* Its GET stream, or NULL. */
};

static struct session sessions[SESSIONS];
static int nsessions;
static struct json js;

static struct session *
session_find(const struct http_str *id)
{
	int i;

	if (id->p == NULL)
		return NULL;
	for (i = 0; i < nsessions; i++)
		if (strlen(sessions[i].id) == id->n &&
		    memcmp(sessions[i].id, id->p, id->n) == 0)
			return &sessions[i];
	return NULL;
}

static struct session *
session_new(void)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char r[16];
	struct session *s;
	int i;

	if (nsessions == SESSIONS || !wb_random(r, sizeof(r)))
		return NULL;
	s = &sessions[nsessions++];
	for (i = 0; i < 16; i++) {
		s->id[2 * i] = hex[r[i] >> 4];
		s->id[2 * i + 1] = hex[r[i] & 15];
	}
	s->id[32] = '\0';
	s->get = NULL;
	return s;
}

static void
session_end(struct session *s)
{
	if (s->get != NULL)
		http_stream_end(s->get);
	*s = sessions[--nsessions];
}

/* A member's raw text, or def. */
static const char *
raw(const char *key, const char *def, size_t *n)
{
	int i = json_get(&js, 0, key);
	const char *p;

	if (i < 0 || (p = json_raw(&js, i, n)) == NULL) {
		*n = strlen(def);
		return def;
	}
	return p;
}

static void
put_raw(struct buf *b, const char *key, const char *def)
{
	size_t n;
	const char *p = raw(key, def, &n);
	size_t at = b->len, i;

	buf_put(b, p, n);
	/* One line: a pretty-printed body's breaks are only white space. */
	for (i = at; i < b->len; i++)
		if (b->data[i] == '\n' || b->data[i] == '\r')
			b->data[i] = ' ';
}

/* The answer to the request in js, without its end of line. */
static void
answer(struct buf *b, const char *method)
{
	int params = json_get(&js, 0, "params"), v;

	buf_puts(b, "{\"jsonrpc\":\"2.0\",\"id\":");
	put_raw(b, "id", "null");
	buf_puts(b, ",\"result\":");
	if (strcmp(method, "initialize") == 0) {
		buf_puts(b, "{\"protocolVersion\":");
		if (params >= 0 && (v = json_get(&js, params,
		    "protocolVersion")) >= 0 && json_is(&js, v, JSMN_STRING)) {
			size_t n;
			const char *p = json_raw(&js, v, &n);

			buf_put(b, p, n);
		} else
			buf_puts(b, "\"2025-11-25\"");
		buf_puts(b, ",\"capabilities\":{\"logging\":{}},"
		    "\"serverInfo\":{\"name\":\"http-echo\",\"version\":\"1\"}}");
	} else if (strcmp(method, "ping") == 0)
		buf_puts(b, "{}");
	else {
		buf_puts(b, "{\"method\":");
		json_put_cstr(b, method);
		buf_puts(b, ",\"echo\":");
		put_raw(b, "params", "null");
		buf_puts(b, "}");
	}
	buf_puts(b, "}");
}

static int
log_event(struct http_conn *c, const char *data, size_t n)
{
	struct buf b = { 0 };
	int r;

	buf_puts(&b, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\","
	    "\"params\":{\"level\":\"info\",\"data\":");
	buf_put(&b, data, n);
	buf_puts(&b, "}}");
	r = http_stream_event(c, NULL, b.data, b.len);
	buf_free(&b);
	return r;
}

/* "flood": count events of size bytes on the GET stream. */
static void
flood(struct session *s, struct buf *b)
{
	long long count = 0, size = 0;
	int params = json_get(&js, 0, "params"), i, sent = 0;
	struct buf data = { 0 };

	if (params >= 0) {
		json_get_int(&js, json_get(&js, params, "count"), &count);
		json_get_int(&js, json_get(&js, params, "size"), &size);
	}
	buf_putc(&data, '"');
	for (i = 0; i < size && i < 1024 * 1024; i++)
		buf_putc(&data, 'x');
	buf_putc(&data, '"');
	for (i = 0; i < count && s != NULL && s->get != NULL; i++) {
		if (log_event(s->get, data.data, data.len) < 0) {
			s->get = NULL;	/* Closed past its limit. */
			break;
		}
		sent++;
	}
	buf_printf(b, "{\"jsonrpc\":\"2.0\",\"id\":");
	put_raw(b, "id", "null");
	buf_printf(b, ",\"result\":{\"queued\":%d,\"full\":%s,\"gone\":%s}}",
	    sent, s != NULL && s->get != NULL && http_full(s->get) ? "true" :
	    "false", s == NULL || s->get == NULL ? "true" : "false");
	buf_free(&data);
}

static void
on_post(struct http_conn *c, const struct http_request *r)
{
	struct session *s = session_find(&r->h[HTTP_H_SESSION]);
	struct buf b = { 0 }, m = { 0 };
	const char *method = NULL;
	int i;

	if (json_parse(&js, r->body, r->bodylen) != JSON_OK) {
		http_respond_error(c, 400, RPC_PARSE_ERROR, "Parse error");
		return;
	}
	if ((i = json_get(&js, 0, "method")) >= 0)
		method = json_str(&js, i, &m);
	if (r->h[HTTP_H_SESSION].p != NULL && s == NULL) {
		http_respond_error(c, 404, RPC_SESSION_NOT_FOUND,
		    "Session not found");
	} else if (method == NULL || json_get(&js, 0, "id") < 0) {
		http_respond(c, 202, NULL, NULL, 0);
	} else if (strcmp(method, "initialize") == 0) {
		if ((s = session_new()) == NULL) {
			http_respond_error(c, 503, RPC_SERVER_ERROR,
			    "Too many sessions");
		} else {
			http_add_header(c, "Mcp-Session-Id", s->id);
			answer(&b, method);
			http_respond(c, 200, "application/json", b.data, b.len);
		}
	} else if (strcmp(method, "echo/sse") == 0 &&
	    http_accepts(r, "text/event-stream")) {
		http_stream_begin(c);
		log_event(c, "\"before the answer\"", 19);
		answer(&b, method);
		http_stream_event(c, NULL, b.data, b.len);
		http_stream_end(c);
	} else if (strcmp(method, "push") == 0) {
		bool sent = false;

		if (s != NULL && s->get != NULL) {
			size_t n;
			const char *p = raw("params", "null", &n);

			sent = log_event(s->get, p, n) == 0;
			if (!sent)
				s->get = NULL;
		}
		answer(&b, method);
		b.len -= 2;	/* Into the result: */
		buf_printf(&b, ",\"delivered\":%s}}", sent ? "true" : "false");
		http_respond(c, 200, "application/json", b.data, b.len);
	} else if (strcmp(method, "flood") == 0) {
		flood(s, &b);
		http_respond(c, 200, "application/json", b.data, b.len);
	} else {
		answer(&b, method);
		http_respond(c, 200, "application/json", b.data, b.len);
	}
	buf_free(&b);
	buf_free(&m);
}

static void
on_request(void *ctx, struct http_conn *c, const struct http_request *r)
{
	struct session *s = session_find(&r->h[HTTP_H_SESSION]);

	(void)ctx;
	if (r->method == HTTP_POST) {
		on_post(c, r);
	} else if (r->h[HTTP_H_SESSION].p == NULL) {
		http_respond_error(c, 400, RPC_SERVER_ERROR, "Bad Request: "
		    "Mcp-Session-Id required");
	} else if (s == NULL) {
		http_respond_error(c, 404, RPC_SESSION_NOT_FOUND,
		    "Session not found");
	} else if (r->method == HTTP_DELETE) {
		session_end(s);
		http_respond(c, 200, NULL, NULL, 0);
	} else if (s->get != NULL) {
		http_respond_error(c, 409, RPC_SERVER_ERROR,
		    "Conflict: one GET stream a session");
	} else if (http_stream_begin(c) == 0) {
		s->get = c;
		http_stream_comment(c, "stream open");
	}
}

static void
on_closed(void *ctx, const struct http_conn *c)
{
	int i;

	(void)ctx;
	for (i = 0; i < nsessions; i++)
		if (sessions[i].get == c)
			sessions[i].get = NULL;
}

static const struct http_ops ops = { on_request, on_closed, NULL };

/* The loop, as workbench.c's will hold it. */
static struct pollfd pfd[1024];
static void *tags[1024];
static int npfd;

static void
watch(void *arg, int fd, short events, void *tag)
{
	(void)arg;
	if (npfd == 1024)
		return;
	pfd[npfd].fd = fd;
	pfd[npfd].events = events;
	pfd[npfd].revents = 0;
	tags[npfd++] = tag;
}

static void
serve(struct http_server *s)
{
	long long deadline, now;
	int i, timeout;

	for (;;) {
		http_prepare(s);
		http_flush(s);
		npfd = 0;
		http_watch(s, watch, NULL);
		now = now_ms();
		deadline = http_deadline(s);
		timeout = deadline < 0 ? -1 : deadline <= now ? 0 :
		    (int)(deadline - now);
		if (poll(pfd, (nfds_t)npfd, timeout) < 0 && errno != EINTR)
			break;
		loop_tick();
		for (i = 0; i < npfd; i++)
			if (pfd[i].revents != 0)
				http_event(s, tags[i], pfd[i].fd,
				    pfd[i].revents);
		http_timeouts(s, loop_ms());
		wb_log_flush();
	}
}

/* The same answers on stdin and stdout, one line each. */
static int
stdio_echo(void)
{
	struct buf b = { 0 }, m = { 0 };
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int i;

	while ((n = getline(&line, &cap, stdin)) > 0) {
		b.len = 0;
		if (json_parse(&js, line, (size_t)n) != JSON_OK ||
		    (i = json_get(&js, 0, "method")) < 0)
			continue;
		answer(&b, json_str(&js, i, &m));
		buf_putc(&b, '\n');
		fwrite(b.data, 1, b.len, stdout);
		fflush(stdout);
	}
	free(line);
	buf_free(&b);
	buf_free(&m);
	return 0;
}

static long
num(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*s == '\0' || *end != '\0' || v < 0) {
		fprintf(stderr, "http-echo: not a number: %s\n", s);
		exit(2);
	}
	return v;
}

int
main(int argc, char *argv[])
{
	static const char *origins[16];
	struct http_config cfg = { 0 };
	struct http_addr addr;
	struct http_server *s;
	struct buf err = { 0 };
	const char *listen = "127.0.0.1:0";
	int i, norigins = 0;

	for (i = 1; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";

		if (strcmp(o, "--stdio") == 0)
			return stdio_echo();
		if (i + 1 >= argc) {
			fprintf(stderr, "http-echo: %s needs a value\n", o);
			return 2;
		}
		i++;
		if (strcmp(o, "--listen") == 0)
			listen = v;
		else if (strcmp(o, "--token") == 0)
			cfg.token = v;
		else if (strcmp(o, "--origin") == 0 && norigins < 15)
			origins[norigins++] = v;
		else if (strcmp(o, "--max-body") == 0)
			cfg.max_body = (size_t)num(v);
		else if (strcmp(o, "--max-conns") == 0)
			cfg.max_conns = (int)num(v);
		else if (strcmp(o, "--request-ms") == 0)
			cfg.request_ms = (int)num(v);
		else if (strcmp(o, "--idle-ms") == 0)
			cfg.idle_ms = (int)num(v);
		else if (strcmp(o, "--send-ms") == 0)
			cfg.send_ms = (int)num(v);
		else if (strcmp(o, "--linger-ms") == 0)
			cfg.linger_ms = (int)num(v);
		else if (strcmp(o, "--out-limit") == 0)
			cfg.out_limit = (size_t)num(v);
		else {
			fprintf(stderr, "http-echo: unknown option %s\n", o);
			return 2;
		}
	}
	cfg.origins = origins;
	if (http_addr_parse(listen, &addr, &err) != 0 ||
	    (cfg.check_host = addr.loopback,
	    s = http_start(&cfg, &addr, &ops, NULL, &err)) == NULL) {
		fprintf(stderr, "http-echo: %s\n", buf_cstr(&err));
		buf_free(&err);
		return 1;
	}
	printf("listening on %d\n", http_port(s));
	fflush(stdout);
	serve(s);
	http_stop(s);
	return 1;
}
