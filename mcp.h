/*
 * mcp.h: layer 2, the names of MCP's methods and notifications, each
 * written once: a .c file says MCP_TOOLS_CALL, never "tools/call"
 * (tests/lint.sh fails on a quoted method of this table in a .c file).
 * Macros, not variables, so that a name joins a JSON text or a message
 * by string concatenation.  Includes nothing.
 */
#ifndef MCP_H
#define MCP_H

/* A method as a raw JSON value, quotes and all: what a scan's span holds. */
#define MCP_QUOTED(m)		"\"" m "\""

/* Requests: the client's to a server, ours to our servers. */
#define MCP_INITIALIZE		"initialize"	/* The 2025 handshake. */
#define MCP_PING		"ping"		/* 2025 only. */
#define MCP_SERVER_DISCOVER	"server/discover"	/* 2026-07-28. */
#define MCP_TOOLS_LIST		"tools/list"
#define MCP_TOOLS_CALL		"tools/call"
#define MCP_PROMPTS_LIST	"prompts/list"
#define MCP_PROMPTS_GET		"prompts/get"
#define MCP_RESOURCES_LIST	"resources/list"
#define MCP_RESOURCES_TEMPLATES_LIST "resources/templates/list"
#define MCP_RESOURCES_READ	"resources/read"
#define MCP_RESOURCES_SUBSCRIBE	"resources/subscribe"	/* 2025 only. */
#define MCP_RESOURCES_UNSUBSCRIBE "resources/unsubscribe" /* 2025 only. */
#define MCP_COMPLETION_COMPLETE	"completion/complete"
#define MCP_LOGGING_SET_LEVEL	"logging/setLevel"	/* 2025 only. */
#define MCP_SUBSCRIPTIONS_LISTEN "subscriptions/listen"	/* 2026-07-28. */

/* Requests: a 2025 server's to the client. */
#define MCP_SAMPLING_CREATE	"sampling/createMessage"
#define MCP_ELICITATION_CREATE	"elicitation/create"
#define MCP_ROOTS_LIST		"roots/list"

/* Notifications. */
#define MCP_NOTE_INITIALIZED	"notifications/initialized"
#define MCP_NOTE_CANCELLED	"notifications/cancelled"
#define MCP_NOTE_PROGRESS	"notifications/progress"
#define MCP_NOTE_MESSAGE	"notifications/message"
#define MCP_NOTE_TOOLS_CHANGED	"notifications/tools/list_changed"
#define MCP_NOTE_PROMPTS_CHANGED "notifications/prompts/list_changed"
#define MCP_NOTE_RESOURCES_CHANGED "notifications/resources/list_changed"
#define MCP_NOTE_RESOURCES_UPDATED "notifications/resources/updated"
#define MCP_NOTE_ROOTS_CHANGED	"notifications/roots/list_changed"
#define MCP_NOTE_ELICITATION_COMPLETE "notifications/elicitation/complete"
#define MCP_NOTE_LISTEN_ACK	"notifications/subscriptions/acknowledged"

#endif /* MCP_H */
