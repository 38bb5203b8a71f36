/*
 * stdio.c: the stdio transport: the session of the client that started
 * us, on our stdin and stdout.  That client is the workbench's reason
 * to run: when it leaves, the workbench stops.
 */
#include <unistd.h>

#include "workbench.h"

static void
stdio_left(struct session *se, bool gone)
{
	(void)se;
	(void)gone;
	loop_stop("its client left");
}

static const struct session_io stdio_io = { "stdio", session_pipe_flush,
    session_pipe_wide, stdio_left, NULL };

void
stdio_open(void)
{
	struct session *se;

	se = dispatch_open(STDIN_FILENO, STDOUT_FILENO, &stdio_io, NULL);
	wb_log_debug("session %lu opened: stdio", session_serial(se));
}
