/*
 * store_scope.c - whether the store's lock reaches other hosts.  The lock
 * is the store's one promise against a second writer; on sshfs (and other
 * FUSE filesystems that keep locks in the local kernel) and on NFS mounted
 * with local_lock=flock|all it holds on this host only, so a writer on
 * another host is not kept out.  The backend knows its medium
 * (zr__io.lock_reach; POSIX reads the mount meta.zr is on).
 */
#include <stdio.h>

#include "store.h"

void zr__scope_init(zr_store *s)
{
	struct zr__file *f = s->file[ZR__META];
	char type[64] = "";
	const char *why;

	if (!s->cached || !f->io->lock_reach)
		return;
	why = f->io->lock_reach(f, type, sizeof(type));
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
