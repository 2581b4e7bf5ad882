/*
 * ops.h - the FUSE operation table.
 */
#ifndef ZRFS_OPS_H
#define ZRFS_OPS_H

#include "fs.h"

extern const struct fuse_lowlevel_ops zrfs_ops;

#endif
