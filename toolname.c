/*
 * toolname.c: the names of toolboxes, servers and tools.
 *
 * Dynamic mode lists a downstream tool as {toolbox}__{server}__{tool}.
 * Toolbox and server names never hold a leading, trailing or doubled
 * underscore, so the first two "__" always split the three parts, and
 * whatever follows the second is the tool's own name, "__" and all.
 */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

/* Limits clients enforce on tool names (SEP-986 and older clients). */
#define TOOL_NAME_MAX		128
#define TOOL_NAME_PORTABLE	64

static bool
name_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	    (c >= '0' && c <= '9') || c == '-';
}

/* ^[A-Za-z0-9-]+(_[A-Za-z0-9-]+)*$ */
bool
tool_valid_config_name(const char *s)
{
	if (!name_char(*s))
		return false;
	for (; *s != '\0'; s++) {
		if (*s == '_' && !name_char(s[1]))
			return false;
		if (*s != '_' && !name_char(*s))
			return false;
	}
	return true;
}

/* Does a tool pass the server's toolFilters (names or fnmatch globs)? */
bool
tool_filter_match(char *const *filters, const char *name)
{
	if (filters == NULL)
		return true;
	for (; *filters != NULL; filters++)
		if (strcmp(*filters, name) == 0 ||
		    fnmatch(*filters, name, 0) == 0)
			return true;
	return false;
}

char *
tool_join(const char *box, const char *server, const char *tool)
{
	size_t n = strlen(box) + strlen(server) + strlen(tool) + 5;
	char *s = xmalloc(n);

	strcpy(s, box);
	strcat(s, "__");
	strcat(s, server);
	strcat(s, "__");
	strcat(s, tool);
	return s;
}

/*
 * Split a generated name at its first two "__".  Returns 0 with three new
 * strings, or -1 when any part would be empty.
 */
int
tool_split(const char *name, char **box, char **server, char **tool)
{
	const char *a, *b;

	if ((a = strstr(name, "__")) == NULL || a == name)
		return -1;
	if ((b = strstr(a + 2, "__")) == NULL || b == a + 2 || b[2] == '\0')
		return -1;
	*box = xstrndup(name, (size_t)(a - name));
	*server = xstrndup(a + 2, (size_t)(b - a - 2));
	*tool = xstrdup(b + 2);
	return 0;
}

/*
 * Can a generated name be listed?  0: yes; 1: yes, but longer than the 64
 * characters many clients enforce; -1: no (too long, or characters
 * outside [A-Za-z0-9_.-]).
 */
int
tool_listable(const char *name)
{
	size_t n = strlen(name);
	const char *s;

	if (n == 0 || n > TOOL_NAME_MAX)
		return -1;
	for (s = name; *s != '\0'; s++)
		if (!name_char(*s) && *s != '_' && *s != '.')
			return -1;
	return n > TOOL_NAME_PORTABLE;
}

/*
 * The structured identifier: use_tool's {"tool": {"toolbox", "server",
 * "name"}, "arguments"}, and the words of its errors.  Details of what is
 * wrong are appended to out.
 */
static void
check_field(const struct json *j, int v, const char *path, struct buf *out)
{
	if (v < 0)
		buf_printf(out, "%s%s: Required", out->len > 0 ? "; " : "",
		    path);
	else if (!json_is(j, v, JSMN_STRING))
		buf_printf(out, "%s%s: Expected string", out->len > 0 ?
		    "; " : "", path);
}

/* Name the keys of obj that are not allowed (only when there are some). */
static void
check_keys(const struct json *j, int obj, const char *const *allowed,
    const char *prefix, struct buf *out)
{
	int i, n, k;
	char *key;

	for (i = obj + 1, n = 0; n < j->tok[obj].size; n++) {
		for (k = 0; allowed[k] != NULL; k++)
			if (json_eq(j, i, allowed[k]))
				break;
		if (allowed[k] == NULL) {
			key = json_strdup(j, i);
			buf_printf(out, "%s%s%s: Unrecognized key",
			    out->len > 0 ? "; " : "", prefix,
			    key != NULL ? key : "?");
			free(key);
		}
		i = json_next(j, i + 1);
	}
}

/*
 * Is use_tool's input a structured identifier and arguments?  The tokens
 * of its members go to top and id; what is wrong is said in details.
 */
bool
tool_ident_valid(const struct json *j, int args, int top[2], int id[3],
    struct buf *details)
{
	static const char *const top_keys[] = { "tool", "arguments", NULL };
	static const char *const id_keys[] = { "toolbox", "server", "name",
	    NULL };
	int others;

	if (args < 0) {
		buf_puts(details, "tool: Required");
		return false;
	}
	if (!json_is(j, args, JSMN_OBJECT)) {
		buf_puts(details, "Expected object, received a non-object");
		return false;
	}
	if (json_members(j, args, top_keys, top) > 0)
		check_keys(j, args, top_keys, "", details);
	if (top[U_TOOL] < 0)
		buf_printf(details, "%stool: Required", details->len > 0 ?
		    "; " : "");
	else if (!json_is(j, top[U_TOOL], JSMN_OBJECT))
		buf_printf(details, "%stool: Expected object", details->len >
		    0 ? "; " : "");
	else {
		others = json_members(j, top[U_TOOL], id_keys, id);
		check_field(j, id[U_BOX], "tool.toolbox", details);
		check_field(j, id[U_SERVER], "tool.server", details);
		check_field(j, id[U_NAME], "tool.name", details);
		if (others > 0)
			check_keys(j, top[U_TOOL], id_keys, "tool.", details);
	}
	if (top[U_ARGS] >= 0 && !json_is(j, top[U_ARGS], JSMN_OBJECT))
		buf_printf(details, "%sarguments: Expected object",
		    details->len > 0 ? "; " : "");
	return details->len == 0;
}
