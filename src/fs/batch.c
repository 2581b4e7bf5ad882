/*
 * batch.c - batch files (a store's batch/..., a dataset's @batch/...).
 * A batch node stands for one content (see Contents in tree.h): the batch
 * drawn from the first ver[0] records while its stores' delete epochs sum
 * to ver[1].  Appends change nothing in it, compacts only move its
 * records; only a delete changes what it is drawn from.
 *
 * An open of a node whose content the stores still hold is cheap: its
 * open file (open_file.h) plans the batch at the first read the page
 * cache cannot answer, and from then on a thread of the file's own
 * gathers every piece (a dense .npy in pieces of about 1 MiB of rows,
 * any other form whole) in file order on the library's lanes while the
 * reads take the pieces already in, so that the next pieces are decoded
 * while the kernel copies these; the kernel keeps the pages
 * (keep_cache), so later opens of the node read no bytes from here and
 * mmap works; the open of a step gathered ahead takes its bytes, or the
 * gather still under way, instead (batch_prefetch.h).  Reads of pieces
 * already in need no lock.
 * Every piece is gathered through the library views begun at open, one per
 * store, so a delete since changes none of them (a gather that meets a
 * running delete or compact parks the read: store_park.h).  An open
 * that comes after a delete changed the node's content gathers the batch
 * anew at once and serves it past the page cache (an uncached handle,
 * direct_io), if it has the node's size; otherwise it fails with ESTALE and
 * the kernel looks the name up again.
 */
#include "batch_prefetch.h"
#include "file_kinds.h"
#include "open_file.h"

/* Unless a delete came since the lookup (the open file is fresh), a step
 * gathered ahead has the node's bytes. */
static int open_node(struct zrfs_fs *fs, struct zrfs_fh *fh, int flags)
{
	int err = zrfs_file_open(fs, fh, flags);

	if (err)
		return err;
	if (!fh->uncached)
		zrfs_prefetch_take(fh);
	fh->uncached |= fs->opts.direct_batches;
	/* the whole file on the lanes from its first read on */
	zrtree_file_ahead(fh->file, zrfs_prefetch_busy);
	zrfs_prefetch_hint(fh, zrtree_file_epoch(fh->file));
	return 0;
}

/* The prefetch pauses while a batch is opened or read (batch_prefetch.h). */
static int batch_open(struct zrfs_fs *fs, struct zrfs_fh *fh, int flags)
{
	int err;

	zrfs_prefetch_busy(1);
	err = open_node(fs, fh, flags);
	zrfs_prefetch_busy(-1);
	return err;
}

static int batch_read(fuse_req_t req, struct zrfs_fs *fs, struct zrfs_fh *fh,
		      size_t size, off_t off)
{
	int err;

	zrfs_prefetch_busy(1);
	err = zrfs_file_read(req, fs, fh, size, off);
	zrfs_prefetch_busy(-1);
	return err;
}

/* A batch name's entry expires at once: the node's bytes never change,
 * the name's do. */
const struct zrfs_kind_ops zrfs_batch_kind = {
	.mode = S_IFREG | 0444,
	.flags = ZRFS_KF_KEEP_CACHE | ZRFS_KF_HANDLE_SIZE,
	.attr_ttl = ZRFS_TTL_LONG,
	.entry_ttl = 0,
	.open = batch_open,
	.read = batch_read,
	.size = zrfs_node_size,
};
