/*
 * text.c - what reading a store folder's small files shows: the text
 * files (stats, schema, errors), made at open and by getattr, and the
 * one-line usage of the append and control files: copies of a store
 * folder (cp -r, rsync, tar) read every file and must not fail.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "file_kinds.h"
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
