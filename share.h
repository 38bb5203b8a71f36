/*
 * share.h: the transport of a shared workbench (layer 3): its directory,
 * identity, lock and socket, the start of the daemon, the handover of a
 * client's stdio by the process the client started (the front), and the
 * wire protocol between the two.  The protocol and the files are
 * described at the top of share.c; the front's side is in front.c.
 */
#ifndef SHARE_H
#define SHARE_H

#include <stdbool.h>
#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

struct buf;
struct pollfd;

#define SHARE_KEY_LEN		16
#define SHARE_ID_LEN		16
#define SHARE_NAME_LEN		16	/* Hex digits naming a daemon's files. */
#define SHARE_OPT_SERVE		"--share-serve"	/* HEX: what it serves. */
#define SHARE_OPT_READY		"--share-ready"	/* FD: say it listens. */
#define SHARE_LINGER_MS		60000	/* shareLingerMs by default. */
#define SHARE_PENDING_MAX	16	/* Connections in their handshake. */
#define SHARE_POLLFDS		(1 + SHARE_PENDING_MAX)
#define SHARE_EXIT_LOST		4	/* The front's status: daemon gone. */
#define SHARE_PRUNE_MS	(24LL * 3600 * 1000)	/* Files of a text unserved. */
#define SHARE_PRUNE_MAX		64	/* Names pruned at a daemon's start, */
#define SHARE_PRUNE_SCAN	1024	/* among so many read at most. */
#define SHARE_LIST_MAX		64	/* Shared workbenches --status asks. */

enum share_kind {
	SHARE_SESSION = 1,	/* A client's session: its stdio comes. */
	SHARE_STATUS = 2	/* A question: what serves, for whom. */
};

/* The directory, opened and checked, and its key. */
struct share_dir {
	int		 fd;
	char		*path;
	unsigned char	 key[SHARE_KEY_LEN];
};

/* What a daemon serves: one binary and one configuration text. */
struct share_id {
	unsigned char	 id[SHARE_ID_LEN];
	char		 name[SHARE_NAME_LEN + 1];	/* Its files' name. */
};

/* One hello, as a daemon received it; everything in it was checked. */
struct share_hello {
	enum share_kind	 kind;
	unsigned char	 id[SHARE_ID_LEN];
	const char	*cwd;		/* Absolute; NULL in a status request. */
	char		**env;		/* "NAME=value", NULL-terminated. */
	size_t		 nenv;
	char		**opt;		/* "name=value", NULL-terminated. */
	size_t		 nopt;
	pid_t		 pid;		/* The front's, from the kernel. */
	int		 fd[3];		/* The client's stdin, stdout, stderr. */
	int		 sock;		/* The lifeline to the front. */
	long long	 since;		/* When the session began (now_ms). */
	char		*mem;		/* One block for the above (private). */
};

/* share.c: the directory, names and identity. */
int	 share_dir_path(const char *, struct buf *, struct buf *);
int	 share_dir_open(struct share_dir *, const char *, struct buf *);
void	 share_dir_close(struct share_dir *);
int	 share_exe_digest(unsigned char *, struct buf *);
void	 share_identity(struct share_id *, const unsigned char *,
	    const char *, const unsigned char *, const char *, size_t);
void	 share_id_hex(const struct share_id *, char *);
bool	 share_id_is(const struct share_id *, const char *);
void	 share_digest(const unsigned char *, const void *, size_t,
	    unsigned char *);
int	 share_sockaddr(const struct share_dir *, const char *, void *,
	    struct buf *);
int	 share_socket_names(const struct share_dir *,
	    char (*)[SHARE_NAME_LEN + 1], int);

/* share.c: the wire. */
void	 share_msg(struct buf *, int, const void *, size_t);
int	 share_hello_encode(struct buf *, enum share_kind,
	    const unsigned char *, const char *, char *const *, char *const *);
int	 share_hello_decode(struct share_hello *, const void *, size_t,
	    struct buf *);
void	 share_hello_free(struct share_hello *);

/*
 * share.c: the daemon.  share_ready (FD from SHARE_OPT_READY, NULL once
 * listening, else why not); then each loop turn share_server_pollfds
 * before poll() and share_server_events after it; sessions that began
 * come from share_server_take and end with share_session_end.  A
 * session whose input is quiet is parked (share_session_park): its
 * front watches the client's input and, once it is readable, writes the
 * SHARE_WAKE_LEN bytes it was given to the descriptor it was given.
 */
#define SHARE_WAKE_LEN	8
typedef void share_status_fn(struct buf *, void *);
struct share_server;

int	 share_ready_fd(const char *);
void	 share_ready(int, const char *);
struct share_server *share_listen(const struct share_dir *,
	    const struct share_id *, int, share_status_fn *, void *,
	    struct buf *);
int	 share_server_pollfds(struct share_server *, struct pollfd *, int);
void	 share_server_events(struct share_server *, const struct pollfd *,
	    int, long long);
long long share_server_deadline(const struct share_server *);
struct share_hello *share_server_take(struct share_server *);
bool	 share_session_gone(const struct share_hello *);
void	 share_session_end(struct share_server *, struct share_hello *, int);
int	 share_session_park(const struct share_hello *, int,
	    const unsigned char *);
long long share_server_linger(const struct share_server *, long long);
void	 share_server_log(struct share_server *);
void	 share_server_close(struct share_server *);

/*
 * front.c: the process the client started.  share_join hands the
 * client's stdio to the daemon (started when none listens) and gives
 * the lifeline, or -1 with why: then the session runs unshared, its
 * stdio untouched.  share_wait then waits and gives the exit status.
 */
struct share_front {
	int		 sock;
	int		 in;		/* The client's input, while parked. */
	pid_t		 daemon;
	bool		 started;	/* This front started it. */
	int		 errfl;		/* fd 2's flags before the handover. */
	sigset_t	 mask;		/* The mask before the handover. */
};

int	 share_join(const struct share_dir *, const struct share_id *,
	    char *const *, char *const *, struct share_front *, struct buf *);
int	 share_wait(struct share_front *);
int	 share_status(const struct share_dir *, const struct share_id *,
	    struct buf *, struct buf *);

#endif /* SHARE_H */
