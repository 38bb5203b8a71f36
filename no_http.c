/*
 * no_http.c: layer 7, what stands for http_host.c in a build without
 * HTTP (make HTTP=0): no --listen, no "listen".  main refuses both,
 * naming the build (hhost_left_out); the loop's steps do nothing, since
 * no HTTP client can come.
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

void
hhost_before_poll(void)
{
}

void
hhost_flush(void)
{
}

void
hhost_watch(void (*watch)(void *, int, short, void *), void *arg)
{
	(void)watch;
	(void)arg;
}

long long
hhost_deadline(void)
{
	return -1;
}

void
hhost_event(void *tag, int fd, short revents)
{
	(void)tag;
	(void)fd;
	(void)revents;
}

void
hhost_timeouts(long long now)
{
	(void)now;
}

void
hhost_shutdown(void)
{
}

bool
hhost_written(void)
{
	return true;
}

void
hhost_end(void)
{
}
