/*
 * proc.h: layer 3, child processes (procmgr.c): spawning on an argv,
 * stderr drained and kept to quote, the signal descriptor, reaping and
 * the escalation of a stop; and the guardian (guard.c) that ends the
 * servers' process groups when the workbench ends, SIGKILL included.
 * Includes peer.h and config.h (a server's configuration to spawn).
 */
#ifndef PROC_H
#define PROC_H

#include "config.h"
#include "peer.h"

#define PROC_TAIL	5	/* stderr lines kept to quote on failure */
#define PROC_TAIL_LINE	200	/* and the bytes kept of each */

struct proc {
	pid_t		 pid;		/* 0 when not running */
	bool		 reaped;	/* It exited; its group may linger. */
	struct peer	 io;		/* rfd: its stdout, wfd: its stdin */
	int		 errfd;
	int		 execfd;	/* Until exec is known to have worked. */
	struct buf	 errline;	/* A partial stderr line. */
	bool		 errcut;	/* Dropping the rest of a long line. */
	char		*tail[PROC_TAIL];
	int		 ntail;
	struct ratelog	 errlog;	/* What of its stderr is shown. */
};

int	 proc_signals(void);
int	 proc_signal_take(void);
char	**proc_child_env(const struct cfg_server *);
int	 proc_spawn(struct proc *, const struct cfg_server *, struct buf *);
int	 proc_exec_status(struct proc *, const struct cfg_server *,
	    struct buf *);
int	 proc_drain_stderr(struct proc *, const char *);
void	 proc_tail(const struct proc *, struct buf *);
void	 proc_close(struct proc *);
void	 proc_retire(pid_t, bool);
void	 proc_tick(long long);
long long proc_deadline(void);
void	 proc_kill_all(void);
bool	 proc_hand_over(void);
void	 proc_status(int, struct buf *);

/*
 * guard.c: the guardian process that ends the servers' process groups
 * when the workbench ends, SIGKILL included.
 */
void	 guard_add(pid_t);
void	 guard_gone(pid_t);
int	 guard_wants_out(void);
void	 guard_writable(void);
void	 guard_reaped(pid_t);
bool	 guard_retire(long long);
void	 guard_end(void);

#endif /* PROC_H */
