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
#include "mixture.h"
#include "statsjson.h"
#include "file_bytes.h"
#include "errors_log.h"

static int stats_json(struct zrfs_fstore *st, char **out, size_t *len)
{
	zr_stats s;
	int err;

	/* The library's stats would wait for a compact: park instead. */
	err = zrfs_st_probe(st);
	if (!err)
		err = zr_store_stats(st->zs, &s);
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

static int text_make(const struct zrfs_node *n, char **out, size_t *len)
{
	switch (n->kind) {
	case ZRFS_K_STATS:
		if (n->mix)
			return zrfs_mix_stats(n->mix, out, len);
		return stats_json(n->st, out, len);
	case ZRFS_K_SCHEMA:
		return schema_json(n->st, out, len);
	case ZRFS_K_ERRORS:
		return zrfs_elog_text(n->mix ? zrfs_mix_elog(n->mix) :
				      n->st->log, out, len);
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

static int text_open(struct zrfs_fs *fs, struct zrfs_fh *fh, int flags)
{
	(void)fs, (void)flags;
	return text_make(fh->node, &fh->buf, &fh->len);
}

static int text_read(fuse_req_t req, struct zrfs_fs *fs, struct zrfs_fh *fh,
		     size_t size, off_t off)
{
	(void)fs;
	zrfs_fh_reply(req, fh, size, off);
	return 0;
}

/* By name: the text as it would be made now. */
static int text_size(struct zrfs_fs *fs, const struct zrfs_node *n,
		     uint64_t *size)
{
	char *text;
	size_t len = 0;
	int err = text_make(n, &text, &len);

	(void)fs;
	if (!err)
		free(text);
	*size = len;
	return err;
}

/* Text files' attributes expire at once: they follow the store. */
const struct zrfs_kind_ops zrfs_text_kind = {
	.mode = S_IFREG | 0444,
	.flags = ZRFS_KF_HANDLE_SIZE,
	.attr_ttl = 0,
	.entry_ttl = ZRFS_TTL_LONG,
	.open = text_open,
	.read = text_read,
	.size = text_size,
};

int zrfs_usage_read(fuse_req_t req, struct zrfs_fs *fs, struct zrfs_fh *fh,
		   size_t size, off_t off)
{
	const char *u = usage[fh->node->kind];

	(void)fs;
	zrfs_reply_slice(req, u, strlen(u), size, off);
	return 0;
}

int zrfs_usage_size(struct zrfs_fs *fs, const struct zrfs_node *n,
		   uint64_t *size)
{
	(void)fs;
	*size = strlen(usage[n->kind]);
	return 0;
}
