/*
 * terms.c: the words of a text as search terms, for search_tools.  The
 * same function makes the terms of a query and of a tool, so that a word
 * and its other forms ("entity", "entities") meet: words are split at
 * anything but letters and digits and where a lower-case letter meets an
 * upper-case one, lower-cased, English stop words dropped, and the rest
 * stemmed by a few suffix rules (term_stem).  The manual lists the rules
 * and the stop words; keep it in step.
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
 * Stem the lower-case word w[0, n) in place; returns its new length.  A
 * word and its inflections get the same stem: files, file -> fil;
 * entities, entity -> entity; creating, created, creation, create ->
 * creat.  A final -e goes (but from -ee) so that the forms with and
 * without it meet.  Suffixes are ASCII, so a UTF-8 character is never
 * cut.
 */
size_t
term_stem(char *w, size_t n)
{
	n = stem_suffix(w, stem_plural(w, n));
	if (n >= 3 && w[n - 1] == 'e' && w[n - 2] != 'e')
		n--;
	return n;
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

/* Append the term of the word s[0, n) unless it is a stop word. */
static void
put_word(struct buf *out, const char *s, size_t n)
{
	char w[TERM_MAX + 1];
	size_t k;

	if (n > TERM_MAX)
		n = TERM_MAX;
	for (k = 0; k < n; k++)
		w[k] = s[k] >= 'A' && s[k] <= 'Z' ? s[k] - 'A' + 'a' : s[k];
	w[n] = '\0';
	/* A letter alone is what is left of "it's" or "repo's". */
	if (n < 2 || term_stop(w, n))
		return;
	buf_put(out, w, term_stem(w, n));
	buf_putc(out, ' ');
}

/*
 * Append the terms of s[0, n) to out, each followed by a space.  A word
 * longer than TERM_MAX bytes is cut there first, the same on both sides.
 */
void
term_put(struct buf *out, const char *s, size_t n)
{
	size_t i = 0, end;

	while (i < n) {
		if (!word_char((unsigned char)s[i])) {
			i++;
			continue;
		}
		end = word_end(s, n, i);
		put_word(out, s + i, end - i);
		i = end;
	}
}
