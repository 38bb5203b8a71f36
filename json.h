/*
 * json.h: layer 2, reading JSON.  Strict checks (jsmn leaves them out),
 * tokenizing with jsmn, token lookup, string unescaping, checked walks
 * over a text without tokens, and UTF-8.  Includes util.h alone.
 *
 * Which reader to use when:
 *
 *	json_parse		a whole message to look into at leisure: one
 *				object, tokenized; then json_get, json_path,
 *				json_members, json_eq, json_str and the rest
 *				on its tokens.  The general path.
 *	json_parse_any		the same for any JSON value (a line that may
 *				be an array or a bare value).
 *	json_check, json_tokenize
 *				the two halves of json_parse_any, for a text
 *				checked once and tokenized only when needed.
 *	json_shape		a few known fields of a line on the hot path,
 *				found as spans without tokenizing (the
 *				use_tool fast path); false sends the line the
 *				general way.
 *	json_walk		the members or elements of one value in turn,
 *				as spans (a large list paged in, a catalogue
 *				entry), without a token array for the whole.
 *	jstream_feed		a value checked as its text arrives in pieces
 *				(a large result passed on as it comes).
 *	rpc_scan (jsonrpc.h)	a JSON-RPC line's top level: its id, method
 *				and where its result starts, for splicing.
 */
#ifndef JSON_H
#define JSON_H

#include "util.h"

#define JSMN_HEADER
#include <jsmn.h>

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

bool	 utf8_valid(const char *, size_t);
size_t	 utf8_whole(const char *, size_t);
void	 utf8_repair(struct buf *, const char *, size_t);

#endif /* JSON_H */
