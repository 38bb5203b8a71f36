/*
 * no_http.c: layer 7, what stands for http_host.c in a build without
 * HTTP (make HTTP=0): no --listen, no "listen".  main refuses both,
 * naming the build (hhost_left_out); nothing registers with the loop,
 * since no HTTP client can come.
 */
#include "workbench.h"

const char *
hhost_left_out(void)
{
	return "this build leaves out HTTP (make HTTP=0)";
}

bool
hhost_start(const char *listen, struct buf *err)
{
	(void)listen;
	buf_puts(err, hhost_left_out());
	return false;
}

bool
hhost_serving(void)
{
	return false;
}

int
hhost_port(void)
{
	return -1;
}
