/*
 * utab.h - a zrecordfs started directly (not by mount(8)) records its
 * mount in /run/mount/utab with helper=fuse.zrecordfs, as mount.zrecordfs
 * used to, so that `umount MNT` runs umount.fuse.zrecordfs and returns
 * only once the daemon has closed its stores (mount_lock.h).  Without
 * the entry umount(8) takes the type from statfs(2), which says just
 * "fuse", and returns while the stores are still open.
 */
#ifndef ZRMOUNT_UTAB_H
#define ZRMOUNT_UTAB_H

/* As root, unless ZRECORDFS_NO_UTAB is set (mount.zrecordfs -n): runs
 * `mount -f -i --no-canonicalize -t fuse.zrecordfs -o
 * helper=fuse.zrecordfs SRC MNT`, which writes the entry without touching
 * the mount.  A failure is a warning: the mount still serves. */
void zrmount_utab_register(const char *src, const char *mnt);

#endif
