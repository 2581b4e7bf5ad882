/*
 * text_kind.c - the text files' kind (stats, schema, errors: their text from
 * the tree, made at open and by getattr) and the usage line the append
 * and control files show when read.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "file_kinds.h"
#include "store_park.h"

static int text_open(struct zrfs_fs *fs, struct zrfs_fh *fh, int flags)
{
	(void)fs, (void)flags;
	return zrfs_busy_to_park(zrtree_text(fh->node, &fh->buf,
						&fh->len));
}

static int text_read(fuse_req_t req, struct zrfs_fs *fs, struct zrfs_fh *fh,
		     size_t size, off_t off)
{
	(void)fs;
	zrfs_fh_reply(req, fh, size, off);
	return 0;
}

/* By name: the text as it would be made now. */
static int text_size(struct zrfs_fs *fs, const struct zrtree_node *n,
		     uint64_t *size)
{
	char *text;
	size_t len = 0;
	int err = zrfs_busy_to_park(zrtree_text(n, &text, &len));

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
	const char *u = zrtree_usage(fh->node->kind);

	(void)fs;
	zrfs_reply_slice(req, u, strlen(u), size, off);
	return 0;
}

int zrfs_usage_size(struct zrfs_fs *fs, const struct zrtree_node *n,
		   uint64_t *size)
{
	(void)fs;
	*size = strlen(zrtree_usage(n->kind));
	return 0;
}
