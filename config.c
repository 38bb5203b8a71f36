/*
 * config.c: reading workbench-config.json, ${VAR} expansion, and
 * validation that names the file, the place and what was expected.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "http.h"

struct workbench wb;

#define NAME_RULE	"^[A-Za-z0-9-]+(_[A-Za-z0-9-]+)*$ (letters, " \
			"digits and '-', joined by single '_'; no leading, " \
			"trailing or doubled '_')"

enum expand_error {
	EXPAND_OK = 0,
	EXPAND_UNSET = -1,
	EXPAND_UNCLOSED = -2,
	EXPAND_BADNAME = -3
};

/* The state of one load: where we are, where problems go. */
struct loader {
	struct cfg	*cfg;
	struct json	 j;
	struct buf	 path;		/* "toolboxes.dev.mcpServers.fs" */
	FILE		*err;
	int		 errors;
	bool		 http;		/* In a setting only --listen uses. */
	struct buf	 deferred;	/* Its problems: cfg.http_problems. */
};

static void	free_strings(char **);

static void
problem(struct loader *l, bool fatal, const char *fmt, ...)
{
	va_list ap;
	char text[1024];

	if (fatal && l->http) {
		/*
		 * A setting only --listen reads (a token from a variable
		 * set only where the HTTP service runs) must not keep the
		 * same file from serving stdio: kept for when it listens.
		 */
		va_start(ap, fmt);
		vsnprintf(text, sizeof(text), fmt, ap);
		va_end(ap);
		buf_printf(&l->deferred, "%s: %s%s%s\n", l->cfg->path,
		    buf_cstr(&l->path), l->path.len > 0 ? ": " : "", text);
		return;
	}
	fprintf(l->err, "%s: %s", l->cfg->path, fatal ? "" : "warning: ");
	if (l->path.len > 0)
		fprintf(l->err, "%s: ", buf_cstr(&l->path));
	va_start(ap, fmt);
	vfprintf(l->err, fmt, ap);
	va_end(ap);
	fputc('\n', l->err);
	if (fatal)
		l->errors++;
}

static size_t
path_push(struct loader *l, const char *fmt, const char *s)
{
	size_t old = l->path.len;

	if (old > 0 && fmt[0] != '[')
		buf_putc(&l->path, '.');
	buf_printf(&l->path, fmt, s);
	return old;
}

static void
path_pop(struct loader *l, size_t old)
{
	l->path.len = old;
}

static bool
valid_var_name(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (i = 0; i < n; i++)
		if (!(s[i] == '_' || (s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9')))
			return false;
	return true;
}

/*
 * Expand ${VAR}, ${VAR:-default} and $$ in s into out.  On error, var
 * holds the variable's name (never its value).
 */
int
cfg_expand(const char *s, struct buf *out, struct buf *var)
{
	const char *end, *dflt, *val;
	size_t n;
	char *name;

	out->len = var->len = 0;
	for (; *s != '\0'; s++) {
		if (s[0] != '$' || (s[1] != '$' && s[1] != '{')) {
			buf_putc(out, *s);
			continue;
		}
		if (s[1] == '$') {
			buf_putc(out, '$');
			s++;
			continue;
		}
		if ((end = strchr(s + 2, '}')) == NULL)
			return EXPAND_UNCLOSED;
		dflt = strstr(s + 2, ":-");
		if (dflt != NULL && dflt > end)
			dflt = NULL;
		n = (size_t)((dflt != NULL ? dflt : end) - (s + 2));
		buf_put(var, s + 2, n);
		if (!valid_var_name(s + 2, n))
			return EXPAND_BADNAME;
		name = buf_cstr(var);
		val = getenv(name);
		if (dflt != NULL && (val == NULL || *val == '\0'))
			buf_put(out, dflt + 2, (size_t)(end - dflt - 2));
		else if (val == NULL)
			return EXPAND_UNSET;
		else
			buf_puts(out, val);
		var->len = 0;
		s = end;
	}
	buf_cstr(out);
	return EXPAND_OK;
}

/* A string field, expanded; NULL (and a problem reported) otherwise. */
static char *
expanded(struct loader *l, int t)
{
	struct buf out = { 0 }, var = { 0 };
	char *raw;
	int r;

	if ((raw = json_strdup(&l->j, t)) == NULL) {
		problem(l, true, "expected a string");
		return NULL;
	}
	r = cfg_expand(raw, &out, &var);
	free(raw);
	buf_cstr(&var);
	if (r == EXPAND_UNSET)
		problem(l, true, "environment variable %s is not set "
		    "(required by ${%s}); export %s=value, or give a default "
		    "with ${%s:-default}", var.data, var.data, var.data,
		    var.data);
	else if (r == EXPAND_UNCLOSED)
		problem(l, true, "unclosed '${' (close it with '}', or "
		    "write $$ for a literal '$')");
	else if (r == EXPAND_BADNAME)
		problem(l, true, "invalid variable name '%s' in ${...} "
		    "(letters, digits and '_', not starting with a digit)",
		    var.data);
	buf_free(&var);
	if (r != EXPAND_OK) {
		buf_free(&out);
		return NULL;
	}
	return buf_cstr(&out);
}

/* A string field taken literally (descriptions, names). */
static char *
literal(struct loader *l, int t)
{
	char *s;

	if ((s = json_strdup(&l->j, t)) == NULL)
		problem(l, true, "expected a string");
	return s;
}

static int
positive_ms(struct loader *l, int t, bool zero_ok)
{
	long long v;

	if (!json_get_int(&l->j, t, &v) || v < (zero_ok ? 0 : 1) ||
	    v > 86400000) {
		problem(l, true, "expected a whole number of milliseconds "
		    "from %d to 86400000", zero_ok ? 0 : 1);
		return -1;
	}
	return (int)v;
}

/*
 * Walk the members of object obj: calls fn for each, with the path
 * extended by the key.  Duplicate keys are an error: JSON leaves their
 * meaning open, and a config should not be read two ways.
 */
typedef void member_fn(struct loader *, const char *, int, void *);

/* An object's member, its key unescaped ("?" when that fails: a NUL). */
struct member {
	char	*key;
	size_t	 len;
	int	 value;		/* Its value's token. */
	int	 pos;		/* Its place in the object. */
	bool	 again;		/* An earlier member has its key. */
};

static int
key_cmp(const struct member *x, const struct member *y)
{
	int c = memcmp(x->key, y->key, x->len < y->len ? x->len : y->len);

	return c != 0 || x->len == y->len ? c : x->len < y->len ? -1 : 1;
}

static int
member_by_key(const void *a, const void *b)
{
	const struct member *x = a, *y = b;
	int c = key_cmp(x, y);

	return c != 0 ? c : x->pos - y->pos;
}

static int
member_by_pos(const void *a, const void *b)
{
	return ((const struct member *)a)->pos - ((const struct member *)b)->pos;
}

/*
 * Call fn for each member of an object, in order; a key seen before is a
 * problem.  Keys are compared sorted, since a file may hold many.
 */
static void
each_member(struct loader *l, int obj, member_fn *fn, void *arg)
{
	struct member *m;
	struct buf key = { 0 };
	size_t n, size, old;
	int i;

	if (!json_is(&l->j, obj, JSMN_OBJECT)) {
		problem(l, true, "expected an object");
		return;
	}
	size = (size_t)l->j.tok[obj].size;
	m = xcalloc(size + 1, sizeof(*m));
	for (i = obj + 1, n = 0; n < size; n++) {
		if (json_str(&l->j, i, &key) == NULL) {
			key.len = 0;
			buf_puts(&key, "?");
		}
		m[n].key = xstrndup(key.data, key.len);
		m[n].len = key.len;
		m[n].value = i + 1;
		m[n].pos = (int)n;
		i = json_next(&l->j, i + 1);
	}
	buf_free(&key);
	qsort(m, size, sizeof(*m), member_by_key);
	for (n = 1; n < size; n++)
		m[n].again = key_cmp(&m[n], &m[n - 1]) == 0;
	qsort(m, size, sizeof(*m), member_by_pos);
	for (n = 0; n < size; n++) {
		old = path_push(l, "%s", m[n].key);
		if (m[n].again)
			problem(l, true, "duplicate key");
		else
			fn(l, m[n].key, m[n].value, arg);
		path_pop(l, old);
		free(m[n].key);
	}
	free(m);
}

/* A NULL-terminated array of strings, each expanded. */
static char **
string_array(struct loader *l, int arr, bool expand)
{
	char **v;
	int i, n;
	size_t old;

	if (!json_is(&l->j, arr, JSMN_ARRAY)) {
		problem(l, true, "expected an array of strings");
		return NULL;
	}
	v = xcalloc((size_t)l->j.tok[arr].size + 1, sizeof(*v));
	for (i = arr + 1, n = 0; n < l->j.tok[arr].size; n++) {
		old = l->path.len;
		buf_printf(&l->path, "[%d]", n);
		v[n] = expand ? expanded(l, i) : literal(l, i);
		if (v[n] == NULL)
			v[n] = xstrdup("");
		path_pop(l, old);
		i = json_next(&l->j, i);
	}
	return v;
}

static size_t
count(char **v)
{
	size_t n = 0;

	while (v != NULL && v[n] != NULL)
		n++;
	return n;
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

	if (!valid_var_name(key, strlen(key))) {
		problem(l, true, "invalid environment variable name");
		return;
	}
	if ((val = expanded(l, t)) == NULL)
		return;
	s->env = xrealloc(s->env, (n + 2) * sizeof(*s->env));
	s->env[n] = xmalloc(strlen(key) + strlen(val) + 2);
	sprintf(s->env[n], "%s=%s", key, val);
	s->env[n + 1] = NULL;
	e->n++;
	free(val);
}

/* toolFilters, promptFilters or resourceFilters: what keeps what. */
static void
server_filters(struct loader *l, char ***filters, int t, const char *key,
    const char *what)
{
	free_strings(*filters);
	*filters = NULL;
	if (json_eq(&l->j, t, "*"))
		return;
	if (json_is(&l->j, t, JSMN_STRING)) {
		*filters = xcalloc(2, sizeof(**filters));
		(*filters)[0] = literal(l, t);
		return;
	}
	*filters = string_array(l, t, false);
	if (*filters != NULL && (*filters)[0] == NULL) {
		problem(l, false, "empty %s keeps no %s; leave it out or use "
		    "\"*\" for all %ss", key, what, what);
	}
}

/* Which era a server speaks, and how long probing it may take. */
static bool
server_era(struct loader *l, struct cfg_server *s, const char *key, int t)
{
	if (strcmp(key, "probeTimeoutMs") == 0)
		s->probe_ms = positive_ms(l, t, false);
	else if (strcmp(key, "protocol") != 0)
		return false;
	else if (json_eq(&l->j, t, "auto"))
		s->protocol = PROTO_AUTO;
	else if (json_eq(&l->j, t, "legacy"))
		s->protocol = PROTO_LEGACY;
	else if (json_eq(&l->j, t, "modern"))
		s->protocol = PROTO_MODERN;
	else
		problem(l, true, "expected \"auto\", \"legacy\" or \"modern\"");
	return true;
}

static void
server_member(struct loader *l, const char *key, int t, void *arg)
{
	struct cfg_server *s = arg;
	struct env_fill e = { s, 0 };
	char **args;
	size_t i;

	if (strcmp(key, "command") == 0) {
		free(s->argv[0]);
		free(s->command);
		s->command = json_strdup(&l->j, t);
		s->argv[0] = expanded(l, t);
		if (s->argv[0] != NULL && s->argv[0][0] == '\0')
			problem(l, true, "command is empty");
	} else if (strcmp(key, "args") == 0) {
		if ((args = string_array(l, t, true)) == NULL)
			return;
		s->argv = xrealloc(s->argv, (count(args) + 2) *
		    sizeof(*s->argv));
		for (i = 0; args[i] != NULL; i++)
			s->argv[i + 1] = args[i];
		s->argv[i + 1] = NULL;
		free(args);
	} else if (strcmp(key, "env") == 0)
		each_member(l, t, env_member, &e);
	else if (strcmp(key, "toolFilters") == 0)
		server_filters(l, &s->filters, t, key, "tool");
	else if (strcmp(key, "promptFilters") == 0)
		server_filters(l, &s->prompt_filters, t, key, "prompt");
	else if (strcmp(key, "resourceFilters") == 0)
		server_filters(l, &s->resource_filters, t, key, "resource");
	else if (strcmp(key, "transport") == 0) {
		if (!json_eq(&l->j, t, "stdio"))
			problem(l, true, "unsupported transport (only \"stdio\" "
			    "is supported: mcp-workbench starts each server "
			    "as a child process)");
	} else if (strcmp(key, "cwd") == 0) {
		free(s->cwd_raw);
		free(s->cwd);
		s->cwd_raw = json_strdup(&l->j, t);
		s->cwd = expanded(l, t);
	}
	else if (strcmp(key, "inheritEnv") == 0) {
		if (json_get_bool(&l->j, t, &s->inherit_env) < 0)
			problem(l, true, "expected true or false");
	} else if (strcmp(key, "initTimeoutMs") == 0)
		s->init_timeout_ms = positive_ms(l, t, false);
	else if (strcmp(key, "callTimeoutMs") == 0)
		s->call_timeout_ms = positive_ms(l, t, true);
	else if (strcmp(key, "callMaxTimeoutMs") == 0)
		s->call_max_ms = positive_ms(l, t, true);
	else if (strcmp(key, "idleTimeoutMs") == 0)
		s->idle_ms = positive_ms(l, t, true);
	else if (strcmp(key, "share") == 0) {
		if (json_get_bool(&l->j, t, &s->share) < 0)
			problem(l, true, "expected true or false");
	} else if (!server_era(l, s, key, t))
		problem(l, false, "unknown key ignored");
}

static void
check_name(struct loader *l, const char *what, const char *name)
{
	if (!tool_valid_config_name(name))
		problem(l, true, "invalid %s name '%s': names must match %s",
		    what, name, NAME_RULE);
}

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
	s->init_timeout_ms = -1;
	s->call_timeout_ms = -1;
	s->call_max_ms = -1;
	s->idle_ms = -1;
	s->probe_ms = WB_PROBE_TIMEOUT_MS;
	s->share = true;
	each_member(l, t, server_member, s);
	if (s->argv[0] == NULL && json_get(&l->j, t, "command") < 0 &&
	    json_is(&l->j, t, JSMN_OBJECT))
		problem(l, true, "missing \"command\" (the program to run)");
	if (s->argv[0] == NULL)
		s->argv[0] = xstrdup("");
	if (s->command == NULL)
		s->command = xstrdup(s->argv[0]);
}

static void
toolbox_member(struct loader *l, const char *key, int t, void *arg)
{
	struct cfg_toolbox *b = arg;

	if (strcmp(key, "description") == 0) {
		free(b->description);
		b->description = literal(l, t);
	} else if (strcmp(key, "mcpServers") == 0)
		each_member(l, t, server_entry, b);
	else
		problem(l, false, "unknown key ignored");
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
	each_member(l, t, toolbox_member, b);
	if (json_is(&l->j, t, JSMN_OBJECT) && json_get(&l->j, t,
	    "mcpServers") < 0)
		problem(l, true, "missing \"mcpServers\" (an object of "
		    "servers)");
	if (b->description == NULL)
		b->description = xstrdup("");
}

/*
 * A relative path (cacheDir) is the configuration file's directory's,
 * wherever the workbench was started: what the file says stays true.
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
		problem(l, true, "cannot find the configuration's directory "
		    "for the relative path '%s': %s", rel, strerror(errno));
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
		problem(l, true, "httpToken is shorter than %d bytes: use a "
		    "long random string, for example from 'openssl rand -hex "
		    "32'", WB_HTTP_TOKEN_MIN);
		return false;
	}
	for (i = 0; i < n; i++)
		if ((unsigned char)tok[i] < 0x20 || tok[i] == 0x7f)
			break;
	if (i < n || tok[0] == ' ' || tok[n - 1] == ' ') {
		problem(l, true, "httpToken %s: no client could send it in "
		    "an Authorization field (use a long random string, for "
		    "example from 'openssl rand -hex 32')", i < n ? "holds a "
		    "control character (CR, LF, tab ...)" : "begins or ends "
		    "with a space");
		return false;
	}
	return true;
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

/* The keys of serving HTTP (--listen). */
static void
http_member(struct loader *l, const char *key, int t)
{
	struct cfg *c = l->cfg;
	long long v;
	int i;

	if (strcmp(key, "listen") == 0) {
		free(c->listen);
		c->listen = expanded(l, t);
	} else if (strcmp(key, "httpToken") == 0) {
		free(c->http_token);
		if ((c->http_token = expanded(l, t)) != NULL &&
		    !token_valid(l, c->http_token)) {
			free(c->http_token);
			c->http_token = NULL;
		}
	} else if (strcmp(key, "allowedOrigins") == 0) {
		free_strings(c->origins);
		if ((c->origins = string_array(l, t, false)) == NULL)
			return;
		for (i = 0; c->origins[i] != NULL; i++)
			if (!origin_valid(c->origins[i]))
				problem(l, true, "allowedOrigins[%d]: '%s' is not "
				    "an origin (scheme://host[:port])", i,
				    c->origins[i]);
			else
				origin_serialize(c->origins[i]);
	} else if (strcmp(key, "allowedHosts") == 0) {
		free_strings(c->hosts);
		if ((c->hosts = string_array(l, t, false)) == NULL)
			return;
		for (i = 0; c->hosts[i] != NULL; i++)
			if (!host_valid(c->hosts[i]))
				problem(l, true, "allowedHosts[%d]: '%s' is not a "
				    "host name (host or host:port, as a client "
				    "writes it in Host)", i, c->hosts[i]);
	} else if (strcmp(key, "maxConnections") == 0) {
		if (!json_get_int(&l->j, t, &v) || v < 1 || v > 100000)
			problem(l, true, "expected a whole number from 1 to "
			    "100000");
		else
			c->max_conns = (int)v;
	} else if (strcmp(key, "httpSessionTimeoutMs") == 0)
		c->http_session_ms = positive_ms(l, t, true);
	else
		problem(l, false, "unknown key ignored");
}

/* share, shareLingerMs, shareDir: whether and how sessions share. */
static bool
share_member(struct loader *l, const char *key, int t)
{
	struct cfg *c = l->cfg;
	long long v;

	if (strcmp(key, "share") == 0) {
		if (json_get_bool(&l->j, t, &c->share) < 0)
			problem(l, true, "expected true or false");
	} else if (strcmp(key, "shareLingerMs") == 0) {
		if (!json_get_int(&l->j, t, &v) || v < 0 ||
		    v > WB_SHARE_LINGER_MAX)
			problem(l, true, "expected a whole number of "
			    "milliseconds from 0 to %d", WB_SHARE_LINGER_MAX);
		else
			c->share_linger_ms = (int)v;
	} else if (strcmp(key, "shareDir") == 0) {
		free(c->share_dir);
		if ((c->share_dir = expanded(l, t)) != NULL &&
		    c->share_dir[0] == '\0')
			problem(l, true, "shareDir is empty");
		else if (c->share_dir != NULL)
			c->share_dir = beside_config(l, c->share_dir);
	} else
		return false;
	return true;
}

/* The keys of what a model reads; false when key is none of them. */
static bool
model_member(struct loader *l, const char *key, int t)
{
	struct cfg *c = l->cfg;
	long long v;

	if (strcmp(key, "searchTool") == 0) {
		if (json_get_bool(&l->j, t, &c->search_tool) < 0)
			problem(l, true, "expected true or false");
	} else if (strcmp(key, "openOnUse") == 0) {
		if (json_get_bool(&l->j, t, &c->open_on_use) < 0)
			problem(l, true, "expected true or false");
	} else if (strcmp(key, "toolDetail") == 0) {
		if (json_eq(&l->j, t, "full") || json_eq(&l->j, t, "lean"))
			c->full_tools = json_eq(&l->j, t, "full");
		else
			problem(l, true, "expected \"lean\" or \"full\"");
	} else if (strcmp(key, "searchSchemas") == 0) {
		if (!json_get_int(&l->j, t, &v) || v < 0 || v > WB_SEARCH_MAX)
			problem(l, true, "expected a whole number from 0 to %d",
			    WB_SEARCH_MAX);
		else
			c->search_schemas = (int)v;
	} else
		return false;
	return true;
}

/* "logLevel": how much the log says (-v overrides it). */
static void
log_level_member(struct loader *l, int t)
{
	int k;

	for (k = 0; wb_level_names[k] != NULL; k++)
		if (json_eq(&l->j, t, wb_level_names[k])) {
			l->cfg->log_level = (enum wb_level)k;
			return;
		}
	problem(l, true, "expected \"error\", \"warning\", \"info\" or "
	    "\"debug\"");
}

static void
top_member(struct loader *l, const char *key, int t, void *arg)
{
	struct cfg *c = l->cfg;
	long long v;

	(void)arg;
	if (strcmp(key, "toolboxes") == 0)
		each_member(l, t, toolbox_entry, NULL);
	else if (strcmp(key, "toolMode") == 0) {
		if (json_eq(&l->j, t, "proxy"))
			c->mode = MODE_PROXY;
		else if (json_eq(&l->j, t, "dynamic"))
			c->mode = MODE_DYNAMIC;
		else
			problem(l, true, "expected \"proxy\" or \"dynamic\"");
	} else if (strcmp(key, "initTimeoutMs") == 0)
		c->init_timeout_ms = positive_ms(l, t, false);
	else if (strcmp(key, "callTimeoutMs") == 0)
		c->call_timeout_ms = positive_ms(l, t, true);
	else if (strcmp(key, "callMaxTimeoutMs") == 0)
		c->call_max_ms = positive_ms(l, t, true);
	else if (strcmp(key, "idleTimeoutMs") == 0)
		c->idle_ms = positive_ms(l, t, true);
	else if (strcmp(key, "requestStateTtlMs") == 0)
		c->state_ttl_ms = positive_ms(l, t, false);
	else if (strcmp(key, "cache") == 0) {
		if (json_get_bool(&l->j, t, &c->cache) < 0)
			problem(l, true, "expected true or false");
	} else if (strcmp(key, "cacheDir") == 0) {
		free(c->cache_dir);
		if ((c->cache_dir = expanded(l, t)) != NULL &&
		    c->cache_dir[0] == '\0')
			problem(l, true, "cacheDir is empty");
		else if (c->cache_dir != NULL)
			c->cache_dir = beside_config(l, c->cache_dir);
	} else if (strcmp(key, "logLevel") == 0)
		log_level_member(l, t);
	else if (model_member(l, key, t))
		;
	else if (strncmp(key, "http", 4) == 0 || strcmp(key, "listen") == 0 ||
	    strcmp(key, "allowedOrigins") == 0 ||
	    strcmp(key, "allowedHosts") == 0 ||
	    strcmp(key, "maxConnections") == 0) {
		/* Only --listen reads them (but "listen"): checked then. */
		l->http = strcmp(key, "listen") != 0;
		http_member(l, key, t);
		l->http = false;
	}
	else if (strcmp(key, "maxMessageBytes") == 0) {
		if (!json_get_int(&l->j, t, &v) || v < 1024 || v > 1 << 30)
			problem(l, true, "expected a whole number of bytes "
			    "from 1024 to 1073741824");
		else
			c->max_message = (size_t)v;
	} else if (!share_member(l, key, t))
		problem(l, false, "unknown key ignored");
}

/*
 * "listen" is an address (numeric), and one off loopback needs
 * httpToken, which may come after it: checked once both are read.
 */
static void
listen_check(struct loader *l)
{
	struct http_addr a;
	struct buf err = { 0 };
	size_t old = l->path.len;

	if (l->cfg->listen == NULL)
		return;
	buf_puts(&l->path, "listen");
	if (http_addr_parse(l->cfg->listen, &a, &err) != 0)
		problem(l, true, "%s", buf_cstr(&err));
	else if (!a.loopback && l->cfg->http_token == NULL)
		problem(l, true, "%s is not a loopback address: set "
		    "\"httpToken\" (for example \"${MCP_WORKBENCH_TOKEN}\") so "
		    "that clients must send Authorization: Bearer TOKEN", a.text);
	path_pop(l, old);
	buf_free(&err);
}

/*
 * The problems of the settings only --listen uses wait for it; a file
 * that names "listen" itself always listens, so they count at once.
 */
static void
http_deferred(struct loader *l)
{
	if (l->deferred.len == 0)
		return;
	if (l->cfg->listen != NULL) {
		fputs(buf_cstr(&l->deferred), l->err);
		l->errors++;
	}
	l->cfg->http_problems = xstrdup(buf_cstr(&l->deferred));
	buf_free(&l->deferred);
}

/*
 * Before listening: false, with the problems said, when a setting that
 * only --listen uses is invalid.
 */
bool
cfg_http_usable(const struct cfg *c, FILE *err)
{
	if (c->http_problems == NULL)
		return true;
	fputs(c->http_problems, err);
	fprintf(err, WB_NAME ": %s: configuration is invalid for --listen\n",
	    c->path);
	return false;
}

/* Servers without their own timeouts take the top-level ones. */
static void
apply_defaults(struct cfg *c)
{
	struct cfg_server *s;
	int i, k;

	for (i = 0; i < c->nboxes; i++)
		for (k = 0; k < c->boxes[i].nservers; k++) {
			s = &c->boxes[i].servers[k];
			if (s->init_timeout_ms < 0)
				s->init_timeout_ms = c->init_timeout_ms;
			if (s->call_timeout_ms < 0)
				s->call_timeout_ms = c->call_timeout_ms;
			if (s->call_max_ms < 0)
				s->call_max_ms = c->call_max_ms;
			if (s->idle_ms < 0)
				s->idle_ms = c->idle_ms;
		}
}

static void
syntax_error(struct loader *l, const char *text, int r)
{
	size_t line, col;

	if (r == JSON_NOTOBJ) {
		problem(l, true, "the top level must be a JSON object");
		return;
	}
	if (r == JSON_TOOBIG || r == JSON_TOODEEP) {
		problem(l, true, r == JSON_TOOBIG ? "too large to load" :
		    "nested deeper than 1000 levels");
		return;
	}
	line = json_line_col(text, l->j.errpos, &col);
	fprintf(l->err, "%s:%zu:%zu: JSON syntax error%s\n", l->cfg->path,
	    line, col, l->j.errpos >= l->j.len ? " (unexpected end of file)" :
	    "");
	l->errors++;
}

/*
 * Load a configuration from text.  Problems go to err; the count of fatal
 * ones is returned (0: the configuration is usable).
 */
int
cfg_parse(struct cfg *c, const char *path, const char *text, size_t len,
    FILE *err)
{
	struct loader l = { .cfg = c, .err = err };
	int r;

	memset(c, 0, sizeof(*c));
	c->path = xstrdup(path);
	c->init_timeout_ms = WB_INIT_TIMEOUT_MS;
	c->state_ttl_ms = WB_STATE_TTL_MS;
	c->max_message = WB_MAX_MESSAGE;
	c->cache = c->search_tool = true;
	c->search_schemas = WB_SEARCH_SCHEMAS;
	c->max_conns = WB_HTTP_CONNS;
	c->http_session_ms = WB_HTTP_SESSION_MS;
	c->share_linger_ms = 60000;
	c->log_level = WB_INFO;
	if ((r = json_parse(&l.j, text, len)) != JSON_OK)
		syntax_error(&l, text, r);
	else {
		each_member(&l, 0, top_member, NULL);
		listen_check(&l);
		http_deferred(&l);
		if (json_get(&l.j, 0, "toolboxes") < 0)
			problem(&l, true, "missing \"toolboxes\" (an object "
			    "of named toolboxes)");
	}
	apply_defaults(c);
	free(l.j.tok);
	buf_free(&l.path);
	return l.errors;
}

/*
 * Load a configuration file: what cfg_parse returns, or -1 with errno
 * when the file cannot be read (EFBIG: longer than CFG_MAX_FILE), which
 * the caller reports, knowing where the path came from.
 */
int
cfg_load(struct cfg *c, const char *path, FILE *err)
{
	size_t len;
	char *text;
	int r, saved;

	if ((text = file_read(path, CFG_MAX_FILE, &len)) == NULL) {
		saved = errno;
		memset(c, 0, sizeof(*c));
		c->path = xstrdup(path);
		errno = saved;
		return -1;
	}
	r = cfg_parse(c, path, text, len, err);
	free(text);
	return r;
}

static void
free_strings(char **v)
{
	size_t i;

	for (i = 0; v != NULL && v[i] != NULL; i++)
		free(v[i]);
	free(v);
}

static void
server_strings_free(struct cfg_server *s)
{
	free(s->name);
	free_strings(s->argv);
	free_strings(s->env);
	free_strings(s->base_env);
	free_strings(s->filters);
	free_strings(s->prompt_filters);
	free_strings(s->resource_filters);
	free(s->cwd);
	free(s->cwd_raw);
	free(s->command);
}

static char **
strings_dup(char *const *v)
{
	char **d;
	size_t n, i;

	if (v == NULL)
		return NULL;
	for (n = 0; v[n] != NULL; n++)
		;
	d = xcalloc(n + 1, sizeof(*d));
	for (i = 0; i < n; i++)
		d[i] = xstrdup(v[i]);
	return d;
}

static char *
str_dup(const char *s)
{
	return s != NULL ? xstrdup(s) : NULL;
}

/* A server's configuration of its own (an instance's), deeply copied. */
struct cfg_server *
cfg_server_dup(const struct cfg_server *s)
{
	struct cfg_server *d = xmalloc(sizeof(*d));

	*d = *s;
	d->name = str_dup(s->name);
	d->command = str_dup(s->command);
	d->argv = strings_dup(s->argv);
	d->env = strings_dup(s->env);
	d->base_env = strings_dup(s->base_env);
	d->filters = strings_dup(s->filters);
	d->prompt_filters = strings_dup(s->prompt_filters);
	d->resource_filters = strings_dup(s->resource_filters);
	d->cwd = str_dup(s->cwd);
	d->cwd_raw = str_dup(s->cwd_raw);
	return d;
}

void
cfg_server_free(struct cfg_server *s)
{
	if (s == NULL)
		return;
	server_strings_free(s);
	free(s);
}

void
cfg_free(struct cfg *c)
{
	int i, k;

	for (i = 0; i < c->nboxes; i++) {
		for (k = 0; k < c->boxes[i].nservers; k++)
			server_strings_free(&c->boxes[i].servers[k]);
		free(c->boxes[i].servers);
		free(c->boxes[i].name);
		free(c->boxes[i].description);
	}
	free(c->boxes);
	free(c->path);
	free(c->listen);
	free(c->http_token);
	free(c->http_problems);
	free_strings(c->origins);
	free_strings(c->hosts);
	free(c->cache_dir);
	free(c->share_dir);
	memset(c, 0, sizeof(*c));
}

/*
 * A server's identity, fed to a keyed hash: what it runs and how, as
 * parsed and expanded (argv, env, cwd, inheritEnv, protocol and the
 * filters), each value with its length so that no two configurations
 * feed the same bytes.  Its name, toolbox and timeouts are not part of
 * it: they change nothing the server offers.  env is taken in order of
 * its names (an object's members have none of their own); arrays keep
 * theirs.
 */
static void
feed(struct siphash *h, char tag, const char *s)
{
	unsigned char len[8];
	size_t n = s != NULL ? strlen(s) : (size_t)-1;
	int i;

	for (i = 0; i < 8; i++)
		len[i] = (unsigned char)(((uint64_t)n >> (8 * i)) & 0xff);
	sip_update(h, &tag, 1);
	sip_update(h, len, sizeof(len));
	if (s != NULL)
		sip_update(h, s, n);
}

/* A NULL-terminated array (or none, which is not an empty one). */
static void
feed_strings(struct siphash *h, char tag, char *const *v, bool sort)
{
	char **copy;
	size_t n = count((char **)v), i;

	if (v == NULL) {
		feed(h, tag, NULL);
		return;
	}
	copy = xcalloc(n + 1, sizeof(*copy));
	memcpy(copy, v, n * sizeof(*copy));
	if (sort)
		qsort(copy, n, sizeof(*copy), strp_cmp);
	feed(h, tag, "");
	for (i = 0; i < n; i++)
		feed(h, tag, copy[i]);
	feed(h, '.', "");
	free(copy);
}

/*
 * The keyed digest (SipHash-2-4, a SIP_TAG-byte tag) of a server's
 * configuration as it runs: equal for the same server however the file
 * is laid out, different when anything it runs with differs, and
 * nothing of the configuration can be read from it without the key.
 */
void
cfg_server_digest(const struct cfg_server *s, const unsigned char *key,
    unsigned char *tag)
{
	static const char *const protocols[] = { "auto", "legacy", "modern" };
	struct siphash h;

	sip_init(&h, key);
	feed(&h, 'v', WB_NAME " server 1");
	feed_strings(&h, 'a', s->argv, false);
	feed_strings(&h, 'e', s->env != NULL ? s->env : (char *[]){ NULL },
	    true);
	feed(&h, 'c', s->cwd);
	feed(&h, 'i', s->inherit_env ? "true" : "false");
	feed(&h, 'p', protocols[s->protocol]);
	feed_strings(&h, 't', s->filters, false);
	feed_strings(&h, 'P', s->prompt_filters, false);
	feed_strings(&h, 'r', s->resource_filters, false);
	sip_final(&h, tag);
}

const struct cfg_toolbox *
cfg_toolbox(const struct cfg *c, const char *name)
{
	int i;

	for (i = 0; i < c->nboxes; i++)
		if (strcmp(c->boxes[i].name, name) == 0)
			return &c->boxes[i];
	return NULL;
}

/*
 * The Node.js workbench named tools {toolbox}__{server}_{tool}.  Server
 * names may hold '_', so only the configuration can tell where the server
 * ends: returns the corrected {toolbox}__{server}__{tool}, or NULL.
 */
char *
cfg_legacy_fix(const struct cfg *c, const char *name)
{
	const struct cfg_toolbox *b;
	const char *a, *rest;
	size_t n;
	char *box;
	int i;

	if ((a = strstr(name, "__")) == NULL || a == name)
		return NULL;
	box = xstrndup(name, (size_t)(a - name));
	b = cfg_toolbox(c, box);
	free(box);
	rest = a + 2;
	for (i = 0; b != NULL && i < b->nservers; i++) {
		n = strlen(b->servers[i].name);
		if (strncmp(rest, b->servers[i].name, n) == 0 &&
		    rest[n] == '_' && rest[n + 1] != '_' && rest[n + 1] != '\0')
			return tool_join(b->name, b->servers[i].name,
			    rest + n + 1);
	}
	return NULL;
}
