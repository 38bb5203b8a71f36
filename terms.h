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
#define TERM_PLURAL	1	/* A term's mark: its word was plural. */

void	 term_put(struct buf *, const char *, size_t);
void	 term_put_marked(struct buf *, struct buf *, const char *, size_t);
bool	 term_stop(const char *, size_t);
bool	 term_question(const char *);
bool	 term_reads(const char *, size_t);
size_t	 term_stem(char *, size_t);
bool	 term_related(const char *, size_t, struct buf *, struct buf *);

#endif /* TERMS_H */
