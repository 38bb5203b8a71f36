/*
 * config.h: layer 3, workbench-config.json read and checked (config.c),
 * the names built from it and tool filters (toolname.c), and the
 * settings every file reads (struct workbench).  Includes json.h.
 */
#ifndef CONFIG_H
#define CONFIG_H

#include "jsonrpc.h"

/* The defaults and limits of the keys (config_keys.c's table). */
#define WB_MS_MAX		86400000	/* A day: any time in ms. */
#define WB_INIT_TIMEOUT_MS	30000
#define WB_PROBE_TIMEOUT_MS	1500
#define WB_STATE_TTL_MS		600000	/* A minted requestState lives. */
#define WB_MESSAGE_MIN		1024	/* maxMessageBytes at least, */
#define WB_MESSAGE_MAX		(1 << 30)	/* and at most. */
#define WB_HTTP_CONNS		64	/* maxConnections */
#define WB_HTTP_CONNS_MAX	100000	/* maxConnections at most. */
#define WB_HTTP_SESSION_MS	1800000	/* httpSessionTimeoutMs */
#define WB_HTTP_TOKEN_MIN	16	/* httpToken's bytes at least. */
#define WB_SEARCH_MAX		50	/* search_tools' hits at most. */
#define WB_SEARCH_SCHEMAS	3	/* searchSchemas */
#define CFG_MAX_FILE	(16 * 1024 * 1024)	/* Its bytes at most. */

enum tool_mode {
	MODE_PROXY,
	MODE_DYNAMIC
};

enum tool_detail {		/* How open_toolbox gives a tool. */
	DETAIL_LEAN,		/* What a model needs (lean.c). */
	DETAIL_FULL		/* As its server sent it. */
};

enum srv_protocol {		/* The era a server is spoken to in. */
	PROTO_AUTO,		/* Probed with server/discover. */
	PROTO_LEGACY,		/* initialize, the 2025 rules. */
	PROTO_MODERN		/* 2026-07-28: _meta on every request. */
};

enum srv_type {		/* How a server is reached ("type"). */
	TYPE_STDIO,		/* A process, on its stdin and stdout. */
	TYPE_HTTP,		/* A URL, over Streamable HTTP, */
	TYPE_STREAMABLE,	/* (the same, as some clients write it) */
	TYPE_SSE		/* or over HTTP+SSE (2024-11-05). */
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
	bool	  share;		/* One process for the sessions alike. */
	char	**base_env;	/* What it inherits; NULL: our environ. */
	enum srv_type	  type;
	char	 *url;		/* A remote server's, expanded; NULL: a process. */
	char	**headers;	/* Its "name", "value", ..., NULL; never shown. */
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
	enum wb_level		 log_level;	/* "logLevel" */
	int			 init_timeout_ms;
	int			 call_timeout_ms;
	int			 call_max_ms;
	int			 idle_ms;
	int			 state_ttl_ms;	/* requestStateTtlMs (MRTR). */
	size_t			 max_message;
	bool			 cache;		/* The tool catalogue on disk. */
	char			*cache_dir;	/* NULL: the XDG default. */
	bool			 search_tool;	/* Offer search_tools. */
	/* What a model reads (lean.c, search.c, toolbox.c). */
	enum tool_detail	 detail;	/* toolDetail */
	int			 search_schemas; /* Hits given their schema. */
	bool			 open_on_use;	/* use_tool opens a toolbox. */
	/* Serving Streamable HTTP (http_host.c). */
	char			*listen;	/* "HOST:PORT", or NULL. */
	char			*http_token;	/* httpToken, or NULL. */
	char			**origins;	/* allowedOrigins, NULL-ended. */
	char			**hosts;	/* allowedHosts, NULL-ended. */
	int			 max_conns;	/* maxConnections */
	int			 http_session_ms; /* httpSessionTimeoutMs; 0: never */
	char			*http_problems;	/* Lines for --listen, or NULL. */
	bool			 share;		/* Join the shared workbench. */
	int			 share_linger_ms;	/* shareLingerMs. */
	char			*share_dir;	/* NULL: the default. */
};

int	 cfg_load(struct cfg *, const char *, FILE *);
int	 cfg_parse(struct cfg *, const char *, const char *, size_t, FILE *);
void	 cfg_free(struct cfg *);
bool	 cfg_http_usable(const struct cfg *, FILE *);
struct cfg_server *cfg_server_dup(const struct cfg_server *);
void	 cfg_server_free(struct cfg_server *);
int	 cfg_expand(const char *, struct buf *, struct buf *);
const struct cfg_toolbox *cfg_toolbox(const struct cfg *, const char *);
char	*cfg_legacy_fix(const struct cfg *, const char *);
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

/* use_tool's arguments: {"tool": {"toolbox", "server", "name"}, "arguments"}. */
enum { U_TOOL, U_ARGS };
enum { U_BOX, U_SERVER, U_NAME };

bool	 tool_ident_valid(const struct json *, int, int[2], int[3],
	    struct buf *);

/*
 * The settings every file reads: written at startup.  Defined in
 * config.c.
 */
struct workbench {
	struct cfg	 cfg;
	enum tool_mode	 mode;
	bool		 shared;	/* A shared workbench: many sessions. */
};

extern struct workbench wb;

#endif /* CONFIG_H */
