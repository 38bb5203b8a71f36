/*
 * no_remote.c: what stands for the remote client (remote.c and its
 * files) in a build without it (make REMOTE=0, and the minimal build
 * make HTTP=0 SHARE=0): a server with a "url" is refused when it starts,
 * and by --check, with one line naming the build.  Nothing is ever
 * opened, so nothing registers with the loop.
 */
#include "util.h"
#include "remote.h"

static const char left_out[] = "this build leaves out remote servers "
    "(make REMOTE=0, or the minimal build); build with REMOTE=1";

int
remote_check(const struct remote_config *cfg, struct buf *err)
{
	(void)cfg;
	buf_puts(err, left_out);
	return -1;
}

struct remote *
remote_open(const struct remote_config *cfg, const struct remote_ops *ops,
    void *ctx, struct buf *err)
{
	(void)ops;
	(void)ctx;
	(void)remote_check(cfg, err);
	return NULL;
}

int
remote_send(struct remote *r, const char *line, size_t n)
{
	(void)r;
	(void)line;
	(void)n;
	return -1;
}

void
remote_ready(struct remote *r, const char *version)
{
	(void)r;
	(void)version;
}

void
remote_close(struct remote *r)
{
	(void)r;
}

const char *
remote_session(const struct remote *r)
{
	(void)r;
	return NULL;
}

int
remote_closing(void)
{
	return 0;
}
