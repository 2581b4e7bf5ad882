/*
 * ops.h - the FUSE operation table and the directory listing it uses.
 */
#ifndef ZR_FS_OPS_H
#define ZR_FS_OPS_H

#include "fs.h"

extern const struct fuse_lowlevel_ops zr__ops;

/* Lists n (static folders, records/ streamed, batch/ folders) from
 * offset off, replying once. */
void zr__readdir(fuse_req_t req, struct zr__fs *fs, struct zr__node *n,
		 size_t size, off_t off);

#endif
