/*
 * libFuzzer target: the names of toolboxes, servers and tools.  Each
 * function is compared with a plain reference written here from the rule
 * it implements, so a difference aborts (a crash to libFuzzer):
 *
 *  tool_valid_config_name	^[A-Za-z0-9-]+(_[A-Za-z0-9-]+)*$
 *  tool_split		at the first two "__"; no part empty; and
 *			tool_join of the parts gives the name back
 *  tool_listable		1..128 chars of [A-Za-z0-9_.-]; 1 when over 64
 *  tool_join/tool_split	round trip for valid toolbox and server names
 *  tool_legacy_fix	its answer, if any, splits into a configured
 *			toolbox and server
 *  tool_filter_match	no crash on any pattern (fnmatch)
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

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);
int LLVMFuzzerInitialize(int *, char ***);

static struct cfg cfg;

static const char config[] =
    "{\"toolboxes\":{"
    "\"dev\":{\"mcpServers\":{\"server\":{\"command\":\"x\"},"
    "\"file_system\":{\"command\":\"x\"},\"a-b_c\":{\"command\":\"x\"}}},"
    "\"my_box\":{\"mcpServers\":{\"s\":{\"command\":\"x\"},"
    "\"s_t\":{\"command\":\"x\"}}}}}";

static void
broken(const char *what, const char *name)
{
	fprintf(stderr, "fuzz_toolname: property broken: %s: '%s'\n", what,
	    name);
	abort();
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	FILE *devnull;

	(void)argc;
	(void)argv;
	if ((devnull = fopen("/dev/null", "w")) == NULL)
		abort();
	if (cfg_parse(&cfg, "fuzz.json", config, sizeof(config) - 1,
	    devnull) != 0) {
		fprintf(stderr, "fuzz_toolname: the built-in config does not "
		    "load\n");
		abort();
	}
	fclose(devnull);
	return 0;
}

static int
ref_name_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	    (c >= '0' && c <= '9') || c == '-';
}

static int
ref_valid_config_name(const char *s)
{
	size_t n = strlen(s), i;

	if (n == 0 || s[0] == '_' || s[n - 1] == '_')
		return 0;
	for (i = 0; i < n; i++) {
		if (s[i] == '_') {
			if (s[i + 1] == '_')
				return 0;
		} else if (!ref_name_char(s[i]))
			return 0;
	}
	return 1;
}

static int
ref_listable(const char *s)
{
	size_t n = strlen(s), i;

	if (n == 0 || n > 128)
		return -1;
	for (i = 0; i < n; i++)
		if (!ref_name_char(s[i]) && s[i] != '_' && s[i] != '.')
			return -1;
	return n > 64;
}

/* Would tool_split accept s? */
static int
ref_splittable(const char *s)
{
	const char *a, *b;

	if ((a = strstr(s, "__")) == NULL || a == s)
		return 0;
	if ((b = strstr(a + 2, "__")) == NULL || b == a + 2 || b[2] == '\0')
		return 0;
	return 1;
}

static void
check_split(const char *s)
{
	char *box = NULL, *server = NULL, *tool = NULL, *joined;
	int r;

	r = tool_split(s, &box, &server, &tool);
	if ((r == 0) != ref_splittable(s))
		broken("tool_split accepts differently from the rule", s);
	if (r != 0)
		return;
	if (*box == '\0' || *server == '\0' || *tool == '\0')
		broken("tool_split gave an empty part", s);
	if (strstr(box, "__") != NULL || strstr(server, "__") != NULL)
		broken("tool_split left \"__\" in the toolbox or server", s);
	joined = tool_join(box, server, tool);
	if (strcmp(joined, s) != 0)
		broken("tool_join of tool_split's parts differs", s);
	free(joined);
	free(box);
	free(server);
	free(tool);
}

static void
check_roundtrip(const char *box, const char *server, const char *tool)
{
	char *name, *b, *s, *t;

	if (!tool_valid_config_name(box) || !tool_valid_config_name(server) ||
	    *tool == '\0')
		return;
	name = tool_join(box, server, tool);
	if (tool_split(name, &b, &s, &t) != 0)
		broken("tool_split refuses a joined name", name);
	if (strcmp(b, box) != 0 || strcmp(s, server) != 0 ||
	    strcmp(t, tool) != 0)
		broken("tool_split does not give back the joined parts", name);
	free(b);
	free(s);
	free(t);
	free(name);
}

static void
check_legacy(const char *s)
{
	char *fixed, *box, *server, *tool;
	const struct cfg_toolbox *b;
	int i;

	if ((fixed = cfg_legacy_fix(&cfg, s)) == NULL)
		return;
	if (tool_split(fixed, &box, &server, &tool) != 0)
		broken("tool_legacy_fix made a name tool_split refuses", s);
	if ((b = cfg_toolbox(&cfg, box)) == NULL)
		broken("tool_legacy_fix names an unknown toolbox", s);
	for (i = 0; i < b->nservers; i++)
		if (strcmp(b->servers[i].name, server) == 0)
			break;
	if (i == b->nservers)
		broken("tool_legacy_fix names an unknown server", s);
	free(box);
	free(server);
	free(tool);
	free(fixed);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s, *parts[3], *p, *q;
	char *filters[2];
	int i;

	s = xstrndup((const char *)data, size);

	if (tool_valid_config_name(s) != ref_valid_config_name(s))
		broken("tool_valid_config_name differs from the rule", s);
	if (tool_listable(s) != ref_listable(s))
		broken("tool_listable differs from the rule", s);
	check_split(s);
	check_legacy(s);

	/* "box/server/tool": the join-split round trip. */
	p = xstrdup(s);
	for (i = 0, q = p; i < 3; i++) {
		parts[i] = q;
		if (i == 2)
			break;
		if ((q = strchr(parts[i], '/')) != NULL)
			*q++ = '\0';
		else
			q = parts[i] + strlen(parts[i]);
	}
	check_roundtrip(parts[0], parts[1], parts[2]);
	free(p);

	/* "pattern\nname": toolFilters. */
	p = xstrdup(s);
	if ((q = strchr(p, '\n')) != NULL) {
		*q++ = '\0';
		filters[0] = p;
		filters[1] = NULL;
		(void)tool_filter_match(filters, q);
	}
	if (!tool_filter_match(NULL, p))
		broken("no toolFilters must let every tool through", p);
	free(p);

	free(s);
	return 0;
}
