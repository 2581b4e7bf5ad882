/*
 * store_scope.c - whether the store's flock reaches other hosts.  The lock
 * is the store's one promise against a second writer; on sshfs (and other
 * FUSE filesystems that keep locks in the local kernel) and on NFS mounted
 * with local_lock=flock|all it holds on this host only, so a writer on
 * another host is not kept out.  Found from the mount the store's meta.zr
 * is on (/proc/self/mountinfo: filesystem type and super options).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "store.h"

/* FUSE filesystems known to keep flock in the client's kernel. */
static const char *const local_fuse[] = { "fuse.sshfs", "fuse.rclone",
					  "fuse.s3fs", "fuse.gcsfuse" };

static const char *verdict(const char *type, const char *opts)
{
	char o[1024];

	for (size_t i = 0; i < sizeof(local_fuse) / sizeof(*local_fuse); i++)
		if (strcmp(type, local_fuse[i]) == 0)
			return "its flock stays on this host (FUSE keeps it "
			       "in the local kernel)";
	if (strcmp(type, "nfs") && strcmp(type, "nfs4"))
		return NULL;
	snprintf(o, sizeof(o), ",%s,", opts);
	if (strstr(o, ",local_lock=flock,") || strstr(o, ",local_lock=all,"))
		return "its flock stays on this host (NFS local_lock)";
	return NULL;
}

/* One mountinfo line: "ID PARENT MAJ:MIN ROOT MNT OPTS [TAGS...] - TYPE
 * SOURCE SUPER_OPTS".  The verdict if it is the mount of dev. */
static const char *line_verdict(char *line, unsigned maj, unsigned min,
				char *type, size_t cap)
{
	unsigned a, b;
	char *sep = strstr(line, " - "), *t, *opts, *save;

	if (!sep || sscanf(line, "%*s %*s %u:%u", &a, &b) != 2 || a != maj ||
	    b != min)
		return NULL;
	t = strtok_r(sep + 3, " \n", &save);
	if (!t || !strtok_r(NULL, " \n", &save))
		return NULL;
	opts = strtok_r(NULL, " \n", &save);
	snprintf(type, cap, "%s", t);
	return verdict(t, opts ? opts : "");
}

void zr__scope_init(zr_store *s)
{
	const char *why = NULL;
	char *line = NULL, type[64] = "";
	struct stat st;
	size_t cap = 0;
	FILE *f;

	if (!s->cached || fstat(s->fd[ZR__META], &st))
		return;
	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return;
	while (!why && getline(&line, &cap, f) > 0)
		why = line_verdict(line, major(st.st_dev), minor(st.st_dev),
				   type, sizeof(type));
	free(line);
	fclose(f);
	if (why)
		snprintf(s->scope_msg, sizeof(s->scope_msg), "%s is on %s: %s, "
			 "so a writer on another host is not kept out; use "
			 "the store read-only from every host, or write from "
			 "one host only", s->path, type, why);
}

const char *zr_store_lock_warning(const zr_store *s)
{
	return s && s->scope_msg[0] ? s->scope_msg : NULL;
}
