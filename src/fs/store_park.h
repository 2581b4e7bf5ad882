/*
 * store_park.h - parking the requests a store's delete or compact holds
 * up.  The daemon keeps no lock of its own on a store: a request that
 * reads the record table (a lookup, getattr, open or first read of a
 * record or batch file, stats, an append open) goes through a library
 * view begun without waiting (zr_view_begin, ZR_VIEW_TRY), and the library
 * answers ZR_E_BUSY at once while a delete or compact runs.  Such a
 * request is not left waiting in one of the mount's threads -- enough of
 * those would stall every other store -- but parked on the mount and run
 * again by the thread of the delete or compact once the library call
 * returned, before that call's reply (ops.c, changed()).  Deletes and
 * compacts are the daemon's own calls, so it knows when one runs: a
 * request that finds none running when it parks is run again at once.
 */
#ifndef ZRFS_STORE_PARK_H
#define ZRFS_STORE_PARK_H

#ifndef FUSE_USE_VERSION
#define FUSE_USE_VERSION 312 /* as fs.h */
#endif
#include <fuse_lowlevel.h>

struct zrfs_fh;

/* A request waiting for a delete or compact: what ops.c needs to run it
 * again. */
struct zrfs_parked {
	struct zrfs_parked *next;
	fuse_req_t req;
	enum { ZRFS_P_LOOKUP, ZRFS_P_GETATTR, ZRFS_P_OPEN, ZRFS_P_READ } op;
	fuse_ino_t ino;
	struct fuse_file_info fi; /* open */
	struct zrfs_fh *fh;	/* getattr of an open file, read: a reference */
	size_t size;		/* read */
	off_t off;
	char name[];		/* lookup */
};

struct zrfs_park_queue; /* fs.h */

/* ZR_E_BUSY (a tree view met a delete or compact) as ZRFS_E_PARK; any
 * other code as it is. */
int zrfs_busy_to_park(int err);

/* Around the daemon's own zr_store_delete and zr_store_compact: after
 * zrfs_writer_end, the caller runs what zrfs_park_take_ready returns. */
void zrfs_writer_begin(struct zrfs_park_queue *q);
void zrfs_writer_end(struct zrfs_park_queue *q);
/* Queues p until the running deletes and compacts return: 0, or -EAGAIN
 * when none runs (run the request again now). */
int zrfs_park(struct zrfs_park_queue *q, struct zrfs_parked *p);
struct zrfs_parked *zrfs_park_take_ready(struct zrfs_park_queue *q);
/* Frees what is parked at unmount: never answered, as the session that
 * would take the answers is gone. */
void zrfs_park_destroy(struct zrfs_park_queue *q);

#endif
