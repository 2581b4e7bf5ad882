/*
 * caller.c - which process a request comes from.  append and delete commit
 * at the close of the process that opened them (see append.c): the kernel
 * gives each request the calling thread's id, and a thread other than the
 * opener may close, so the comparison is between thread-group ids.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file_kinds.h"

pid_t zrfs_caller(fuse_req_t req)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	char path[64], line[128];
	pid_t tgid = 0;
	FILE *f;

	/* 0: the caller lives in a pid namespace the daemon cannot see */
	if (!ctx || ctx->pid <= 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)ctx->pid);
	f = fopen(path, "re");
	if (!f)
		return ctx->pid;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "Tgid:", 5)) {
			tgid = (pid_t)atoi(line + 5);
			break;
		}
	fclose(f);
	return tgid > 0 ? tgid : ctx->pid;
}
