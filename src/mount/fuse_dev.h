/*
 * fuse_dev.h - whether this process may open /dev/fuse, asked before
 * anything is mounted: libfuse only says "fuse: failed to open /dev/fuse"
 * once it mounts, without naming zrecordfs or what would fix it.
 */
#ifndef ZRMOUNT_FUSE_DEV_H
#define ZRMOUNT_FUSE_DEV_H

/* 0 if /dev/fuse opens read-write; else -1 after printing one line that
 * names the cause and the fix (load the module, run as root, the group
 * or mode that would let this user in, a container's device rules). */
int zrmount_check_fuse_dev(void);

#endif
