/*
 * libFuzzer target: a catalogue entry read from disk.  catalog_entry_check
 * on arbitrary bytes; every text it accepts is then walked as
 * list_take_entry walks it, without checking it again (jwalk.checked:
 * strings passed by blocks, brackets counted), and by a walk that checks
 * every value, in step: the top object's members, each list's elements
 * and each element's members.
 *
 * Properties checked for an accepted entry: both walks find the same
 * members and elements with the same spans and end at the same place,
 * the checking walk never finds the text not to be JSON, and no line
 * break comes before the entry's end (its items are copied into lines
 * of the workbench's output).
 *
 * catalog.c is linked whole; what it would call above it (the session's
 * capabilities, the lists, the server's state) is stubbed and never
 * reached by catalog_entry_check.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util.h"
#include "../json.h"
#include "../json_out.h"
#include "../jsonrpc.h"
#include "../peer.h"
#include "../proc.h"
#include "../config.h"
#include "../era.h"
#include "../store.h"
#include "../terms.h"
#include "../session.h"
#include "../server_int.h"

#define NAME	"00112233445566778899aabbccddeeff"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
broken(const char *what)
{
	fprintf(stderr, "fuzz_catalog: property broken: %s\n", what);
	abort();
}

/* Stubs of what catalog.c calls above it; the check reaches none. */
bool
list_take_entry(struct server *s, char *text, size_t n)
{
	(void)s;
	(void)text;
	(void)n;
	broken("list_take_entry reached");
	return false;
}

bool
srv_serving(const struct server *s)
{
	(void)s;
	broken("srv_serving reached");
	return false;
}

const struct buf *
srv_told_for(const struct session *se)
{
	(void)se;
	broken("srv_told_for reached");
	return NULL;
}

static void
same_span(const struct span *a, const struct span *b, const char *what)
{
	if (a->p != b->p || a->n != b->n)
		broken(what);
}

/* The next member or element of both walks; false at the end of both. */
static bool
step(struct jwalk *fast, struct jwalk *slow, bool object)
{
	struct span kf, ks;
	int rf, rs;

	rf = json_walk_next(fast, &kf);
	rs = json_walk_next(slow, &ks);
	if (rs < 0)
		broken("the checking walk found an accepted entry not JSON");
	if (rf != rs)
		broken("the walks disagree on the next member");
	if (rf > 0 && object)
		same_span(&kf, &ks, "the walks found different keys");
	if (fast->i != slow->i)
		broken("the walks are at different places");
	return rf > 0;
}

/* A value taken whole by both walks. */
static void
take_value(struct jwalk *fast, struct jwalk *slow)
{
	struct span vf, vs;
	bool of = json_walk_value(fast, &vf), os = json_walk_value(slow, &vs);

	if (!os)
		broken("the checking walk refused a value of an accepted entry");
	if (!of)
		broken("the checked walk refused a value the checking one took");
	same_span(&vf, &vs, "the walks took different values");
}

/*
 * Both walks into the value they are at: false when it is no object or
 * array.
 */
static bool
enter(const struct jwalk *fast, const struct jwalk *slow, size_t level,
    struct jwalk *ef, struct jwalk *es)
{
	bool f = json_walk(ef, fast->s, fast->n, fast->i, level);
	bool s = json_walk(es, slow->s, slow->n, slow->i, level);

	if (f != s || (f && ef->object != es->object))
		broken("the walks disagree on what a value is");
	ef->checked = true;
	return f;
}

/* A list's elements, as entry_key takes them: an object's members each. */
static void
walk_list(struct jwalk *fast, struct jwalk *slow)
{
	struct jwalk af, as, ef, es;

	if (!enter(fast, slow, 3, &af, &as) || af.object) {
		take_value(fast, slow);
		return;
	}
	while (step(&af, &as, false)) {
		if (!enter(&af, &as, 4, &ef, &es) || !ef.object) {
			take_value(&af, &as);
			continue;
		}
		while (step(&ef, &es, true))
			take_value(&ef, &es);
		af.i = ef.i;
		as.i = es.i;
	}
	fast->i = af.i;
	slow->i = as.i;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	struct jwalk fast, slow, whole_f, whole_s;
	size_t n = size, at = 0;

	if (catalog_entry_check(text, size, NAME) != NULL)
		return 0;
	if (n > 0 && text[n - 1] == '\n')
		n--;
	if (memchr(text, '\n', n) != NULL || memchr(text, '\r', n) != NULL)
		broken("accepted an entry with a line break before its end");
	while (at < size && json_space(text[at]))
		at++;
	if (!json_walk(&fast, text, size, at, 2) || !fast.object ||
	    !json_walk(&slow, text, size, at, 2))
		broken("an accepted entry is not an object");
	fast.checked = true;
	while (step(&fast, &slow, true)) {
		/* Skipped whole (a member that is no list), and walked into. */
		whole_f = fast;
		whole_s = slow;
		take_value(&whole_f, &whole_s);
		walk_list(&fast, &slow);
		if (fast.i != whole_f.i)
			broken("a value walked into ends elsewhere than skipped");
	}
	return 0;
}
