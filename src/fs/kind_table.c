/*
 * kind_table.c - which kind of file each node kind is (kind_table.h): the
 * one table the dispatcher calls through.  Folders have no file
 * operations; only their mode and timeouts.
 */
#include "kind_table.h"

static const struct zrfs_kind_ops dir_kind = {
	.mode = S_IFDIR | 0755,
	.attr_ttl = ZRFS_TTL_LONG,
	.entry_ttl = ZRFS_TTL_LONG,
};

/* batch/ folders follow the store's length */
static const struct zrfs_kind_ops batchdir_kind = {
	.mode = S_IFDIR | 0755,
	.attr_ttl = 0,
	.entry_ttl = ZRFS_TTL_LONG,
};

static const struct zrfs_kind_ops *const kinds[] = {
	[ZRTREE_K_DIR] = &dir_kind,
	[ZRTREE_K_STORE] = &dir_kind,
	[ZRTREE_K_RECDIR] = &dir_kind,
	[ZRTREE_K_BATCHDIR] = &batchdir_kind,
	[ZRTREE_K_RECORD] = &zrfs_record_kind,
	[ZRTREE_K_BATCH] = &zrfs_batch_kind,
	[ZRTREE_K_APPEND] = &zrfs_append_kind,
	[ZRTREE_K_STATS] = &zrfs_text_kind,
	[ZRTREE_K_SCHEMA] = &zrfs_text_kind,
	[ZRTREE_K_ERRORS] = &zrfs_text_kind,
	[ZRTREE_K_SYNC] = &zrfs_control_kind,
	[ZRTREE_K_COMPACT] = &zrfs_control_kind,
	[ZRTREE_K_DELETE] = &zrfs_delete_kind,
	[ZRTREE_K_SIDE] = &zrfs_side_kind,
	[ZRTREE_K_INFO] = &zrfs_text_kind,
};

const struct zrfs_kind_ops *zrfs_kind_of(enum zrtree_kind kind)
{
	return kinds[kind];
}
