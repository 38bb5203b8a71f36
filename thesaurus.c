/*
 * thesaurus.c: the words people use for what tools do.  A person asks
 * to "show the files in a folder"; the tool says "list directory".  A
 * query's term is searched for with the other words of its groups too
 * (search.c weighs them below the words the person used).
 *
 * The tables are for readers to extend: one group a line (ending in
 * "\n": one string, so that the program holds no pointer per group),
 * its members separated by commas, plain words as people write them (they are
 * stemmed and lower-cased as every term is, terms.c).  A member may be
 * a phrase of two or three words that are not stop words ("pull
 * request", "keep in mind": "in" is one, so "keep mind" is what a query
 * must have in a row); one word of it alone does not bring the group in.
 * Groups are not chained: "save" brings in what its own groups name,
 * not the groups of those words.  Last, the verbs of tools that only
 * read (term_reads), for tools that do not say whether they do.
 */
#include <string.h>

#include "terms.h"

/*
 * Words that mean the same: abbreviations and other spellings.  A word
 * of a group stands for the others fully.
 */
static const char same[] =
	"pr, pull request\n"
	"repo, repository\n"
	"dir, directory, folder\n"
	"url, link, address\n"
	"env, environment\n"
	"js, javascript\n"
	"id, identifier\n"
	"update, up to date\n"
	"doc, document\n"
	"txt, text\n"
	"md, markdown\n"
	"jpg, jpeg\n";

/*
 * Words people use for what tools do and what they work on: a word of a
 * group brings in the others, below the words asked.
 */
static const char related[] =
	/* What a tool does. */
	"list, show, display, view, see, enumerate, browse\n"
	"get, fetch, retrieve, read, show, open, load, view, look, tell, "
	    "describe, pull up, peek, dump, grab, inspect\n"
	"create, make, new, add, start, generate, build, set up\n"
	"delete, remove, forget, erase, destroy, discard, clear, drop, wipe, "
	    "scratch, purge, get rid of\n"
	"rename, move, relocate, shove\n"
	"edit, change, modify, update, alter, replace, fix, patch\n"
	"write, save, store, put, record\n"
	"remember, memorize, store, save, record, keep in mind, memory, "
	    "knowledge, observation\n"
	"note, observation, fact, remark\n"
	"search, find, look, look up, lookup, query, locate, seek, grep, match, "
	    "mention, contain, anywhere, anything\n"
	"run, execute, evaluate, invoke, launch\n"
	"go, navigate, visit, open, browse, load\n"
	"close, quit, exit, shut\n"
	"click, press, tap, hit, tick\n"
	"type, enter, fill, input, write\n"
	"key, keyboard, keystroke, press, hit, enter, escape\n"
	"wait, pause, sleep, delay, until\n"
	"back, go back, previous, return\n"
	"copy, duplicate, clone, fork\n"
	"merge, combine, join, land, ship\n"
	"think, reason, plan, reflect, thought, step\n"
	"upload, attach, push, send, publish\n"
	"download, fetch, save\n"
	"sum, add, plus, total, calculate\n"
	"echo, repeat, say\n"
	"toggle, turn, switch, enable, disable\n"
	"approve, review, reviewer, accept\n"
	"resize, size, dimension, width, height\n"
	"size, big, large, space, bytes, info\n"
	"select, pick, choose, option, dropdown\n"
	/* What a tool works on. */
	"website, site, page, url, web, webpage, browser\n"
	"file, document, readme, changelog\n"
	"picture, image, photo, png, jpg, gif, svg, webp, icon, logo\n"
	"screenshot, snapshot, capture, picture, image\n"
	"content, inside, contain, body, text\n"
	"compare, diff, difference\n"
	"latest, recent, newest, last\n"
	"label, tag, category\n"
	"error, fail, failure, broken, exception\n"
	"now, current, currently, present\n"
	"api call, request, network\n"
	"issue, bug, ticket, problem, crash, feature request\n"
	"create issue, file bug, file issue, report bug, report issue, "
	    "raise issue, open ticket\n"
	"comment, reply, note, say, remark\n"
	"person, people, someone, entity, contact, user\n"
	"relation, relationship, link, connection, connect\n"
	"relation, married, marry, friend, sibling, spouse, partner, colleague\n"
	"info, information, metadata, detail, stat\n"
	"tree, structure, hierarchy\n"
	"environment, variable, setting\n"
	"console, log, message, error, warning\n"
	"dialog, alert, popup, prompt\n"
	"mouse, pointer, cursor, hover\n"
	"tab, window\n"
	"code, source, function, class, method, symbol\n"
	"fake, simulate, mock, pretend, dummy, sample, example\n"
	"slow, long, lengthy\n"
	"job, task, operation, process\n"
	"number, count\n"
	"star, starred, popular\n"
	"play, hear, listen, audio, sound, media, mp3, wav, music\n"
	"permission, executable, mode, owner\n";

/*
 * Each group as terms, made once: ",a ,b c ," holds the members a and
 * "b c", each member's terms followed by a comma.  The groups of same
 * come first (nsame of them).
 */
static struct buf *members;
static size_t ngroups, nsame;

/* The group of text at p (up to its newline) as terms, to b. */
static void
load_group(struct buf *b, const char *p, const char *nl)
{
	struct buf one = { 0 };
	const char *end;

	buf_putc(b, ',');
	for (; p < nl; p = end + 1) {
		if ((end = memchr(p, ',', (size_t)(nl - p))) == NULL)
			end = nl;
		one.len = 0;
		term_put(&one, p, (size_t)(end - p));
		if (one.len == 0)
			continue;
		buf_put(b, one.data, one.len);
		buf_putc(b, ',');
	}
	buf_free(&one);
}

static size_t
lines(const char *p)
{
	size_t n = 0;

	while ((p = strchr(p, '\n')) != NULL) {
		n++;
		p++;
	}
	return n;
}

static void
load(void)
{
	const char *const tables[2] = { same, related }, *p, *nl;
	int t;

	nsame = lines(same);
	ngroups = nsame + lines(related);
	members = xcalloc(ngroups, sizeof(*members));
	ngroups = 0;
	for (t = 0; t < 2; t++)
		for (p = tables[t]; (nl = strchr(p, '\n')) != NULL; p = nl + 1)
			load_group(&members[ngroups++], p, nl);
}

/* The member t (n bytes: its terms, each with its space) in group g. */
static const char *
member(size_t g, const char *t, size_t n)
{
	const char *p = buf_cstr(&members[g]);

	for (; (p = strchr(p, ',')) != NULL && p[1] != '\0'; p++)
		if (strncmp(p + 1, t, n) == 0 && p[1 + n] == ',')
			return p + 1;
	return NULL;
}

/* Append the terms of group g's members but the one at skip to out. */
static void
put_others(size_t g, const char *skip, struct buf *out)
{
	const char *p = buf_cstr(&members[g]) + 1, *end;

	for (; *p != '\0'; p = end + 1) {
		end = strchr(p, ',');
		if (p != skip)
			buf_put(out, p, (size_t)(end - p));
	}
}

/*
 * The terms t (n bytes, as term_put writes them: one word, or the words
 * of a phrase such as "up to date", each with its space): append what
 * means the same as them to same, what is related to near, t's own
 * member left out.  False when no group has them.  A number stands for
 * a number ("issue 42").
 */
bool
term_related(const char *t, size_t n, struct buf *same_out,
    struct buf *near_out)
{
	const char *m;
	bool found = false;
	size_t g;

	if (members == NULL)
		load();
	if (strspn(t, "0123456789") == n - 1) {
		buf_puts(near_out, "number ");
		found = true;
	}
	for (g = 0; g < ngroups; g++)
		if ((m = member(g, t, n)) != NULL) {
			put_others(g, m, g < nsame ? same_out : near_out);
			found = true;
		}
	return found;
}

/*
 * The verbs of tools that only read, for a tool that does not say
 * (annotations.readOnlyHint): a tool whose name opens with one of them
 * answers questions (search.c).  Plain words, stemmed as every term is.
 */
static const char reading[] =
    "get list search read find show view fetch open describe query lookup "
    "check count inspect";

static struct buf readers;

/* Whether the term t (n bytes, with its space) is a verb of reading. */
bool
term_reads(const char *t, size_t n)
{
	char w[TERM_MAX + 3];

	if (n == 0 || n > TERM_MAX + 1)
		return false;
	if (readers.len == 0) {
		buf_putc(&readers, ' ');
		term_put(&readers, reading, sizeof(reading) - 1);
	}
	w[0] = ' ';
	memcpy(w + 1, t, n);
	w[n + 1] = '\0';
	return strstr(buf_cstr(&readers), w) != NULL;
}
