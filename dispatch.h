/*
 * dispatch.h: layer 7, the top, as main (workbench.c) sees it: the
 * client's lines read and dispatched through the method table
 * (dispatch.c), and --probe (probe.c).  Includes box.h and those below.
 */
#ifndef DISPATCH_H
#define DISPATCH_H

#include "box.h"

void	 dispatch_init(void);
ssize_t	 dispatch_read(void);
bool	 dispatch_busy(void);
void	 dispatch_resume(void);

bool	 probe_start(char **, int, const char *);
bool	 probe_waiting(void);
int	 probe_report(bool);

#endif /* DISPATCH_H */
