/*
 * delete.c - the write-only `delete` file: record indices as decimal text
 * (separated by spaces, tabs, commas, carriage returns or newlines) or as
 * one integer .npy, in the grammar of src/files/index_list.h (which
 * `zrecord delete --from` shares).
 *
 * Each write() feeds the parser, which checks the input it completes, so
 * a shell sees the error at the write it makes (bash ignores close errors
 * of its builtins): a bad character, dtype or header is EINVAL, an index
 * at or past the store's length ERANGE, an open append session EBUSY,
 * input over 256 MiB EFBIG.
 * A failed write poisons the handle: nothing of it is deleted.  The
 * indices are deleted together, as one zr_store_delete, at the close by
 * the process that opened the file (append.c says why that one), which
 * reports the library's verdict; input still pending at RELEASE (the
 * opener closed first) is deleted then, its errors only logged.
 * Every failure leaves a line in the store's errors file.
 */
#include <errno.h>
#include <stdlib.h>

#include "file_kinds.h"
#include "index_list.h"
#include "u64.h"
#include "store_park.h"
#include "errors_log.h"

static int parse_failed(struct zrtree_store *st, const zrfile_idxlist *ix,
			int err)
{
	const char *msg = zrfile_idxlist_message(ix);

	zrtree_elog_add(st->log, st->path, "delete: %s",
		     *msg ? msg : zr_strerror(err));
	return err;
}

/* Caller holds fh->mu. */
static int feed(struct zrtree_store *st, struct zrfs_fh *fh, const char *buf,
		size_t size)
{
	int err = 0;

	if (!fh->ix && (err = zrfile_idxlist_new(&fh->ix)))
		return parse_failed(st, NULL, err);
	err = zrfile_idxlist_feed(fh->ix, buf, size, zr_store_length(st->zs));
	return err ? parse_failed(st, fh->ix, err) : 0;
}

static int delete_write(struct zrfs_fs *fs, struct zrfs_fh *fh,
			const char *buf, size_t size, off_t off,
			struct zrfs_change *ch)
{
	struct zrtree_store *st = fh->node->st;
	int err;

	(void)fs, (void)off, (void)ch;
	pthread_mutex_lock(&fh->mu);
	err = fh->err;
	if (!err && zr_store_appending(st->zs)) {
		zrtree_elog_add(st->log, st->path, "delete: an append session "
			     "is open; try again after it closes");
		err = -EBUSY;
	}
	if (!err)
		err = feed(st, fh, buf, size);
	fh->err = err;
	pthread_mutex_unlock(&fh->mu);
	return err;
}

/* Deletes idx[0, n), which ch then owns. */
static int apply(struct zrfs_fs *fs, struct zrtree_store *st, uint64_t *idx,
		 size_t n, struct zrfs_change *ch)
{
	uint64_t length;
	int err;

	if (!n) {
		free(idx);
		return 0;
	}
	qsort(idx, n, sizeof(*idx), zrtree_cmp_u64);
	zrfs_writer_begin(&fs->park);
	err = zr_store_delete(st->zs, idx, n);
	length = zr_store_length(st->zs);
	zrfs_writer_end(&fs->park);
	*ch = (struct zrfs_change){ st, idx, n, length };
	if (err)
		zrtree_elog_add(st->log, st->path, "delete: %s",
			     *zr_errmsg() ? zr_errmsg() : zr_strerror(err));
	return err;
}

/* Caller holds fh->mu.  Deletes what was written, or reports the write
 * that failed; either way the handle starts afresh. */
static int commit(struct zrfs_fs *fs, struct zrfs_fh *fh,
		  struct zrfs_change *ch)
{
	struct zrtree_store *st = fh->node->st;
	int err = fh->err;
	uint64_t *idx;
	size_t n;

	if (!err && fh->ix) {
		err = zrfile_idxlist_finish(fh->ix, zr_store_length(st->zs),
					    &idx, &n);
		if (err)
			parse_failed(st, fh->ix, err);
		else
			err = apply(fs, st, idx, n, ch);
	}
	zrfile_idxlist_free(fh->ix);
	fh->ix = NULL;
	fh->err = 0;
	return err;
}

static int delete_flush(struct zrfs_fs *fs, struct zrfs_fh *fh, pid_t caller,
			struct zrfs_change *ch)
{
	int err;

	if (!caller || caller != fh->owner)
		return 0;
	pthread_mutex_lock(&fh->mu);
	err = commit(fs, fh, ch);
	pthread_mutex_unlock(&fh->mu);
	return err;
}

static void delete_release(struct zrfs_fs *fs, struct zrfs_fh *fh,
			   struct zrfs_change *ch)
{
	pthread_mutex_lock(&fh->mu);
	commit(fs, fh, ch);
	pthread_mutex_unlock(&fh->mu);
}

const struct zrfs_kind_ops zrfs_delete_kind = {
	.mode = S_IFREG | 0644,
	.flags = ZRFS_KF_WRITABLE,
	.attr_ttl = 0,
	.entry_ttl = ZRFS_TTL_LONG,
	.read = zrfs_usage_read,
	.write = delete_write,
	.flush = delete_flush,
	.release = delete_release,
	.size = zrfs_usage_size,
};
