/*
 * workbench.h: layer 7, the top: the workbench program.  workbench.c
 * (main, options, the loop) offers its exit statuses; the files it runs
 * offer the loop their steps: the client's lines read and dispatched
 * through the method table (dispatch.c), HTTP clients' sessions
 * (http_host.c, or no_http.c in a build without HTTP), --probe
 * (probe.c) and the shared workbench (share_host.c, or no_share.c).
 * Includes box.h and those below.
 */
#ifndef WORKBENCH_H
#define WORKBENCH_H

#include "box.h"

/*
 * workbench.c: the exit statuses of main, which the other files of
 * this layer return through it (and SHARE_EXIT_LOST, share.h).
 */
enum wb_exit {
	WB_EXIT_OK = 0,
	WB_EXIT_CONFIG = 1,	/* Invalid configuration; --probe: a failure. */
	WB_EXIT_USAGE = 2,	/* Usage error. */
	WB_EXIT_START = 3	/* Cannot start. */
};

void	 dispatch_init(void);
struct session *dispatch_open(int, int, const struct session_io *, void *);
struct session *dispatch_open_by(const struct session_io *, void *);
void	 dispatch_close(struct session *);
void	 dispatch_line(struct session *, char *, size_t);
ssize_t	 dispatch_read(struct session *);
bool	 dispatch_busy(const struct session *);
void	 dispatch_resume(struct session *);

/*
 * clients.c: the client sessions' side of the loop: a pipe's input
 * watched, a busy session's requests held, every queue written before
 * poll.
 */
void	 clients_init(void);
void	 clients_watch(struct session *);
void	 clients_hold(struct session *);
void	 clients_forget(const struct session *);

/*
 * http_host.c: MCP over Streamable HTTP (--listen), each client's
 * session one of the core's; hhost_start registers its steps with the
 * loop.  hhost_left_out says why --listen cannot be had in this build
 * (NULL: it can; no_http.c stands in for the file in a build without
 * HTTP).
 */
const char *hhost_left_out(void);
bool	 hhost_start(const char *, struct buf *);
bool	 hhost_serving(void);
int	 hhost_port(void);

bool	 probe_start(char **, int, const char *, bool);
int	 probe_status(void);

/* stdio.c: the session of the client on our stdin and stdout. */
void	 stdio_open(void);

/*
 * share_host.c: the shared workbench and its front; host_listen
 * registers its steps with the loop; host_about says what the log is
 * about (a session's lines go to its front's stderr); host_left_out as
 * hhost_left_out, for "share" (no_share.c).  share_status.c: --status
 * (host_status).
 */
const char *host_left_out(void);
int	 host_serve_args(int *, char ***, const char **);
int	 host_front(const char *);
int	 host_status(bool);
bool	 host_listen(const char *, int);
void	 host_about(const struct server *, const struct session *);

#endif /* WORKBENCH_H */
