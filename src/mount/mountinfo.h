/*
 * mountinfo.h - what the kernel's mount table says about a folder: a
 * zrecordfs started over a live zrecordfs mount would hide it (its stores
 * still locked and served to whoever holds a file open), so the daemon
 * refuses to.
 */
#ifndef ZRMOUNT_MOUNTINFO_H
#define ZRMOUNT_MOUNTINFO_H

/* Whether mnt is a live fuse.zrecordfs mount point; if it is, a one-line
 * message naming it, its SRC and `umount` is printed. */
int zrmount_live_here(const char *mnt);

#endif
