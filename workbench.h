/*
 * mcp-workbench: a stdio MCP server that aggregates other stdio MCP servers.
 * Shared types and prototypes, in one section per source file.
 */
#ifndef WORKBENCH_H
#define WORKBENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#define JSMN_HEADER
#include <jsmn.h>

#define WB_NAME			"mcp-workbench"
#define WB_MAX_MESSAGE		(16u * 1024 * 1024)
#define WB_INIT_TIMEOUT_MS	30000
#define WB_PROTOCOL_LATEST	"2025-11-25"
#define BUF_KEEP		(256 * 1024)	/* Buffers above shrink. */
#define HIGH_WATER		(4u * 1024 * 1024)	/* Stop reading. */
#define PUMP_BYTES		4096	/* Lines handled between writes. */
#define STUCK_MS		1000	/* A server taking no input is stuck. */

struct cfg_server;

/*
 * util.c: memory, growable buffers, time, logging.
 */
struct buf {
	char	*data;
	size_t	 len;
	size_t	 cap;
};

void	*xmalloc(size_t);
void	*xcalloc(size_t, size_t);
void	*xrealloc(void *, size_t);
char	*xstrdup(const char *);
char	*xstrndup(const char *, size_t);

void	 buf_reserve(struct buf *, size_t);

/*
 * A copy of a short text kept in place, a longer one on the heap: a
 * call's id and tool name are copied per call, and usually fit.  (Moved
 * with the struct holding it; text_get finds the bytes wherever.)
 */
struct text {
	size_t	 len;
	char	*heap;			/* NULL when it fits in small. */
	char	 small[32];
};

void	 text_set(struct text *, const char *, size_t);
void	 text_free(struct text *);

static inline const char *
text_get(const struct text *t)
{
	return t->heap != NULL ? t->heap : t->small;
}

/*
 * Appending is most of what a proxied message costs besides checking it:
 * inline, with the growing out of line and strlen of a literal folded.
 */
static inline void
buf_put(struct buf *b, const void *p, size_t n)
{
	if (n == 0)
		return;		/* p may be NULL then. */
	if (b->cap - b->len <= n)
		buf_reserve(b, n);
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

static inline void
buf_puts(struct buf *b, const char *s)
{
	buf_put(b, s, strlen(s));
}

static inline void
buf_putc(struct buf *b, char c)
{
	if (b->cap - b->len <= 1)
		buf_reserve(b, 1);
	b->data[b->len++] = c;
}
void	 buf_put_int(struct buf *, long long);
void	 buf_printf(struct buf *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
void	 buf_consume(struct buf *, size_t);
void	 buf_shrink(struct buf *);
void	 buf_free(struct buf *);
char	*buf_cstr(struct buf *);

long long now_ms(void);
void	 loop_tick(void);
long long loop_ms(void);

void	 wb_log(const char *, ...) __attribute__((format(printf, 1, 2)));
void	 wb_log_raw(const char *, size_t);
void	 wb_log_flush(void);

/*
 * jsonrpc.c: JSON tokenizing and lookup, unescaping, emitting, line framing.
 */
struct json {
	const char	*js;
	size_t		 len;
	jsmntok_t	*tok;
	int		 ntok;
	unsigned int	 cap;
	size_t		 errpos;	/* Offset of a syntax error. */
};

enum json_status {
	JSON_OK = 0,
	JSON_SYNTAX = -1,	/* Not well-formed JSON. */
	JSON_TOOBIG = -2,	/* More tokens than the cap allows. */
	JSON_NOTOBJ = -3,	/* Well-formed, but not a single object. */
	JSON_TOODEEP = -4,	/* Nested deeper than JSON_DEPTH_MAX. */
	JSON_MORE = -5		/* Fine so far; the text is not complete. */
};

/* A JSON value checked as its text arrives (jstream_feed). */
struct jstream {
	struct json_levels {		/* The open levels: '{' or '['. */
		char	 small[256];
		char	*v;		/* small, or allocated when deeper */
		size_t	 n;
		size_t	 cap;
		size_t	 most;
	}		 l;
	enum {
		WANT_VALUE,
		WANT_KEY,
		WANT_COLON,
		WANT_NEXT		/* ',' or the close of the level */
	}		 want;
	bool		 empty;		/* Just opened a level. */
	bool		 in_string;	/* pos is inside a string. */
	bool		 last;		/* No more text will come. */
	size_t		 pos;		/* Where to go on from. */
	size_t		 tok;		/* Where the last step started. */
};

void	 jstream_init(struct jstream *, size_t);
int	 jstream_feed(struct jstream *, const char *, size_t);
void	 jstream_free(struct jstream *);

#define JSON_DEPTH_MAX	1000

int	 json_parse(struct json *, const char *, size_t);
int	 json_parse_any(struct json *, const char *, size_t);
int	 json_check(struct json *, const char *, size_t);
int	 json_tokenize(struct json *);

/* A span of JSON text: a value as it is written. */
struct span {
	const char	*p;
	size_t		 n;
};

/* A field of an object for json_shape: FIELD(...), ..., FIELD_END. */
struct field {
	const char		*key;		/* NULL ends the list */
	size_t			 len;		/* strlen(key) */
	int			 slot;		/* Where its span goes. */
	const struct field	*inner;		/* An object to look into. */
	bool			 strict;	/* inner: no other keys. */
};
#define FIELD(key, slot, inner, strict) \
	{ key, sizeof(key) - 1, slot, inner, strict }
#define FIELD_END	{ NULL, 0, 0, NULL, false }

bool	 json_shape(const char *, size_t, const struct field *, struct span *,
	    int);
void	 json_release(struct json *);
int	 json_next(const struct json *, int);
int	 json_get(const struct json *, int, const char *);
int	 json_members(const struct json *, int, const char *const *, int *);
int	 json_path(const struct json *, int, const char *);
bool	 json_is(const struct json *, int, jsmntype_t);
bool	 json_eq(const struct json *, int, const char *);
bool	 json_is_int(const struct json *, int);
bool	 json_get_int(const struct json *, int, long long *);
int	 json_get_bool(const struct json *, int, bool *);
char	*json_strdup(const struct json *, int);
const char *json_str(const struct json *, int, struct buf *);
const char *json_raw(const struct json *, int, size_t *);
size_t	 json_line_col(const char *, size_t, size_t *);

void	 json_put_str(struct buf *, const char *, size_t);
void	 json_put_cstr(struct buf *, const char *);
void	 json_put_key(struct buf *, const char *);
size_t	 json_add_members(struct buf *, const char *, size_t);

/* A message's top level, read without tokenizing its values. */
struct rpc_top {
	const char	*id;		/* Raw, or NULL. */
	size_t		 idlen;
	const char	*method;	/* Where its value starts, or NULL. */
	bool		 result;
	size_t		 at;		/* Where the result's value starts. */
	bool		 error;
	bool		 jsonrpc;	/* "jsonrpc" is there, */
	bool		 v2;		/* and it is "2.0". */
	bool		 params;
};

int	 rpc_scan(const char *, size_t, struct rpc_top *);
bool	 rpc_int_id(const char *, size_t, long long *);
int	 rpc_members(const char *, size_t, size_t, bool, bool,
	    struct rpc_top *);
int	 rpc_scan_id(const char *, size_t, const char **, size_t *);
int	 rpc_scan_id_tail(const char *, size_t, const char **, size_t *);
bool	 utf8_valid(const char *, size_t);
size_t	 utf8_whole(const char *, size_t);
void	 utf8_repair(struct buf *, const char *, size_t);
void	 rpc_splice(struct buf *, const char *, size_t, const char *, size_t,
	    const char *, size_t);
bool	 rpc_valid_id(const struct json *, int);

/*
 * A peer is one side we exchange JSON-RPC lines with: the client on
 * stdin/stdout, or a child on its stdout/stdin.
 */
struct peer {
	int		 rfd;
	int		 wfd;
	struct buf	 in;
	struct buf	 out;
	size_t		 outoff;		/* Bytes of out already written. */
	size_t		 scanned;	/* Bytes of in searched for '\n'. */
	size_t		 dropped;	/* Bytes of an oversized line. */
	char		*dropped_id;	/* Its id, when one was found. */
	char		 tail[64];	/* Its last bytes. */
	size_t		 taillen;
	bool		 eof;
	bool		 streaming;	/* The line is passed on as it comes. */
	bool		 nostream;	/* The line is not to be. */
	bool		 discard;	/* Skip to the end of the line. */
	unsigned	 gen;		/* Bumped by peer_free. */
};

/* A line this long without its newline yet is offered to ops->stream. */
#define STREAM_MIN	(256u * 1024)
#define PEER_NOSTREAM	((size_t)-1)	/* ops->stream: keep it whole */
#define PEER_DISCARD	((size_t)-2)	/* ops->stream: drop the rest */

struct peer_ops {
	void	(*line)(void *, char *, size_t);
	void	(*oversize)(void *, size_t, const char *);
	bool	(*busy)(void *);	/* Hold further lines?  May be NULL. */
	/*
	 * Pass on part of a line: the bytes so far (all of the line but its
	 * newline when end).  Returns how many it took, which the peer
	 * drops, or PEER_NOSTREAM / PEER_DISCARD; or it calls peer_overlong
	 * and the rest is counted as a line too long.  May be NULL.
	 */
	size_t	(*stream)(void *, char *, size_t, bool);
	/*
	 * Write what the lines so far queued, every PUMP_BYTES of a long run
	 * of them, so that the next process starts on them while we go on.
	 * May be NULL.
	 */
	void	(*pump)(void);
};

ssize_t	 peer_read(struct peer *, size_t, const struct peer_ops *, void *);
void	 peer_input(struct peer *, size_t, const struct peer_ops *, void *);
int	 peer_flush(struct peer *);
void	 peer_skip_line(struct peer *);
void	 peer_overlong(struct peer *, size_t, const char *);
size_t	 peer_queued(const struct peer *);
bool	 peer_trim(struct peer *);
bool	 peer_bloated(struct peer *);
void	 peer_free(struct peer *);

/*
 * procmgr.c: child processes.
 */
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
};

int	 proc_signals(void);
bool	 proc_signal_take(void);
int	 proc_spawn(struct proc *, const struct cfg_server *, struct buf *);
int	 proc_exec_status(struct proc *, const struct cfg_server *,
	    struct buf *);
int	 proc_drain_stderr(struct proc *, const char *);
void	 proc_tail(const struct proc *, struct buf *);
void	 proc_close(struct proc *);
void	 proc_retire(pid_t, bool);
void	 proc_tick(long long);
long long proc_deadline(void);
int	 proc_dying(void);
bool	 proc_reaped(pid_t);
void	 proc_kill_all(void);
void	 proc_status(int, struct buf *);

/*
 * config.c: workbench-config.json.
 */
enum tool_mode {
	MODE_PROXY,
	MODE_DYNAMIC
};

struct cfg_server {
	char	 *name;
	char	 *command;	/* As written: messages never show values. */
	char	**argv;		/* argv[0] is the command; NULL-terminated. */
	char	**env;		/* "NAME=value", NULL-terminated. */
	char	**filters;	/* NULL-terminated; NULL means all tools. */
	char	 *cwd;
	char	 *cwd_raw;	/* As written. */
	bool	  inherit_env;
	int	  init_timeout_ms;
	int	  call_timeout_ms;	/* Reset by progress; 0: none. */
	int	  call_max_ms;		/* Not reset; 0: none. */
};

struct cfg_toolbox {
	char			*name;
	char			*description;
	struct cfg_server	*servers;
	int			 nservers;
};

struct cfg {
	char			*path;
	struct cfg_toolbox	*boxes;
	int			 nboxes;
	enum tool_mode		 mode;
	int			 init_timeout_ms;
	int			 call_timeout_ms;
	int			 call_max_ms;
	size_t			 max_message;
};

int	 cfg_load(struct cfg *, const char *, FILE *);
int	 cfg_parse(struct cfg *, const char *, const char *, size_t, FILE *);
void	 cfg_free(struct cfg *);
int	 cfg_expand(const char *, struct buf *, struct buf *);
const struct cfg_toolbox *cfg_toolbox(const struct cfg *, const char *);

/*
 * toolname.c: names, the structured identifier and tool filters.
 */
bool	 tool_valid_config_name(const char *);
bool	 tool_filter_match(char *const *, const char *);
char	*tool_join(const char *, const char *, const char *);
int	 tool_split(const char *, char **, char **, char **);
int	 tool_listable(const char *);
char	*tool_legacy_fix(const struct cfg *, const char *);

/*
 * server.c: the servers of the toolboxes and routing to them.
 */
#define RESTARTS_MAX	5	/* Starts of one server ... */
#define RESTART_WINDOW	60000	/* ... within this many ms. */

enum srv_state {
	SRV_IDLE,		/* Never started. */
	SRV_STARTING,		/* initialize or tools/list under way. */
	SRV_READY,
	SRV_FAILED		/* Failed to start, or died. */
};

enum req_kind {
	REQ_INIT,
	REQ_LIST,
	REQ_CALL,
	REQ_LEVEL		/* logging/setLevel: the answer is dropped. */
};

/* A downstream tool as its server listed it. */
struct tool {
	char	*name;
	char	*json;		/* The Tool object, raw. */
	size_t	 len;
	char	*native;	/* Dynamic mode: as we list it, or NULL. */
};

/* A request to a server: sent, or waiting for the server to be ready. */
struct request {
	long long	 id;		/* Ours, on the server. */
	enum req_kind	 kind;
	bool		 sent;
	struct text	 cid;		/* The client's id, raw. */
	struct text	 tool;		/* The tool's own name. */
	char		*params;	/* A call's params, while waiting. */
	size_t		 plen;
	char		*token;		/* The client's progressToken, raw. */
	size_t		 tokenlen;
	long long	 idle_at;	/* callTimeoutMs; progress resets it. */
	long long	 hard_at;	/* callMaxTimeoutMs. */
};

/* A call that ended without its answer, which may still come. */
struct ghost {
	long long	 id;		/* Ours, on the server. */
	struct text	 cid;		/* The client's id, raw. */
};
#define GHOSTS_MAX	32

/* A request from a server to the client, under our upstream id. */
struct upreq {
	long long	 up;
	struct server	*srv;
	char		*sid;		/* The server's id, raw. */
	size_t		 sidlen;
};

struct toolbox;

/* A result passed on as it arrives (server.c, "Cut-through"). */
struct stream {
	struct jstream	 check;
	long long	 rid;		/* Our id, when it came first. */
	char		*cid;		/* The client's id for it, raw. */
	size_t		 cidlen;
	size_t		 total;		/* Bytes of the line passed on. */
	bool		 done;		/* The result's value is complete. */
	bool		 v2;		/* "jsonrpc":"2.0" came before it. */
	long long	 last_at;	/* When bytes last came. */
	long long	 held_at;	/* Since when others wait, or 0. */
};

/* A stream without a byte, or keeping others waiting, this long fails. */
#define STREAM_STALL_MS	5000

struct server {
	struct toolbox		*box;
	const struct cfg_server	*cfg;
	char			*label;		/* "toolbox/server" */
	enum srv_state		 state;
	struct proc		 proc;
	long long		 next_id;
	struct request		*req;
	int			 nreq;
	int			 capreq;
	struct tool		*tools;		/* The last complete list. */
	int			 ntools;
	struct tool		*fresh;		/* The list being paged in. */
	int			 nfresh;
	char			**cursors;	/* Cursors seen while paging. */
	int			 ncursors;
	char			*error;		/* Why it is SRV_FAILED. */
	bool			 refused;	/* error: not restarted again */
	long long		 deadline;	/* Of starting. */
	long long		 eof_at;	/* When its stdout closed. */
	long long		 drained_at;	/* Its stdin last kept up. */
	long long		 starts[RESTARTS_MAX];
	int			 nstarts;
	bool			 logging;	/* It declared logging. */
	bool			 relisting;	/* Refetching its tools. */
	bool			 relist_again;
	int			*index;		/* tools by name; -1: empty */
	size_t			 nindex;
	struct stream		 stream;
	struct ghost		*ghosts;	/* The newest GHOSTS_MAX. */
	int			 nghosts;
	bool			 ghosts_lost;	/* More, forgotten. */
};

/* A client request waiting for a toolbox to finish opening. */
struct waiter {
	char	*cid;
	size_t	 cidlen;
};

struct toolbox {
	const struct cfg_toolbox *cfg;
	struct server		*servers;
	int			 nservers;
	bool			 open;
	struct waiter		*waiters;
	int			 nwaiters;
	bool			 starting;	/* Inside box_open's loop. */
};

/* The state of the one workbench process. */
struct workbench {
	struct cfg	 cfg;
	enum tool_mode	 mode;
	struct toolbox	*boxes;
	int		 nboxes;
	struct peer	 client;
	struct json	 j;
	struct buf	 names[4];	/* A call's names, unescaped: reused. */
	struct server	*streaming;	/* Whose result the client gets now. */
	struct buf	 held;		/* For the client, after that. */
	struct buf	 instructions;	/* Escaped, ready to splice. */
	bool		 initialized;
	char		*protocol;
	struct buf	 client_caps;	/* What children are told we have. */
	bool		 can_sample;	/* The client's capabilities. */
	bool		 can_elicit;
	bool		 can_roots;
	char		*log_level;	/* Raw, from logging/setLevel. */
	struct upreq	*up;
	int		 nup;
	long long	 next_up;
	unsigned long	 listed;	/* Hash of the dynamic tool names. */
	bool		 stopping;
	long long	 stop_at;
	int		 sigfd;
	int		 saved_fl[3];
};

extern struct workbench wb;

const struct tool *srv_tool(const struct server *, const char *, size_t);
void	 srv_ensure(struct server *);
void	 srv_notify(struct server *, const char *);
void	 srv_send_level(struct server *);
void	 srv_stop_process(struct server *);
void	 srv_exited(struct server *, int);
struct server *srv_by_pid(pid_t);
long long srv_deadline(const struct server *);
void	 srv_check_timers(struct server *, long long);
void	 srv_read_out(struct server *);
void	 srv_read_err(struct server *);
void	 srv_read_exec(struct server *);
void	 srv_write_in(struct server *, long long);
bool	 srv_stuck(const struct server *, long long);
bool	 srv_busy(const struct server *, long long);
struct toolbox *box_find(const char *, size_t);
struct server *box_server(struct toolbox *, const char *, size_t);
void	 box_open(struct toolbox *, const char *, size_t);
/* A call's arguments and _meta, raw from the client's line (or NULL). */
struct call_in {
	const char	*args;
	size_t		 alen;
	const char	*meta;
	size_t		 mlen;
	const char	*token;		/* Its progressToken, within meta. */
	size_t		 toklen;
};

void	 call_route(struct server *, const char *, size_t,
	    const struct call_in *,
	    const char *, size_t);
void	 call_cancel(const char *, size_t, const char *);
void	 stream_abort(struct server *, const char *);
void	 up_answer(const struct json *, int, const char *, size_t);

/*
 * workbench.c: the client side.
 */
extern const char wb_version[];

struct buf *client_out(void);
void	 pump_all(void);
struct buf *reply_begin(const char *, size_t);
void	 reply_end(void);
void	 reply_error(const char *, size_t, int, const char *);
void	 reply_text(const char *, size_t, const char *, bool);
void	 dyn_notify(void);

#endif /* WORKBENCH_H */
