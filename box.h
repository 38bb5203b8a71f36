/*
 * box.h: layer 6, what a session sees of the servers: toolboxes and
 * use_tool (toolbox.c), prompts, resources and subscriptions
 * (resources.c), dynamic mode's tools (dynamic.c), search_tools
 * (search.c), and list changes told to the sessions (listen.c).  Every
 * request handled here comes with its session, and what is kept for one
 * (a waiter, a subscription, a listener) keeps it.  Includes server.h
 * and those below.
 */
#ifndef BOX_H
#define BOX_H

#include "server.h"

/*
 * toolbox.c: toolboxes and their servers: open_toolbox and the clients
 * waiting for it, use_tool and the way to the server of a call.
 */
/* A client request waiting for a toolbox to finish opening. */
struct waiter {
	struct session	*sess;
	char		*cid;
	size_t		 cidlen;
	bool		 modern;	/* A modern request: a modern reply. */
};

struct toolbox {
	const struct cfg_toolbox *cfg;
	int			 first;		/* Its servers: srv_at(first), */
	int			 nservers;	/* and so many after. */
	struct waiter		*waiters;
	int			 nwaiters;
	bool			 starting;	/* Inside box_open's loop. */
};

void	 box_init(void);
void	 box_put_tools(struct buf *);
struct toolbox *box_find(const char *, size_t);
struct server *box_server(const struct session *, struct toolbox *,
	    const char *, size_t);
struct server *box_target(const struct session *, const char *, size_t,
	    const char *, size_t, const char *, size_t, struct buf *);
bool	 box_seen(const struct session *, const struct toolbox *);
bool	 box_uses(const struct session *, const struct server *);
void	 box_cancel(const struct session *, const char *, size_t);
void	 box_open_on_use(struct session *, struct toolbox *);
void	 box_open_tool(struct session *, const struct json *, int,
	    const char *, size_t);
void	 box_use_tool(struct session *, const struct json *, int, int,
	    const char *, size_t);
struct toolbox *box_of(const struct server *);
struct server *box_srv(const struct session *, const struct toolbox *,
	    int);
void	 box_before_poll(void);
void	 box_session_begin(struct session *);
void	 box_session_gone(struct session *);

/*
 * resources.c: the prompts, resources and templates a session is shown,
 * the requests for them routed to their servers, subscriptions, and
 * their list_changed.
 */
void	 res_put(const struct session *, enum list_kind, struct buf *);
unsigned long res_hash(const struct session *, enum list_kind);
void	 res_begin(struct session *);
void	 res_notify(struct session *);
void	 res_list(struct session *, const struct json *, int, const char *,
	    size_t);
void	 res_prompts_get(struct session *, const struct json *, int,
	    const char *, size_t);
void	 res_resources_read(struct session *, const struct json *, int,
	    const char *, size_t);
void	 res_subscribe(struct session *, const struct json *, int,
	    const char *, size_t);
void	 res_unsubscribe(struct session *, const struct json *, int,
	    const char *, size_t);
void	 res_complete(struct session *, const struct json *, int,
	    const char *, size_t);
void	 res_updated(const struct server *, const struct json *, const char *,
	    size_t);
bool	 res_watch(const struct session *, const char *, bool);
void	 res_session_gone(struct session *);

/*
 * dynamic.c: dynamic mode: tools listed as {toolbox}__{server}__{tool},
 * their calls, and tools/list_changed; and the objects listed to the
 * client in both modes (prompts, resources), built the same way.
 */
bool	 dyn_renames(enum list_kind);
char	*dyn_native(const struct server *, enum list_kind,
	    const struct json *, int, const char *);
void	 dyn_put_tools(const struct session *, struct buf *);
void	 dyn_call(struct session *, const struct json *, const char *, int,
	    int, const char *, size_t);
void	 dyn_begin(struct session *);
void	 dyn_notify(struct session *);

/*
 * lean.c: a tool as a model needs it to call it.
 */
void	 lean_put_tool(struct buf *, const struct item *);
void	 lean_put_schema(struct buf *, const struct item *);

/*
 * search.c: search_tools, BM25 over every known tool.
 */
void	 search_put_tool(struct buf *);
void	 search_tool(struct session *, const struct json *, int,
	    const char *, size_t);

/*
 * listen.c: list changes told to a session: to a 2025 session, and to
 * a modern client's subscriptions/listen requests.
 */
enum listen_kind {
	LISTEN_TOOLS,
	LISTEN_PROMPTS,
	LISTEN_RESOURCES,
	LISTEN_KINDS
};

void	 listen_open(struct session *, const struct json *, int,
	    const char *, size_t);
void	 listen_updated(const struct server *, const char *, const struct json *,
	    int);
void	 listen_cancel(const struct session *, const char *, size_t);
void	 listen_changed(struct session *, enum listen_kind);
void	 listen_end_all(void);
void	 listen_session_gone(const struct session *);

#endif /* BOX_H */
