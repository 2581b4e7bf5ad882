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

#include "files.h"
#include "ops.h"
#include "statsjson.h"
#include "stlock.h"

static int stats_json(struct zr__fstore *st, char **out, size_t *len)
{
	zr_stats s;
	int err;

	/* The library's stats would wait for a compact: park instead. */
	err = zr__st_rdlock(st);
	if (err)
		return err;
	err = zr_store_stats(st->zs, &s);
	zr__st_unlock(st);
	return err ? err : zr_stats_json(st->zs, &s, out, len);
}

static int schema_json(struct zr__fstore *st, char **out, size_t *len)
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

int zr__text_make(struct zr__fs *fs, const struct zr__node *n, char **out,
		  size_t *len)
{
	(void)fs;
	switch (n->kind) {
	case ZR__K_STATS:
		return stats_json(n->st, out, len);
	case ZR__K_SCHEMA:
		return schema_json(n->st, out, len);
	case ZR__K_ERRORS:
		return zr__elog_text(&n->st->log, out, len);
	default:
		return -EINVAL;
	}
}

static const char *const usage[] = {
	[ZR__K_APPEND] = "append: write .npy files here to append their "
			 "records\n",
	[ZR__K_SYNC] = "sync: write anything here to make the store "
		       "durable\n",
	[ZR__K_COMPACT] = "compact: write anything here to compact the "
			  "store in place\n",
	[ZR__K_DELETE] = "delete: write record indices here (text or an "
			 "integer .npy) to delete them\n",
};

size_t zr__usage_len(enum zr__kind kind)
{
	return strlen(usage[kind]);
}

void zr__usage_read(fuse_req_t req, enum zr__kind kind, size_t size,
		    off_t off)
{
	zr__reply_slice(req, usage[kind], zr__usage_len(kind), size, off);
}

/* Open files keep their bytes (see Contents in fs.h), so compact need not
 * wait for them; it moves every record, so every record node is stale. */
static int compact(struct zr__fs *fs, struct zr__fstore *st)
{
	int err;

	zr__st_wrlock(st);
	err = zr_store_compact(st->zs, NULL, NULL);
	st->gen++;
	zr__st_wrunlock(st);
	zr__ops_replay(fs, st);
	return err;
}

int zr__control_write(struct zr__fs *fs, struct zr__fh *fh, const char *buf,
		      size_t size)
{
	struct zr__fstore *st = fh->node->st;
	int err = 0;

	(void)fs;
	switch (fh->node->kind) {
	case ZR__K_SYNC:
		/* the library orders it against appends, deletes, compacts */
		err = zr_store_sync(st->zs);
		break;
	case ZR__K_COMPACT:
		err = compact(fs, st);
		break;
	case ZR__K_DELETE:
		return zr__delete_write(fh, buf, size);
	default:
		return -EBADF;
	}
	if (err)
		zr__elog_add(&st->log, st->path, "%s: %s", fh->node->name,
			     *zr_errmsg() ? zr_errmsg() : zr_strerror(err));
	return err;
}
