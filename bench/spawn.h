/*
 * bench/spawn.h: starting a command with pipes, for the benchmark tools.
 */
#ifndef BENCH_SPAWN_H
#define BENCH_SPAWN_H

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <unistd.h>

extern char **environ;

/*
 * Start cmd with pipes on its standard input (*wfd) and output (*rfd),
 * and errfd, unless -1, on its standard error.  Our ends are non-blocking
 * and close-on-exec, so that no other child holds them open.  Returns 0,
 * or an errno value.
 */
static int
spawn_piped(char **cmd, int errfd, pid_t *pid, int *wfd, int *rfd)
{
	posix_spawn_file_actions_t fa;
	int in[2], out[2], e;

	if (pipe2(in, O_CLOEXEC) < 0)
		return errno;
	if (pipe2(out, O_CLOEXEC) < 0) {
		e = errno;
		close(in[0]);
		close(in[1]);
		return e;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in[0], 0);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	if (errfd >= 0)
		posix_spawn_file_actions_adddup2(&fa, errfd, 2);
	e = posix_spawnp(pid, cmd[0], &fa, NULL, cmd, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(in[0]);
	close(out[1]);
	if (e != 0) {
		close(in[1]);
		close(out[0]);
		return e;
	}
	*wfd = in[1];
	*rfd = out[0];
	fcntl(*wfd, F_SETFL, O_NONBLOCK);
	fcntl(*rfd, F_SETFL, O_NONBLOCK);
	return 0;
}

#endif
