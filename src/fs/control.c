/*
 * control.c - the control files sync and compact of a store folder (delete
 * has delete.c, append append.c, what reading them shows text_kind.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file_kinds.h"
#include "store_park.h"
#include "errors_log.h"

/* Open files keep their bytes (see Contents in tree.h), so compact need not
 * wait for them; but a record file opened before the last delete and not
 * read yet still reads through its library view, whose bytes compact
 * would move: the library refuses then (EBUSY) until it is read or
 * closed.  Compact changes no index's record: every node stays valid. */
static int compact(struct zrfs_fs *fs, struct zrtree_store *st,
		   struct zrfs_change *ch)
{
	int err;

	zrfs_writer_begin(&fs->park);
	err = zr_store_compact(st->zs, NULL, NULL);
	zrfs_writer_end(&fs->park);
	ch->st = st;
	return err;
}

static int control_write(struct zrfs_fs *fs, struct zrfs_fh *fh,
			 const char *buf, size_t size, off_t off,
			 struct zrfs_change *ch)
{
	struct zrtree_store *st = fh->node->st;
	int err = 0;

	(void)buf, (void)size, (void)off;
	switch (fh->node->kind) {
	case ZRTREE_K_SYNC:
		/* the library orders it against appends, deletes, compacts */
		err = zr_store_sync(st->zs);
		break;
	case ZRTREE_K_COMPACT:
		err = compact(fs, st, ch);
		break;
	default:
		return -EBADF;
	}
	if (err)
		zrtree_elog_add(st->log, st->path, "%s: %s", fh->node->name,
			     *zr_errmsg() ? zr_errmsg() : zr_strerror(err));
	return err;
}

/* Append and control files' attributes expire at once; their size is
 * that of the usage line, what reading them shows. */
const struct zrfs_kind_ops zrfs_control_kind = {
	.mode = S_IFREG | 0644,
	.flags = ZRFS_KF_WRITABLE,
	.attr_ttl = 0,
	.entry_ttl = ZRFS_TTL_LONG,
	.read = zrfs_usage_read,
	.write = control_write,
	.size = zrfs_usage_size,
};
