/*
 * terms.c: the words of a text as search terms, for search_tools.  The
 * same function makes the terms of a query and of a tool, so that a word
 * and its other forms ("entity", "entities") meet: words are split at
 * anything but letters and digits and where a lower-case letter meets an
 * upper-case one, lower-cased, English stop words dropped, and the rest
 * stemmed by a few suffix rules (term_stem).  A term is marked when its
 * word was plural, so that "issues" can be told from "issue" after
 * stemming (term_put_marked).  And whether a text asks a question, by
 * how it opens (term_question).  The manual lists the rules and the stop
 * words; keep it in step.
 */
#include <string.h>

#include "terms.h"

/*
 * Words too common to say what a tool does: dropped from queries and
 * tools alike.  ASCII, lower case, at most STOP_MAX letters; by first
 * letter, each between spaces, so that a lookup, which every word of
 * every tool takes, reads a few bytes.
 */
#define STOP_MAX	6

static const char *const stop_words['z' - 'a' + 1] = {
	['a' - 'a'] = " a about also am an and any are as at ",
	['b' - 'a'] = " be been but by ",
	['c' - 'a'] = " can could ",
	['d' - 'a'] = " did do does ",
	['f' - 'a'] = " for from ",
	['h' - 'a'] = " had has have he her here him his how ",
	['i' - 'a'] = " i if in into is it its ",
	['j' - 'a'] = " just ",
	['m' - 'a'] = " me my ",
	['n' - 'a'] = " no nor not ",
	['o' - 'a'] = " of on or our ",
	['p' - 'a'] = " please ",
	['s' - 'a'] = " she should so some such ",
	['t' - 'a'] = " than that the their them then there these they "
	    "this those to too ",
	['u' - 'a'] = " us ",
	['v' - 'a'] = " very ",
	['w' - 'a'] = " was we were what when where which while who why will "
	    "with would ",
	['y' - 'a'] = " you your ",
};

/* Whether the lower-case word w (n bytes, NUL-terminated) is a stop word. */
bool
term_stop(const char *w, size_t n)
{
	const char *p;

	if (n == 0 || n > STOP_MAX || w[0] < 'a' || w[0] > 'z' ||
	    (p = stop_words[w[0] - 'a']) == NULL)
		return false;
	for (; (p = strstr(p, w)) != NULL; p++)
		if (p[-1] == ' ' && p[n] == ' ')
			return true;
	return false;
}

static bool
vowel(char c)
{
	return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u' ||
	    c == 'y';
}

/* Whether w[0, n) ends with suffix. */
static bool
ends(const char *w, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);

	return n >= k && memcmp(w + n - k, suffix, k) == 0;
}

/* A stem left by a suffix must be a word: two letters, one a vowel. */
static bool
stem_ok(const char *w, size_t n)
{
	size_t i;

	for (i = 0; n >= 2 && i < n; i++)
		if (vowel(w[i]))
			return true;
	return false;
}

/*
 * Porter's measure of w[0, n): how many times a vowel is followed by a
 * consonant ("review" 2, "brows" 1, "us" 1).
 */
static int
measure(const char *w, size_t n)
{
	size_t i;
	int m = 0;

	for (i = 1; i < n; i++)
		if (vowel(w[i - 1]) && !vowel(w[i]))
			m++;
	return m;
}

/* Replace the last k bytes of w[0, n) with rep; the new length. */
static size_t
swap(char *w, size_t n, size_t k, const char *rep)
{
	size_t r = strlen(rep);

	memcpy(w + n - k, rep, r);
	return n - k + r;
}

/* Plurals: -ies becomes -y, and a final -s goes but from -ss, -us, -is. */
static size_t
stem_plural(char *w, size_t n)
{
	if (n > 4 && ends(w, n, "ies"))
		return swap(w, n, 3, "y");
	if (n > 3 && w[n - 1] == 's' && w[n - 2] != 's' && w[n - 2] != 'u' &&
	    w[n - 2] != 'i')
		return n - 1;
	return n;
}

/*
 * Who or what does a thing: -er goes where Porter's measure of what is
 * left is 2 or more (reviewer, review; container, contain), so that
 * short words keep it (user, number, folder, browser, filter).
 */
static size_t
stem_agent(char *w, size_t n)
{
	if (ends(w, n, "er") && measure(w, n - 2) >= 2)
		return n - 2;
	return n;
}

/*
 * One suffix: -ied to -y in a word of five letters or more; else -ation
 * to -ate, or -ing or -ed (but -eed) dropped, if the stem left passes
 * stem_ok; after -ing and -ed, a doubled last consonant but l, s and z is
 * made single in a stem of four letters or more (running, run).
 */
static size_t
stem_suffix(char *w, size_t n)
{
	size_t k;

	if (n > 4 && ends(w, n, "ied"))
		return swap(w, n, 3, "y");
	if (ends(w, n, "ation") && stem_ok(w, n - 5))
		return swap(w, n, 5, "ate");
	if (ends(w, n, "ing"))
		k = 3;
	else if (ends(w, n, "ed") && !ends(w, n, "eed"))
		k = 2;
	else
		return stem_agent(w, n);
	if (!stem_ok(w, n - k))
		return n;
	n -= k;
	if (n >= 4 && w[n - 1] == w[n - 2] && !vowel(w[n - 1]) &&
	    w[n - 1] != 'l' && w[n - 1] != 's' && w[n - 1] != 'z')
		n--;
	return stem_agent(w, n);
}

/*
 * Stem the lower-case word w[0, n) in place; returns its new length,
 * and in *plural whether the plural rule took something off.  A
 * word and its inflections get the same stem: files, file -> fil;
 * entities, entity -> entity; creating, created, creation, create ->
 * creat.  A final -e goes (but from -ee) so that the forms with and
 * without it meet.  Suffixes are ASCII, so a UTF-8 character is never
 * cut.
 */
static size_t
stem(char *w, size_t n, bool *plural)
{
	size_t k = stem_plural(w, n);

	*plural = k != n;
	n = stem_suffix(w, k);
	if (n >= 3 && w[n - 1] == 'e' && w[n - 2] != 'e')
		n--;
	return n;
}

/* Stem the lower-case word w[0, n) in place (stem); its new length. */
size_t
term_stem(char *w, size_t n)
{
	bool plural;

	return stem(w, n, &plural);
}

static bool
word_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c >= 0x80;
}

/* Where the word at s[i] ends: at a non-word byte or a lower-Upper pair. */
static size_t
word_end(const char *s, size_t n, size_t i)
{
	size_t start = i;

	for (; i < n && word_char((unsigned char)s[i]); i++)
		if (i > start && s[i] >= 'A' && s[i] <= 'Z' &&
		    s[i - 1] >= 'a' && s[i - 1] <= 'z')
			break;
	return i;
}

/*
 * Append the term of the word s[0, n) unless it is a stop word; its
 * marks (TERM_PLURAL), or -1 when none was put.  A plural is a word the
 * plural rule shortened: "issues", "entities", not "status".
 */
static int
put_word(struct buf *out, const char *s, size_t n)
{
	char w[TERM_MAX + 1];
	size_t k;
	bool plural;

	if (n > TERM_MAX)
		n = TERM_MAX;
	for (k = 0; k < n; k++)
		w[k] = s[k] >= 'A' && s[k] <= 'Z' ? s[k] - 'A' + 'a' : s[k];
	w[n] = '\0';
	/* A letter alone is what is left of "it's" or "repo's". */
	if (n < 2 || term_stop(w, n))
		return -1;
	buf_put(out, w, stem(w, n, &plural));
	buf_putc(out, ' ');
	return plural ? TERM_PLURAL : 0;
}

/*
 * Append the terms of s[0, n) to out, each followed by a space, and the
 * marks of each, a byte a term, to marks (unless NULL).  A word longer
 * than TERM_MAX bytes is cut there first, the same on both sides.
 */
void
term_put_marked(struct buf *out, struct buf *marks, const char *s, size_t n)
{
	size_t i = 0, end;
	int m;

	while (i < n) {
		if (!word_char((unsigned char)s[i])) {
			i++;
			continue;
		}
		end = word_end(s, n, i);
		if ((m = put_word(out, s + i, end - i)) >= 0 && marks != NULL)
			buf_putc(marks, (char)m);
		i = end;
	}
}

/* Append the terms of s[0, n) to out, each followed by a space. */
void
term_put(struct buf *out, const char *s, size_t n)
{
	term_put_marked(out, NULL, s, n);
}

/*
 * How a question opens: a question asks to be told something, so the
 * tools that only read answer it ("which pull requests are open", "what
 * did reviewers say"), not those that change things.  "do" opens a
 * question only before whom it asks about ("do you remember", not "do
 * a search"); "can you" and "could you" ask for a thing to be done.
 */
static const char *const question_words[] = {
	"what", "whats", "which", "who", "whose", "whom", "where", "when",
	"how", "why", "is", "isn", "are", "aren", "was", "were", "does",
	"doesn", "did", "didn", "has", "hasn", "have", "haven", "do you",
	"do i", "do we", "do they", "any",
};

/* Whether s starts with the words w, case aside, then a non-letter. */
static bool
opens(const char *s, const char *w)
{
	size_t k;

	for (k = 0; w[k] != '\0'; k++)
		if ((s[k] >= 'A' && s[k] <= 'Z' ? s[k] - 'A' + 'a' : s[k]) !=
		    w[k])
			return false;
	return !word_char((unsigned char)s[k]);
}

/* Whether the text s asks a question: by how it opens, or a final '?'. */
bool
term_question(const char *s)
{
	size_t i, n;

	for (n = strlen(s); n > 0 && strchr(" \t\r\n", s[n - 1]); n--)
		;
	if (n > 0 && s[n - 1] == '?')
		return true;
	while (*s != '\0' && !word_char((unsigned char)*s))
		s++;
	for (i = 0; i < sizeof(question_words) / sizeof(question_words[0]);
	    i++)
		if (opens(s, question_words[i]))
			return true;
	return false;
}
