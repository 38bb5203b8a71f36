/*
 * server_int.h: layer 5, private to the files that implement a server
 * (those of layer 5 in ARCHITECTURE.md): struct server itself, its
 * requests and lists, and what these files call of each other.  Everyone
 * above sees server.h alone.  Includes server.h.
 */
#ifndef SERVER_INT_H
#define SERVER_INT_H

#include "server.h"

#define STUCK_MS		1000	/* A server taking no input is stuck. */

/*
 * listing.c: a server's lists, each paged in by one mechanism, filtered
 * and indexed by key.
 */
struct listing {
	struct item	*items;		/* The last complete list, */
	int		 n;
	struct arena	 mem;		/* and its keys and text. */
	struct item	*fresh;		/* The list being paged in, */
	int		 nfresh;
	struct arena	 fmem;		/* and its. */
	char		**cursors;	/* Cursors seen while paging. */
	int		 ncursors;
	int		*index;		/* items by key; -1: empty */
	size_t		 nindex;
	enum { FETCH_IDLE, FETCH_PAGING, FETCH_AGAIN }
			 fetch;		/* AGAIN: it changed meanwhile. */
	bool		 full;		/* It kept all it may: said once. */
};

void	 list_fetch(struct server *, enum list_kind);
bool	 list_take_entry(struct server *, char *, size_t);
bool	 list_page(struct server *, const char *, size_t);
void	 list_answered(struct server *, enum list_kind, const struct json *,
	    const char *, size_t);
bool	 list_changed(struct server *, const struct json *, int);
bool	 list_fatal(const struct server *, enum list_kind);
bool	 list_paging(const struct server *);
void	 list_stop(struct server *);
void	 list_release(struct server *);
void	 list_clear(struct server *, enum list_kind);
void	 list_abandon(struct server *, enum list_kind);
void	 list_warn(struct server *, enum list_kind, const char *,
	    bool);
/* server.c: one server's life: start, lists, relisting, failure, exit. */
enum req_kind {
	REQ_INIT,
	REQ_LIST,		/* A page of one of its lists. */
	REQ_CALL,		/* tools/call: failures become isError. */
	REQ_PASS,		/* prompts/get and the like: passed verbatim. */
	REQ_QUIET,		/* setLevel, (un)subscribe: the answer is dropped. */
	REQ_DISCOVER		/* server/discover, the era probe. */
};

/* A request to a server: sent, or waiting for the server to be ready. */
struct request {
	long long	 id;		/* Ours, on the server. */
	enum req_kind	 kind;
	enum list_kind	 list;		/* REQ_LIST: which list. */
	const char	*method;	/* REQ_CALL, REQ_PASS: to send. */
	bool		 sent;
	struct session	*sess;		/* Whose request it is, or NULL. */
	struct text	 cid;		/* The client's id, raw. */
	struct text	 tool;		/* The tool's own name. */
	char		*params;	/* A call's params, while waiting. */
	size_t		 plen;
	char		*token;		/* The client's progressToken, raw. */
	size_t		 tokenlen;
	long long	 ptok;		/* Our progressToken for it, or 0. */
	long long	 idle_at;	/* callTimeoutMs; progress resets it. */
	long long	 hard_at;	/* callMaxTimeoutMs. */
	bool		 modern;	/* A modern client's call, */
	unsigned	 can;		/* which can answer these (client_cap), */
	int		 level;		/* and wants logs from (era_level). */
	struct park	*park;		/* Waiting for a modern client's retry. */
	struct ask	*ask;		/* Asking a 2025 client for input. */
};

/* A request of the client's: a call, or another passed on. */
static inline bool
req_is_call(const struct request *r)
{
	return r->kind == REQ_CALL || r->kind == REQ_PASS;
}

/* Does its answer go to the client (spliced back under the client's id)? */
static inline bool
req_for_client(const struct request *r)
{
	return req_is_call(r) && r->park == NULL;
}

/* A call that ended without its answer, which may still come. */
struct ghost {
	long long	 id;		/* Ours, on the server. */
	struct text	 cid;		/* The client's id, raw. */
};
#define GHOSTS_MAX	32

/* A server's era, and how far its process's opening went (handshake.c). */
enum handshake {
	HS_UNKNOWN,		/* Auto, its era not found yet. */
	HS_PROBING,		/* Auto's discover sent: legacy at probe_at. */
	HS_SILENT,		/* None by then: initialize decides. */
	HS_LATE,		/* Silent, then discover answered. */
	HS_PROBED,		/* Legacy by the probe, this process. */
	HS_LEGACY,		/* 2025: initialize. */
	HS_DISCOVERING,		/* Modern: its discover unanswered. */
	HS_MODERN		/* 2026-07-28: _meta on every request. */
};

/* What a server's catalogue entry is to it: catalog.c moves it. */
enum catalog_use {
	CATALOG_UNREAD,		/* Its entry not looked for yet. */
	CATALOG_ENTRY,		/* Its tools are its entry's. */
	CATALOG_OTHER,		/* An entry's for other capabilities. */
	CATALOG_DONE		/* No entry speaks for its tools now. */
};

/* One of a server's descriptors with the loop (server_loop.c). */
struct srv_watch {
	struct loop_io		 io;
	struct server		*s;
	enum srv_fd		 which;
	pid_t			 pid;		/* The process it was for. */
};

struct server {
	struct srv_watch	 watch[SRV_FDS];
	struct loop_timer	 timer;		/* Its nearest deadline. */
	bool			 live;		/* On server_loop.c's list. */
	int			 n;		/* Its configuration index, */
	int			 at;		/* and its place among all. */
	unsigned char		 key[SIP_TAG];	/* Its instance's identity, */
	bool			 keyed;		/* when given. */
	struct cfg_server	*own;		/* An instance's configuration. */
	long long		 unused_at;	/* Its last session left. */
	int			 box;		/* Its toolbox, by index. */
	const struct cfg_toolbox *boxcfg;
	const struct cfg_server	*cfg;
	char			*label;		/* "toolbox/server" */
	enum srv_state		 state;
	struct proc		 proc;
	struct remote		*remote;	/* Or reached over HTTP. */
	long long		 next_id;
	struct request		*req;
	int			 nreq;
	int			 capreq;
	struct listing		 lists[LIST_KINDS];
	char			*error;		/* Why it is SRV_FAILED. */
	int			 failures;	/* In a row: the backoff. */
	long long		 retry_at;	/* No automatic start before. */
	long long		 started_at;	/* This process's start. */
	long long		 ready_ms;	/* Start to ready, the last time. */
	long long		 active_at;	/* Its last traffic: idleTimeoutMs. */
	long long		 deadline;	/* Of starting. */
	long long		 eof_at;	/* When its stdout closed. */
	long long		 drained_at;	/* Its stdin last kept up. */
	unsigned		 caps;		/* enum srv_cap */
	struct buf		 told;		/* Client capabilities it is told, */
	char			 protocol[16];	/* and the version it is spoken. */
	enum handshake		 hs;		/* Its era (handshake.c). */
	long long		 probe_at;	/* HS_PROBING: legacy after. */
	bool			 listens;	/* Modern, with list changes. */
	enum catalog_use	 catalog;	/* Its tools from its entry? */
	unsigned long		 catalog_hash;	/* Of the tools stored there. */
	char			 catalog_name[2 * SIP_TAG + 1];	/* Its entry. */
	struct ghost		*ghosts;	/* The newest GHOSTS_MAX. */
	int			 nghosts;
	bool			 ghosts_lost;	/* More, forgotten. */
	struct ratelog		 warned;	/* Warnings about its output. */
	long long		 ncalls;	/* Calls so far (--status). */
};

void	 srv_ensure(struct server *, struct session *);
const struct buf *srv_told_for(const struct session *);
bool	 srv_backing_off(const struct server *, long long, struct buf *);
struct buf *srv_send_head(struct server *, struct request *, const char *);
void	 srv_send(struct server *, struct request *, const char *,
	    const char *, size_t);
void	 srv_notify(struct server *, const char *);
bool	 srv_stuck(const struct server *, long long);
void	 srv_warn(struct server *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));

extern const struct peer_ops srv_ops;	/* Its stdout's lines. */
void	 srv_fail(struct server *, const char *);
void	 srv_listed(struct server *);
bool	 srv_probe_ended(struct server *, const char *);
void	 srv_stop(struct server *);
bool	 srv_writable(const struct server *);
void	 srv_send_listen(struct server *);
bool	 srv_renames(enum list_kind);
char	*srv_native(const struct server *, enum list_kind,
	    const struct json *, int, const char *);
bool	 srv_in_use_by(const struct server *, const struct session *);
void	 srv_updated(const struct server *, const struct json *, const char *,
	    size_t);
/* handshake.c: a process's first requests, and the era they find. */
void	 handshake_init(struct server *);
void	 handshake_open(struct server *, bool);
void	 handshake_answer(struct server *, enum req_kind, const struct json *);
void	 handshake_over(struct server *);
bool	 handshake_ended(struct server *);
long long handshake_deadline(const struct server *);
void	 handshake_check(struct server *, long long);
void	 srv_put_meta(const struct server *, struct buf *);
/* catalog.c: each server's last complete lists, on disk (catalog_load). */
void	 catalog_told(struct server *, const struct buf *);
void	 catalog_failed(struct server *);
void	 catalog_store(struct server *);
const char *catalog_entry_check(const char *, size_t, const char *);
/* call.c: requests in flight, answers, cancellation, timeouts, ghosts. */
struct request *req_add(struct server *, enum req_kind);
int	 req_find(const struct server *, long long);
int	 req_find_token(const struct server *, long long);
void	 req_take(struct server *, int, struct request *);
void	 req_remove(struct server *, int);
void	 req_free(struct request *);
void	 call_send_waiting(struct server *);
void	 call_debug(const struct server *, const struct request *, bool,
	    const char *);
void	 call_error(const struct server *, const struct request *,
	    const char *);
void	 call_fail_all(struct server *, const char *);
void	 call_arm(const struct server *, struct request *, long long);
void	 call_answered(struct server *, struct request *,
	    const struct json *, const char *, size_t);
bool	 call_pass_result(struct server *, const char *, size_t);
bool	 call_reads_whole(const struct server *, const struct request *);
void	 call_session_gone(const struct session *);
void	 call_tell_cancelled(struct server *, long long, const char *);
void	 call_check_timeouts(struct server *, long long);
long long call_deadline(const struct server *);
void	 ghost_answered(struct server *, long long);
int	 ghost_find(const struct server *, long long);
void	 ghost_remove(struct server *, int);
void	 ghosts_clear(struct server *);

/* relay.c: servers' requests and notifications, to clients and back. */
void	 relay_request(struct server *, const struct json *, int, int,
	    const char *, size_t);
void	 relay_notification(struct server *, const struct json *, int,
	    const char *, size_t);
void	 relay_session_gone(const struct session *);
void	 relay_forget(const struct server *, long long);
void	 relay_ask(struct server *, long long, const struct json *, int);
void	 relay_refuse(struct server *, const char *, size_t, int,
	    const char *);

/* bridge.c: a server's need for input, bridged across the eras (MRTR). */
bool	 bridge_server_request(struct server *, const struct json *, int,
	    int);
void	 bridge_answered(struct park *, const char *, size_t);
void	 bridge_failed(struct park *, const char *);
bool	 bridge_resume(struct server *, struct session *, const char *,
	    const char *, size_t, const struct call_in *, const char *, size_t);
void	 bridge_session_gone(const struct session *);
void	 bridge_ask_free(struct ask *);
bool	 bridge_asks(const struct server *, const struct request *,
	    const char *, size_t);
void	 bridge_ask_client(struct server *, struct request *,
	    const struct json *, int);
void	 bridge_client_answer(struct server *, long long, const char *,
	    size_t, const struct json *);
bool	 relay_pending(const struct server *);
void	 relay_send_level(struct server *);

/* stream.c: a large result passed on as it arrives, the rest held behind. */
size_t	 stream_feed(void *, char *, size_t, bool);
bool	 stream_of_call(const struct server *, long long);
void	 stream_abort(struct server *, const char *);
void	 stream_output_ended(struct server *);
long long stream_deadline(const struct server *);
void	 stream_check(struct server *, long long);
struct server *stream_server(void);
void	 stream_session_gone(const struct session *);

/* server_loop.c: its descriptors and timers with the loop, while live. */
void	 srv_live(struct server *);
void	 srv_unwatch(struct server *);
void	 srv_about(const struct server *);
/* server_remote.c: a server reached over HTTP (remote.h). */
int	 srv_remote_open(struct server *, struct buf *);
void	 srv_remote_ready(struct server *, const struct json *, int);
void	 srv_remote_close(struct server *);
void	 srv_remote_send(struct server *);

#endif /* SERVER_INT_H */
