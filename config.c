/*
 * config.c: reading workbench-config.json by walking the table of its
 * keys (config_keys.c), ${VAR} expansion, and validation that names the
 * file, the place and what was expected; then what the rest of the
 * workbench asks of the result: a server's copy and digest, a toolbox
 * by name.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config_int.h"
#include "http.h"

struct workbench wb;

enum expand_error {
	EXPAND_OK = 0,
	EXPAND_UNSET = -1,
	EXPAND_UNCLOSED = -2,
	EXPAND_BADNAME = -3
};

/*
 * Say a problem where the load is (the file, the path of keys); fatal
 * ones make the configuration invalid, the others are warnings.
 */
void
cfg_problem(struct loader *l, bool fatal, const char *fmt, ...)
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

/* A variable's name: letters, digits and '_', not starting with a digit. */
bool
cfg_var_name(const char *s, size_t n)
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
		if (!cfg_var_name(s + 2, n))
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
char *
cfg_expanded(struct loader *l, int t)
{
	struct buf out = { 0 }, var = { 0 };
	char *raw;
	int r;

	if ((raw = json_strdup(&l->j, t)) == NULL) {
		cfg_problem(l, true, "expected a string");
		return NULL;
	}
	r = cfg_expand(raw, &out, &var);
	free(raw);
	buf_cstr(&var);
	if (r == EXPAND_UNSET)
		cfg_problem(l, true, "environment variable %s is not set "
		    "(required by ${%s}); export %s=value, or give a default "
		    "with ${%s:-default}", var.data, var.data, var.data,
		    var.data);
	else if (r == EXPAND_UNCLOSED)
		cfg_problem(l, true, "unclosed '${' (close it with '}', or "
		    "write $$ for a literal '$')");
	else if (r == EXPAND_BADNAME)
		cfg_problem(l, true, "invalid variable name '%s' in ${...} "
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
char *
cfg_literal(struct loader *l, int t)
{
	char *s;

	if ((s = json_strdup(&l->j, t)) == NULL)
		cfg_problem(l, true, "expected a string");
	return s;
}

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
void
cfg_each(struct loader *l, int obj, cfg_member_fn *fn, void *arg)
{
	struct member *m;
	struct buf key = { 0 };
	size_t n, size, old;
	int i;

	if (!json_is(&l->j, obj, JSMN_OBJECT)) {
		cfg_problem(l, true, "expected an object");
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
			cfg_problem(l, true, "duplicate key");
		else
			fn(l, m[n].key, m[n].value, arg);
		path_pop(l, old);
		free(m[n].key);
	}
	free(m);
}

/* A NULL-terminated array of strings, each expanded. */
char **
cfg_strings(struct loader *l, int arr, bool expand)
{
	char **v;
	int i, n;
	size_t old;

	if (!json_is(&l->j, arr, JSMN_ARRAY)) {
		cfg_problem(l, true, "expected an array of strings");
		return NULL;
	}
	v = xcalloc((size_t)l->j.tok[arr].size + 1, sizeof(*v));
	for (i = arr + 1, n = 0; n < l->j.tok[arr].size; n++) {
		old = l->path.len;
		buf_printf(&l->path, "[%d]", n);
		v[n] = expand ? cfg_expanded(l, i) : cfg_literal(l, i);
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

/* The row of key name in an object of kind in, or NULL. */
static const struct cfg_key *
key_find(int in, const char *name)
{
	const struct cfg_key *k;

	for (k = cfg_keys; k->name != NULL; k++)
		if ((k->in & CFG_IN(in)) != 0 && strcmp(k->name, name) == 0)
			return k;
	return NULL;
}

/* A key of the top level and servers: a server may leave it to the top. */
static bool
inherited(const struct cfg_key *k)
{
	return (k->in & CFG_IN(CFG_TOP)) != 0 &&
	    (k->in & CFG_IN(CFG_SERVER)) != 0;
}

/*
 * An object's keys at the table's defaults before it is read.  What a
 * server leaves to the top level is -1 until the whole file is read
 * (inherit).  Strings and lists stay NULL: the object starts zeroed.
 */
static void
defaults(const struct cfg_obj *o)
{
	const struct cfg_key *k;
	int v;

	for (k = cfg_keys; k->name != NULL; k++) {
		if ((k->in & CFG_IN(o->in)) == 0)
			continue;
		v = o->in == CFG_SERVER && inherited(k) ? -1 : k->dflt;
		if (k->type == CFG_BOOL)
			*(bool *)CFG_SLOT(o, k) = v != 0;
		else if (k->type == CFG_INT || k->type == CFG_ENUM)
			*(int *)CFG_SLOT(o, k) = v;
		else if (k->type == CFG_SIZE)
			*(size_t *)CFG_SLOT(o, k) = (size_t)v;
	}
}

/* A whole number within k's limits, or a problem that says them. */
static bool
whole(struct loader *l, const struct cfg_key *k, int t, long long *v)
{
	if (json_get_int(&l->j, t, v) && *v >= k->min && *v <= k->max)
		return true;
	cfg_problem(l, true, "expected a whole number%s%s from %d to %d",
	    k->what != NULL ? " of " : "", k->what != NULL ? k->what : "",
	    k->min, k->max);
	return false;
}

/* One of k's names, kept as its index: "a", "b" or "c" otherwise. */
static bool
one_of(struct loader *l, const struct cfg_key *k, int *slot, int t)
{
	struct buf b = { 0 };
	int i;

	for (i = 0; k->names[i] != NULL; i++)
		if (json_eq(&l->j, t, k->names[i])) {
			*slot = i;
			return true;
		}
	for (i = 0; k->names[i] != NULL; i++)
		buf_printf(&b, "%s\"%s\"", i == 0 ? "" : k->names[i + 1] ==
		    NULL ? " or " : ", ", k->names[i]);
	cfg_problem(l, true, "expected %s", buf_cstr(&b));
	buf_free(&b);
	return false;
}

/*
 * Read token t as k's type says into its field in o: false, the problem
 * said, when it is not one.  CFG_OTHER is left to its setter.
 */
static bool
value(struct loader *l, const struct cfg_key *k, const struct cfg_obj *o,
    int t)
{
	void *slot = CFG_SLOT(o, k);
	long long v;

	switch ((enum cfg_type)k->type) {
	case CFG_BOOL:
		if (json_get_bool(&l->j, t, slot) == 0)
			return true;
		cfg_problem(l, true, "expected true or false");
		return false;
	case CFG_INT:
	case CFG_SIZE:
		if (!whole(l, k, t, &v))
			return false;
		if (k->type == CFG_INT)
			*(int *)slot = (int)v;
		else
			*(size_t *)slot = (size_t)v;
		return true;
	case CFG_ENUM:
		return one_of(l, k, slot, t);
	case CFG_TEXT:
	case CFG_STRING:
		free(*(char **)slot);
		*(char **)slot = k->type == CFG_TEXT ? cfg_literal(l, t) :
		    cfg_expanded(l, t);
		return *(char **)slot != NULL;
	case CFG_LIST:
		cfg_strings_free(*(char ***)slot);
		*(char ***)slot = cfg_strings(l, t, false);
		return *(char ***)slot != NULL;
	case CFG_OTHER:
		break;
	}
	return true;
}

/* A member of an object: its row's type, then its setter. */
static void
member(struct loader *l, const char *key, int t, void *arg)
{
	const struct cfg_obj *o = arg;
	const struct cfg_key *k;

	if ((k = key_find(o->in, key)) == NULL) {
		cfg_problem(l, false, "unknown key ignored");
		return;
	}
	/* Only --listen reads it (but "listen"): its problems wait. */
	l->http = (k->flags & CFG_LISTENING) != 0;
	if (value(l, k, o, t) && k->set != NULL)
		k->set(l, k, o, t);
	l->http = false;
}

/* The keys an object must have (when it is one at all). */
static void
required(struct loader *l, const struct cfg_obj *o, int t)
{
	const struct cfg_key *k;

	if (!json_is(&l->j, t, JSMN_OBJECT))
		return;
	for (k = cfg_keys; k->name != NULL; k++)
		if ((k->in & CFG_IN(o->in)) != 0 &&
		    (k->flags & CFG_REQUIRED) != 0 &&
		    json_get(&l->j, t, k->name) < 0)
			cfg_problem(l, true, "missing \"%s\" (%s)", k->name,
			    k->what);
}

/* A toolbox or a server: its defaults, its members, what it needs. */
void
cfg_read(struct loader *l, const struct cfg_obj *o, int t)
{
	defaults(o);
	cfg_each(l, t, member, (void *)o);
	required(l, o, t);
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
		cfg_problem(l, true, "%s", buf_cstr(&err));
	else if (!a.loopback && l->cfg->http_token == NULL)
		cfg_problem(l, true, "%s is not a loopback address: set "
		    "\"httpToken\" (for example \"${MCP_WORKBENCH_TOKEN}\") so "
		    "that clients must send Authorization: Bearer TOKEN",
		    a.text);
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

/* What a server left to the top level (defaults()) takes its value. */
static void
inherit(struct cfg *c)
{
	const struct cfg_key *k;
	struct cfg_obj top = { c, CFG_TOP }, srv = { NULL, CFG_SERVER };
	int i, n, *v;

	for (i = 0; i < c->nboxes; i++)
		for (n = 0; n < c->boxes[i].nservers; n++) {
			srv.base = &c->boxes[i].servers[n];
			for (k = cfg_keys; k->name != NULL; k++) {
				if (!inherited(k))
					continue;
				v = CFG_SLOT(&srv, k);
				if (*v < 0)
					*v = *(int *)CFG_SLOT(&top, k);
			}
		}
}

static void
syntax_error(struct loader *l, const char *text, int r)
{
	size_t line, col;

	if (r == JSON_NOTOBJ) {
		cfg_problem(l, true, "the top level must be a JSON object");
		return;
	}
	if (r == JSON_TOOBIG || r == JSON_TOODEEP) {
		if (r == JSON_TOOBIG)
			cfg_problem(l, true, "too large to load");
		else
			cfg_problem(l, true, "nested deeper than %d levels",
			    JSON_DEPTH_MAX);
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
	struct cfg_obj top = { c, CFG_TOP };
	int r;

	memset(c, 0, sizeof(*c));
	c->path = xstrdup(path);
	defaults(&top);
	if ((r = json_parse(&l.j, text, len)) != JSON_OK)
		syntax_error(&l, text, r);
	else {
		cfg_each(&l, 0, member, &top);
		listen_check(&l);
		http_deferred(&l);
		required(&l, &top, 0);
	}
	inherit(c);
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

void
cfg_strings_free(char **v)
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
	cfg_strings_free(s->argv);
	cfg_strings_free(s->env);
	cfg_strings_free(s->base_env);
	cfg_strings_free(s->filters);
	cfg_strings_free(s->prompt_filters);
	cfg_strings_free(s->resource_filters);
	free(s->cwd);
	free(s->cwd_raw);
	free(s->command);
	free(s->url);
	cfg_strings_free(s->headers);
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
	d->url = str_dup(s->url);
	d->headers = strings_dup(s->headers);
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
	cfg_strings_free(c->origins);
	cfg_strings_free(c->hosts);
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
	/*
	 * A remote server: how, where, and with what (a key, often).  A
	 * process's digest stays as it was (its catalogue entry too).
	 */
	if (s->url != NULL) {
		feed(&h, 'T', s->type == TYPE_SSE ? "sse" : "http");
		feed(&h, 'u', s->url);
		feed_strings(&h, 'h', s->headers, false);
	}
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