/*
 * Unit tests of the session as a value (session.c): two sessions in one
 * process, driven through dispatch_line, each answered in its own queue
 * and in its own era; and a session closed while it holds a listen, a
 * subscription's worth of state and calls in flight on a server, which
 * leaves nothing of it behind (dispatch_close).  Linked into tests/unit,
 * which counts the checks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../workbench.h"
#include "../server_int.h"	/* A server's request table, by hand. */

#define CHECK(cond) check((cond), #cond, __FILE__, __LINE__)

void	 check(int, const char *, const char *, int);
void	 test_sessions(void);

#define MODERN_META	"\"_meta\":{\"io.modelcontextprotocol/" \
	"protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/" \
	"clientCapabilities\":{}}"

/* Hand a session a line, as its transport would. */
static void
say(struct session *se, const char *line)
{
	char *copy = xstrdup(line);

	dispatch_line(se, copy, strlen(copy));
	free(copy);
}

/* What waits in a session's queue, taken: the caller frees it. */
static char *
heard(struct session *se)
{
	struct buf *out = &session_peer(se)->out;
	char *s = xstrndup(out->data != NULL ? out->data : "", out->len);

	out->len = 0;
	return s;
}

/* Does the session's queue hold exactly one line, containing want? */
static bool
heard_one(struct session *se, const char *want)
{
	char *s = heard(se);
	char *nl = strchr(s, '\n');
	bool ok = nl != NULL && nl[1] == '\0' && strstr(s, want) != NULL;

	if (!ok)
		fprintf(stderr, "unit-session: expected one line with %s, "
		    "got: %s\n", want, s);
	free(s);
	return ok;
}

static bool
silent(struct session *se)
{
	return session_queued(se) == 0;
}

/* The settings of a workbench with one toolbox of one server, unstarted. */
static void
setup(void)
{
	static const char text[] = "{\"toolboxes\":{\"t\":{\"description\":"
	    "\"d\",\"mcpServers\":{\"s\":{\"command\":\"/bin/false\"}}}}}";
	FILE *err = fopen("/dev/null", "w");

	CHECK(cfg_parse(&wb.cfg, "unit.json", text, strlen(text), err) == 0);
	fclose(err);
	wb.mode = wb.cfg.mode;
	box_init();
	dispatch_init();
}

/* Two sessions, two eras, two queues: nothing crosses. */
static void
test_two_sessions(struct session *a, struct session *b)
{
	say(a, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
	    "\"params\":{\"protocolVersion\":\"2025-06-18\","
	    "\"capabilities\":{\"roots\":{}},\"clientInfo\":{\"name\":\"a\","
	    "\"version\":\"1\"}}}");
	CHECK(heard_one(a, "\"protocolVersion\":\"2025-06-18\""));
	CHECK(silent(b));
	CHECK(session_legacy(a) && !session_legacy(b));
	CHECK(session_has(a, CAN_ROOTS) && !session_has(b, CAN_ROOTS));

	/* The same id in both: each answer in its own session. */
	say(b, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
	    "\"params\":{\"protocolVersion\":\"2025-11-25\","
	    "\"capabilities\":{},\"clientInfo\":{\"name\":\"b\","
	    "\"version\":\"1\"}}}");
	CHECK(heard_one(b, "\"protocolVersion\":\"2025-11-25\""));
	CHECK(silent(a));
	CHECK(strcmp(session_protocol(a), "2025-06-18") == 0);
	CHECK(strcmp(session_protocol(b), "2025-11-25") == 0);

	/* A's second initialize is A's error alone. */
	say(a, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\","
	    "\"params\":{\"protocolVersion\":\"2025-06-18\"}}");
	CHECK(heard_one(a, "already initialized"));
	CHECK(silent(b));

	/* A modern request in B: a modern answer, and A stays 2025. */
	say(b, "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":"
	    "\"server/discover\",\"params\":{" MODERN_META "}}");
	CHECK(heard_one(b, "\"resultType\":\"complete\""));
	say(a, "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"ping\"}");
	CHECK(heard_one(a, "{\"jsonrpc\":\"2.0\",\"id\":\"x\","
	    "\"result\":{}}"));
	CHECK(silent(b));

	/* A use_tool of a toolbox B never opened is B's error alone. */
	say(b, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"use_tool\",\"arguments\":{\"tool\":{"
	    "\"toolbox\":\"t\",\"server\":\"s\",\"name\":\"n\"}}}}");
	CHECK(heard_one(b, "is not open; call open_toolbox first"));
	CHECK(silent(a));
}

/*
 * A session closed while it has a listen open and calls in flight: its
 * calls are cancelled at their server, the other session's stay, and
 * the listens that end at shutdown are the other session's alone.
 */
static void
test_close(struct session *a, struct session *b)
{
	struct server *s = srv_first();
	struct session *c;
	struct request *r;
	long long mine, theirs;

	say(a, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":"
	    "\"subscriptions/listen\",\"params\":{" MODERN_META
	    ",\"notifications\":{}}}");
	CHECK(heard_one(a, "notifications/subscriptions/acknowledged"));
	say(b, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":"
	    "\"subscriptions/listen\",\"params\":{" MODERN_META
	    ",\"notifications\":{}}}");
	CHECK(heard_one(b, "notifications/subscriptions/acknowledged"));

	/* A call of each in flight on the (unstarted) server. */
	r = req_add(s, REQ_CALL);
	r->sess = a;
	r->sent = true;
	text_set(&r->cid, "11", 2);
	mine = r->id;
	r = req_add(s, REQ_CALL);
	r->sess = b;
	r->sent = true;
	text_set(&r->cid, "11", 2);
	theirs = r->id;
	s->proc.io.out.len = 0;

	dispatch_close(a);
	CHECK(req_find(s, mine) < 0 && req_find(s, theirs) >= 0);
	CHECK(strstr(buf_cstr(&s->proc.io.out), "notifications/cancelled") !=
	    NULL);
	CHECK(ghost_find(s, mine) >= 0);
	CHECK(session_first() == b && session_next(b) == NULL);
	CHECK(silent(b));

	/*
	 * Shutdown ends the listens left: B's, under B's id, and no other,
	 * not even into a session made since (likely where A was).
	 */
	c = dispatch_open(-1, -1, NULL, NULL);
	listen_end_all();
	CHECK(heard_one(b, "{\"jsonrpc\":\"2.0\",\"id\":8,\"result\":"));
	CHECK(silent(c));
	dispatch_close(c);
	req_remove(s, req_find(s, theirs));
	ghosts_clear(s);
	s->proc.io.out.len = 0;
}

/*
 * A server that takes none of its input while the loop does not read it
 * (its client is behind) is not stuck: the loop's not reading restarts
 * its clock.  Read, the same server turns stuck once STUCK_MS have passed.
 */
static void
test_stuck_clock(void)
{
	struct server *s = srv_first();
	struct srv_fds w;
	long long now = loop_ms();

	buf_reserve(&s->proc.io.out, HIGH_WATER + 1);
	s->proc.io.out.len = HIGH_WATER + 1;
	s->drained_at = now - 2 * STUCK_MS;
	CHECK(srv_stuck(s, now));
	srv_watch(s, false, &w);
	CHECK(!srv_stuck(s, now));
	CHECK(srv_stuck(s, s->drained_at + STUCK_MS));
	s->drained_at = now - 2 * STUCK_MS;
	srv_watch(s, true, &w);
	CHECK(srv_stuck(s, now));
	s->proc.io.out.len = 0;
}

/*
 * Instances: sessions bound with one key share the instance, another
 * key gets another one, made from the configuration given; an unbound
 * session uses the first; an instance no session uses any more and
 * that is down goes, the first never.
 */
static void
test_instances(void)
{
	unsigned char k1[SIP_TAG], k2[SIP_TAG];
	struct session *a = dispatch_open(-1, -1, NULL, NULL), *b = dispatch_open(-1, -1, NULL, NULL);
	struct session *c = dispatch_open(-1, -1, NULL, NULL), *d = dispatch_open(-1, -1, NULL, NULL);
	struct cfg_server cs = wb.cfg.boxes[0].servers[0];
	struct server *first = srv_at(0), *s;
	char cwd[] = "/tmp";
	int n = 0;

	memset(k1, 1, sizeof(k1));
	memset(k2, 2, sizeof(k2));
	cs.cwd = cwd;
	srv_key_first(0, k1);
	srv_bind(a, 0, k1, &cs);
	srv_bind(b, 0, k2, &cs);
	srv_bind(c, 0, k2, &cs);
	CHECK(srv_for(a, 0) == first && srv_for(d, 0) == first);
	CHECK(srv_for(b, 0) != first && srv_for(c, 0) == srv_for(b, 0));
	s = srv_for(b, 0);
	CHECK(srv_index(s) == 0 && strcmp(srv_label(s), "t/s") == 0);
	CHECK(srv_used_by(s, b) && srv_used_by(s, c) && !srv_used_by(s, a) &&
	    srv_used_by(first, a) && !srv_used_by(first, b));
	CHECK(srv_sessions(s) == 2 && srv_sessions(first) == 1);
	SRV_EACH(s)
		n++;
	CHECK(n == 2);
	dispatch_close(b);
	srv_reclaim(false);
	CHECK(srv_for(c, 0) != first && srv_sessions(srv_for(c, 0)) == 1);
	dispatch_close(c);
	dispatch_close(a);
	srv_reclaim(false);
	n = 0;
	SRV_EACH(s)
		n++;
	CHECK(n == 1 && srv_first() == first);
	dispatch_close(d);
}

void
test_sessions(void)
{
	struct session *a, *b;

	setup();
	a = dispatch_open(-1, -1, NULL, NULL);
	b = dispatch_open(-1, -1, NULL, NULL);
	CHECK(a != b && session_first() == a && session_next(a) == b);
	test_two_sessions(a, b);
	test_close(a, b);
	test_stuck_clock();
	dispatch_close(b);
	CHECK(session_first() == NULL);
	test_instances();
	CHECK(session_first() == NULL);
}
