/*
 * json_out.h: layer 2, writing JSON: strings escaped (and any invalid
 * UTF-8 replaced, so that whatever came in, valid JSON goes out), keys,
 * and members added to an object written already.  Includes util.h.
 */
#ifndef JSON_OUT_H
#define JSON_OUT_H

#include "util.h"

void	 json_put_str(struct buf *, const char *, size_t);
void	 json_put_chars(struct buf *, const char *, size_t);
void	 json_put_cstr(struct buf *, const char *);
void	 json_put_key(struct buf *, const char *);
size_t	 json_add_members(struct buf *, const char *, size_t);

#endif /* JSON_OUT_H */
