/*
 * follow.h - -o follow: a thread that refreshes every store of a
 * read-only mount, so that records a writer elsewhere syncs appear under
 * the mount without a remount.
 */
#ifndef ZR_FS_FOLLOW_H
#define ZR_FS_FOLLOW_H

struct zr__fs;

/* Starts the thread if -o follow was given (0 otherwise); -errno if it
 * cannot start. */
int zr__follow_start(struct zr__fs *fs);
/* Stops and joins it (a no-op if it never started). */
void zr__follow_stop(struct zr__fs *fs);

#endif
