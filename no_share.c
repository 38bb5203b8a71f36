/*
 * no_share.c: layer 7, what stands for share_host.c in a build without
 * sharing (make SHARE=0): no "share": true, no --status.  main refuses
 * the key, naming the build (host_left_out); with no front and no
 * shared workbench, every session is served on its own and the loop's
 * steps do nothing.
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

bool
host_active(void)
{
	return false;
}

void
host_about(const struct server *s, const struct session *se)
{
	(void)s;
	(void)se;
}

void
host_watch(void (*watch)(int, short))
{
	(void)watch;
}

void
host_events(const struct pollfd *p, int n, long long now)
{
	(void)p;
	(void)n;
	(void)now;
}

void
host_leave(struct session *se, bool gone)
{
	(void)se;
	(void)gone;
}

bool
host_leaving(const struct session *se)
{
	(void)se;
	return false;
}

void
host_tick(void)
{
}

long long
host_deadline(void)
{
	return -1;
}

bool
host_expired(long long now)
{
	(void)now;
	return false;
}

void
host_close(const char *why)
{
	(void)why;
}
