/*
 * ops.h - the FUSE operation table and the directory listing it uses.
 */
#ifndef ZRFS_OPS_H
#define ZRFS_OPS_H

#include "fs.h"

extern const struct fuse_lowlevel_ops zrfs_ops;

/* Lists n (static folders, records/ streamed, batch/ folders) from
 * offset off, replying once. */
void zrfs_readdir(fuse_req_t req, struct zrfs_fs *fs, struct zrfs_node *n,
		 size_t size, off_t off);

/* Runs the requests parked on st while its writer held it (store_park.h).
 * The writer calls it as soon as it has dropped the lock, before it sends
 * the kernel any notification: a parked lookup holds the kernel's lock of
 * its folder, which an entry invalidation of that folder waits for. */
void zrfs_ops_replay(struct zrfs_fs *fs, struct zrfs_fstore *st);

#endif
