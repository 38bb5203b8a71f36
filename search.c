/*
 * search.c: the search_tools meta-tool.  It ranks the tools of every
 * toolbox whose servers' lists are known (open now, or in the catalogue)
 * and hands over the input schemas of the best few, so that a model can
 * call the tool it found without opening anything.  It never starts a
 * server; toolboxes not indexed yet are named in the answer.
 *
 * Ranking is BM25 over one weighted bag of terms a tool (a simple
 * BM25F): each term counts by the weight of the field it came from
 * (field_weight: the tool's name most, its parameters' descriptions
 * least), and a tool's length is its weighted count.  A query's terms
 * are made as a tool's are (terms.c), and each brings in the words
 * people use for the same thing (thesaurus.c), which count for less
 * than the words asked; so do quoted words and the names of files
 * ("notes.txt": a text file named notes).  A tool whose name the query
 * explains ranks higher, the more so when the words agree in number
 * ("which pull requests are open": list_pull_requests); and a question
 * ("what did reviewers say") goes to the tools that only read (rank).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "box.h"
#include "terms.h"

#define LIMIT_DEFAULT	5
#define QUERIES_MAX	5	/* Queries of one call. */
#define QUERY_BYTES	1024	/* Of a query, read: 16 terms fit. */
#define QUERY_TERMS	16	/* Terms of a query looked at, */
#define TERMS_MAX	64	/* with those the thesaurus adds. */
#define RELATED_WEIGHT	0.5f	/* A related term's weight. */
#define QUOTED_WEIGHT	0.2f	/* A quoted term's weight. */
#define EXT_WEIGHT	1.0f	/* A file name's kind ("txt", "png"). */
#define KIND_WEIGHT	0.5f	/* "file" or "website", for a dotted name. */
#define NAME_BONUS	0.5f	/* A name the query explains whole. */
#define NUMBER_SAID	2	/* A concept's word was said (query.number); */
#define NUMBER_OTHER	0.5f	/* a name's word in the other number counts. */
#define QUESTION_CHANGES 0.5f	/* A question's score of a tool that changes. */
#define SLOTS		128	/* The query's hash table: > TERMS_MAX. */
#define SUMMARY_MAX	240	/* A description's first sentence at most. */
#define BM25_K1		1.2f
#define BM25_B		0.5f

/* Where a tool's term came from, and what that counts. */
enum tool_field {
	F_NAME,			/* The tool's name. */
	F_TITLE,		/* Its title. */
	F_DESC,			/* Its description. */
	F_PARAM,		/* Its parameters' names. */
	F_PDESC,		/* Its parameters' descriptions. */
	F_SERVER,		/* Its server's name. */
	F_BOX,			/* Its toolbox's name and description. */
	F_COUNT
};

static const float field_weight[F_COUNT] = {
	[F_NAME] = 3,
	[F_TITLE] = 1.5f,
	[F_DESC] = 1,
	[F_PARAM] = 1,
	[F_PDESC] = 0.3f,
	[F_SERVER] = 1,
	[F_BOX] = 0.25f,
};

/* A tool's terms as hashes, each with its field: made once a tool. */
struct tool_index {
	float		 len;		/* Weighted count of terms. */
	bool		 changes;	/* It changes things: no mere reader. */
	int		 n;
	struct posting {
		uint32_t hash;
		uint16_t field;
		uint16_t mark;	/* TERM_PLURAL */
	}		 p[];
};

/*
 * A query's terms.  A word asked and those the thesaurus brings in for
 * it are one concept, scored as one term (their counts added, each by
 * its weight, in the tools that have any of them): a rare synonym does
 * not outweigh the word asked.
 */
struct query {
	int		 n;
	int		 nconcepts;
	uint32_t	 hash[TERMS_MAX];
	float		 weight[TERMS_MAX];
	signed char	 concept[TERMS_MAX];
	unsigned char	 number[QUERY_TERMS];	/* NUMBER_SAID | TERM_PLURAL */
	bool		 question;	/* It asks to be told something. */
	signed char	 slot[SLOTS];	/* hash % SLOTS: a term, or -1. */
};

/* One tool being ranked. */
struct hit {
	const struct server	*srv;
	struct item		*tool;
	float			 score;
	int			 order;		/* Configuration order. */
};

static const char search_def[] =
	",{\"name\":\"search_tools\",\"title\":\"Search the tools of every "
	"toolbox\",\"description\":\"Find tools by what they should do, in "
	"every toolbox. Hits give toolbox, server and name for use_tool; the "
	"best come with their inputSchema.\",\"inputSchema\":{\"type\":"
	"\"object\",\"properties\":{\"query\":{\"type\":\"string\","
	"\"minLength\":1,\"description\":\"What the tool should do.\"},"
	"\"queries\":{\"type\":\"array\",\"items\":{\"type\":\"string\","
	"\"minLength\":1},\"minItems\":1,\"maxItems\":5,\"description\":"
	"\"Several searches at once, instead of query.\"},\"toolbox\":{"
	"\"type\":\"string\"},\"limit\":{\"type\":\"integer\",\"minimum\":1,"
	"\"maximum\":50}},\"additionalProperties\":false},\"annotations\":{"
	"\"title\":\"Search the tools of every toolbox\",\"readOnlyHint\":true,"
	"\"destructiveHint\":false,\"idempotentHint\":true,"
	"\"openWorldHint\":false}}";

/* A tool object being read, and a string of it: kept between tools. */
static struct json tj;
static struct buf text, words, marks;

void
search_put_tool(struct buf *b)
{
	if (wb.cfg.search_tool)
		buf_puts(b, search_def);
}

/* The natural logarithm, without libm. */
static float
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
	return (float)(2 * sum + e * 0.69314718055994530942);
}

/* The square root, without libm. */
static float
root(double x)
{
	double r = x > 1 ? x : 1;
	int k;

	for (k = 0; k < 40 && x > 0; k++)
		r = (r + x / r) / 2;
	return x > 0 ? (float)r : 0;
}

static uint32_t
term_hash(const char *t, size_t n)
{
	return (uint32_t)hash_bytes(HASH_INIT, t, n);
}

/*
 * Index building: the terms of a text, added to the postings of a
 * field.  words holds every term of the tool so far; each field's
 * start is kept in from[].
 */
static void
add_text(const char *s, size_t n)
{
	term_put_marked(&words, &marks, s, n);
}

static void
add_string(int t)
{
	const char *v = json_str(&tj, t, &text);

	if (v != NULL)
		add_text(v, strlen(v));
}

/* The strings of an array (a parameter's enum). */
static void
add_strings(int a)
{
	int i, k;

	if (!json_is(&tj, a, JSMN_ARRAY))
		return;
	for (i = a + 1, k = 0; k < tj.tok[a].size; k++, i = json_next(&tj, i))
		if (json_is(&tj, i, JSMN_STRING))
			add_string(i);
}

/*
 * The parameters: their names to F_PARAM; their descriptions and the
 * values they may take (enum: "state": "closed" is how an issue is
 * closed) to F_PDESC.
 */
static void
add_params(size_t *from)
{
	int props, i, k, n;

	props = json_path(&tj, 0, "inputSchema.properties");
	n = json_is(&tj, props, JSMN_OBJECT) ? tj.tok[props].size : 0;
	for (i = props + 1, k = 0; k < n; k++, i = json_next(&tj, i + 1))
		add_string(i);
	from[F_PDESC] = words.len;
	for (i = props + 1, k = 0; k < n; k++, i = json_next(&tj, i + 1)) {
		add_string(json_get(&tj, i + 1, "description"));
		add_strings(json_get(&tj, i + 1, "enum"));
	}
}

/*
 * Whether the tool only reads (a question is answered by one): as its
 * annotations say, else as the verb its name opens with (get_issue,
 * list_commits), in words[0, name).
 */
static bool
tool_reads(bool ok, size_t name)
{
	const char *sp;
	bool reads;

	if (ok && json_get_bool(&tj, json_path(&tj, 0,
	    "annotations.readOnlyHint"), &reads) == 0)
		return reads;
	if (name == 0)
		return false;
	sp = memchr(words.data, ' ', name);
	return sp != NULL && term_reads(words.data,
	    (size_t)(sp - words.data + 1));
}

/* The title: the tool's, or as 2025-03-26 had it, its annotations'. */
static void
add_title(void)
{
	int t = json_get(&tj, 0, "title");

	add_string(t >= 0 ? t : json_path(&tj, 0, "annotations.title"));
}

static struct tool_index *
index_make(const size_t *from)
{
	struct tool_index *x;
	const char *p = buf_cstr(&words), *sp;
	int f = 0, n = 0;

	for (sp = p; (sp = strchr(sp, ' ')) != NULL; sp++)
		n++;
	x = xcalloc(1, sizeof(*x) + (size_t)n * sizeof(x->p[0]));
	for (; *p != '\0'; p = sp + 1) {
		while (f + 1 < F_COUNT && (size_t)(p - words.data) >=
		    from[f + 1])
			f++;
		sp = strchr(p, ' ');
		x->p[x->n].hash = term_hash(p, (size_t)(sp - p + 1));
		x->p[x->n].mark = (uint16_t)marks.data[x->n];
		x->p[x->n++].field = (uint16_t)f;
		x->len += field_weight[f];
	}
	return x;
}

/* The tool's index: its fields' terms, in the order of enum field. */
static struct tool_index *
tool_index(const struct server *s, const struct item *t)
{
	const struct cfg_toolbox *box = box_of(s)->cfg;
	size_t from[F_COUNT];
	bool ok = json_parse(&tj, t->json, t->len) == JSON_OK, reads;
	struct tool_index *x;

	words.len = marks.len = 0;
	from[F_NAME] = 0;
	add_text(t->key, strlen(t->key));
	from[F_TITLE] = words.len;
	if (ok)
		add_title();
	from[F_DESC] = words.len;
	if (ok)
		add_string(json_get(&tj, 0, "description"));
	from[F_PARAM] = from[F_PDESC] = words.len;
	if (ok)
		add_params(from);
	reads = tool_reads(ok, from[F_TITLE]);
	json_release(&tj);
	from[F_SERVER] = words.len;
	add_text(srv_name(s), strlen(srv_name(s)));
	from[F_BOX] = words.len;
	add_text(box->name, strlen(box->name));
	add_text(box->description, strlen(box->description));
	x = index_make(from);
	x->changes = !reads;
	return x;
}

/*
 * Add the term t (n bytes, with its space) to the query, once, in the
 * given concept; false when it is there already or there is no room.
 */
static bool
query_add(struct query *q, const char *t, size_t n, float weight,
    int concept)
{
	uint32_t h = term_hash(t, n);
	unsigned int i = h % SLOTS;

	for (; q->slot[i] >= 0; i = (i + 1) % SLOTS)
		if (q->hash[q->slot[i]] == h)
			return false;
	if (q->n == TERMS_MAX)
		return false;
	q->hash[q->n] = h;
	q->weight[q->n] = weight;
	q->concept[q->n] = (signed char)concept;
	q->slot[i] = (signed char)q->n++;
	return true;
}

/* The query's term of hash h, or -1. */
static int
query_find(const struct query *q, uint32_t h)
{
	unsigned int i = h % SLOTS;

	for (; q->slot[i] >= 0; i = (i + 1) % SLOTS)
		if (q->hash[q->slot[i]] == h)
			return q->slot[i];
	return -1;
}

/* Each term of words (each with its space) to concept c. */
static void
query_add_all(struct query *q, struct buf *words, float weight, int c)
{
	const char *p, *sp;

	for (p = buf_cstr(words); *p != '\0'; p = sp + 1) {
		sp = strchr(p, ' ');
		(void)query_add(q, p, (size_t)(sp - p + 1), weight, c);
	}
}

/*
 * Where the quoted text whose opening quote is s[i] ends (its closing
 * quote), or 0 when s[i] opens none.  A double quote or a backquote
 * pairs with the next; a single quote opens after a space or at the
 * start and closes before a space, punctuation or the end, so that "it's"
 * and "repo's" are words.
 */
static size_t
quote_end(const char *s, size_t i)
{
	const char *e;

	if (s[i] == '"' || s[i] == '`')
		return (e = strchr(s + i + 1, s[i])) != NULL ?
		    (size_t)(e - s) : 0;
	if (s[i] != '\'' || (i > 0 && s[i - 1] != ' ' && s[i - 1] != '('))
		return 0;
	for (e = s + i + 1; (e = strchr(e, '\'')) != NULL; e++)
		if (e[1] == '\0' || strchr(" .,;:!?)", e[1]) != NULL)
			return (size_t)(e - s);
	return 0;
}

/* The terms of a query, as said: at[k] the k'th, at[n] their end. */
struct said {
	struct buf	 terms, marks;
	const char	*at[QUERY_TERMS + 1];
	float		 weight[QUERY_TERMS];
	int		 concept[QUERY_TERMS];
	int		 n;
};

/* The terms of t[0, n) to s, weighing w each. */
static void
query_part(struct said *s, const char *t, size_t n, float w)
{
	size_t i = s->terms.len;

	term_put_marked(&s->terms, &s->marks, t, n);
	for (; i < s->terms.len; i++)
		if (s->terms.data[i] == ' ' && s->n < QUERY_TERMS)
			s->weight[s->n++] = w;
}

/*
 * How a web address ends: a dotted name that ends so is a site, any
 * other a file ("notes.txt", "src/main.rs").
 */
static const char *const web_ends[] = {
	"com", "org", "net", "io", "dev", "app", "edu", "gov",
};

static bool
name_byte(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || (c != '\0' && strchr("/_-~.", c));
}

/*
 * Where the file name or web address at q[i] ends, and its last dot in
 * *dot; 0 when q[i] starts none.  One is a word of letters, digits and
 * "/_-~." with a dot that has a name before it and one to four letters
 * or digits after it, a letter among them ("photo.png", "a/b.rs"), or
 * that opens a name (".bashrc"); a final full stop is the sentence's.
 */
static size_t
name_end(const char *q, size_t i, size_t *dot)
{
	size_t e, d, k;
	bool letter = false;

	if ((i > 0 && strchr(" \t(", q[i - 1]) == NULL) || !name_byte(q[i]))
		return 0;
	for (e = i; name_byte(q[e]); e++)
		;
	while (e > i && q[e - 1] == '.')
		e--;
	for (d = e; d > i && q[d - 1] != '.'; d--)
		;
	if (d == i || (k = e - d) == 0 || (d - 1 > i && k > 4))
		return 0;
	for (; d < e; d++)
		letter |= (q[d] | 0x20) >= 'a' && (q[d] | 0x20) <= 'z';
	*dot = e - k - 1;
	return letter ? e : 0;
}

/*
 * A file name or web address: its name is a value (as a quoted word
 * is), what follows the dot says what kind of file ("notes.txt", a text;
 * "photo.png", an image) and the whole is a file or a site.
 */
static void
query_name(struct said *s, const char *q, size_t dot, size_t end)
{
	size_t i;
	const char *kind = "file";

	for (i = 0; i < sizeof(web_ends) / sizeof(web_ends[0]); i++)
		if (strlen(web_ends[i]) == end - dot - 1 &&
		    strncasecmp(q + dot + 1, web_ends[i], end - dot - 1) == 0)
			kind = "website";
	query_part(s, q, dot, QUOTED_WEIGHT);
	query_part(s, q + dot + 1, end - dot - 1, EXT_WEIGHT);
	query_part(s, kind, strlen(kind), KIND_WEIGHT);
}

/*
 * The query's terms and the weight of each: what is quoted is most
 * often a value the tool is to be given ("click 'Sign in'", "rename
 * 'draft' to 'final'"), not what the tool does, and counts less; so
 * does a file's name.
 */
static void
query_terms(struct said *s, const char *query)
{
	size_t i, from = 0, e, dot;

	for (i = 0; query[i] != '\0'; i++) {
		if ((e = quote_end(query, i)) > 0) {
			query_part(s, query + from, i - from, 1);
			query_part(s, query + i + 1, e - i - 1, QUOTED_WEIGHT);
			from = (i = e) + 1;
		} else if ((e = name_end(query, i, &dot)) > 0) {
			query_part(s, query + from, i - from, 1);
			query_name(s, query + i, dot - i, e - i);
			from = e;
			i = e - 1;
		}
	}
	query_part(s, query + from, i - from, 1);
}

/*
 * The query's terms, each a concept of its own unless a word before
 * it brought it in already; the number each concept was said in.
 */
static void
query_said(struct query *q, struct said *s, const char *query)
{
	const char *p;
	int c, n;

	query_terms(s, query);
	for (p = buf_cstr(&s->terms), n = 0; *p != '\0' && n < QUERY_TERMS;
	    n++) {
		s->at[n] = p;
		p = strchr(p, ' ') + 1;
		c = query_find(q, term_hash(s->at[n], (size_t)(p - s->at[n])));
		if (c < 0 && query_add(q, s->at[n], (size_t)(p - s->at[n]),
		    s->weight[n], q->nconcepts)) {
			q->number[q->nconcepts] = s->weight[n] < 1 ? 0 :
			    (unsigned char)(NUMBER_SAID | s->marks.data[n]);
			c = q->nconcepts++;
		}
		s->concept[n] = c >= 0 ? q->concept[c] : 0;
	}
	s->at[n] = p;
	s->n = n;
}

/*
 * What the thesaurus has for each term and for each phrase of two or
 * three terms in a row, in the concept of the phrase's first: what means
 * the same fully, what is related less.  A phrase's number is its last
 * word's ("pull requests").
 */
static void
query_thesaurus(struct query *q, const struct said *s)
{
	struct buf same = { 0 }, near = { 0 };
	int i, w, c;

	for (i = 0; i < s->n; i++)
		for (w = 3; w >= 1; w--) {
			if (i + w > s->n)
				continue;
			same.len = near.len = 0;
			if (!term_related(s->at[i], (size_t)(s->at[i + w] -
			    s->at[i]), &same, &near))
				continue;
			c = s->concept[i];
			query_add_all(q, &same, s->weight[i], c);
			query_add_all(q, &near, s->weight[i] * RELATED_WEIGHT,
			    c);
			if (w > 1 && (q->number[c] & NUMBER_SAID))
				q->number[c] = (unsigned char)(NUMBER_SAID |
				    s->marks.data[i + w - 1]);
			if (w > 1)
				break;
		}
	buf_free(&same);
	buf_free(&near);
}

/*
 * The query: what was said and the thesaurus's words for it.  What was
 * said is kept between queries, as a tool being read is.  Only its first
 * QUERY_BYTES are read, cut where a character begins: a query of
 * megabytes (its quotes each looked for a match) costs no more.
 */
static void
query_make(struct query *q, const char *query)
{
	static struct said s;
	char cut[QUERY_BYTES + 1];
	size_t n = strnlen(query, QUERY_BYTES);

	while (n > 0 && ((unsigned char)query[n] & 0xc0) == 0x80)
		n--;
	memcpy(cut, query, n);
	cut[n] = '\0';
	s.terms.len = s.marks.len = 0;
	s.n = 0;
	q->n = q->nconcepts = 0;
	q->question = term_question(cut);
	memset(q->slot, -1, sizeof(q->slot));
	query_said(q, &s, cut);
	query_thesaurus(q, &s);
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
		catalog_load(s, se);
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
			if (tools[t].index == NULL)
				tools[t].index = tool_index(s, &tools[t]);
			h[n].srv = s;
			h[n].tool = &tools[t];
			h[n++].order = order++;
		}
	}
	*nhits = n;
	return h;
}

/*
 * What a name's word counts for a concept: less when the query said it
 * in the other number ("which pull requests are open": list_pull_requests,
 * not get_pull_request; "show me pull request 7": the other way round).
 */
static float
agree(unsigned char number, uint16_t mark)
{
	if (!(number & NUMBER_SAID))
		return 1;
	return (number & TERM_PLURAL) == (mark & TERM_PLURAL) ? 1 :
	    NUMBER_OTHER;
}

/*
 * What the query's concepts weigh in tool i: tf[c], by field and term
 * weight; seen[c], the weight of the concept's heaviest term there, so
 * that a tool with a related word alone counts half a tool in how common
 * the concept is (a word asked stays rare though its synonyms are not).
 * Returns how much of the tool's name the query has: its name's terms
 * found, each by its weight and how it agrees in number, over its
 * name's terms.
 */
static float
weigh(const struct query *q, const struct tool_index *x, float *tf,
    float *seen)
{
	float name = 0, named = 0, w;
	int p, k, c;

	for (p = 0; p < x->n; p++) {
		named += x->p[p].field == F_NAME;
		if ((k = query_find(q, x->p[p].hash)) < 0)
			continue;
		c = q->concept[k];
		w = q->weight[k];
		tf[c] += w * field_weight[x->p[p].field];
		if (w > seen[c])
			seen[c] = w;
		if (x->p[p].field == F_NAME)
			name += w * agree(q->number[c], x->p[p].mark);
	}
	return named > 0 ? name / named : 0;
}

/*
 * BM25 over the weighted terms: tf[i][c], what concept c weighs in tool
 * i; then every hit's score.  The inverse document frequency is taken
 * at its square root, so that a rare word met in a parameter's
 * description alone does not outweigh a common one in a tool's name;
 * and a tool whose name the query explains (get_pull_request, for "show
 * me pull request 7") goes above those whose names say more
 * (get_pull_request_files).  A question is not answered by changing
 * things: those that do rank lower.
 */
static void
rank(struct hit *h, int n, const struct query *q)
{
	int i, c, nc = q->nconcepts;
	float *tf = xcalloc((size_t)n * (size_t)nc + 1, sizeof(*tf));
	float *named = xcalloc((size_t)n + 1, sizeof(*named));
	float seen[QUERY_TERMS], df[QUERY_TERMS] = { 0 }, idf[QUERY_TERMS];
	float avglen = 0, f, norm;

	for (i = 0; i < n; i++) {
		memset(seen, 0, sizeof(seen));
		named[i] = weigh(q, h[i].tool->index, tf + i * nc, seen);
		for (c = 0; c < nc; c++)
			df[c] += seen[c];
		avglen += h[i].tool->index->len;
	}
	avglen = n > 0 && avglen > 0 ? avglen / n : 1;
	/* Once a concept, not once a tool: a search of 10,000 tools. */
	for (c = 0; c < nc; c++)
		idf[c] = root(ln((n - df[c] + 0.5) / (df[c] + 0.5) + 1));
	for (i = 0; i < n; i++) {
		h[i].score = 0;
		norm = BM25_K1 * (1 - BM25_B + BM25_B * h[i].tool->index->len /
		    avglen);
		for (c = 0; c < nc; c++) {
			if ((f = tf[i * nc + c]) == 0)
				continue;
			h[i].score += idf[c] * f * (BM25_K1 + 1) / (f + norm);
		}
		h[i].score *= 1 + NAME_BONUS * named[i];
		if (q->question && h[i].tool->index->changes)
			h[i].score *= QUESTION_CHANGES;
	}
	free(tf);
	free(named);
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
	/* Cut at the cap: not inside a character (d[n] its next byte). */
	if (n == SUMMARY_MAX)
		while (n > 0 && ((unsigned char)d[n] & 0xc0) == 0x80)
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

/* A hit; the rank'th of its query (0 the best). */
static void
put_hit(struct buf *b, const struct session *se, const struct hit *h,
    int rank)
{
	buf_puts(b, "{\"toolbox\":");
	json_put_cstr(b, box_of(h->srv)->cfg->name);
	buf_puts(b, ",\"server\":");
	json_put_cstr(b, srv_name(h->srv));
	buf_puts(b, ",\"name\":");
	json_put_cstr(b, h->tool->key);
	buf_puts(b, ",\"description\":");
	put_summary(b, h->tool);
	if (rank < wb.cfg.search_schemas) {
		buf_puts(b, ",\"inputSchema\":");
		lean_put_schema(b, h->tool);
	}
	/* Said only when use_tool would refuse it. */
	if (!wb.cfg.open_on_use && session_era(se) == NULL &&
	    !box_seen(se, box_of(h->srv)))
		buf_puts(b, ",\"toolbox_open\":false");
	buf_putc(b, '}');
}

/* One query's ranked hits, the best limit of those that match. */
static void
put_results(struct buf *b, const struct session *se, const char *query,
    struct hit *h, int n, int limit)
{
	struct query q;
	int i;

	query_make(&q, query);
	rank(h, n, &q);
	if (n > 1)
		qsort(h, (size_t)n, sizeof(*h), by_score);
	buf_puts(b, "\"results\":[");
	for (i = 0; i < n && i < limit && h[i].score > 0; i++) {
		if (i > 0)
			buf_putc(b, ',');
		put_hit(b, se, &h[i], i);
	}
	buf_putc(b, ']');
}

/* The toolboxes not indexed, and how to index them. */
static void
put_missing(struct buf *b, const struct buf *missing)
{
	if (missing->len == 0)
		return;
	buf_puts(b, ",\"not_indexed\":[");
	buf_put(b, missing->data, missing->len);
	buf_puts(b, "],\"note\":\"These toolboxes' tools are not known yet: "
	    "open_toolbox lists one (and indexes it); mcp-workbench --probe "
	    "indexes them all.\"");
}

/* The arguments of search_tools, read. */
struct search_args {
	char			*query[QUERIES_MAX];
	int			 nquery;
	bool			 several;	/* queries, not query. */
	const struct toolbox	*only;
	long long		 limit;
};

static bool
read_queries(const struct json *j, int v, struct search_args *a,
    struct buf *why)
{
	int i, k;

	if (!json_is(j, v, JSMN_ARRAY) || j->tok[v].size < 1 ||
	    j->tok[v].size > QUERIES_MAX) {
		buf_printf(why, "queries: expected an array of 1 to %d "
		    "strings", QUERIES_MAX);
		return false;
	}
	a->several = true;
	for (i = v + 1, k = 0; k < j->tok[v].size; k++, i = json_next(j, i))
		if ((a->query[a->nquery++] = json_strdup(j, i)) == NULL ||
		    a->query[a->nquery - 1][0] == '\0') {
			buf_printf(why, "queries[%d]: expected a non-empty "
			    "string", k);
			return false;
		}
	return true;
}

/* Read search_tools' arguments; false with the reason in why. */
static bool
search_args(const struct json *j, int args, struct search_args *a,
    struct buf *why)
{
	int v, q = json_get(j, args, "query");
	char *box;

	if ((v = json_get(j, args, "queries")) >= 0 && q >= 0) {
		buf_puts(why, "give query or queries, not both");
		return false;
	}
	if (v >= 0 && !read_queries(j, v, a, why))
		return false;
	if (v < 0 && ((a->query[a->nquery++] = json_strdup(j, q)) == NULL ||
	    a->query[0][0] == '\0')) {
		buf_puts(why, "query: expected a non-empty string");
		return false;
	}
	if ((v = json_get(j, args, "limit")) >= 0 && (!json_get_int(j, v,
	    &a->limit) || a->limit < 1 || a->limit > WB_SEARCH_MAX)) {
		buf_printf(why, "limit: expected an integer from 1 to %d",
		    WB_SEARCH_MAX);
		return false;
	}
	if ((v = json_get(j, args, "toolbox")) < 0)
		return true;
	if ((box = json_strdup(j, v)) == NULL ||
	    (a->only = box_find(box, strlen(box))) == NULL)
		buf_printf(why, "toolbox: no toolbox '%s' is configured",
		    box != NULL ? box : "?");
	free(box);
	return why->len == 0;
}

/*
 * The answer: {"results": [...]} for a query, {"searches": [{"query",
 * "results"}, ...]} for queries; and the toolboxes not indexed.
 */
static void
put_answer(struct buf *out, const struct session *se,
    const struct search_args *a)
{
	struct buf missing = { 0 };
	struct hit *h;
	int n, i;

	h = collect(se, a->only, &n, &missing);
	buf_puts(out, a->several ? "{\"searches\":[" : "{");
	for (i = 0; i < a->nquery; i++) {
		if (a->several) {
			buf_puts(out, i > 0 ? ",{\"query\":" : "{\"query\":");
			json_put_cstr(out, a->query[i]);
			buf_putc(out, ',');
		}
		put_results(out, se, a->query[i], h, n, (int)a->limit);
		if (a->several)
			buf_putc(out, '}');
	}
	if (a->several)
		buf_putc(out, ']');
	put_missing(out, &missing);
	buf_putc(out, '}');
	free(h);
	buf_free(&missing);
}

void
search_tool(struct session *se, const struct json *j, int args,
    const char *id, size_t idlen)
{
	struct search_args a = { .limit = LIMIT_DEFAULT };
	struct buf why = { 0 }, out = { 0 };
	int i;

	if (!search_args(j, args, &a, &why)) {
		buf_printf(&out, "Invalid tool invocation parameters: %s",
		    buf_cstr(&why));
		reply_text(se, id, idlen, buf_cstr(&out), true);
	} else {
		put_answer(&out, se, &a);
		reply_structured(se, id, idlen, &out);
	}
	for (i = 0; i < a.nquery; i++)
		free(a.query[i]);
	buf_free(&why);
	buf_free(&out);
}
