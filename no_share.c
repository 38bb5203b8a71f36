/*
 * no_share.c: layer 7, what stands for share_host.c in a build without
 * sharing (make SHARE=0): no "share": true, no --status.  main refuses
 * the key, naming the build (host_left_out); with no front and no
 * shared workbench, every session is served on its own and nothing
 * registers with the loop.
 */
#include <stdio.h>

#include "workbench.h"

const char *
host_left_out(void)
{
	return "this build leaves out sharing (make SHARE=0)";
}

/* No process is ever started as a shared workbench: no hidden options. */
int
host_serve_args(int *argc, char ***argv, const char **hex)
{
	(void)argc;
	(void)argv;
	(void)hex;
	return -1;
}

int
host_front(const char *argv0)
{
	(void)argv0;
	return -1;
}

int
host_status(bool json)
{
	(void)json;
	fprintf(stderr, WB_NAME ": --status: %s\n", host_left_out());
	return WB_EXIT_USAGE;
}

bool
host_listen(const char *hex, int ready)
{
	(void)hex;
	(void)ready;
	return false;
}

void
host_about(const struct server *s, const struct session *se)
{
	(void)s;
	(void)se;
}
