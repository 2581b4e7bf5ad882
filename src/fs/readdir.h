/*
 * readdir.h - directory listings (readdir.c).
 */
#ifndef ZRFS_READDIR_H
#define ZRFS_READDIR_H

#include "fs.h"

/* Lists n (static folders, records/ streamed, batch/ folders) from
 * offset off, replying once. */
void zrfs_readdir(fuse_req_t req, struct zrfs_fs *fs, struct zrtree_node *n,
		 size_t size, off_t off);

#endif
