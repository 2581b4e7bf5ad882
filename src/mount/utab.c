/*
 * utab.c - records a directly started mount in utab (utab.h says why).
 */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "utab.h"

extern char **environ;

void zrmount_utab_register(const char *src, const char *mnt)
{
	char *argv[] = { "mount", "-f", "-i", "--no-canonicalize", "-t",
			 "fuse.zrecordfs", "-o", "helper=fuse.zrecordfs",
			 (char *)src, (char *)mnt, NULL };
	int status = 0, err;
	pid_t pid;

	if (geteuid() != 0 || getenv("ZRECORDFS_NO_UTAB"))
		return;
	err = posix_spawnp(&pid, "mount", NULL, NULL, argv, environ);
	if (err == ENOENT)
		err = posix_spawn(&pid, "/bin/mount", NULL, NULL, argv,
				  environ);
	while (!err && waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			err = errno;
			break;
		}
	if (!err && WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return;
	fprintf(stderr, "zrecordfs: warning: %s is mounted, but not recorded "
		"in utab (mount -f: %s): umount will not wait for its stores "
		"to close; `zrecord --wait` does\n", mnt,
		err ? strerror(err) : "failed");
}
