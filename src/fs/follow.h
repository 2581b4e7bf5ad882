/*
 * follow.h - -o follow: a thread that refreshes every store of a
 * read-only mount, so that records a writer elsewhere syncs appear under
 * the mount without a remount.
 */
#ifndef ZRFS_FOLLOW_H
#define ZRFS_FOLLOW_H

struct zrfs_fs;

/* Starts the thread if -o follow was given (0 otherwise); -errno if it
 * cannot start. */
int zrfs_follow_start(struct zrfs_fs *fs);
/* Stops and joins it (a no-op if it never started). */
void zrfs_follow_stop(struct zrfs_fs *fs);

#endif
