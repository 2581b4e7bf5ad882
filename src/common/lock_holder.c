/*
 * lock_holder.c - finding an flock's holder in /proc/locks (see
 * lock_holder.h).
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "lock_holder.h"

/* One line per lock: "1: FLOCK  ADVISORY  WRITE 1234 00:2f:5678 0 EOF";
 * waiters ("1: -> FLOCK ...") are skipped. */
static pid_t find_in_proc_locks(const struct stat *st, int *write)
{
	FILE *f = fopen("/proc/locks", "re");
	char line[256], kind[16] = "";
	unsigned maj, min;
	unsigned long ino;
	int pid = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "->") || sscanf(line, "%*s FLOCK %*s %15s %d "
		    "%x:%x:%lu", kind, &pid, &maj, &min, &ino) != 5)
			continue;
		/* Our own lock is never the one in the way: a writer's
		 * delete that a follower refuses holds data.zr itself. */
		if (ino == st->st_ino && maj == major(st->st_dev) &&
		    min == minor(st->st_dev) && pid != getpid()) {
			*write = !strcmp(kind, "WRITE");
			break;
		}
		pid = 0;
	}
	fclose(f);
	return pid;
}

static void read_comm(pid_t pid, char *comm, size_t commsz)
{
	char path[64];
	FILE *f;

	snprintf(comm, commsz, "?");
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(comm, (int)commsz, f))
		comm[strcspn(comm, "\n")] = 0;
	if (!*comm)
		snprintf(comm, commsz, "?");
	fclose(f);
}

pid_t zr_lock_holder(const char *path, char *comm, size_t commsz,
		     int *write)
{
	struct stat st;
	pid_t pid = 0;

	*write = 1;
	if (!stat(path, &st))
		pid = find_in_proc_locks(&st, write);
	if (pid)
		read_comm(pid, comm, commsz);
	else
		snprintf(comm, commsz, "?");
	return pid;
}
