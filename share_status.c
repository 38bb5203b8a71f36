/*
 * share_status.c: layer 7, --status: every shared workbench of the user
 * asked what it serves (share_status, share.h), this configuration's
 * first, each answer said in words or, with --json, as one object.  The
 * answers are made by the shared workbenches (share_host.c's
 * status_json); only the identity is share_host.c's to lend
 * (share_host_int.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workbench.h"
#include "share_host_int.h"

/* Member key of object t in words: a string's text, else as written. */
static const char *
field(const struct json *j, int t, const char *key, struct buf *b)
{
	int v = json_get(j, t, key);
	const char *raw;
	size_t n = 0;

	b->len = 0;
	if (v < 0)
		return "-";
	if (json_is(j, v, JSMN_STRING))
		return json_str(j, v, b);
	raw = json_raw(j, v, &n);
	if (raw == NULL || (n == 4 && memcmp(raw, "null", 4) == 0))
		return "-";
	buf_put(b, raw, n);
	return buf_cstr(b);
}

/* The elements of array member key of t: their count, the first. */
static int
elements(const struct json *j, int t, const char *key, int *first)
{
	int a = json_get(j, t, key);

	if (a < 0 || !json_is(j, a, JSMN_ARRAY))
		return 0;
	*first = a + 1;
	return j->tok[a].size;
}

static long long
number(const struct json *j, int t, const char *key)
{
	long long v = 0;
	int k = json_get(j, t, key);

	if (k >= 0)
		(void)json_get_int(j, k, &v);
	return v;
}

static const char *
plural(long long n)
{
	return n == 1 ? "" : "s";
}

static void
text_session(const struct json *j, int t, struct buf *f)
{
	long long calls = number(j, t, "calls");
	int n, o;

	bool parked = strcmp(field(j, t, "parked", &f[2]), "true") == 0;

	printf("session pid %s, era %s, up %llds, %lld call%s in flight%s, "
	    "open:", field(j, t, "pid", &f[0]), field(j, t, "era", &f[1]),
	    number(j, t, "since_ms") / 1000, calls, plural(calls),
	    parked ? ", parked" : "");
	for (n = elements(j, t, "open", &o); n > 0; n--, o = json_next(j, o))
		printf(" %s", json_str(j, o, &f[0]));
	printf("\n");
}

/* Are servers t and u of one configured server (and cwd, when cwd)? */
static bool
same_server(const struct json *j, int t, int u, bool cwd, struct buf *f)
{
	static const char *const keys[] = { "toolbox", "server", "cwd" };
	int k;

	for (k = 0; k < (cwd ? 3 : 2); k++)
		if (strcmp(field(j, t, keys[k], &f[0]),
		    field(j, u, keys[k], &f[1])) != 0)
			return false;
	return true;
}

/*
 * Server t of the nv from first.  Copies of one server (another
 * session's directory or environment) say their directory, and
 * "env differs" when another copy runs in the same one: never a value.
 */
static void
text_server(const struct json *j, int first, int nv, int t, struct buf *f)
{
	long long n = number(j, t, "sessions"), calls = number(j, t, "calls");
	int copies = 0, here = 0, i, u;

	for (i = 0, u = first; i < nv; i++, u = json_next(j, u)) {
		copies += same_server(j, t, u, false, f);
		here += same_server(j, t, u, true, f);
	}
	printf("server %s/%s: ", field(j, t, "toolbox", &f[0]),
	    field(j, t, "server", &f[1]));
	if (json_get(j, t, "url") >= 0)
		printf("%s", field(j, t, "url", &f[2]));
	else
		printf("pid %s", field(j, t, "pid", &f[2]));
	if (copies > 1)
		printf(", in %s%s", field(j, t, "cwd", &f[0]),
		    here > 1 ? ", env differs" : "");
	printf(", %s, %lld session%s, %lld call%s\n",
	    field(j, t, "state", &f[3]), n, plural(n), calls, plural(calls));
}

/*
 * What another shared workbench serves, against this configuration
 * (what says it is not this text: the name of its socket).
 */
static void
serves(const struct json *j, struct buf *f)
{
	const char *config = field(j, 0, "config", &f[0]);

	if (strcmp(config, wb.cfg.path) != 0)
		printf(", serves %s", config);
	else if (strcmp(field(j, 0, "version", &f[1]), wb_version) != 0)
		printf(", serves %s for " WB_NAME " %s", config, f[1].data);
	else if (strcmp(field(j, 0, "mode", &f[1]), host_mode_name()) != 0)
		printf(", serves %s in %s mode", config, f[1].data);
	else
		printf(", serves an earlier text of %s", config);
}

/*
 * An answer in words: a line for it (other: of another text), then one
 * per session and server.
 */
static void
status_text(const char *text, size_t len, bool other)
{
	struct buf f[4] = { { 0 }, { 0 }, { 0 }, { 0 } };
	struct json j = { 0 };
	int ns, nv, i, t, first = 0, srv = 0;

	if (json_parse(&j, text, len) != JSON_OK) {
		printf("%.*s\n", (int)len, text);
		return;
	}
	ns = elements(&j, 0, "sessions", &first);
	nv = elements(&j, 0, "servers", &srv);
	printf("shared workbench pid %s", field(&j, 0, "pid", &f[0]));
	if (other)
		serves(&j, f);
	printf(", up %llds, %d session%s, %d server%s\n",
	    number(&j, 0, "uptime_ms") / 1000, ns, plural(ns), nv, plural(nv));
	for (i = 0, t = first; i < ns; i++, t = json_next(&j, t))
		text_session(&j, t, f);
	for (i = 0, t = srv; i < nv; i++, t = json_next(&j, t))
		text_server(&j, srv, nv, t, f);
	free(j.tok);
	for (i = 0; i < 4; i++)
		buf_free(&f[i]);
}

/* Is text a JSON object (what a shared workbench answers)? */
static bool
is_object(const char *text, size_t len)
{
	struct json j = { 0 };
	bool ok = json_parse(&j, text, len) == JSON_OK &&
	    json_is(&j, 0, JSMN_OBJECT);

	free(j.tok);
	return ok;
}

/*
 * The answers of the other shared workbenches of d (of an earlier text,
 * another configuration, build or mode), at most SHARE_LIST_MAX, into
 * others: how many.  One that cannot be asked is said on stderr.
 */
static int
status_others(const struct share_dir *d, const struct share_id *id,
    struct buf *others)
{
	char names[SHARE_LIST_MAX][SHARE_NAME_LEN + 1];
	struct buf why = { 0 };
	struct share_id o = *id;
	int n, i, k = 0;

	n = share_socket_names(d, names, SHARE_LIST_MAX);
	for (i = 0; i < n; i++) {
		if (strcmp(names[i], id->name) == 0)
			continue;
		memcpy(o.name, names[i], sizeof(o.name));
		why.len = 0;
		others[k].len = 0;
		if (share_status(d, &o, &others[k], &why) == 0 &&
		    is_object(others[k].data, others[k].len))
			k++;
		else if (why.len > 0)
			fprintf(stderr, WB_NAME ": --status: %s\n",
			    buf_cstr(&why));
	}
	buf_free(&why);
	return k;
}

/* With --json: this one's answer (or a null pid), with "others". */
static void
json_all(const struct buf *answer, bool served, const struct buf *others,
    int n)
{
	int i;

	if (served)
		printf("%.*s", (int)answer->len - 1, answer->data);
	else
		printf("{\"pid\":null");
	printf(",\"others\":[");
	for (i = 0; i < n; i++)
		printf("%s%.*s", i > 0 ? "," : "", (int)others[i].len,
		    others[i].data);
	printf("]}\n");
}

/*
 * --status: what serves this configuration, and every other shared
 * workbench of the user (an earlier text of it still serving its
 * sessions, another configuration): 0 when one serves this text, 1 when
 * none does (or it cannot be asked, said why).
 */
int
host_status(bool json)
{
	struct buf why = { 0 }, answer = { 0 }, others[SHARE_LIST_MAX];
	struct share_dir d;
	struct share_id id;
	int r = -1, n = 0, i;

	/* Not "none serves it": none would, and the user should know why. */
	if (!wb.cfg.share) {
		fprintf(json ? stderr : stdout, "sharing is off in %s (it has "
		    "no \"share\": true): its sessions run on their own\n",
		    wb.cfg.path);
		return 1;
	}
	memset(others, 0, sizeof(others));
	if (host_identify(&d, &id, &why) == 0) {
		r = share_status(&d, &id, &answer, &why);
		if (r >= 0)
			n = status_others(&d, &id, others);
		share_dir_close(&d);
	}
	if (r == 0 && !is_object(answer.data, answer.len))
		r = 1;
	if (r > 0)	/* With --json, stdout has JSON or nothing. */
		fprintf(json ? stderr : stdout, "no shared workbench serves "
		    "%s\n", wb.cfg.path);
	else if (r < 0)
		fprintf(stderr, WB_NAME ": --status: %s\n", buf_cstr(&why));
	if (json && (r == 0 || n > 0))
		json_all(&answer, r == 0, others, n);
	else if (r == 0)
		status_text(answer.data, answer.len, false);
	for (i = 0; i < n; i++) {
		if (!json)
			status_text(others[i].data, others[i].len, true);
		buf_free(&others[i]);
	}
	buf_free(&why);
	buf_free(&answer);
	return r == 0 ? 0 : 1;
}
