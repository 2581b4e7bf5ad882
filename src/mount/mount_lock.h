/*
 * mount_lock.h - the mount point lock: how `umount MNT` can return only once
 * the daemon has closed (synced and unlocked) every store.
 *
 * The kernel ends a FUSE mount without waiting for its daemon, which only
 * then sees the session end and closes its stores.  So the daemon opens
 * its mount point folder before mounting over it and holds an exclusive
 * flock on it for its whole life, letting go after the last store is
 * closed.  Once unmounted the folder is uncovered again, and
 * umount.fuse.zrecordfs waits for a shared flock on it: it gets one
 * exactly when the daemon is done (or dead: the kernel drops the lock).
 *
 * A daemon that finds the folder locked waits for the daemon before it
 * (`fusermount3 -u MNT && zrecordfs SRC MNT` then finds its stores free).
 * (A zrecordfs over a live zrecordfs mount is refused at start-up, opts.c;
 * over another filesystem's mount it locks that mount's root, a different
 * folder, and waits for nobody.)
 */
#ifndef ZRMOUNT_LOCK_H
#define ZRMOUNT_LOCK_H

/* How long the daemon waits for its predecessor, and the umount helper's
 * default wait for the daemon. */
#define ZRMOUNT_LOCK_TIMEOUT_MS 60000u

/* Daemon, before mounting: opens mnt and takes the exclusive lock into
 * *fd.  0 with *fd == -1 when the folder cannot be locked (a warning is
 * printed; umount then cannot wait), -ETIMEDOUT when another process kept
 * it locked for timeout_ms (the error is printed, naming that process). */
int zrmount_lock_take(const char *mnt, unsigned timeout_ms, int *fd);
/* Daemon, after closing every store: lets go (fd -1: nothing to do). */
void zrmount_lock_release(int fd);

/* umount helper, after the unmount: waits for the shared lock on mnt.
 * 0 once nobody holds it exclusively, -ETIMEDOUT, or -errno if mnt
 * cannot be opened or locked. */
int zrmount_lock_wait(const char *mnt, unsigned timeout_ms);

#endif
