/*
 * era.h: layer 3, the protocol eras: the versions spoken, the _meta of
 * a modern (2026-07-28) request, capabilities and log levels both eras
 * share.  Includes json.h.
 */
#ifndef ERA_H
#define ERA_H

#include "json.h"

#define WB_PROTOCOL_LATEST	"2025-11-25"
#define WB_PROTOCOL_MODERN	"2026-07-28"
#define ERA_KEY		"io.modelcontextprotocol/"
/* The capabilities a typical client declares: what --probe declares. */
#define ERA_TYPICAL_CAPS "{\"roots\":{\"listChanged\":true}," \
			"\"sampling\":{},\"elicitation\":{}}"

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
const char *era_level_name(int);
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

#endif /* ERA_H */
