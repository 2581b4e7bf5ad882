/*
 * store_park.h - a served store's lock (struct zrfs_fstore.rw), and parking the
 * requests that need it while a delete or compact holds it.
 *
 * A delete or compact holds the write lock for as long as it runs.  A
 * request that needs the read lock meanwhile (a lookup, getattr, open or
 * first read that reads the record table) is not left waiting in one of
 * the mount's threads -- enough of those would stall every other store -- but parked
 * on the store and answered by the writer's thread once it is done.
 */
#ifndef ZRFS_STORE_PARK_H
#define ZRFS_STORE_PARK_H

#include "fs.h"

/* Returned (negative) when the read lock is held by a writer: the request
 * should be parked (zrfs_st_park) on zrfs_st_busy(). */
#define ZRFS_E_PARK (-EINPROGRESS)

/* A request waiting for a store's writer: what ops.c needs to run it
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

void zrfs_st_lock_init(struct zrfs_fstore *st);
void zrfs_st_lock_destroy(struct zrfs_fstore *st);
/* The read lock, or ZRFS_E_PARK at once when a writer holds or awaits it
 * (the store is then zrfs_st_busy()).  zrfs_st_rdlock_wait waits instead:
 * for the few callers that cannot park. */
int zrfs_st_rdlock(struct zrfs_fstore *st);
void zrfs_st_rdlock_wait(struct zrfs_fstore *st);
void zrfs_st_unlock(struct zrfs_fstore *st);
/* The read locks of n stores, in ascending order (all or none). */
int zrfs_st_rdlock_all(struct zrfs_fstore *const *st, size_t n);
void zrfs_st_unlock_all(struct zrfs_fstore *const *st, size_t n);
/* The store whose writer made this thread's last zrfs_st_rdlock fail. */
struct zrfs_fstore *zrfs_st_busy(void);

/* Writers: delete and compact.  After zrfs_st_wrunlock (and its reply),
 * the writer runs what zrfs_st_take_ready returns. */
void zrfs_st_wrlock(struct zrfs_fstore *st);
void zrfs_st_wrunlock(struct zrfs_fstore *st);
/* Queues p on st until its writers are done: 0, or -EAGAIN when none is
 * left (run the request again now). */
int zrfs_st_park(struct zrfs_fstore *st, struct zrfs_parked *p);
struct zrfs_parked *zrfs_st_take_ready(struct zrfs_fstore *st);

#endif
