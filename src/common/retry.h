/*
 * retry.h - waiting, with a deadline, for something another process holds:
 * the one wait loop behind `zrecord --wait`, the daemon's mount point lock
 * and umount.fuse.zrecordfs.
 *
 * It polls rather than blocks: flock(2) has no timeout (only a signal
 * could break a blocking one, which a library-using program cannot own),
 * and zr_store_open is non-blocking by design.  A lock is usually let go
 * within milliseconds, so the pause starts short and grows, bounding both
 * the added latency and the cost of a long wait.
 */
#ifndef ZRCOMMON_RETRY_H
#define ZRCOMMON_RETRY_H

/* What an attempt returns while the thing it wants is still busy. */
#define ZRCOMMON_RETRY_BUSY 1

/* Calls attempt(ctx) until it returns anything but ZRCOMMON_RETRY_BUSY or
 * timeout_ms have passed (0: exactly once).  Returns the last result, so
 * ZRCOMMON_RETRY_BUSY means the time ran out. */
int zrcommon_retry(int (*attempt)(void *ctx), void *ctx, unsigned timeout_ms);

/* flock(fd, op | LOCK_NB) retried for up to timeout_ms: 0, -ETIMEDOUT, or
 * the -errno of a failure other than the lock being held. */
int zrcommon_flock_wait(int fd, int op, unsigned timeout_ms);

#endif
