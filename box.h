/*
 * box.h: layer 6, what the client sees of the servers: toolboxes and
 * use_tool (toolbox.c), prompts, resources and subscriptions
 * (resources.c), dynamic mode's tools (dynamic.c), search_tools
 * (search.c), and list changes told to the client (listen.c).
 * Includes server.h and those below.
 */
#ifndef BOX_H
#define BOX_H

#include "server.h"

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
struct toolbox *box_of(const struct server *);
void	 box_before_poll(void);
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
 * search.c: search_tools, BM25 over every known tool.
 */
void	 search_put_tool(struct buf *);
void	 search_tool(const struct json *, int, const char *, size_t);

#endif /* BOX_H */
