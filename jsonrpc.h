/*
 * jsonrpc.h: layer 2, JSON-RPC 2.0 lines: the scan of a message's top level
 * (its id, method, result), ids checked and spliced, and the envelopes.
 * jsonrpc.c is the one writer of "jsonrpc":"2.0": every request,
 * notification, result and error on any pipe starts with rpc_put_*.
 * Includes json.h and json_out.h.
 */
#ifndef JSONRPC_H
#define JSONRPC_H

#include "json.h"
#include "json_out.h"

/* A message's bytes at most, by default (maxMessageBytes). */
#define WB_MAX_MESSAGE		(16u * 1024 * 1024)

/*
 * The error codes we send or read, named once: no .c file writes one as a
 * number (tests/lint.sh fails if one does).  JSON-RPC 2.0 defines -32700
 * and -32600..-32603 and leaves -32000..-32099 to implementations; MCP
 * takes some of those, the transports' answers others.
 */
enum rpc_code {
	RPC_PARSE_ERROR = -32700,	/* "Parse error": not JSON. */
	RPC_INVALID_REQUEST = -32600,	/* "Invalid Request": not a request. */
	RPC_METHOD_NOT_FOUND = -32601,	/* "Method not found". */
	RPC_INVALID_PARAMS = -32602,	/* "Invalid params" (unknown tool). */
	RPC_INTERNAL_ERROR = -32603,	/* "Internal error". */
	RPC_SERVER_ERROR = -32000,	/* JSON-RPC's "Server error", the first
					 * of the implementation-defined range:
					 * the HTTP transport's refusals (the
					 * TypeScript SDK's, too). */
	RPC_SESSION_NOT_FOUND = -32001,	/* "Session not found" with an HTTP 404:
					 * an unknown Mcp-Session-Id, as the
					 * TypeScript SDK's server answers. */
	RPC_RESOURCE_NOT_FOUND = -32002, /* MCP 2025: "Resource not found". */
	RPC_UNSUPPORTED_VERSION = -32022, /* MCP 2026-07-28: "Unsupported
					 * protocol version", with data
					 * {supported, requested}. */
	RPC_URL_ELICITATION_REQUIRED = -32042 /* MCP 2025-11-25:
					 * URL_ELICITATION_REQUIRED. */
};

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
bool	 rpc_raw_id(const char *, size_t);
int	 rpc_members(const char *, size_t, size_t, bool, bool,
	    struct rpc_top *);
int	 rpc_scan_id(const char *, size_t, const char **, size_t *);
int	 rpc_scan_id_tail(const char *, size_t, const char **, size_t *);
void	 rpc_splice_cuts(struct buf *, const char *, size_t, struct cut *,
	    int);
void	 rpc_splice(struct buf *, const char *, size_t, const char *, size_t,
	    const char *, size_t);
void	 rpc_splice_line(struct buf *, const char *, size_t, const char *,
	    size_t, const char *, size_t);
bool	 rpc_valid_id(const struct json *, int);

/*
 * Envelopes: each writes a message's start, up to where what follows it
 * goes; the caller writes the rest and closes the object (and the line).
 * An id is raw JSON as the peer wrote it (NULL: null).
 *
 *	rpc_put_request		{"jsonrpc":"2.0","id":N,"method":"M"
 *	rpc_put_request_raw	the same, the method raw JSON ("..." as read)
 *	rpc_put_notification	{"jsonrpc":"2.0","method":"M"
 *	rpc_put_result		{"jsonrpc":"2.0","id":ID,"result":
 *	rpc_put_error		{"jsonrpc":"2.0","id":ID,"error":{"code":C,
 *				"message":"..."	(then ,"data":... or not)
 */
void	 rpc_put_request(struct buf *, long long, const char *);
void	 rpc_put_request_raw(struct buf *, long long, const char *, size_t);
void	 rpc_put_notification(struct buf *, const char *);
void	 rpc_put_result(struct buf *, const char *, size_t);
void	 rpc_put_error(struct buf *, const char *, size_t, int, const char *);

#endif /* JSONRPC_H */
