/*
 * terms.h: layer 3, the words of a text as search terms (terms.c):
 * split, lower-cased, stop words dropped, stemmed; the same for a query
 * and for a tool; and the words people use for the same thing
 * (thesaurus.c).  Includes util.h.
 */
#ifndef TERMS_H
#define TERMS_H

#include "util.h"

#define TERM_MAX	48	/* A term's bytes at most. */

void	 term_put(struct buf *, const char *, size_t);
bool	 term_stop(const char *, size_t);
size_t	 term_stem(char *, size_t);
bool	 term_related(const char *, size_t, struct buf *, struct buf *);

#endif /* TERMS_H */
