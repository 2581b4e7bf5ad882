/*
 * fuse_dev.c - checks /dev/fuse before mounting (fuse_dev.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuse_dev.h"

#define FUSE_DEV "/dev/fuse"

/* What would let this user open the device, from its own mode and owners:
 * group access if the group may already read and write it, else root or
 * a wider mode. */
static void fuse_dev_hint(const struct stat *st)
{
	struct passwd *pw = getpwuid(st->st_uid);
	struct group *gr = getgrgid(st->st_gid);
	char uid[16], gid[16];
	const char *owner = pw ? pw->pw_name : uid;
	const char *group = gr ? gr->gr_name : gid;
	unsigned mode = st->st_mode & 07777;

	snprintf(uid, sizeof(uid), "%u", (unsigned)st->st_uid);
	snprintf(gid, sizeof(gid), "%u", (unsigned)st->st_gid);
	fprintf(stderr, " (it is mode %04o owned by %s:%s: ", mode, owner,
		group);
	if ((mode & 006) == 006)
		fprintf(stderr, "something else denies it, e.g. a container's "
			"device rules: pass the device in, e.g. `docker run "
			"--device /dev/fuse`)\n");
	else if ((mode & 060) == 060)
		fprintf(stderr, "run as root, or add the user to group %s, "
			"e.g. `usermod -aG %s USER`)\n", group, group);
	else
		fprintf(stderr, "run as root, or make it 0666, e.g. `chmod "
			"0666 %s`, or 0660 and add the user to group %s)\n",
			FUSE_DEV, group);
}

/* libfuse only says "fuse: failed to open /dev/fuse" once it mounts, and
 * without naming us: check first, and say what would fix it. */
int zrmount_check_fuse_dev(void)
{
	int fd = open(FUSE_DEV, O_RDWR | O_CLOEXEC), err = errno;
	struct stat st;

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	fprintf(stderr, "zrecordfs: cannot open %s: %s", FUSE_DEV,
		strerror(err));
	if (err == ENOENT || err == ENODEV)
		fprintf(stderr, " (load the fuse module: `modprobe fuse`)\n");
	else if ((err == EACCES || err == EPERM) && !stat(FUSE_DEV, &st))
		fuse_dev_hint(&st);
	else
		fputc('\n', stderr);
	return -1;
}
