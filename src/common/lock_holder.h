/*
 * lock_holder.h - who holds an flock on a file, read from /proc/locks, so
 * that "store busy" and "still closing" messages can name the process.
 */
#ifndef ZR_LOCK_HOLDER_H
#define ZR_LOCK_HOLDER_H

#include <stddef.h>
#include <sys/types.h>

/* The pid of a process holding an flock on path (0 if none is found, or
 * on any error), its command name in comm (from /proc/PID/comm; "?" if
 * unknown), and in *write whether the lock is exclusive. */
pid_t zr_lock_holder(const char *path, char *comm, size_t commsz,
		     int *write);

#endif
