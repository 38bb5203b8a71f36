/*
 * libFuzzer target: the configuration loader.  cfg_parse on arbitrary
 * bytes (problems written to /dev/null), every field of what it built
 * read back and each server's digest taken, then cfg_free; cfg_expand on
 * the input as a string.
 *
 * Properties checked when cfg_parse reports no problem: every toolbox
 * and server name obeys the name rule, every server has a non-empty
 * command, NULL-terminated argv and env, and its timeouts in range.
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

static FILE *devnull;

static void
broken(const char *what)
{
	fprintf(stderr, "fuzz_config: property broken: %s\n", what);
	abort();
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if ((devnull = fopen("/dev/null", "w")) == NULL)
		abort();
	/* Variables the seeds refer to: set, set but empty. */
	setenv("WB_FUZZ_SET", "value", 1);
	setenv("WB_FUZZ_EMPTY", "", 1);
	unsetenv("WB_FUZZ_UNSET");
	return 0;
}

/* Read every string of v, so that ASan sees a bad pointer. */
static size_t
strings(char **v)
{
	size_t n = 0, i;

	for (i = 0; v != NULL && v[i] != NULL; i++)
		n += strlen(v[i]);
	return n;
}

static void
walk(const struct cfg *c, int ok)
{
	static const unsigned char key[SIP_KEY] = { 1 };
	unsigned char tag[SIP_TAG];
	const struct cfg_server *s;
	int i, k;

	for (i = 0; i < c->nboxes; i++) {
		if (c->boxes[i].name == NULL ||
		    c->boxes[i].description == NULL)
			broken("toolbox without name or description");
		if (ok && !tool_valid_config_name(c->boxes[i].name))
			broken("accepted a toolbox name that breaks the rule");
		if (cfg_toolbox(c, c->boxes[i].name) == NULL)
			broken("cfg_toolbox cannot find a loaded toolbox");
		for (k = 0; k < c->boxes[i].nservers; k++) {
			s = &c->boxes[i].servers[k];
			if (s->name == NULL || s->argv == NULL ||
			    s->argv[0] == NULL || s->command == NULL)
				broken("server without name, argv or command");
			(void)strings(s->argv);
			(void)strings(s->env);
			(void)strings(s->filters);
			(void)tool_filter_match(s->filters, "echo");
			cfg_server_digest(s, key, tag);
			if (s->cwd != NULL)
				(void)strlen(s->cwd);
			if (!ok)
				continue;
			if (!tool_valid_config_name(s->name))
				broken("accepted a server name that breaks the "
				    "rule");
			if (s->argv[0][0] == '\0')
				broken("accepted an empty command");
			if (s->init_timeout_ms < 1 || s->call_timeout_ms < 0)
				broken("accepted a timeout out of range");
		}
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buf out = { 0 }, var = { 0 };
	struct cfg c;
	char *s;
	int errors;

	errors = cfg_parse(&c, "fuzz.json", (const char *)data, size, devnull);
	walk(&c, errors == 0);
	cfg_free(&c);

	s = xstrndup((const char *)data, size);
	(void)cfg_expand(s, &out, &var);
	buf_free(&out);
	buf_free(&var);
	free(s);
	return 0;
}
