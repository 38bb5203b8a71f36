/*
 * dispatch.h: layer 7, the top, as main (workbench.c) sees it: the
 * client's lines read and dispatched through the method table
 * (dispatch.c), and --probe (probe.c).  Includes box.h and those below.
 */
#ifndef DISPATCH_H
#define DISPATCH_H

#include "box.h"

void	 dispatch_init(void);
struct session *dispatch_open(int, int);
void	 dispatch_close(struct session *);
void	 dispatch_line(struct session *, char *, size_t);
ssize_t	 dispatch_read(struct session *);
bool	 dispatch_busy(const struct session *);
void	 dispatch_resume(struct session *);

bool	 probe_start(char **, int, const char *);
bool	 probe_waiting(void);
int	 probe_report(bool);

#endif /* DISPATCH_H */
