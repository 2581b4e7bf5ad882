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

/* Runs the requests parked on st while its writer held it (stlock.h).
 * The writer calls it as soon as it has dropped the lock, before it sends
 * the kernel any notification: a parked lookup holds the kernel's lock of
 * its folder, which an entry invalidation of that folder waits for. */
void zr__ops_replay(struct zr__fs *fs, struct zr__fstore *st);

#endif
