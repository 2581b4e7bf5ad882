/*
 * mixfile_read.c - reads a mixture file whole and parses it (mixfile.h),
 * for the zrecord command and the zrecordfs daemon; the parser itself
 * stays free of I/O for its fuzz harness.  A symlink is refused by both
 * (ELOOP): a mount shows none of SRC's symlinks, so a mixture file is a
 * regular file wherever it is read.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mixfile.h"

int zrcommon_mixfile_read(const char *path, zrcommon_mixfile *out, char *msg,
			  size_t msg_cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW), err = 0;
	char *b;
	ssize_t n = 0;
	size_t got = 0;

	memset(out, 0, sizeof(*out));
	if (fd < 0) {
		err = -errno;
		snprintf(msg, msg_cap, "%s", err == -ELOOP ? "a symlink: a "
			 "mixture file must be a regular file (a mount shows no "
			 "symlinks); name its target, or copy it" :
			 strerror(-err));
		return err;
	}
	b = malloc(ZRCOMMON_MIXFILE_MAX + 1);
	while (b && (n = read(fd, b + got, ZRCOMMON_MIXFILE_MAX + 1 - got)) > 0)
		got += (size_t)n;
	if (n < 0)
		err = -errno;
	close(fd);
	if (!b)
		err = -ENOMEM;
	else if (!err && got > ZRCOMMON_MIXFILE_MAX)
		err = -EFBIG;
	if (err)
		snprintf(msg, msg_cap, "%s", err == -EFBIG ? "a mixture file "
			 "holds at most 1 MiB" : strerror(-err));
	else
		err = zrcommon_mixfile_parse(b, got, out, msg, msg_cap);
	free(b);
	return err;
}
