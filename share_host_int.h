/*
 * share_host_int.h: layer 7, private to the shared workbench's two
 * files: share_host.c lends share_status.c (--status) the identity by
 * which a shared workbench is found.
 */
#ifndef SHARE_HOST_INT_H
#define SHARE_HOST_INT_H

#include "workbench.h"
#include "share.h"

const char *host_mode_name(void);
int	 host_identify(struct share_dir *, struct share_id *, struct buf *);

#endif /* SHARE_HOST_INT_H */
