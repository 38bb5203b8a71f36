/*
 * config_keys.c: layer 3, the keys of workbench-config.json as one
 * table (nginx's ngx_command_t, redis's standardConfig): for each key
 * the objects it is written in, its type, limits and default, the field
 * that keeps it and the manual's line for it.  config.c reads a file by
 * walking it; the setters here do what a type alone cannot: toolboxes
 * and servers, a server's command line, environment and filters, paths
 * taken beside the file, and the checks of serving HTTP.
 *
 * A new key is a field in config.h, a row here and its entry in
 * mcp-workbench-config(5): tests/e2e/docs.test.mjs fails until the
 * manual and this table agree on the keys, types, limits and defaults.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config_int.h"
#include "http.h"
#include "share.h"

#define NAME_RULE	"^[A-Za-z0-9-]+(_[A-Za-z0-9-]+)*$ (letters, " \
			"digits and '-', joined by single '_'; no leading, " \
			"trailing or doubled '_')"

/* The reader keeps an enum's value as an int (config.c's value()). */
_Static_assert(sizeof(enum tool_mode) == sizeof(int), "toolMode");
_Static_assert(sizeof(enum tool_detail) == sizeof(int), "toolDetail");
_Static_assert(sizeof(enum wb_level) == sizeof(int), "logLevel");
_Static_assert(sizeof(enum srv_protocol) == sizeof(int), "protocol");
_Static_assert(sizeof(enum srv_type) == sizeof(int), "type");

static cfg_set_fn set_toolboxes, set_dir, set_token, set_origins, set_hosts,
    set_servers, set_command, set_args, set_env, set_filters, set_transport,
    set_cwd, set_url, set_headers;

static const char *const modes[] = { "proxy", "dynamic", NULL };
static const char *const details[] = { "lean", "full", NULL };
static const char *const protocols[] = { "auto", "legacy", "modern", NULL };
static const char *const types[] = { "stdio", "http", "streamable-http",
    "sse", NULL };

/* Where a key is kept: in one object, or at the top level and servers. */
#define TOP(f)	.in = CFG_IN(CFG_TOP), .at[CFG_TOP] = offsetof(struct cfg, f)
#define BOX(f)	.in = CFG_IN(CFG_TOOLBOX), \
		.at[CFG_TOOLBOX] = offsetof(struct cfg_toolbox, f)
#define SRV(f)	.in = CFG_IN(CFG_SERVER), \
		.at[CFG_SERVER] = offsetof(struct cfg_server, f)
#define BOTH(f)	.in = CFG_IN(CFG_TOP) | CFG_IN(CFG_SERVER), \
		.at[CFG_TOP] = offsetof(struct cfg, f), \
		.at[CFG_SERVER] = offsetof(struct cfg_server, f)
#define ONLY(i)	.in = CFG_IN(i)		/* Its setter keeps it. */
/* The types, with what each needs. */
#define BOOL(d)		.type = CFG_BOOL, .dflt = (d)
#define INT(lo, hi)	.type = CFG_INT, .min = (lo), .max = (hi)
#define SIZE(lo, hi)	.type = CFG_SIZE, .min = (lo), .max = (hi)
#define MS(lo)		INT(lo, WB_MS_MAX), .what = "milliseconds"
#define ENUM(v)		.type = CFG_ENUM, .names = (v)
#define TEXT		.type = CFG_TEXT
#define STRING		.type = CFG_STRING
#define LIST		.type = CFG_LIST
#define OTHER(fn)	.type = CFG_OTHER, .set = (fn)

/*
 * The keys, in the manual's order.  .doc is the manual's line for the
 * key, word for word ("..." leaves words out): the test that holds the
 * two together finds it in the key's entry.
 */
const struct cfg_key cfg_keys[] = {
	/* The top level. */
	{ "toolboxes", ONLY(CFG_TOP), OTHER(set_toolboxes),
	    .flags = CFG_REQUIRED, .what = "an object of named toolboxes",
	    .doc = "toolbox name to toolbox" },
	{ "toolMode", TOP(mode), ENUM(modes), .dflt = MODE_PROXY, .doc =
	    "whether the client's tool list holds the meta-tools alone" },
	{ "logLevel", TOP(log_level), ENUM(wb_level_names), .dflt = WB_INFO,
	    .doc = "how much mcp-workbench writes on standard error" },
	{ "initTimeoutMs", BOTH(init_timeout_ms), MS(1),
	    .dflt = WB_INIT_TIMEOUT_MS,
	    .doc = "time a server has ... until its tool list is complete" },
	{ "callTimeoutMs", BOTH(call_timeout_ms), MS(0),
	    .doc = "The default time a tool call may wait for its answer" },
	{ "callMaxTimeoutMs", BOTH(call_max_ms), MS(0), .doc =
	    "hard limit on a tool call ... progress does not extend it" },
	{ "idleTimeoutMs", BOTH(idle_ms), MS(0),
	    .doc = "A server with nothing in flight ... this long is stopped" },
	{ "requestStateTtlMs", TOP(state_ttl_ms), MS(1),
	    .dflt = WB_STATE_TTL_MS, .doc =
	    "How long a requestState minted by mcp-workbench stays good" },
	{ "maxMessageBytes", TOP(max_message),
	    SIZE(WB_MESSAGE_MIN, WB_MESSAGE_MAX), .what = "bytes",
	    .dflt = WB_MAX_MESSAGE,
	    .doc = "The longest message accepted from the client ... server" },
	{ "cache", TOP(cache), BOOL(true), .doc =
	    "keep each server's tool list in the tool catalogue on disk" },
	{ "cacheDir", TOP(cache_dir), STRING, .set = set_dir,
	    .doc = "the catalogue's directory, made if missing" },
	{ "searchTool", TOP(search_tool), BOOL(true),
	    .doc = "offer the search_tools meta-tool" },
	{ "searchSchemas", TOP(search_schemas), INT(0, WB_SEARCH_MAX),
	    .dflt = WB_SEARCH_SCHEMAS, .doc =
	    "How many of a ... query's best hits carry their input schema" },
	{ "toolDetail", TOP(detail), ENUM(details), .dflt = DETAIL_LEAN,
	    .doc = "how open_toolbox gives each tool" },
	{ "openOnUse", TOP(open_on_use), BOOL(false),
	    .doc = "call of a toolbox the session has not opened opens it" },
	/* Serving HTTP: --listen alone reads all but listen. */
	{ "listen", TOP(listen), STRING,
	    .doc = "serve Streamable HTTP there" },
	{ "httpToken", TOP(http_token), STRING, .set = set_token,
	    .flags = CFG_LISTENING, .doc =
	    "every HTTP request must carry Authorization: Bearer TOKEN" },
	{ "allowedOrigins", TOP(origins), LIST, .set = set_origins,
	    .flags = CFG_LISTENING,
	    .doc = "browser pages from these origins may send requests" },
	{ "allowedHosts", TOP(hosts), LIST, .set = set_hosts,
	    .flags = CFG_LISTENING, .doc =
	    "the names a loopback listener accepts besides loopback ones" },
	{ "maxConnections", TOP(max_conns), INT(1, WB_HTTP_CONNS_MAX),
	    .dflt = WB_HTTP_CONNS, .flags = CFG_LISTENING,
	    .doc = "HTTP connections open at one time" },
	{ "httpSessionTimeoutMs", TOP(http_session_ms), MS(0),
	    .dflt = WB_HTTP_SESSION_MS, .flags = CFG_LISTENING,
	    .doc = "An HTTP session ... no stream open for this long ends" },
	/* Sharing. */
	{ "share", TOP(share), BOOL(false), .doc =
	    "sessions join the user's shared workbench and share servers" },
	{ "shareLingerMs", TOP(share_linger_ms), MS(0),
	    .dflt = SHARE_LINGER_MS,
	    .doc = "How long a shared workbench stays after its last session" },
	{ "shareDir", TOP(share_dir), STRING, .set = set_dir, .doc =
	    "the directory of the shared workbench's socket, lock and log" },

	/* A toolbox. */
	{ "description", BOX(description), TEXT,
	    .doc = "shown in the instructions and in the open_toolbox result" },
	{ "mcpServers", ONLY(CFG_TOOLBOX), OTHER(set_servers),
	    .flags = CFG_REQUIRED, .what = "an object of servers",
	    .doc = "server name to server" },

	/* A server (and the timeouts above). */
	{ "command", ONLY(CFG_SERVER), OTHER(set_command),
	    .what = "the program to run",
	    .doc = "The program to run" },
	{ "args", ONLY(CFG_SERVER), OTHER(set_args),
	    .doc = "the arguments" },
	{ "env", ONLY(CFG_SERVER), OTHER(set_env),
	    .doc = "variables added to the server's environment" },
	{ "toolFilters", SRV(filters), OTHER(set_filters), .what = "tool",
	    .doc = "Which tools to keep" },
	{ "promptFilters", SRV(prompt_filters), OTHER(set_filters),
	    .what = "prompt",
	    .doc = "The same, for prompts (by name)" },
	{ "resourceFilters", SRV(resource_filters), OTHER(set_filters),
	    .what = "resource",
	    .doc = "for resources and resource templates" },
	{ "transport", ONLY(CFG_SERVER), OTHER(set_transport),
	    .doc = "the only transport; any other value is an error" },
	{ "type", SRV(type), ENUM(types), .dflt = TYPE_STDIO,
	    .doc = "how the server is reached" },
	{ "url", SRV(url), STRING, .set = set_url,
	    .doc = "the address of a remote server" },
	{ "headers", ONLY(CFG_SERVER), OTHER(set_headers),
	    .doc = "header fields sent with every request to a remote server" },
	{ "cwd", SRV(cwd), STRING, .set = set_cwd,
	    .doc = "the server's working directory" },
	{ "inheritEnv", SRV(inherit_env), BOOL(false), .doc =
	    "pass the whole environment of mcp-workbench to the server" },
	{ "share", SRV(share), BOOL(true),
	    .doc = "false runs this server once per session" },
	{ "protocol", SRV(protocol), ENUM(protocols), .dflt = PROTO_AUTO,
	    .doc = "the protocol era the server is spoken to in" },
	{ "probeTimeoutMs", SRV(probe_ms), MS(1), .dflt = WB_PROBE_TIMEOUT_MS,
	    .doc = "how long auto waits for an answer to server/discover" },
	{ .name = NULL }
};

static void
check_name(struct loader *l, const char *what, const char *name)
{
	if (!tool_valid_config_name(name))
		cfg_problem(l, true, "invalid %s name '%s': names must "
		    "match %s", what, name, NAME_RULE);
}

/*
 * A server is a program to run or a URL to reach (as Claude Code writes
 * it: "type": "http" or "sse" and "url"), never both; what only a
 * process reads is ignored for a URL, with a warning.
 */
static void
server_reach(struct loader *l, struct cfg_server *s, int t)
{
	static const char *const local[] = { "args", "env", "cwd",
	    "inheritEnv" };
	bool typed = json_get(&l->j, t, "type") >= 0;
	size_t i;

	if (!json_is(&l->j, t, JSMN_OBJECT))
		return;
	if (s->command != NULL && s->url != NULL) {
		cfg_problem(l, true, "\"command\" and \"url\" together: a "
		    "server is a program to run or a URL to reach, not both");
		return;
	}
	if (s->url == NULL) {
		if (s->type != TYPE_STDIO)
			cfg_problem(l, true, "\"type\": \"%s\" needs a \"url\"",
			    s->type == TYPE_SSE ? "sse" : "http");
		else if (s->command == NULL)
			cfg_problem(l, true, "missing \"command\" (the program "
			    "to run) or \"url\" (a remote server)");
		if (s->headers != NULL)
			cfg_problem(l, false, "\"headers\" ignored: they go to "
			    "a remote server (\"url\")");
		return;
	}
	if (typed && s->type == TYPE_STDIO)
		cfg_problem(l, true, "\"type\": \"stdio\" with a \"url\": "
		    "use \"http\" or \"sse\", or a \"command\"");
	if (s->type == TYPE_STDIO)
		s->type = TYPE_HTTP;	/* A URL alone: Streamable HTTP. */
	for (i = 0; i < sizeof(local) / sizeof(local[0]); i++)
		if (json_get(&l->j, t, local[i]) >= 0)
			cfg_problem(l, false, "\"%s\" ignored: it is for a "
			    "server run as a process, not one at a \"url\"",
			    local[i]);
}

/* A server, named by its key, read with its keys' defaults first. */
static void
server_entry(struct loader *l, const char *key, int t, void *arg)
{
	struct cfg_toolbox *b = arg;
	struct cfg_server *s;

	check_name(l, "server", key);
	b->servers = xrealloc(b->servers, ((size_t)b->nservers + 1) *
	    sizeof(*b->servers));
	s = &b->servers[b->nservers++];
	memset(s, 0, sizeof(*s));
	s->name = xstrdup(key);
	s->argv = xcalloc(2, sizeof(*s->argv));
	cfg_read(l, &(struct cfg_obj){ s, CFG_SERVER }, t);
	server_reach(l, s, t);
	if (s->argv[0] == NULL)
		s->argv[0] = xstrdup("");
	/* What messages name it by: a URL as written, never expanded. */
	if (s->command == NULL && s->url != NULL)
		s->command = json_strdup(&l->j, json_get(&l->j, t, "url"));
	if (s->command == NULL)
		s->command = xstrdup(s->argv[0]);
}

static void
set_servers(struct loader *l, const struct cfg_key *k,
    const struct cfg_obj *o, int t)
{
	(void)k;
	cfg_each(l, t, server_entry, o->base);
}

static void
toolbox_entry(struct loader *l, const char *key, int t, void *arg)
{
	struct cfg *c = l->cfg;
	struct cfg_toolbox *b;

	(void)arg;
	check_name(l, "toolbox", key);
	c->boxes = xrealloc(c->boxes, ((size_t)c->nboxes + 1) *
	    sizeof(*c->boxes));
	b = &c->boxes[c->nboxes++];
	memset(b, 0, sizeof(*b));
	b->name = xstrdup(key);
	cfg_read(l, &(struct cfg_obj){ b, CFG_TOOLBOX }, t);
	if (b->description == NULL)
		b->description = xstrdup("");
}

static void
set_toolboxes(struct loader *l, const struct cfg_key *k,
    const struct cfg_obj *o, int t)
{
	(void)k;
	(void)o;
	cfg_each(l, t, toolbox_entry, NULL);
}

/* The program, kept as written for messages and expanded to run. */
static void
set_command(struct loader *l, const struct cfg_key *k,
    const struct cfg_obj *o, int t)
{
	struct cfg_server *s = o->base;

	(void)k;
	free(s->argv[0]);
	free(s->command);
	s->command = json_strdup(&l->j, t);
	s->argv[0] = cfg_expanded(l, t);
	if (s->argv[0] != NULL && s->argv[0][0] == '\0')
		cfg_problem(l, true, "command is empty");
}

static void
set_args(struct loader *l, const struct cfg_key *k,
    const struct cfg_obj *o, int t)
{
	struct cfg_server *s = o->base;
	char **args;
	size_t i, n;

	(void)k;
	if ((args = cfg_strings(l, t, true)) == NULL)
		return;
	for (n = 0; args[n] != NULL; n++)
		;
	s->argv = xrealloc(s->argv, (n + 2) * sizeof(*s->argv));
	for (i = 0; args[i] != NULL; i++)
		s->argv[i + 1] = args[i];
	s->argv[i + 1] = NULL;
	free(args);
}

/* A server's env, filled a variable at a time (n of them so far). */
struct env_fill {
	struct cfg_server	*s;
	size_t			 n;
};

static void
env_member(struct loader *l, const char *key, int t, void *arg)
{
	struct env_fill *e = arg;
	struct cfg_server *s = e->s;
	size_t n = e->n;
	char *val;

	if (!cfg_var_name(key, strlen(key))) {
		cfg_problem(l, true, "invalid environment variable name");
		return;
	}
	if ((val = cfg_expanded(l, t)) == NULL)
		return;
	s->env = xrealloc(s->env, (n + 2) * sizeof(*s->env));
	s->env[n] = xmalloc(strlen(key) + strlen(val) + 2);
	sprintf(s->env[n], "%s=%s", key, val);
	s->env[n + 1] = NULL;
	e->n++;
	free(val);
}

static void
set_env(struct loader *l, const struct cfg_key *k,
    const struct cfg_obj *o, int t)
{
	struct env_fill e = { o->base, 0 };

	(void)k;
	cfg_each(l, t, env_member, &e);
}

/*
 * A remote server's URL: http or https alone (remote.c reads the rest
 * when it is opened, and --check).  Never quoted: a key may ride in it.
 */
static void
set_url(struct loader *l, const struct cfg_key *k,
    const struct cfg_obj *o, int t)
{
	struct cfg_server *s = o->base;
	const char *u = s->url;
	size_t i;

	(void)k;
	(void)t;
	if (u == NULL)
		return;
	if (strncasecmp(u, "http://", 7) != 0 &&
	    strncasecmp(u, "https://", 8) != 0) {
		cfg_problem(l, true, "only http:// and https:// URLs are "
		    "supported");
		return;
	}
	for (i = 0; u[i] != '\0'; i++)
		if ((unsigned char)u[i] <= ' ' || u[i] == 0x7f) {
			cfg_problem(l, true, "the URL holds a space or a "
			    "control character");
			return;
		}
}

/* A header field: a token for its name, a value of one line. */
static void
header_member(struct loader *l, const char *key, int t, void *arg)
{
	struct env_fill *e = arg;
	struct cfg_server *s = e->s;
	size_t i, n = strlen(key);
	char *val;

	for (i = 0; i < n && http_tchar((unsigned char)key[i]); i++)
		;
	if (n == 0 || i < n) {
		cfg_problem(l, true, "invalid header name");
		return;
	}
	if ((val = cfg_expanded(l, t)) == NULL)
		return;
	if (strpbrk(val, "\r\n") != NULL) {
		cfg_problem(l, true, "a header value holds a line break");
		free(val);
		return;
	}
	s->headers = xrealloc(s->headers, (e->n + 3) * sizeof(*s->headers));
	s->headers[e->n++] = xstrdup(key);
	s->headers[e->n++] = val;
	s->headers[e->n] = NULL;
}

static void
set_headers(struct loader *l, const struct cfg_key *k,
    const struct cfg_obj *o, int t)
{
	struct env_fill e = { o->base, 0 };

	(void)k;
	cfg_strings_free(e.s->headers);
	e.s->headers = NULL;
	cfg_each(l, t, header_member, &e);
}

/* toolFilters, promptFilters or resourceFilters: what keeps what. */
static void
set_filters(struct loader *l, const struct cfg_key *k,
    const struct cfg_obj *o, int t)
{
	char ***filters = CFG_SLOT(o, k);

	cfg_strings_free(*filters);
	*filters = NULL;
	if (json_eq(&l->j, t, "*"))
		return;
	if (json_is(&l->j, t, JSMN_STRING)) {
		*filters = xcalloc(2, sizeof(**filters));
		(*filters)[0] = cfg_literal(l, t);
		return;
	}
	*filters = cfg_strings(l, t, false);
	if (*filters != NULL && (*filters)[0] == NULL)
		cfg_problem(l, false, "empty %s keeps no %s; leave it out or "
		    "use \"*\" for all %ss", k->name, k->what, k->what);
}

static void
set_transport(struct loader *l, const struct cfg_key *k,
    const struct cfg_obj *o, int t)
{
	(void)k;
	(void)o;
	if (!json_eq(&l->j, t, "stdio"))
		cfg_problem(l, true, "unsupported transport (only \"stdio\" is "
		    "supported: mcp-workbench starts each server as a child "
		    "process)");
}

/* The directory as written too, for what names a server's place. */
static void
set_cwd(struct loader *l, const struct cfg_key *k,
    const struct cfg_obj *o, int t)
{
	struct cfg_server *s = o->base;

	(void)k;
	free(s->cwd_raw);
	s->cwd_raw = json_strdup(&l->j, t);
}

/*
 * A relative path (cacheDir, shareDir) is the configuration file's
 * directory's, wherever the workbench was started: what the file says
 * stays true.
 */
static char *
beside_config(struct loader *l, char *rel)
{
	const char *file = l->cfg->path, *slash = strrchr(file, '/');
	struct buf b = { 0 };
	char *cwd = NULL;

	if (rel[0] == '/')
		return rel;
	if (file[0] != '/' && (cwd = getcwd(NULL, 0)) == NULL) {
		cfg_problem(l, true, "cannot find the configuration's "
		    "directory for the relative path '%s': %s", rel,
		    strerror(errno));
		return rel;
	}
	if (cwd != NULL)
		buf_printf(&b, "%s/", cwd);
	if (slash != NULL)
		buf_put(&b, file, (size_t)(slash - file) + 1);
	buf_puts(&b, rel);
	free(cwd);
	free(rel);
	return buf_cstr(&b);
}

static void
set_dir(struct loader *l, const struct cfg_key *k,
    const struct cfg_obj *o, int t)
{
	char **dir = CFG_SLOT(o, k);

	(void)t;
	if ((*dir)[0] == '\0')
		cfg_problem(l, true, "%s is empty", k->name);
	else
		*dir = beside_config(l, *dir);
}

/*
 * A token a client can send: long enough, and with nothing that a field
 * value cannot hold or that its reader trims (white space at either
 * end, CR, LF and other controls), or it would never match.
 */
static bool
token_valid(struct loader *l, const char *tok)
{
	size_t i, n = strlen(tok);

	if (n < WB_HTTP_TOKEN_MIN) {
		cfg_problem(l, true, "httpToken is shorter than %d bytes: use "
		    "a long random string, for example from 'openssl rand "
		    "-hex 32'", WB_HTTP_TOKEN_MIN);
		return false;
	}
	for (i = 0; i < n; i++)
		if ((unsigned char)tok[i] < 0x20 || tok[i] == 0x7f)
			break;
	if (i < n || tok[0] == ' ' || tok[n - 1] == ' ') {
		cfg_problem(l, true, "httpToken %s: no client could send it in "
		    "an Authorization field (use a long random string, for "
		    "example from 'openssl rand -hex 32')", i < n ? "holds a "
		    "control character (CR, LF, tab ...)" : "begins or ends "
		    "with a space");
		return false;
	}
	return true;
}

static void
set_token(struct loader *l, const struct cfg_key *k,
    const struct cfg_obj *o, int t)
{
	char **tok = CFG_SLOT(o, k);

	(void)t;
	if (!token_valid(l, *tok)) {
		free(*tok);
		*tok = NULL;
	}
}

/* An origin as browsers send it: scheme://host[:port], nothing after. */
static bool
origin_valid(const char *o)
{
	const char *host = strstr(o, "://");

	return host != NULL && host > o && host[3] != '\0' &&
	    strchr(host + 3, '/') == NULL && strchr(o, ' ') == NULL;
}

/*
 * An origin as browsers send it (RFC 6454 §6.2): scheme and host in
 * lower case, no default port.  The Origin field is compared with the
 * allowed exactly, so "HTTPS://App.example:443" is kept as
 * "https://app.example", the one form that can match.
 */
static void
origin_serialize(char *o)
{
	size_t n;
	char *p;

	for (p = o; *p != '\0'; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	n = strlen(o);
	if (strncmp(o, "http://", 7) == 0 && n > 10 &&
	    strcmp(o + n - 3, ":80") == 0)
		o[n - 3] = '\0';
	else if (strncmp(o, "https://", 8) == 0 && n > 12 &&
	    strcmp(o + n - 4, ":443") == 0)
		o[n - 4] = '\0';
}

static void
set_origins(struct loader *l, const struct cfg_key *k,
    const struct cfg_obj *o, int t)
{
	char **v = *(char ***)CFG_SLOT(o, k);
	int i;

	(void)t;
	for (i = 0; v[i] != NULL; i++)
		if (!origin_valid(v[i]))
			cfg_problem(l, true, "allowedOrigins[%d]: '%s' is not "
			    "an origin (scheme://host[:port])", i, v[i]);
		else
			origin_serialize(v[i]);
}

/*
 * A name allowedHosts may hold: a host (a name, an IPv4 address or an
 * IPv6 one in brackets) and an optional port, as Host carries it;
 * nothing a Host field could not hold.
 */
static bool
host_valid(const char *h)
{
	size_t i;

	if (h[0] == '\0' || h[0] == ':')
		return false;
	for (i = 0; h[i] != '\0'; i++)
		if (!((h[i] >= 'a' && h[i] <= 'z') || (h[i] >= 'A' &&
		    h[i] <= 'Z') || (h[i] >= '0' && h[i] <= '9') ||
		    strchr("-.:[]_", h[i]) != NULL))
			return false;
	return true;
}

static void
set_hosts(struct loader *l, const struct cfg_key *k,
    const struct cfg_obj *o, int t)
{
	char **v = *(char ***)CFG_SLOT(o, k);
	int i;

	(void)t;
	for (i = 0; v[i] != NULL; i++)
		if (!host_valid(v[i]))
			cfg_problem(l, true, "allowedHosts[%d]: '%s' is not a "
			    "host name (host or host:port, as a client writes "
			    "it in Host)", i, v[i]);
}
