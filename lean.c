/*
 * lean.c: a tool as a model needs it to call it.  A model reads every
 * byte of an open_toolbox answer and of a search hit, so a tool is given
 * as its name, description and input schema alone (the members a client
 * wants, outputSchema, annotations, execution, title, are left to
 * "toolDetail": "full"), and the schema without the keywords that
 * constrain nothing: "$schema", "$comment" and "title", and at its top
 * "type": "object", which MCP makes every input schema.
 *
 * The schema is walked as JSON Schema, so that a property that happens
 * to be named "title" stays: the keywords are dropped only where a schema
 * is, and the names under "properties" are names.  What a server sends is
 * copied, never re-encoded, and past LEAN_DEPTH a schema is copied whole
 * (the walk is recursive; what it walks came from a server).
 */
#include <string.h>

#include "box.h"

#define LEAN_DEPTH	16

/* The tool being written, kept between tools. */
static struct json tj;

static void	put_schema(struct buf *, int, int);

/* Is the token i the string word (a key)? */
static bool
key_is(int i, const char *const *words)
{
	for (; *words != NULL; words++)
		if (json_eq(&tj, i, *words))
			return true;
	return false;
}

/* Keywords that describe and constrain nothing. */
static const char *const dropped[] = { "$schema", "$comment", "title", NULL };
/* Keywords whose value is a schema. */
static const char *const one_schema[] = { "items", "additionalProperties",
	"additionalItems", "not", "contains", "if", "then", "else",
	"propertyNames", "unevaluatedProperties", "unevaluatedItems", NULL };
/* Keywords whose value is an array of schemas. */
static const char *const schema_list[] = { "anyOf", "oneOf", "allOf",
	"prefixItems", NULL };
/* Keywords whose value maps names to schemas. */
static const char *const schema_map[] = { "properties", "$defs",
	"definitions", "patternProperties", "dependentSchemas", NULL };

static void
put_raw(struct buf *b, int i)
{
	size_t n;
	const char *p = json_raw(&tj, i, &n);

	buf_put(b, p, n);
}

/* An object or array whose members' values go through put. */
static void
put_each(struct buf *b, int t, int depth, bool named)
{
	int i, k, n = tj.tok[t].size;

	buf_putc(b, named ? '{' : '[');
	for (i = t + 1, k = 0; k < n; k++) {
		if (k > 0)
			buf_putc(b, ',');
		if (named) {
			put_raw(b, i++);
			buf_putc(b, ':');
		}
		put_schema(b, i, depth + 1);
		i = json_next(&tj, i);
	}
	buf_putc(b, named ? '}' : ']');
}

/*
 * Whether the key i of a schema at depth is left out: a keyword that
 * constrains nothing, or the input schema's own "type": "object".
 */
static bool
dropped_key(int i, int depth)
{
	return key_is(i, dropped) || (depth == 0 && json_eq(&tj, i, "type") &&
	    json_eq(&tj, i + 1, "object"));
}

/*
 * A schema: its keywords, less the dropped, each value as it is.  Depth
 * 0 is the input schema itself.
 */
static void
put_schema(struct buf *b, int t, int depth)
{
	int i, k, n, v, written = 0;

	if (!json_is(&tj, t, JSMN_OBJECT) || depth > LEAN_DEPTH) {
		put_raw(b, t);
		return;
	}
	buf_putc(b, '{');
	n = tj.tok[t].size;
	for (i = t + 1, k = 0; k < n; k++, i = json_next(&tj, v)) {
		v = i + 1;
		if (dropped_key(i, depth))
			continue;
		if (written++ > 0)
			buf_putc(b, ',');
		put_raw(b, i);
		buf_putc(b, ':');
		if (key_is(i, one_schema))
			put_schema(b, v, depth + 1);
		else if (key_is(i, schema_list) && json_is(&tj, v, JSMN_ARRAY))
			put_each(b, v, depth, false);
		else if (key_is(i, schema_map) && json_is(&tj, v, JSMN_OBJECT))
			put_each(b, v, depth, true);
		else
			put_raw(b, v);
	}
	buf_putc(b, '}');
}

static void
put_input_schema(struct buf *b)
{
	int s = json_get(&tj, 0, "inputSchema");

	if (json_is(&tj, s, JSMN_OBJECT))
		put_schema(b, s, 0);
	else
		buf_puts(b, "{}");
}

/* The tool t as {"name", "description", "inputSchema"}. */
void
lean_put_tool(struct buf *b, const struct item *t)
{
	int d;

	buf_puts(b, "{\"name\":");
	json_put_cstr(b, t->key);
	if (json_parse(&tj, t->json, t->len) == JSON_OK) {
		if (json_is(&tj, d = json_get(&tj, 0, "description"),
		    JSMN_STRING)) {
			buf_puts(b, ",\"description\":");
			put_raw(b, d);
		}
		buf_puts(b, ",\"inputSchema\":");
		put_input_schema(b);
	}
	json_release(&tj);
	buf_putc(b, '}');
}

/* The input schema of the tool t, lean. */
void
lean_put_schema(struct buf *b, const struct item *t)
{
	if (json_parse(&tj, t->json, t->len) == JSON_OK)
		put_input_schema(b);
	else
		buf_puts(b, "{}");
	json_release(&tj);
}
