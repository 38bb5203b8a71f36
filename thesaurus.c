/*
 * thesaurus.c: the words people use for what tools do.  A person asks
 * to "show the files in a folder"; the tool says "list directory".  A
 * query's term is searched for with the other words of its groups too
 * (search.c weighs them below the words the person used).
 *
 * The tables are for readers to extend: one group a line, its members
 * separated by commas, plain words as people write them (they are
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
static const char *const same[] = {
	"pr, pull request",
	"repo, repository",
	"dir, directory, folder",
	"url, link, address",
	"env, environment",
	"js, javascript",
	"id, identifier",
	"update, up to date",
	"doc, document",
	"txt, text",
	"md, markdown",
	"jpg, jpeg",
};

/*
 * Words people use for what tools do and what they work on: a word of a
 * group brings in the others, below the words asked.
 */
static const char *const related[] = {
	/* What a tool does. */
	"list, show, display, view, see, enumerate, browse",
	"get, fetch, retrieve, read, show, open, load, view, look, tell, "
	    "describe, pull up, peek, dump, grab, inspect",
	"create, make, new, add, start, generate, build, set up",
	"delete, remove, forget, erase, destroy, discard, clear, drop, wipe, "
	    "scratch, purge, get rid of",
	"rename, move, relocate, shove",
	"edit, change, modify, update, alter, replace, fix, patch",
	"write, save, store, put, record",
	"remember, memorize, store, save, record, keep in mind, memory, "
	    "knowledge, observation",
	"note, observation, fact, remark",
	"search, find, look, look up, lookup, query, locate, seek, grep, match, "
	    "mention, contain, anywhere, anything",
	"run, execute, evaluate, invoke, launch",
	"go, navigate, visit, open, browse, load",
	"close, quit, exit, shut",
	"click, press, tap, hit, tick",
	"type, enter, fill, input, write",
	"key, keyboard, keystroke, press, hit, enter, escape",
	"wait, pause, sleep, delay, until",
	"back, go back, previous, return",
	"copy, duplicate, clone, fork",
	"merge, combine, join, land, ship",
	"think, reason, plan, reflect, thought, step",
	"upload, attach, push, send, publish",
	"download, fetch, save",
	"sum, add, plus, total, calculate",
	"echo, repeat, say",
	"toggle, turn, switch, enable, disable",
	"approve, review, reviewer, accept",
	"resize, size, dimension, width, height",
	"size, big, large, space, bytes, info",
	"select, pick, choose, option, dropdown",
	/* What a tool works on. */
	"website, site, page, url, web, webpage, browser",
	"file, document, readme, changelog",
	"picture, image, photo, png, jpg, gif, svg, webp, icon, logo",
	"screenshot, snapshot, capture, picture, image",
	"content, inside, contain, body, text",
	"compare, diff, difference",
	"latest, recent, newest, last",
	"label, tag, category",
	"error, fail, failure, broken, exception",
	"now, current, currently, present",
	"api call, request, network",
	"issue, bug, ticket, problem, crash, feature request",
	"create issue, file bug, file issue, report bug, report issue, "
	    "raise issue, open ticket",
	"comment, reply, note, say, remark",
	"person, people, someone, entity, contact, user",
	"relation, relationship, link, connection, connect",
	"relation, married, marry, friend, sibling, spouse, partner, colleague",
	"info, information, metadata, detail, stat",
	"tree, structure, hierarchy",
	"environment, variable, setting",
	"console, log, message, error, warning",
	"dialog, alert, popup, prompt",
	"mouse, pointer, cursor, hover",
	"tab, window",
	"code, source, function, class, method, symbol",
	"fake, simulate, mock, pretend, dummy, sample, example",
	"slow, long, lengthy",
	"job, task, operation, process",
	"number, count",
	"star, starred, popular",
	"play, hear, listen, audio, sound, media, mp3, wav, music",
	"permission, executable, mode, owner",
};

#define NSAME		(sizeof(same) / sizeof(same[0]))
#define GROUPS		(NSAME + sizeof(related) / sizeof(related[0]))

/*
 * Each group as terms, made once: ",a ,b c ," holds the members a and
 * "b c", each member's terms followed by a comma.
 */
static struct buf members[GROUPS];

static const char *
group(size_t g)
{
	return g < NSAME ? same[g] : related[g - NSAME];
}

static void
load(void)
{
	const char *p, *end;
	struct buf one = { 0 };
	size_t g;

	for (g = 0; g < GROUPS; g++) {
		buf_putc(&members[g], ',');
		for (p = group(g); *p != '\0'; p = *end != '\0' ? end + 1 : end) {
			if ((end = strchr(p, ',')) == NULL)
				end = p + strlen(p);
			one.len = 0;
			term_put(&one, p, (size_t)(end - p));
			if (one.len == 0)
				continue;
			buf_put(&members[g], one.data, one.len);
			buf_putc(&members[g], ',');
		}
	}
	buf_free(&one);
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

	if (members[0].len == 0)
		load();
	if (strspn(t, "0123456789") == n - 1) {
		buf_puts(near_out, "number ");
		found = true;
	}
	for (g = 0; g < GROUPS; g++)
		if ((m = member(g, t, n)) != NULL) {
			put_others(g, m, g < NSAME ? same_out : near_out);
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
