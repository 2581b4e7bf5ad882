/*
 * stlock.h - a served store's lock (struct zr__fstore.rw), and parking the
 * requests that need it while a delete or compact holds it.
 *
 * A delete or compact holds the write lock for as long as it runs.  A
 * request that needs the read lock meanwhile (a lookup, getattr, open or
 * first read that reads the record table) is not left waiting in one of
 * the mount's threads -- enough of those would stall every other store -- but parked
 * on the store and answered by the writer's thread once it is done.
 */
#ifndef ZR_FS_STLOCK_H
#define ZR_FS_STLOCK_H

#include "fs.h"

/* Returned (negative) when the read lock is held by a writer: the request
 * should be parked (zr__st_park) on zr__st_busy(). */
#define ZR__E_PARK (-EINPROGRESS)

/* A request waiting for a store's writer: what ops.c needs to run it
 * again. */
struct zr__parked {
	struct zr__parked *next;
	fuse_req_t req;
	enum { ZR__P_LOOKUP, ZR__P_GETATTR, ZR__P_OPEN, ZR__P_READ } op;
	fuse_ino_t ino;
	struct fuse_file_info fi; /* open */
	struct zr__fh *fh;	/* getattr of an open file, read: a reference */
	size_t size;		/* read */
	off_t off;
	char name[];		/* lookup */
};

void zr__st_lock_init(struct zr__fstore *st);
void zr__st_lock_destroy(struct zr__fstore *st);
/* The read lock, or ZR__E_PARK at once when a writer holds or awaits it
 * (the store is then zr__st_busy()).  zr__st_rdlock_wait waits instead:
 * for the few callers that cannot park. */
int zr__st_rdlock(struct zr__fstore *st);
void zr__st_rdlock_wait(struct zr__fstore *st);
void zr__st_unlock(struct zr__fstore *st);
/* The read locks of n stores, in ascending order (all or none). */
int zr__st_rdlock_all(struct zr__fstore *const *st, size_t n);
void zr__st_unlock_all(struct zr__fstore *const *st, size_t n);
/* The store whose writer made this thread's last zr__st_rdlock fail. */
struct zr__fstore *zr__st_busy(void);

/* Writers: delete and compact.  After zr__st_wrunlock (and its reply),
 * the writer runs what zr__st_take_ready returns. */
void zr__st_wrlock(struct zr__fstore *st);
void zr__st_wrunlock(struct zr__fstore *st);
/* Queues p on st until its writers are done: 0, or -EAGAIN when none is
 * left (run the request again now). */
int zr__st_park(struct zr__fstore *st, struct zr__parked *p);
struct zr__parked *zr__st_take_ready(struct zr__fstore *st);

#endif
