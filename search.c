/*
 * search.c: the search_tools meta-tool.  It ranks the tools of every
 * toolbox whose servers' lists are known (open now, or in the catalogue)
 * by BM25 over each tool's name (counted twice), title and description,
 * in terms made the same way for the query and the tools (terms.c).  It
 * never starts a server; toolboxes not indexed yet are named in the answer.
 */
#include <stdlib.h>
#include <string.h>

#include "box.h"
#include "terms.h"

#define LIMIT_DEFAULT	10
#define LIMIT_MAX	50
#define QUERY_TERMS	16	/* Terms of a query looked at. */
#define SUMMARY_MAX	240	/* A description's first sentence at most. */
#define BM25_K1		1.2
#define BM25_B		0.75

static const char search_def[] =
	",{\"name\":\"search_tools\",\"title\":\"Search the tools of every "
	"toolbox\",\"description\":\"Find tools by what they do, across all "
	"toolboxes, before opening any: give a few words (e.g. \\\"read a "
	"file\\\", \\\"create github issue\\\"). Returns the best matches with "
	"their toolbox, server and name, the first sentence of each "
	"description, and whether its toolbox is open; then open_toolbox that "
	"toolbox and call the tool with use_tool. Starts no server. Toolboxes "
	"never opened on this machine are not indexed yet and are named in the "
	"answer.\",\"inputSchema\":{\"type\":\"object\",\"properties\":{"
	"\"query\":{\"type\":\"string\",\"minLength\":1,\"description\":\"What "
	"the tool should do, in a few words.\"},\"toolbox\":{\"type\":"
	"\"string\",\"description\":\"Search only this toolbox.\"},\"limit\":{"
	"\"type\":\"integer\",\"minimum\":1,\"maximum\":50,\"description\":"
	"\"How many results at most (default 10).\"}},\"required\":["
	"\"query\"],\"additionalProperties\":false},\"annotations\":{"
	"\"title\":\"Search the tools of every toolbox\",\"readOnlyHint\":true,"
	"\"destructiveHint\":false,\"idempotentHint\":true,"
	"\"openWorldHint\":false}}";

/* A tool object being read, and a string of it: kept between tools. */
static struct json tj;
static struct buf text;

/* One tool being ranked. */
struct hit {
	const struct server	*srv;
	struct item		*tool;
	double			 score;
	int			 order;		/* Configuration order. */
};

void
search_put_tool(struct buf *b)
{
	if (wb.cfg.search_tool)
		buf_puts(b, search_def);
}

/* The natural logarithm, without libm. */
static double
ln(double x)
{
	double y, y2, sum = 0, term;
	int e = 0, k;

	while (x > 2) {
		x /= 2;
		e++;
	}
	while (x < 1) {
		x *= 2;
		e--;
	}
	y = (x - 1) / (x + 1);
	y2 = y * y;
	for (k = 1, term = y; k < 40; k += 2, term *= y2)
		sum += term / k;
	return 2 * sum + e * 0.69314718055994530942;
}

/* A tool's terms: its name twice, its title and its description. */
static void
tool_terms(const struct item *t, struct buf *out)
{
	const char *v;
	int i;

	term_put(out, t->key, strlen(t->key));
	term_put(out, t->key, strlen(t->key));
	if (json_parse(&tj, t->json, t->len) == JSON_OK) {
		for (i = 0; i < 2; i++) {
			v = json_str(&tj, json_get(&tj, 0, i == 0 ? "title" :
			    "description"), &text);
			if (v != NULL)
				term_put(out, v, strlen(v));
		}
	}
	json_release(&tj);
}

/* How often term (with its space) comes in words; the words' count too. */
static int
term_count(const char *words, const char *term, size_t n, int *total)
{
	const char *p = words, *sp;
	int count = 0;

	*total = 0;
	for (; *p != '\0'; p = sp + 1) {
		sp = strchr(p, ' ');
		(*total)++;
		if ((size_t)(sp - p + 1) == n && memcmp(p, term, n) == 0)
			count++;
	}
	return count;
}

/*
 * The query's terms, each with its space, distinct, at most
 * QUERY_TERMS; returns how many.
 */
static int
query_terms(const char *query, struct buf *words, const char **term,
    size_t *len)
{
	const char *p, *sp;
	int n = 0, k;

	term_put(words, query, strlen(query));
	for (p = buf_cstr(words); *p != '\0' && n < QUERY_TERMS; p = sp + 1) {
		sp = strchr(p, ' ');
		for (k = 0; k < n && (len[k] != (size_t)(sp - p + 1) ||
		    memcmp(term[k], p, len[k]) != 0); k++)
			;
		if (k == n) {
			term[n] = p;
			len[n++] = (size_t)(sp - p + 1);
		}
	}
	return n;
}

/* The tools searched: those of servers whose lists are known. */
static struct hit *
collect(const struct session *se, const struct toolbox *only, int *nhits,
    struct buf *missing)
{
	struct server *s;
	int n = 0, cap = 64, t, ntools, order = 0;
	struct hit *h = xrealloc(NULL, (size_t)cap * sizeof(*h));
	struct item *tools;
	const struct toolbox *last = NULL;

	SRV_EACH(s) {
		if ((only != NULL && box_of(s) != only) ||
		    !srv_used_by(s, se))
			continue;
		catalog_load(s, se, true);
		if (!srv_catalogued(s) && !list_indexed(s, LIST_TOOLS)) {
			if (box_of(s) != last) {
				buf_puts(missing, missing->len == 0 ? "" : ",");
				json_put_cstr(missing, box_of(s)->cfg->name);
				last = box_of(s);
			}
			continue;
		}
		tools = list_items(s, LIST_TOOLS, &ntools);
		for (t = 0; t < ntools; t++) {
			if (n == cap) {
				cap *= 2;
				h = xrealloc(h, (size_t)cap * sizeof(*h));
			}
			h[n].srv = s;
			h[n].tool = &tools[t];
			h[n].score = 0;
			h[n++].order = order++;
		}
	}
	*nhits = n;
	return h;
}

/* BM25: score every hit for the query's terms. */
static void
rank(struct hit *h, int n, const char **term, const size_t *len, int nt)
{
	int i, k, df[QUERY_TERMS] = { 0 }, *tf, *dl;
	double avgdl = 0, idf, f;
	struct buf words = { 0 };

	tf = xcalloc((size_t)n * (size_t)nt + 1, sizeof(*tf));
	dl = xcalloc((size_t)n + 1, sizeof(*dl));
	for (i = 0; i < n; i++) {
		if (h[i].tool->words == NULL) {
			words.len = 0;
			tool_terms(h[i].tool, &words);
			h[i].tool->words = xstrdup(
			    buf_cstr(&words));
		}
		for (k = 0; k < nt; k++) {
			tf[i * nt + k] = term_count(h[i].tool->words, term[k],
			    len[k], &dl[i]);
			df[k] += tf[i * nt + k] > 0;
		}
		avgdl += dl[i];
	}
	avgdl = n > 0 ? avgdl / n : 1;
	for (k = 0; k < nt; k++) {
		idf = ln((n - df[k] + 0.5) / (df[k] + 0.5) + 1);
		for (i = 0; i < n; i++) {
			f = tf[i * nt + k];
			h[i].score += idf * f * (BM25_K1 + 1) / (f + BM25_K1 *
			    (1 - BM25_B + BM25_B * dl[i] / (avgdl > 0 ? avgdl :
			    1)));
		}
	}
	free(tf);
	free(dl);
	buf_free(&words);
}

static int
by_score(const void *a, const void *b)
{
	const struct hit *x = a, *y = b;

	if (x->score != y->score)
		return x->score < y->score ? 1 : -1;
	return x->order - y->order;
}

/* How much of d is its first sentence: to ". ", a newline or the cap. */
static size_t
first_sentence(const char *d)
{
	size_t n;

	for (n = 0; d[n] != '\0' && d[n] != '\n' && n < SUMMARY_MAX; n++)
		if (d[n] == '.' && (d[n + 1] == ' ' || d[n + 1] == '\0'))
			return n + 1;
	/* Cut at the cap: not inside a character. */
	while (n == SUMMARY_MAX && ((unsigned char)d[n] & 0xc0) == 0x80)
		n--;
	return n;
}

static void
put_summary(struct buf *b, const struct item *t)
{
	const char *d = NULL;

	if (json_parse(&tj, t->json, t->len) == JSON_OK)
		d = json_str(&tj, json_get(&tj, 0, "description"), &text);
	json_put_str(b, d != NULL ? d : "", d != NULL ? first_sentence(d) : 0);
	json_release(&tj);
}

static void
put_hit(struct buf *b, const struct session *se, const struct hit *h)
{
	buf_puts(b, "{\"toolbox\":");
	json_put_cstr(b, box_of(h->srv)->cfg->name);
	buf_puts(b, ",\"server\":");
	json_put_cstr(b, srv_name(h->srv));
	buf_puts(b, ",\"name\":");
	json_put_cstr(b, h->tool->key);
	buf_puts(b, ",\"description\":");
	put_summary(b, h->tool);
	buf_printf(b, ",\"toolbox_open\":%s", box_seen(se, box_of(h->srv)) ?
	    "true" : "false");
	/* Listed for a client of other capabilities: it may not be offered. */
	if (srv_catalog_other(h->srv))
		buf_puts(b, ",\"listed_for_other_capabilities\":true");
	buf_putc(b, '}');
}

/* The answer: the best hits, and the toolboxes not indexed. */
static void
put_results(struct buf *b, const struct session *se, const char *query,
    struct hit *h, int n, int limit, const struct buf *missing)
{
	int i;

	buf_puts(b, "{\"query\":");
	json_put_cstr(b, query);
	buf_puts(b, ",\"results\":[");
	for (i = 0; i < n && i < limit && h[i].score > 0; i++) {
		if (i > 0)
			buf_putc(b, ',');
		put_hit(b, se, &h[i]);
	}
	buf_puts(b, "],\"not_indexed\":[");
	buf_put(b, missing->data, missing->len);
	buf_puts(b, "]}");
}

/* Read search_tools' arguments; false with the reason in why. */
static bool
search_args(const struct json *j, int args, char **query,
    const struct toolbox **only, long long *limit, struct buf *why)
{
	int v;
	char *box;

	*query = json_strdup(j, json_get(j, args, "query"));
	if (*query == NULL || (*query)[0] == '\0') {
		buf_puts(why, "query: expected a non-empty string");
		return false;
	}
	if ((v = json_get(j, args, "limit")) >= 0 && (!json_get_int(j, v,
	    limit) || *limit < 1 || *limit > LIMIT_MAX)) {
		buf_puts(why, "limit: expected an integer from 1 to 50");
		return false;
	}
	if ((v = json_get(j, args, "toolbox")) < 0)
		return true;
	if ((box = json_strdup(j, v)) == NULL ||
	    (*only = box_find(box, strlen(box))) == NULL)
		buf_printf(why, "toolbox: no toolbox '%s' is configured",
		    box != NULL ? box : "?");
	free(box);
	return why->len == 0;
}

void
search_tool(struct session *se, const struct json *j, int args,
    const char *id, size_t idlen)
{
	const struct toolbox *only = NULL;
	struct buf why = { 0 }, words = { 0 }, missing = { 0 }, out = { 0 };
	const char *term[QUERY_TERMS];
	size_t len[QUERY_TERMS];
	long long limit = LIMIT_DEFAULT;
	struct hit *h;
	char *query = NULL;
	int n, nt;

	if (!search_args(j, args, &query, &only, &limit, &why)) {
		buf_printf(&out, "Invalid tool invocation parameters: %s",
		    buf_cstr(&why));
		reply_text(se, id, idlen, buf_cstr(&out), true);
	} else {
		nt = query_terms(query, &words, term, len);
		h = collect(se, only, &n, &missing);
		rank(h, n, term, len, nt);
		if (n > 1)
			qsort(h, (size_t)n, sizeof(*h), by_score);
		put_results(&out, se, query, h, n, (int)limit, &missing);
		reply_structured(se, id, idlen, &out);
		free(h);
	}
	free(query);
	buf_free(&why);
	buf_free(&words);
	buf_free(&missing);
	buf_free(&out);
}
