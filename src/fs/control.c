/*
 * control.c - the text files (stats, schema, errors) and the control files
 * sync and compact of a store folder (delete has delete.c, append
 * append.c).  Reading a control file shows a one-line usage: copies of a
 * store folder (cp -r, rsync, tar) read every file and must not fail.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file_kinds.h"
#include "ops.h"
#include "statsjson.h"
#include "store_park.h"

static int stats_json(struct zrfs_fstore *st, char **out, size_t *len)
{
	zr_stats s;
	int err;

	/* The library's stats would wait for a compact: park instead. */
	err = zrfs_st_rdlock(st);
	if (err)
		return err;
	err = zr_store_stats(st->zs, &s);
	zrfs_st_unlock(st);
	return err ? err : zrcommon_stats_json(st->zs, &s, out, len);
}

static int schema_json(struct zrfs_fstore *st, char **out, size_t *len)
{
	char *buf = malloc(ZR_SCHEMA_MAX * 4 + 2);
	int err;

	if (!buf)
		return -ENOMEM;
	err = zr_schema_json(zr_store_schema(st->zs), buf, ZR_SCHEMA_MAX * 4);
	if (err) {
		free(buf);
		return err;
	}
	strcat(buf, "\n");
	*out = buf;
	*len = strlen(buf);
	return 0;
}

int zrfs_text_make(struct zrfs_fs *fs, const struct zrfs_node *n, char **out,
		  size_t *len)
{
	(void)fs;
	switch (n->kind) {
	case ZRFS_K_STATS:
		return stats_json(n->st, out, len);
	case ZRFS_K_SCHEMA:
		return schema_json(n->st, out, len);
	case ZRFS_K_ERRORS:
		return zrfs_elog_text(&n->st->log, out, len);
	default:
		return -EINVAL;
	}
}

static const char *const usage[] = {
	[ZRFS_K_APPEND] = "append: write .npy files here to append their "
			 "records\n",
	[ZRFS_K_SYNC] = "sync: write anything here to make the store "
		       "durable\n",
	[ZRFS_K_COMPACT] = "compact: write anything here to compact the "
			  "store in place\n",
	[ZRFS_K_DELETE] = "delete: write record indices here (text or an "
			 "integer .npy) to delete them\n",
};

size_t zrfs_usage_len(enum zrfs_kind kind)
{
	return strlen(usage[kind]);
}

void zrfs_usage_read(fuse_req_t req, enum zrfs_kind kind, size_t size,
		    off_t off)
{
	zrfs_reply_slice(req, usage[kind], zrfs_usage_len(kind), size, off);
}

/* Open files keep their bytes (see Contents in fs.h), so compact need not
 * wait for them; but a record file opened before the last delete and not
 * read yet still reads through its library view, whose bytes compact
 * would move: the library refuses then (EBUSY) until it is read or
 * closed.  Compact moves every record, so every record node is stale. */
static int compact(struct zrfs_fs *fs, struct zrfs_fstore *st)
{
	int err;

	zrfs_st_wrlock(st);
	err = zr_store_compact(st->zs, NULL, NULL);
	st->gen++;
	zrfs_st_wrunlock(st);
	zrfs_ops_replay(fs, st);
	return err;
}

int zrfs_control_write(struct zrfs_fs *fs, struct zrfs_fh *fh, const char *buf,
		      size_t size)
{
	struct zrfs_fstore *st = fh->node->st;
	int err = 0;

	(void)fs;
	switch (fh->node->kind) {
	case ZRFS_K_SYNC:
		/* the library orders it against appends, deletes, compacts */
		err = zr_store_sync(st->zs);
		break;
	case ZRFS_K_COMPACT:
		err = compact(fs, st);
		break;
	case ZRFS_K_DELETE:
		return zrfs_delete_write(fh, buf, size);
	default:
		return -EBADF;
	}
	if (err)
		zrfs_elog_add(&st->log, st->path, "%s: %s", fh->node->name,
			     *zr_errmsg() ? zr_errmsg() : zr_strerror(err));
	return err;
}
