/*
 * batch.c - batch files (a store's batch/..., a dataset's @batch/...).
 * A batch node stands for one content (see Contents in tree.h): the batch
 * drawn from the first ver[0] records while its stores' delete epochs sum
 * to ver[1].  Appends change nothing in it, compacts only move its
 * records; only a delete changes what it is drawn from.
 *
 * An open of a node whose content the stores still hold is cheap: the
 * handle plans the file at the first read the page cache cannot answer
 * and gathers only the pieces that read covers (a dense .npy in pieces of
 * about 1 MiB of rows, any other form whole), so that later pieces are
 * gathered while the kernel takes the first ones; the kernel keeps the
 * pages (keep_cache), so later opens of the node read no bytes from here
 * and mmap works; the open of a step gathered ahead takes its bytes
 * instead (batch_prefetch.h).  Reads of pieces already in need no lock.  Every piece
 * is gathered through the library views the handle began at open, one per
 * store, so a delete since changes none of them (a gather that meets a
 * running delete or compact parks the read: store_park.h).  An open
 * that comes after a delete changed the node's content gathers the batch
 * anew at once and serves it past the page cache (an uncached handle,
 * direct_io), if it has the node's size; otherwise it fails with ESTALE and
 * the kernel looks the name up again.
 */
#include <errno.h>
#include <stdlib.h>

#include "batch_prefetch.h"
#include "big_buffers.h"
#include "file_kinds.h"
#include "store_park.h"
#include "file_bytes.h"
#include "errors_log.h"

static void log_failure(const struct zrtree_node *n, int err)
{
	const char *name;
	struct zrtree_elog *log = zrtree_batch_elog(n, &name);

	zrtree_elog_add(log, name, "batch %llu-%llu: %s",
		     (unsigned long long)n->seed,
		     (unsigned long long)n->step,
		     *zr_errmsg() ? zr_errmsg() : zr_strerror(err));
}

/* A handle's layout and which of its pieces are in buf (see
 * zrfile_batch_pieces in batch_file.h).  Made at the first read the page
 * cache cannot answer; plan is freed once every piece is in, the rest with
 * the handle, since a reader may be checking done[] without fh->mu. */
struct zrfs_fill {
	struct zrfile_batch plan; /* valid until every piece is in (fh->mu) */
	struct zrfile_batch_pieces pc; /* written once, before fh->state   */
	size_t missing;		/* pieces not in buf yet (fh->mu)          */
	atomic_uchar done[];	/* piece k is in buf (release, acquire)   */
};

static void fill_free(struct zrfs_fh *fh)
{
	if (fh->fill)
		zrfile_batch_free(&fh->fill->plan);
	free(fh->fill);
	fh->fill = NULL;
}

/* Plans the batch drawn from the first length records (0: all) and gets
 * fh->buf for it, if it has fh->len bytes (else -ESTALE).  Caller holds
 * fh->mu. */
static int plan(struct zrfs_fs *fs, struct zrfs_fh *fh, uint64_t length)
{
	struct zrfs_fill *f;
	struct zrfile_batch_pieces pc;
	struct zrfile_batch p;
	int err = zrfs_busy_to_park(zrtree_plan_make(&fs->tree, fh->node, &p,
						     0, length, fh->views));

	if (err)
		return err == -ENOENT ? -ESTALE : err;
	if (p.total != fh->len) {
		zrfile_batch_free(&p);
		return -ESTALE;
	}
	zrfile_batch_pieces(&p, &pc);
	f = malloc(sizeof(*f) + pc.n * sizeof(f->done[0]));
	/* the slack is scratch the fill may use past the file's bytes */
	fh->buf = f ? zrcommon_bigbuf_get(p.total + p.file.slack, &fh->cap) : NULL;
	if (!fh->buf) {
		free(f);
		zrfile_batch_free(&p);
		return -ENOMEM;
	}
	fh->cached = 1;
	f->plan = p;
	f->pc = pc;
	f->missing = pc.n;
	for (size_t k = 0; k < pc.n; k++)
		atomic_init(&f->done[k], 0);
	fh->fill = f;
	atomic_store_explicit(&fh->state, ZRFS_FILL_PLANNED,
			      memory_order_release);
	return 0;
}

static void views_end(struct zrfs_fh *fh)
{
	struct zrtree_store *const *st;
	size_t k = zrtree_batch_stores(fh->node, &st);

	if (fh->views)
		zrtree_views_end(fh->views, k);
	free(fh->views);
	fh->views = NULL;
}

/* The stores as they are now, for the handle's every gather. */
static int views_begin(struct zrfs_fh *fh, struct zrtree_store *const *st,
		       size_t k)
{
	int err;

	fh->views = calloc(k, sizeof(*fh->views));
	if (!fh->views)
		return -ENOMEM;
	err = zrfs_busy_to_park(zrtree_views_begin(st, k, fh->views));
	if (err) {
		free(fh->views);
		fh->views = NULL;
	}
	return err;
}

/* Fills the pieces [k0, k1] not in buf yet.  Caller holds fh->mu and has
 * planned. */
static int fill_pieces(struct zrfs_fh *fh, size_t k0, size_t k1)
{
	struct zrfs_fill *f = fh->fill;
	int err = 0;

	for (size_t k = k0; !err && k <= k1 && f->missing; k++) {
		if (atomic_load_explicit(&f->done[k], memory_order_relaxed))
			continue;
		err = zrfs_busy_to_park(zrfile_batch_fill_piece(&f->plan,
								&f->pc,
								fh->buf, k));
		if (err)
			break;
		atomic_store_explicit(&f->done[k], 1, memory_order_release);
		if (!--f->missing) {
			zrfile_batch_free(&f->plan); /* buf is complete */
			views_end(fh);
			atomic_store_explicit(&fh->state, ZRFS_FILL_DONE,
					      memory_order_release);
		}
	}
	return err;
}

/* Whether bytes [off, end) of a planned handle are in buf: without a
 * lock, so that reads of filled pieces never wait for a gather. */
static int have(struct zrfs_fh *fh, uint64_t off, uint64_t end)
{
	int state = atomic_load_explicit(&fh->state, memory_order_acquire);
	struct zrfs_fill *f;

	if (state != ZRFS_FILL_PLANNED)
		return state == ZRFS_FILL_DONE;
	f = fh->fill;
	for (size_t k = zrfile_batch_piece_of(&f->pc, off);
	     k <= zrfile_batch_piece_of(&f->pc, end - 1); k++)
		if (!atomic_load_explicit(&f->done[k], memory_order_acquire))
			return 0;
	return 1;
}

/* The node's own content in [off, end) (the whole file: 0, fh->len),
 * planned once, each piece gathered once, through the handle's views. */
static int fill_node(struct zrfs_fs *fs, struct zrfs_fh *fh, uint64_t off,
		     uint64_t end)
{
	int err = 0;

	pthread_mutex_lock(&fh->mu);
	if (!fh->fill)
		err = plan(fs, fh, fh->node->ver[0]);
	if (!err && atomic_load(&fh->state) != ZRFS_FILL_DONE)
		err = fill_pieces(fh,
				  zrfile_batch_piece_of(&fh->fill->pc, off),
				  zrfile_batch_piece_of(&fh->fill->pc,
							end - 1));
	pthread_mutex_unlock(&fh->mu);
	if (err && err != -EIO && err != ZRFS_E_PARK)
		log_failure(fh->node, err);
	return err;
}

/* What a batch handle keeps besides its buffer: its fill and views. */
static void drop(struct zrfs_fh *fh)
{
	fill_free(fh);
	views_end(fh);
}

static int open_node(struct zrfs_fs *fs, struct zrfs_fh *fh, int flags)
{
	const struct zrtree_node *n = fh->node;
	struct zrtree_store *const *st;
	size_t k = zrtree_batch_stores(n, &st);
	uint64_t epoch;
	int err;

	(void)flags;
	fh->drop = drop;
	fh->uncached = fs->opts.direct_batches;
	fh->len = n->size;
	err = views_begin(fh, st, k);
	epoch = err ? 0 : zrtree_views_epoch(fh->views, k);
	/* Unless a delete came since the lookup, the views show the node's
	 * content: gathered ahead, or at the reads that need it; else the
	 * batch is drawn anew now. */
	if (!err && epoch == n->ver[1] && zrfs_pf_take(fh)) {
		views_end(fh); /* no read gathers */
		zrfs_pf_store(fs, fh);
	} else if (!err && epoch != n->ver[1]) {
		fh->uncached = 1;
		pthread_mutex_lock(&fh->mu);
		err = plan(fs, fh, 0);
		if (!err)
			err = fill_pieces(fh, 0, fh->fill->pc.n - 1);
		pthread_mutex_unlock(&fh->mu);
	}
	if (!err)
		zrfs_pf_hint(fh, epoch);
	if (err && err != -ESTALE && err != ZRFS_E_PARK)
		log_failure(n, err);
	return err;
}

static int read_node(fuse_req_t req, struct zrfs_fs *fs, struct zrfs_fh *fh,
		     size_t size, off_t off)
{
	uint64_t end = (uint64_t)off + size;
	int err;

	if (off < 0 || (uint64_t)off >= fh->len || !size) {
		fuse_reply_buf(req, NULL, 0);
		return 0;
	}
	if (end > fh->len || end < (uint64_t)off)
		end = fh->len;
	if (!have(fh, (uint64_t)off, end)) {
		err = fill_node(fs, fh, (uint64_t)off, end);
		if (err) /* not the node's size: its records are gone */
			return err == -ESTALE ? -EIO : err;
	}
	zrfs_fh_reply(req, fh, size, off);
	return 0;
}

/* The prefetch pauses while a batch is opened or read (batch_prefetch.h). */
static int batch_open(struct zrfs_fs *fs, struct zrfs_fh *fh, int flags)
{
	int err;

	zrfs_pf_busy(1);
	err = open_node(fs, fh, flags);
	zrfs_pf_busy(-1);
	return err;
}

static int batch_read(fuse_req_t req, struct zrfs_fs *fs, struct zrfs_fh *fh,
		      size_t size, off_t off)
{
	int err;

	zrfs_pf_busy(1);
	err = read_node(req, fs, fh, size, off);
	zrfs_pf_busy(-1);
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
