/*
 * server.h: layer 5 as the layers above see it.  The servers are one
 * set, in configuration order: each an opaque struct server, walked with
 * SRV_EACH, asked what it is (label, state, capabilities, error), started
 * for a session, given a session's calls and requests, sent requests of
 * the workbench's own (srv_request), and polled by the loop (srv_watch,
 * srv_event).  Its lists are read with list_find and list_items.  What a
 * server tells the layer above it tells through upcalls (struct
 * srv_upcalls) or a flag the loop reads before it polls
 * (srv_take_changed).  The files that implement a server share
 * server_int.h, which no one else includes.  Includes session.h,
 * proc.h and config.h and those below.
 */
#ifndef SERVER_H
#define SERVER_H

#include "config.h"
#include "proc.h"
#include "session.h"

struct server;

enum list_kind {
	LIST_TOOLS,
	LIST_PROMPTS,
	LIST_RESOURCES,
	LIST_TEMPLATES,
	LIST_KINDS
};

/*
 * An entry of a server's list, as the server listed it.  The layer above
 * keeps two notes on it: index (search_tools) and shadowed (resources).
 */
struct item {
	char		*key;		/* Its name, URI or URI template. */
	const char	*json;		/* The object, raw (no NUL after). */
	char		*native;	/* As the client is shown it, or NULL. */
	struct tool_index *index;	/* search_tools' terms, once searched. */
	unsigned int	 len;		/* Of json; a line is at most 1 GiB. */
	bool		 shadowed;	/* Said once: another server has it. */
};

enum srv_state {
	SRV_IDLE,		/* Never started. */
	SRV_STARTING,		/* initialize or tools/list under way. */
	SRV_READY,		/* Takes calls. */
	SRV_RELISTING,		/* Takes calls; fetching its tools again. */
	SRV_STOPPED,		/* Stopped by us: idle, or shutdown. */
	SRV_FAILED		/* Failed to start, or died. */
};

/* What a server declared it offers (initialize's capabilities). */
enum srv_cap {
	CAP_LOGGING = 1,
	CAP_PROMPTS = 2,
	CAP_RESOURCES = 4,
	CAP_SUBSCRIBE = 8,
	CAP_COMPLETIONS = 16
};

/* The servers, each of a toolbox (its index in the configuration). */
void	 srv_init_all(void);
struct server *srv_at(int);
struct server *srv_first(void);
struct server *srv_next(const struct server *);
struct server *srv_by_pid(pid_t);
struct server *srv_for(const struct session *, int);
bool	 srv_used_by(const struct server *, const struct session *);
bool	 srv_uses(const struct session *, const struct server *);
int	 srv_index(const struct server *);
int	 srv_configured(void);
void	 srv_bind(const struct session *, int, const unsigned char *,
	    const struct cfg_server *);
void	 srv_key_first(int, const unsigned char *);
int	 srv_sessions(const struct server *);
void	 srv_reclaim(bool);

/* Every server of every toolbox, in configuration order. */
#define SRV_EACH(s)	for ((s) = srv_first(); (s) != NULL; (s) = srv_next(s))

/* What it is. */
const char *srv_label(const struct server *);
const char *srv_name(const struct server *);
const char *srv_cwd(const struct server *);
const char *srv_url(const struct server *);
int	 srv_box(const struct server *);
enum srv_state srv_state(const struct server *);
const char *srv_error(const struct server *);
unsigned srv_caps(const struct server *);
bool	 srv_modern(const struct server *);
long long srv_ready_ms(const struct server *);
bool	 srv_catalogued(const struct server *);
bool	 srv_serving(const struct server *);
bool	 srv_known(const struct server *);
bool	 srv_busy(const struct server *, long long);
pid_t	 srv_pid(const struct server *);
long long srv_calls(const struct server *);
int	 srv_session_calls(const struct session *);

/* Its life, asked for by a session's request; the end of all. */
void	 srv_open(struct server *, struct session *);
void	 srv_stop_all(void);
void	 srv_session_gone(struct session *);

/*
 * Requests of the workbench's own, their params' members given (the
 * era's _meta goes first for a modern server): srv_request's answer is
 * dropped; srv_request_open's (subscriptions/listen) comes only at its
 * end, srv_cancel ends it.  Nothing is sent to a server not running.
 */
void	 srv_request(struct server *, const char *, const char *, size_t);
long long srv_request_open(struct server *, const char *, const char *,
	    size_t);
void	 srv_cancel(struct server *, long long, const char *);

/* Its lists: the last complete one of each kind. */
const struct item *list_find(const struct server *, enum list_kind,
	    const char *, size_t);
struct item *list_items(const struct server *, enum list_kind, int *);
int	 list_count(const struct server *, enum list_kind);
bool	 list_indexed(const struct server *, enum list_kind);
void	 list_free_retired(void);
void	 catalog_load(struct server *, const struct session *);
void	 catalog_close(void);

/*
 * A session's requests for a server.  A call's arguments and _meta, raw
 * from the client's line (or NULL).
 */
struct call_in {
	const char	*args;
	size_t		 alen;
	const char	*meta;
	size_t		 mlen;
	const char	*token;		/* Its progressToken, within meta. */
	size_t		 toklen;
	const char	*responses;	/* A retry's inputResponses (MRTR), */
	size_t		 rlen;
	const char	*state;		/* and its requestState. */
	size_t		 slen;
};

/*
 * Another request for a server, passed on: the client's params, raw (or
 * NULL), with the name the client was shown replaced by the server's
 * own (when name.p is not NULL) and the progressToken by ours.
 */
struct pass_in {
	const char	*method;
	const char	*params;
	size_t		 plen;
	struct span	 name;		/* Within params, quotes included. */
	const char	*original;	/* What goes there. */
	struct span	 token;		/* Within params. */
	struct span	 bind;		/* What a requestState is bound to. */
	struct call_in	 retry;		/* An MRTR retry's members. */
};

void	 call_in_tokens(const struct json *, int, int, struct call_in *);
void	 call_route(struct server *, struct session *, const char *, size_t,
	    const struct call_in *, const char *, size_t);
void	 call_pass(struct server *, struct session *, const struct pass_in *,
	    const char *, size_t);
void	 call_cancel(const struct session *, const char *, size_t,
	    const char *);
void	 relay_answer(const struct session *, const struct json *, int,
	    const char *, size_t);
void	 relay_set_level(void);
void	 relay_level_gone(void);
void	 relay_roots_ask(struct session *);
void	 relay_roots_changed(struct session *);

/*
 * The loop.  A server's descriptors, each with the events to poll for
 * (-1: not now), of its process pid; an event is handed back with them,
 * and one of a process gone meanwhile is dropped.
 */
enum srv_fd {
	SRV_FD_OUT,		/* Its stdout. */
	SRV_FD_IN,		/* Its stdin, with bytes waiting. */
	SRV_FD_ERR,		/* Its stderr. */
	SRV_FD_EXEC,		/* Its exec report. */
	SRV_FDS
};

struct srv_fds {
	int	 fd[SRV_FDS];
	short	 events[SRV_FDS];
	pid_t	 pid;
};

/*
 * server_loop.c: the servers with the loop: srv_loop_init registers the
 * signals and the servers' steps; srv_about_by is told which server the
 * log is about.
 */
bool	 srv_loop_init(void);
bool	 srv_any_busy(long long);
void	 srv_about_by(void (*)(const struct server *, const struct session *));

void	 srv_watch(struct server *, bool, struct srv_fds *);
void	 srv_event(struct server *, enum srv_fd, pid_t, int, short);
bool	 srv_peers(bool (*)(struct peer *));
void	 srv_pump(void);
long long srv_deadline(const struct server *);
void	 srv_check_timers(struct server *, long long);
int	 srv_remote_check(const struct cfg_server *, struct buf *);
void	 srv_exited(struct server *, int);
bool	 stream_of(const struct server *);
long long bridge_deadline(void);
void	 bridge_check(long long);

/*
 * What a server tells the layer above (box.h) that it cannot call:
 * upcalls, set once at startup (srv_upcalls); and whether a list changed
 * or a starting server settled, asked by the loop before it polls.
 */
struct srv_upcalls {
	/* Does the client see entries of this kind as objects of ours? */
	bool	(*renames)(enum list_kind);
	/* Entry t of a list as the client sees it, or NULL (dyn_native). */
	char	*(*native)(const struct server *, enum list_kind,
		    const struct json *, int, const char *);
	/* A server said a resource changed (resources/updated). */
	void	(*updated)(const struct server *, const struct json *,
		    const char *, size_t);
	/* Does the session use the server: its toolbox open or opening? */
	bool	(*uses)(const struct session *, const struct server *);
};

void	 srv_upcalls(const struct srv_upcalls *);
bool	 srv_take_changed(void);

#endif /* SERVER_H */
