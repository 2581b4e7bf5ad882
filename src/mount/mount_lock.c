/*
 * mount_lock.c - the mount point lock (see mount_lock.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "lock_holder.h"
#include "mount_lock.h"
#include "retry.h"

static int open_dir(const char *mnt)
{
	int fd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

static void say_holder(const char *mnt)
{
	char comm[64];
	int write;
	pid_t pid = zrcommon_lock_holder(mnt, comm, sizeof(comm), &write);

	if (pid)
		fprintf(stderr, " (process %d, %s)", (int)pid, comm);
}

int zrmount_lock_take(const char *mnt, unsigned timeout_ms, int *fd)
{
	int lock, err;

	*fd = -1;
	/* libfuse's "/dev/fd/N" mount points are already mounted: nothing
	 * of ours to lock. */
	if (!strncmp(mnt, "/dev/fd/", 8))
		return 0;
	lock = open_dir(mnt);
	err = lock < 0 ? lock : zrcommon_flock_wait(lock, LOCK_EX, timeout_ms);
	if (!err) {
		*fd = lock;
		return 0;
	}
	if (lock >= 0)
		close(lock);
	if (err == -ETIMEDOUT) {
		fprintf(stderr, "zrecordfs: mount point %s is still locked "
			"after %u s", mnt, timeout_ms / 1000);
		say_holder(mnt);
		fprintf(stderr, ": is the zrecordfs that served it before "
			"still closing its stores?\n");
		return err;
	}
	fprintf(stderr, "zrecordfs: warning: cannot lock mount point %s "
		"(%s): umount will not wait for the stores to close\n", mnt,
		strerror(-err));
	return 0;
}

void zrmount_lock_release(int fd)
{
	if (fd >= 0)
		close(fd);
}

int zrmount_lock_wait(const char *mnt, unsigned timeout_ms)
{
	int fd = open_dir(mnt), err;

	if (fd < 0)
		return fd;
	err = zrcommon_flock_wait(fd, LOCK_SH, timeout_ms);
	close(fd);
	return err;
}
