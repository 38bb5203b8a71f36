/*
 * store.h: layer 3, files of our own in a directory others may reach
 * (store.c): checked, opened without following links, written under
 * fresh exclusive names.  Includes util.h.
 */
#ifndef STORE_H
#define STORE_H

#include "util.h"

int	 store_dir(const char *, struct buf *);
bool	 store_writable(int);
int	 store_open(int, const char *, mode_t, const char **);
char	*store_read(int, const char *, size_t, mode_t, size_t *,
	    const char **);
int	 store_replace(int, const char *, int (*)(int, const void *),
	    const void *);
int	 store_create(int, const char *, const void *, size_t);
int	 store_remove(int, const char *);
bool	 store_names(int, void (*)(int, const char *, void *), void *);

#endif /* STORE_H */
