/*
 * mcp-workbench: a stdio MCP server that aggregates other stdio MCP servers.
 * Shared types and prototypes, in one section per source file.
 */
#ifndef WORKBENCH_H
#define WORKBENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#define JSMN_HEADER
#include <jsmn.h>

#define WB_NAME			"mcp-workbench"
#define WB_MAX_MESSAGE		(16u * 1024 * 1024)
#define WB_INIT_TIMEOUT_MS	30000
#define WB_PROBE_TIMEOUT_MS	1500
#define WB_STATE_TTL_MS		600000	/* A minted requestState lives. */
#define WB_PROTOCOL_LATEST	"2025-11-25"
#define WB_PROTOCOL_MODERN	"2026-07-28"
#define BUF_KEEP		(256 * 1024)	/* Buffers above shrink. */
#define HIGH_WATER		(4u * 1024 * 1024)	/* Stop reading. */
#define PUMP_BYTES		4096	/* Lines handled between writes. */
#define STUCK_MS		1000	/* A server taking no input is stuck. */

struct cfg_server;

/*
 * util.c: memory, growable buffers, time, logging; the version.
 */
extern const char wb_version[];

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

/*
 * An arena: small allocations carved from a few blocks, and large blocks
 * adopted whole, all freed together.  The names and entries of a list of
 * 10,000 tools live in one: a few allocations, not 20,000.
 */
struct arena {
	char	**blocks;
	size_t	  n;
	char	 *next;		/* Free room in the block carved last, */
	size_t	  room;		/* this many bytes. */
};

char	*arena_alloc(struct arena *, size_t);
char	*arena_adopt(struct arena *, char *);
char	*arena_strndup(struct arena *, const char *, size_t);
void	 arena_free(struct arena *);

/* FNV-1a: hash_bytes(HASH_INIT, p, n), or chained over several parts. */
#define HASH_INIT	2166136261u
unsigned long hash_bytes(unsigned long, const void *, size_t);

/*
 * SipHash-2-4 with a 128-bit tag, keyed: what names a thing on disk
 * without saying what it is.  sip_init, sip_update any number of times,
 * sip_final.
 */
#define SIP_KEY		16
#define SIP_TAG		16
struct siphash {
	uint64_t	 v[4];
	uint64_t	 tail;		/* The bytes of a word begun, */
	size_t		 n;		/* of so many in all. */
};

void	 sip_init(struct siphash *, const unsigned char *);
void	 sip_update(struct siphash *, const void *, size_t);
void	 sip_final(struct siphash *, unsigned char *);

char	*fd_read_all(int, size_t, size_t *);
int	 fd_write_all(int, const void *, size_t);
char	*file_read(const char *, size_t, size_t *);
bool	 wb_random(void *, size_t);
long long earliest(long long, long long);
long long now_ms(void);
void	 loop_tick(void);
long long loop_ms(void);

/* Length of the valid UTF-8 sequence at s (n bytes left), or 0. */
static inline size_t
utf8_len(const unsigned char *s, size_t n)
{
	size_t len, k;
	unsigned long cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (k = 1; k < len; k++) {
		if ((s[k] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[k] & 0x3f);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp < 0xe000))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return len;
}

void	 term_escape(struct buf *, const char *, size_t);
void	 wb_log(const char *, ...) __attribute__((format(printf, 1, 2)));
void	 wb_log_line(const char *, size_t);
void	 wb_log_flush(void);

/*
 * Lines a peer can make us write at will: the first burst of an interval
 * of ms are shown, the rest counted, and the count shown once the
 * interval ends.  A sticky rule (warnings, one per line a server sends)
 * shows only the count of each interval while they go on, and the next
 * again after an interval without any; a plain one (a server's stderr,
 * as journald limits a service) shows a burst in every interval.  A
 * ratelog without a rule follows ratelog_warnings.
 */
struct ratelog_rule {
	int		 burst;
	long long	 ms;
	bool		 sticky;
	const char	*one;		/* "warning like the above" */
	const char	*many;		/* "warnings like the above" */
};

extern const struct ratelog_rule ratelog_warnings;	/* 5 per 10 s */
extern const struct ratelog_rule ratelog_stderr;	/* 10000 per 30 s */

struct ratelog {
	const struct ratelog_rule *rule;
	long long	 since;		/* The interval's start; 0: none open. */
	long long	 ended;		/* When the last one ended. */
	long long	 held;		/* Lines of this interval not shown. */
	int		 shown;		/* And shown. */
	bool		 flooding;	/* The last interval held some back. */
};

bool	 ratelog_allow(struct ratelog *, long long, const char *);
void	 ratelog_flush(struct ratelog *, long long, const char *, bool);
long long ratelog_deadline(const struct ratelog *);

/*
 * store.c: files of our own in a directory others may reach: checked,
 * opened without following links, written under fresh exclusive names.
 */
int	 store_dir(const char *, struct buf *);
bool	 store_writable(int);
int	 store_open(int, const char *, mode_t, const char **);
char	*store_read(int, const char *, size_t, mode_t, size_t *,
	    const char **);
int	 store_replace(int, const char *, int (*)(int, const void *),
	    const void *);
int	 store_create(int, const char *, const void *, size_t);
int	 store_remove(int, const char *);
bool	 store_names(int, void (*)(int, const char *, void *), void *);

/*
 * jsonrpc.c: JSON only: strict checks, jsmn, lookup, unescaping, the
 * emitter, the scan of a message's top level, and id splicing.
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

/* JSON's white space. */
static inline bool
json_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

int	 json_parse(struct json *, const char *, size_t);
int	 json_parse_any(struct json *, const char *, size_t);
int	 json_check(struct json *, const char *, size_t);
int	 json_tokenize(struct json *);

/* A span of JSON text: a value as it is written. */
struct span {
	const char	*p;
	size_t		 n;
};

/* A span of a text replaced by other text (an empty span: inserted). */
struct cut {
	struct span	 at;
	const char	*with;
	size_t		 wlen;
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

/* A walk over an object's members or an array's elements (json_walk). */
struct jwalk {
	const char	*s;
	size_t		 n;
	size_t		 i;		/* Where the walk is. */
	size_t		 level;		/* Nesting of the value walked. */
	bool		 object;
	bool		 first;
	bool		 checked;	/* The text was checked already. */
};

bool	 json_walk(struct jwalk *, const char *, size_t, size_t, size_t);
int	 json_walk_next(struct jwalk *, struct span *);
bool	 json_walk_value(struct jwalk *, struct span *);
int	 json_tokenize_span(struct json *, const struct span *);
char	*json_span_strdup(const struct span *);
const char *json_span_str(const struct span *, struct buf *);
bool	 json_span_is(const struct span *, const char *);
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
void	 json_put_chars(struct buf *, const char *, size_t);
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
int	 rpc_scan_head(const char *, size_t, struct rpc_top *);
bool	 rpc_int_id(const char *, size_t, long long *);
int	 rpc_members(const char *, size_t, size_t, bool, bool,
	    struct rpc_top *);
int	 rpc_scan_id(const char *, size_t, const char **, size_t *);
int	 rpc_scan_id_tail(const char *, size_t, const char **, size_t *);
bool	 utf8_valid(const char *, size_t);
size_t	 utf8_whole(const char *, size_t);
void	 utf8_repair(struct buf *, const char *, size_t);
void	 rpc_splice_cuts(struct buf *, const char *, size_t, struct cut *,
	    int);
void	 rpc_splice(struct buf *, const char *, size_t, const char *, size_t,
	    const char *, size_t);
void	 rpc_splice_line(struct buf *, const char *, size_t, const char *,
	    size_t, const char *, size_t);
bool	 rpc_valid_id(const struct json *, int);

/*
 * peer.c: non-blocking line I/O with one peer: the client on stdin and
 * stdout, or a server on its stdout and stdin.
 */
enum peer_mode {			/* What the line being read gets: */
	PEER_LINES,			/* handed over whole at its newline; */
	PEER_WHOLE,			/* the same, declined for streaming; */
	PEER_STREAM,			/* passed on as it arrives; */
	PEER_SKIP,			/* its rest dropped unreported; */
	PEER_DROP			/* too long: counted, then reported. */
};

struct peer {
	int		 rfd;
	int		 wfd;
	struct buf	 in;
	struct buf	 out;
	size_t		 outoff;	/* Bytes of out already written. */
	size_t		 scanned;	/* Bytes of in searched for '\n'. */
	enum peer_mode	 mode;
	size_t		 dropped;	/* PEER_DROP: the line's bytes. */
	char		*dropped_id;	/* Its id, when one was found. */
	char		 tail[64];	/* Its last bytes. */
	size_t		 taillen;
	bool		 eof;
	bool		 reading;	/* Its lines are being handled, */
	bool		 closed;	/* and it was closed meanwhile, */
	bool		 gave;		/* or gave its buffer away. */
	int		 pipe_was[2];	/* rfd's, wfd's size (peer_widen) */
};

/* The pipe of a long line (peer_widen). */
#define PIPE_WIDE	(1024 * 1024)
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
void	 peer_widen(struct peer *, int, bool);
void	 peer_drop_output(struct peer *);
void	 peer_skip_line(struct peer *);
char	*peer_give_line(struct peer *, const char *, size_t);
void	 peer_overlong(struct peer *, size_t, const char *);
size_t	 peer_queued(const struct peer *);
bool	 peer_trim(struct peer *);
bool	 peer_bloated(struct peer *);
void	 peer_close(struct peer *);

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
	struct ratelog	 errlog;	/* What of its stderr is shown. */
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
void	 proc_kill_all(void);
bool	 proc_hand_over(void);
void	 proc_status(int, struct buf *);
void	 proc_close_from(int);

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

/*
 * config.c: workbench-config.json.
 */
#define CFG_MAX_FILE	(16 * 1024 * 1024)	/* Its bytes at most. */

enum tool_mode {
	MODE_PROXY,
	MODE_DYNAMIC
};

enum srv_protocol {		/* The era a server is spoken to in. */
	PROTO_AUTO,		/* Probed with server/discover. */
	PROTO_LEGACY,		/* initialize, the 2025 rules. */
	PROTO_MODERN		/* 2026-07-28: _meta on every request. */
};

struct cfg_server {
	char	 *name;
	char	 *command;	/* As written: messages never show values. */
	char	**argv;		/* argv[0] is the command; NULL-terminated. */
	char	**env;		/* "NAME=value", NULL-terminated. */
	char	**filters;	/* NULL-terminated; NULL means all tools. */
	char	**prompt_filters;	/* The same, for prompts, */
	char	**resource_filters;	/* and for resource URIs. */
	char	 *cwd;
	char	 *cwd_raw;	/* As written. */
	bool	  inherit_env;
	int	  init_timeout_ms;
	int	  call_timeout_ms;	/* Reset by progress; 0: none. */
	int	  call_max_ms;		/* Not reset; 0: none. */
	int	  idle_ms;		/* Stopped when idle this long; 0: never. */
	enum srv_protocol protocol;
	int	  probe_ms;		/* How long auto waits for discover. */
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
	int			 idle_ms;
	int			 state_ttl_ms;	/* requestStateTtlMs (MRTR). */
	size_t			 max_message;
	bool			 cache;		/* The tool catalogue on disk. */
	char			*cache_dir;	/* NULL: the XDG default. */
	bool			 search_tool;	/* Offer search_tools. */
};

int	 cfg_load(struct cfg *, const char *, FILE *);
int	 cfg_parse(struct cfg *, const char *, const char *, size_t, FILE *);
void	 cfg_free(struct cfg *);
int	 cfg_expand(const char *, struct buf *, struct buf *);
const struct cfg_toolbox *cfg_toolbox(const struct cfg *, const char *);
void	 cfg_server_digest(const struct cfg_server *, const unsigned char *,
	    unsigned char *);

/*
 * toolname.c: names, the structured identifier and tool filters.
 */
bool	 tool_valid_config_name(const char *);
bool	 tool_filter_match(char *const *, const char *);
char	*tool_join(const char *, const char *, const char *);
int	 tool_split(const char *, char **, char **, char **);
int	 tool_listable(const char *);
char	*tool_legacy_fix(const struct cfg *, const char *);

/* use_tool's arguments: {"tool": {"toolbox", "server", "name"}, "arguments"}. */
enum { U_TOOL, U_ARGS };
enum { U_BOX, U_SERVER, U_NAME };

bool	 tool_ident_valid(const struct json *, int, int[2], int[3],
	    struct buf *);

/*
 * terms.c: the words of a text as search terms: split, lower-cased, stop
 * words dropped, stemmed; the same for a query and for a tool.
 */
#define TERM_MAX	48	/* A term's bytes at most. */

void	 term_put(struct buf *, const char *, size_t);
bool	 term_stop(const char *, size_t);
size_t	 term_stem(char *, size_t);

/*
 * workbench.c: main, the poll() loop, signals and shutdown.  The settings
 * every file reads; written at startup, and stopping by the loop alone.
 */
struct workbench {
	struct cfg	 cfg;
	enum tool_mode	 mode;
	bool		 stopping;	/* Shutting down: no new work. */
};

extern struct workbench wb;

void	 pump_all(void);

/*
 * probe.c: --probe, a report on starting the servers of some toolboxes.
 */
bool	 probe_start(char **, int, const char *);
bool	 probe_waiting(void);
int	 probe_report(bool);

/*
 * era.c: the protocol eras: the versions spoken, the _meta of a modern
 * (2026-07-28) request, capabilities and log levels both eras share.
 */
#define ERA_KEY		"io.modelcontextprotocol/"
/* The capabilities a typical client declares: what --probe declares. */
#define ERA_TYPICAL_CAPS "{\"roots\":{\"listChanged\":true}," \
			"\"sampling\":{},\"elicitation\":{}}"
#define ERA_UNSUPPORTED	(-32022)

enum client_cap {		/* What the client can answer. */
	CAN_ROOTS = 1,
	CAN_SAMPLE = 2,
	CAN_ELICIT = 4
};

enum { ERA_LEGACY, ERA_MODERN, ERA_BAD };

/* What a modern request's _meta says. */
struct era {
	bool		 modern;
	unsigned	 can;		/* enum client_cap */
	int		 level;		/* logLevel's rank, or -1 */
	struct buf	 caps;		/* The bridgeable ones, as members. */
};

struct era_error {
	int		 code;
	struct buf	 msg;
	struct buf	 data;		/* Empty: no data. */
};

bool	 era_legacy_supported(const char *);
void	 era_put_versions(struct buf *);
int	 era_level(const struct json *, int);
unsigned era_caps(const struct json *, int, struct buf *);
void	 era_caps_key(const struct buf *, struct buf *);
int	 era_check(const struct json *, int, struct era *,
	    struct era_error *);
unsigned era_input_cap(const struct json *, int);
void	 era_put_server_info(struct buf *);
void	 era_put_server_info_member(struct buf *);
void	 era_put_request_meta(struct buf *, const struct buf *);
void	 era_put_meta(struct buf *, const struct buf *);
bool	 era_strip_meta(struct buf *, const char *, size_t);

/*
 * client.c: the client on stdin and stdout: its lines, the method table,
 * replies, and the session it set up with initialize.
 */
void	 client_init(void);
struct peer *client_peer(void);
ssize_t	 client_read(void);
bool	 client_busy(void);
void	 client_resume(void);
struct buf *client_queue(void);
struct buf *client_out(void);
void	 client_send_line(const char *, size_t);
struct buf *reply_begin(const char *, size_t);
void	 reply_end(void);
void	 reply_end_as(const char *);
void	 reply_era(bool);
void	 reply_error(const char *, size_t, int, const char *);
void	 reply_error_data(const char *, size_t, int, const char *,
	    const char *, size_t);
void	 reply_cache_hints(struct buf *, int);
void	 reply_text(const char *, size_t, const char *, bool);

bool	 reply_take_era(void);

/*
 * A JSON object written in pieces: put writes the piece at *at (0 first)
 * to out and moves *at on, false once the object is complete; release,
 * if not NULL, frees arg after the last.
 */
struct pieces {
	bool	(*put)(struct buf *, const void *, size_t *);
	void	(*release)(void *);
	void	 *arg;
};

void	 reply_structured_by(const char *, size_t, const struct pieces *);
void	 reply_structured(const char *, size_t, const struct buf *);

const char *client_protocol(void);
bool	 client_session(void);
const struct buf *client_caps(void);
void	 client_assume(const struct buf *);
const struct buf *client_session_caps(void);
bool	 client_has(enum client_cap);
const struct era *client_era(void);

/*
 * listen.c: list changes told to the client: to a 2025 session, and to
 * the modern client's subscriptions/listen requests.
 */
enum listen_kind {
	LISTEN_TOOLS,
	LISTEN_PROMPTS,
	LISTEN_RESOURCES,
	LISTEN_KINDS
};

void	 listen_open(const struct json *, int, const char *, size_t);
void	 listen_updated(const char *, const struct json *, int);
void	 listen_cancel(const char *, size_t);
void	 listen_changed(enum listen_kind);
void	 listen_end_all(void);

/*
 * toolbox.c: toolboxes and their servers: open_toolbox and the clients
 * waiting for it, use_tool and the way to the server of a call.
 */
/* A client request waiting for a toolbox to finish opening. */
struct waiter {
	char	*cid;
	size_t	 cidlen;
	bool	 modern;	/* A modern request: a modern reply. */
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

void	 box_init(void);
void	 box_put_tools(struct buf *);
struct toolbox *box_find(const char *, size_t);
struct server *box_server(struct toolbox *, const char *, size_t);
struct server *box_target(const char *, size_t, const char *, size_t,
	    const char *, size_t, struct buf *);
void	 box_settle(struct toolbox *);
void	 box_cancel(const char *, size_t);
void	 box_stateless_open(struct toolbox *);
void	 box_open_tool(const struct json *, int, const char *, size_t);
void	 box_use_tool(const struct json *, int, int, const char *, size_t);
struct server *srv_first(void);
struct server *srv_next(const struct server *);

/* Every server of every toolbox, in configuration order. */
#define SRV_EACH(s)	for ((s) = srv_first(); (s) != NULL; (s) = srv_next(s))

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
 * resources.c: the prompts, resources and templates the client is shown,
 * the requests for them routed to their servers, subscriptions, and
 * their list_changed.
 */
void	 res_put(enum list_kind, struct buf *);
unsigned long res_hash(enum list_kind);
void	 res_notify(void);
void	 res_list(const struct json *, int, const char *, size_t);
void	 res_prompts_get(const struct json *, int, const char *, size_t);
void	 res_resources_read(const struct json *, int, const char *, size_t);
void	 res_subscribe(const struct json *, int, const char *, size_t);
void	 res_unsubscribe(const struct json *, int, const char *, size_t);
void	 res_complete(const struct json *, int, const char *, size_t);
void	 res_updated(const struct json *, const char *, size_t);
bool	 res_watch(const char *, bool);

/*
 * dynamic.c: dynamic mode: tools listed as {toolbox}__{server}__{tool},
 * their calls, and tools/list_changed; and the objects listed to the
 * client in both modes (prompts, resources), built the same way.
 */
void	 dyn_init(void);
bool	 dyn_renames(enum list_kind);
char	*dyn_native(const struct server *, enum list_kind,
	    const struct json *, int, const char *);
void	 dyn_put_tools(struct buf *);
void	 dyn_call(const struct json *, const char *, int, int, const char *,
	    size_t);
void	 dyn_notify(void);

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
	struct toolbox		*box;
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
	struct buf		 told;		/* Client capabilities it is told. */
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

void	 srv_init(struct server *, struct toolbox *,
	    const struct cfg_server *);
bool	 srv_serving(const struct server *);
bool	 srv_known(const struct server *);
void	 srv_listed(struct server *);
void	 srv_put_meta(const struct server *, struct buf *);
void	 srv_ensure(struct server *);
void	 srv_open(struct server *);
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

/*
 * catalog.c: the tool catalogue on disk: each server's last complete tool
 * list, for instant open_toolbox and search_tools.
 */
void	 catalog_load(struct server *, bool);
void	 catalog_told(struct server *, const struct buf *);
void	 catalog_failed(struct server *);
void	 catalog_store(struct server *);
void	 catalog_close(void);
const char *catalog_entry_check(const char *, size_t, const char *);

/*
 * search.c: search_tools, BM25 over every known tool.
 */
void	 search_put_tool(struct buf *);
void	 search_tool(const struct json *, int, const char *, size_t);

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
void	 call_route(struct server *, const char *, size_t,
	    const struct call_in *, const char *, size_t);
void	 call_pass(struct server *, const struct pass_in *, const char *,
	    size_t);
void	 call_send_waiting(struct server *);
void	 call_error(const struct server *, const struct request *,
	    const char *);
void	 call_fail_all(struct server *, const char *);
void	 call_arm(const struct server *, struct request *, long long);
void	 call_answered(struct server *, struct request *,
	    const struct json *, const char *, size_t);
bool	 call_pass_result(struct server *, const char *, size_t);
bool	 call_reads_whole(const struct server *, const struct request *);
void	 call_cancel(const char *, size_t, const char *);
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
void	 relay_answer(const struct json *, int, const char *, size_t);
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
bool	 bridge_resume(struct server *, const char *, const char *, size_t,
	    const struct call_in *, const char *, size_t);
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

/*
 * pace.c: who writes into the client's queue: one long message at a time
 * owns it (a stream, a paced reply), the others wait held behind it.
 */
struct buf *pace_held(void);
bool	 pace_owned(void);
void	 pace_own(void);
void	 pace_release(void);
size_t	 pace_held_bytes(void);
bool	 pace_holds_much(void);
void	 pace_reply(bool (*)(void *), void (*)(void *), void *);
void	 pace_run(void);
bool	 pace_active(void);
bool	 pace_making(void);
void	 pace_drop(void);

#endif /* WORKBENCH_H */
