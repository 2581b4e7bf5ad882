/*
 * getattr.c - getattr for every node kind: modes, exact sizes and cache
 * timeouts.  Record and batch nodes keep the size they were looked up
 * with (see Contents in fs.h), so their attributes never expire; a batch
 * name's entry does at once (its content follows the store), a record
 * name's is invalidated by the delete that changes it.  Text and control
 * files have attribute timeout 0; a control file's size is that of its
 * usage line, what reading it shows.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "file_kinds.h"
#include "file_bytes.h"

static int file_size(struct zrfs_fs *fs, const struct zrfs_node *n,
		     uint64_t *size)
{
	char *text;
	size_t len;
	int err;

	switch (n->kind) {
	case ZRFS_K_RECORD:
	case ZRFS_K_BATCH:
		*size = n->size;
		return 0;
	case ZRFS_K_STATS:
	case ZRFS_K_SCHEMA:
	case ZRFS_K_ERRORS:
		err = zrfs_text_make(fs, n, &text, &len);
		if (!err)
			free(text);
		*size = len;
		return err;
	case ZRFS_K_APPEND:
	case ZRFS_K_SYNC:
	case ZRFS_K_COMPACT:
	case ZRFS_K_DELETE:
		*size = zrfs_usage_len(n->kind);
		return 0;
	default:
		*size = 0;
		return 0;
	}
}

static mode_t mode_of(enum zrfs_kind kind)
{
	switch (kind) {
	case ZRFS_K_DIR:
	case ZRFS_K_STORE:
	case ZRFS_K_RECDIR:
	case ZRFS_K_BATCHDIR:
		return S_IFDIR | 0755;
	case ZRFS_K_APPEND:
	case ZRFS_K_SYNC:
	case ZRFS_K_COMPACT:
	case ZRFS_K_DELETE:
		/* readable (a usage line), so copies of a store succeed */
		return S_IFREG | 0644;
	default:
		return S_IFREG | 0444;
	}
}

int zrfs_attr(struct zrfs_fs *fs, const struct zrfs_node *n,
	     const struct zrfs_fh *fh, struct stat *st, double *attr_ttl,
	     double *entry_ttl)
{
	uint64_t size = 0;
	int err = 0;

	/* An open file is what its handle serves. */
	if (fh && (n->kind == ZRFS_K_STATS || n->kind == ZRFS_K_SCHEMA ||
		   n->kind == ZRFS_K_ERRORS || n->kind == ZRFS_K_RECORD ||
		   n->kind == ZRFS_K_BATCH))
		size = fh->len;
	else
		err = file_size(fs, n, &size);

	if (err)
		return err;
	memset(st, 0, sizeof(*st));
	st->st_ino = n->ino;
	st->st_mode = mode_of(n->kind);
	st->st_nlink = S_ISDIR(st->st_mode) ? 2 : 1;
	st->st_uid = fs->uid;
	st->st_gid = fs->gid;
	st->st_size = (off_t)size;
	st->st_blksize = 4096;
	st->st_blocks = (blkcnt_t)((size + 511) / 512);
	st->st_atim = st->st_mtim = st->st_ctim = fs->t0;
	*entry_ttl = ZRFS_TTL_LONG;
	*attr_ttl = ZRFS_TTL_LONG;
	switch (n->kind) {
	case ZRFS_K_BATCHDIR:
		/* a dataset's @batch comes and goes with equal lengths */
		if (n->ds && n->depth == 0)
			*entry_ttl = 0;
		break;
	case ZRFS_K_BATCH:
		/* the node's bytes never change, the name's do */
		*entry_ttl = 0;
		break;
	case ZRFS_K_DIR:
	case ZRFS_K_STORE:
	case ZRFS_K_RECDIR:
	case ZRFS_K_RECORD:
		break;
	default:
		*attr_ttl = 0;
	}
	return 0;
}
