/*
 * server.h: layer 5, the servers: each one's life (server.c), its lists
 * (listing.c) and their catalogue on disk (catalog.c), requests in
 * flight and their answers (call.c), large results passed on as they
 * come (stream.c), what servers and the client say to each other beyond
 * calls (relay.c), and input requests bridged across the eras
 * (bridge.c).  Includes session.h, proc.h, config.h and those below.
 */
#ifndef SERVER_H
#define SERVER_H

#include "config.h"
#include "proc.h"
#include "session.h"

#define STUCK_MS		1000	/* A server taking no input is stuck. */

/*
 * listing.c: a server's lists (tools, prompts, resources, resource
 * templates), each paged in by the one mechanism, filtered, and indexed
 * by key.
 */
enum list_kind {
	LIST_TOOLS,
	LIST_PROMPTS,
	LIST_RESOURCES,
	LIST_TEMPLATES,
	LIST_KINDS
};

/* An entry of a server's list, as the server listed it. */
struct item {
	char		*key;		/* Its name, URI or URI template. */
	const char	*json;		/* The object, raw (no NUL after). */
	char		*native;	/* As the client is shown it, or NULL. */
	char		*words;		/* search_tools' terms, once searched. */
	unsigned int	 len;		/* Of json; a line is at most 1 GiB. */
	bool		 shadowed;	/* Said once: another server has it. */
};

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
	bool		 paging;	/* A fetch is under way, */
	bool		 again;		/* and it changed meanwhile. */
	bool		 full;		/* It kept all it may: said once. */
};

enum list_status {
	LIST_MORE,		/* The next page was asked for. */
	LIST_DONE,		/* Complete: the new list is in place. */
	LIST_FAILED,		/* The previous list stays; why says why. */
	LIST_INVALID		/* Not a well-formed answer: nothing changed. */
};

struct server;

const char *list_method(enum list_kind);
void	 list_fetch(struct server *, enum list_kind);
void	 list_free_retired(void);
bool	 list_take_entry(struct server *, char *, size_t);
int	 list_answer(struct server *, enum list_kind, const char *, size_t,
	    size_t, bool, struct rpc_top *, struct buf *);
int	 list_failed(struct server *, enum list_kind, bool, const char *,
	    struct buf *);
bool	 list_paging(const struct server *);
void	 list_stop(struct server *);
void	 list_clear(struct server *, enum list_kind);
void	 list_abandon(struct server *, enum list_kind);
void	 list_warn(struct server *, enum list_kind, const char *,
	    bool);
const struct item *list_find(const struct server *, enum list_kind,
	    const char *, size_t);
void	 list_install(struct server *, enum list_kind);
/*
 * server.c: one server's life: start, initialize, its lists, relisting,
 * failure, exit, its descriptors and timers.
 */
/*
 * Automatic restarts back off: none after a first failure, then
 * BACKOFF_FIRST_MS doubling per failure in a row up to BACKOFF_MAX_MS;
 * a server that ran BACKOFF_RESET_MS counts from the start again.
 */
#define BACKOFF_FIRST_MS	250
#define BACKOFF_MAX_MS		30000
#define BACKOFF_RESET_MS	60000

enum srv_state {
	SRV_IDLE,		/* Never started. */
	SRV_STARTING,		/* initialize or tools/list under way. */
	SRV_READY,		/* Takes calls. */
	SRV_RELISTING,		/* Takes calls; fetching its tools again. */
	SRV_STOPPED,		/* Stopped by us: idle, or shutdown. */
	SRV_FAILED		/* Failed to start, or died. */
};

enum req_kind {
	REQ_INIT,
	REQ_LIST,		/* A page of one of its lists. */
	REQ_CALL,		/* tools/call: failures become isError. */
	REQ_PASS,		/* prompts/get and the like: passed verbatim. */
	REQ_QUIET,		/* setLevel, (un)subscribe: the answer is dropped. */
	REQ_DISCOVER		/* server/discover, the era probe. */
};

/* What a server declared it offers (initialize's capabilities). */
enum srv_cap {
	CAP_LOGGING = 1,
	CAP_PROMPTS = 2,
	CAP_RESOURCES = 4,
	CAP_SUBSCRIBE = 8,
	CAP_COMPLETIONS = 16
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

struct server {
	int			 box;		/* Its toolbox, by index. */
	const struct cfg_toolbox *boxcfg;
	const struct cfg_server	*cfg;
	char			*label;		/* "toolbox/server" */
	enum srv_state		 state;
	struct proc		 proc;
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
	bool			 modern;	/* It speaks 2026-07-28. */
	bool			 era_known;	/* The probe's verdict, kept. */
	bool			 era_guessed;	/* Legacy for its silence: */
	bool			 discovered;	/* a late discover came. */
	long long		 probe_at;	/* Auto probing: legacy after. */
	bool			 probed;	/* Auto sent this process discover. */
	bool			 listens;	/* Modern, with list changes. */
	bool			 catalogued;	/* Tools from the catalogue. */
	bool			 catalog_other;	/* Listed for other capabilities. */
	bool			 catalog_read;	/* Its entry was looked for. */
	unsigned long		 catalog_hash;	/* Of the tools stored there. */
	char			 catalog_name[2 * SIP_TAG + 1];	/* Its entry. */
	struct ghost		*ghosts;	/* The newest GHOSTS_MAX. */
	int			 nghosts;
	bool			 ghosts_lost;	/* More, forgotten. */
	struct ratelog		 warned;	/* Warnings about its output. */
};

bool	 srv_serving(const struct server *);
bool	 srv_known(const struct server *);
void	 srv_listed(struct server *);
void	 srv_put_meta(const struct server *, struct buf *);
void	 srv_ensure(struct server *, struct session *);
void	 srv_open(struct server *, struct session *);
void	 srv_session_gone(struct session *);
bool	 srv_backing_off(const struct server *, long long, struct buf *);
void	 srv_stop(struct server *);
struct buf *srv_send_head(struct server *, struct request *, const char *);
void	 srv_send(struct server *, struct request *, const char *,
	    const char *, size_t);
void	 srv_notify(struct server *, const char *);
void	 srv_exited(struct server *, int);
struct server *srv_by_pid(pid_t);
long long srv_deadline(const struct server *);
void	 srv_check_timers(struct server *, long long);
void	 srv_read_out(struct server *);
void	 srv_read_err(struct server *);
void	 srv_read_exec(struct server *);
void	 srv_write_in(struct server *, long long);
void	 srv_write_error(struct server *);
bool	 srv_stuck(const struct server *, long long);
void	 srv_warn(struct server *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
bool	 srv_busy(const struct server *, long long);

void	 srv_init_all(void);
struct server *srv_at(int);
struct server *srv_first(void);
struct server *srv_next(const struct server *);

/* Every server of every toolbox, in configuration order. */
#define SRV_EACH(s)	for ((s) = srv_first(); (s) != NULL; (s) = srv_next(s))

/*
 * What a server tells the layer above (box.h) that it cannot call:
 * upcalls, set once at startup (srv_upcalls).
 */
struct srv_upcalls {
	/* Does the client see entries of this kind as objects of ours? */
	bool	(*renames)(enum list_kind);
	/* Entry t of a list as the client sees it, or NULL (dyn_native). */
	char	*(*native)(const struct server *, enum list_kind,
		    const struct json *, int, const char *);
	/* A server said a resource changed (resources/updated). */
	void	(*updated)(const struct json *, const char *, size_t);
};

void	 srv_upcalls(const struct srv_upcalls *);
bool	 srv_renames(enum list_kind);
char	*srv_native(const struct server *, enum list_kind,
	    const struct json *, int, const char *);
void	 srv_updated(const struct json *, const char *, size_t);
bool	 srv_take_changed(void);
void	 srv_pump(void);
/*
 * catalog.c: the tool catalogue on disk: each server's last complete tool
 * list, for instant open_toolbox and search_tools.
 */
void	 catalog_load(struct server *, const struct buf *, bool);
void	 catalog_told(struct server *, const struct buf *);
void	 catalog_failed(struct server *);
void	 catalog_store(struct server *);
void	 catalog_close(void);
const char *catalog_entry_check(const char *, size_t, const char *);
/*
 * call.c: requests in flight on a server: their ids and table, calls
 * routed there and their answers spliced back, cancellation, timeouts,
 * and ghosts (calls that ended before their answer came).
 */
/* A call's arguments and _meta, raw from the client's line (or NULL). */
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

struct request *req_add(struct server *, enum req_kind);
int	 req_find(const struct server *, long long);
int	 req_find_token(const struct server *, long long);
void	 req_take(struct server *, int, struct request *);
void	 req_remove(struct server *, int);
void	 req_free(struct request *);
void	 call_in_tokens(const struct json *, int, int, struct call_in *);
void	 call_route(struct server *, struct session *, const char *, size_t,
	    const struct call_in *, const char *, size_t);
void	 call_pass(struct server *, struct session *, const struct pass_in *,
	    const char *, size_t);
void	 call_send_waiting(struct server *);
void	 call_error(const struct server *, const struct request *,
	    const char *);
void	 call_fail_all(struct server *, const char *);
void	 call_arm(const struct server *, struct request *, long long);
void	 call_answered(struct server *, struct request *,
	    const struct json *, const char *, size_t);
bool	 call_pass_result(struct server *, const char *, size_t);
bool	 call_reads_whole(const struct server *, const struct request *);
void	 call_cancel(const struct session *, const char *, size_t,
	    const char *);
void	 call_session_gone(const struct session *);
void	 call_tell_cancelled(struct server *, long long, const char *);
void	 call_check_timeouts(struct server *, long long);
long long call_deadline(const struct server *);
void	 ghost_answered(struct server *, long long);
int	 ghost_find(const struct server *, long long);
void	 ghost_remove(struct server *, int);
void	 ghosts_clear(struct server *);

/*
 * relay.c: what servers and the client say to each other beyond calls:
 * server requests (under upstream ids), progress, logging, cancellation
 * and other notifications.
 */
void	 relay_request(struct server *, const struct json *, int, int,
	    const char *, size_t);
void	 relay_notification(struct server *, const struct json *, int,
	    const char *, size_t);
void	 relay_answer(const struct session *, const struct json *, int,
	    const char *, size_t);
void	 relay_session_gone(const struct session *);
void	 relay_forget(const struct server *, long long);
void	 relay_ask(struct server *, long long, const struct json *, int);
void	 relay_refuse(struct server *, const char *, size_t, int,
	    const char *);

/*
 * bridge.c: a server's need for input during a request, bridged across
 * the eras (MRTR for a modern client, requests for a 2025 one).
 */
bool	 bridge_server_request(struct server *, const struct json *, int,
	    int);
void	 bridge_answered(struct park *, const char *, size_t);
void	 bridge_failed(struct park *, const char *);
bool	 bridge_resume(struct server *, struct session *, const char *,
	    const char *, size_t, const struct call_in *, const char *, size_t);
void	 bridge_session_gone(const struct session *);
long long bridge_deadline(void);
void	 bridge_check(long long);
void	 bridge_ask_free(struct ask *);
bool	 bridge_asks(const struct server *, const struct request *,
	    const char *, size_t);
void	 bridge_ask_client(struct server *, struct request *,
	    const struct json *, int);
void	 bridge_client_answer(struct server *, long long, const char *,
	    size_t, const struct json *);
bool	 relay_pending(const struct server *);
void	 relay_set_level(const char *, size_t);
void	 relay_send_level(struct server *);
void	 relay_roots_changed(void);

/*
 * stream.c: cut-through of a large result, and the client's other
 * messages held behind it.
 */
/* A stream without a byte, or keeping others waiting, this long fails. */
#define STREAM_STALL_MS	5000

size_t	 stream_feed(void *, char *, size_t, bool);
bool	 stream_of(const struct server *);
bool	 stream_of_call(const struct server *, long long);
void	 stream_abort(struct server *, const char *);
void	 stream_output_ended(struct server *);
long long stream_deadline(const struct server *);
void	 stream_check(struct server *, long long);
void	 stream_session_gone(const struct session *);

#endif /* SERVER_H */
