/*
 * batch.c - batch files (a store's batch/..., a dataset's @batch/...).
 * A batch node stands for one content (see Contents in fs.h): the batch
 * drawn from the first ver[0] records while the stores' generation is
 * ver[1].  Appends change nothing in it, compacts only move its records;
 * only a delete changes what it is drawn from.
 *
 * An open of a node whose content the stores still hold is cheap: the
 * handle gathers the whole file at the first read the page cache cannot
 * answer, and the kernel keeps the pages (keep_cache), so later opens of
 * the node read no bytes from here and mmap works.  A delete first fills
 * the open handles that have not gathered yet (zr__batch_prefill).  An open
 * that comes after a delete changed the node's content gathers the batch
 * anew at once and serves it past the page cache (an uncached handle,
 * direct_io), if it has the node's size; otherwise it fails with ESTALE and
 * the kernel looks the name up again.
 */
#include <errno.h>
#include <stdlib.h>

#include "files.h"
#include "layout.h"
#include "stlock.h"

static void log_failure(const struct zr__node *n, int err)
{
	struct zr__fstore *const *st;

	zr__batch_stores(n, &st);
	zr__elog_add(&st[0]->log, st[0]->path, "batch %llu-%llu: %s",
		     (unsigned long long)n->seed,
		     (unsigned long long)n->step,
		     *zr_errmsg() ? zr_errmsg() : zr_strerror(err));
}

/* Gathers the batch drawn from the first length records (0: all) into
 * fh->buf, if it has fh->len bytes (else -ESTALE).  Caller holds the read
 * (or one write) locks of the node's stores and fh->mu. */
static int gather(struct zr__fs *fs, struct zr__fh *fh, uint64_t length)
{
	struct zr__plan p;
	int err = zr__plan_make(fs, fh->node, &p, 0, length);

	if (err == -ENOENT)
		err = -ESTALE;
	if (!err && p.total != fh->len)
		err = -ESTALE;
	if (!err) {
		fh->buf = zr__buf_get(p.total, &fh->cap);
		fh->cached = 1;
		err = fh->buf ? zr__plan_fill(&p, fh->buf) : -ENOMEM;
	}
	zr__plan_free(&p);
	if (err) {
		zr__buf_put(fh->buf, fh->cap);
		fh->buf = NULL;
	}
	return err;
}

/* The node's own content, gathered once (a delete may have done it). */
static int fill_node(struct zr__fs *fs, struct zr__fh *fh)
{
	int err = 0;

	pthread_mutex_lock(&fh->mu);
	if (!fh->buf && atomic_load(&fh->lost))
		err = -EIO; /* a delete changed it before it was gathered */
	else if (!fh->buf && (err = gather(fs, fh, fh->node->ver[0])))
		log_failure(fh->node, err);
	pthread_mutex_unlock(&fh->mu);
	return err;
}

int zr__batch_open(struct zr__fs *fs, struct zr__fh *fh)
{
	const struct zr__node *n = fh->node;
	struct zr__fstore *const *st;
	size_t k = zr__batch_stores(n, &st);
	int err = zr__st_rdlock_all(st, k);

	if (err)
		return err;
	fh->len = n->size;
	if (zr__batch_gen(n) == n->ver[1]) {
		fh->lazy = 1; /* the stores still hold the node's content */
	} else {
		/* A delete came since the lookup: the batch drawn anew. */
		fh->uncached = 1;
		pthread_mutex_lock(&fh->mu);
		err = gather(fs, fh, 0);
		pthread_mutex_unlock(&fh->mu);
		atomic_store_explicit(&fh->filled, !err, memory_order_release);
	}
	zr__st_unlock_all(st, k);
	if (err && err != -ESTALE)
		log_failure(n, err);
	return err;
}

int zr__batch_read(fuse_req_t req, struct zr__fs *fs, struct zr__fh *fh,
		   size_t size, off_t off)
{
	struct zr__fstore *const *st;
	size_t k = zr__batch_stores(fh->node, &st);
	int err;

	if (!atomic_load_explicit(&fh->filled, memory_order_acquire)) {
		err = zr__st_rdlock_all(st, k);
		if (err)
			return err;
		err = fill_node(fs, fh);
		zr__st_unlock_all(st, k);
		if (err) /* not the node's size: its records are gone */
			return err == -ESTALE ? -EIO : err;
		/* buf is complete: later reads need no lock */
		atomic_store_explicit(&fh->filled, 1, memory_order_release);
	}
	zr__fh_reply(req, fh, size, off);
	return 0;
}

/* Read locks of the node's stores other than st, whose write lock the
 * caller holds.  Taken out of the stores' order, so never by waiting
 * behind another writer (which may be waiting for st): ZR__E_PARK when
 * one holds or awaits any of them. */
static int lock_others(struct zr__fstore *const *all, size_t k,
		       const struct zr__fstore *st)
{
	for (size_t i = 0; i < k; i++) {
		if (all[i] == st)
			continue;
		if (zr__st_rdlock(all[i])) {
			while (i-- > 0)
				if (all[i] != st)
					zr__st_unlock(all[i]);
			return ZR__E_PARK;
		}
	}
	return 0;
}

static void unlock_others(struct zr__fstore *const *all, size_t k,
			  const struct zr__fstore *st)
{
	for (size_t i = k; i-- > 0;)
		if (all[i] != st)
			zr__st_unlock(all[i]);
}

/* Caller holds st's write lock. */
static void prefill(struct zr__fs *fs, struct zr__fstore *st,
		    struct zr__fh *fh)
{
	struct zr__fstore *const *all;
	size_t k = zr__batch_stores(fh->node, &all);
	int err;

	/* Uncached handles gathered at open; lazy is set at open under the
	 * stores' locks, so an open that has not set it yet will park. */
	if (!fh->lazy || atomic_load_explicit(&fh->filled,
					      memory_order_acquire))
		return;
	err = lock_others(all, k, st);
	if (!err) {
		err = fill_node(fs, fh);
		unlock_others(all, k, st);
	} else {
		zr__elog_add(&st->log, st->path, "delete: batch %llu-%llu "
			     "open, not read yet, of a dataset whose other "
			     "store is busy: its reads fail (EIO)",
			     (unsigned long long)fh->node->seed,
			     (unsigned long long)fh->node->step);
	}
	if (err)
		atomic_store(&fh->lost, 1); /* its reads fail: EIO */
	else
		atomic_store_explicit(&fh->filled, 1, memory_order_release);
}

void zr__batch_prefill(struct zr__fs *fs, struct zr__fstore *st)
{
	struct zr__fh **open;
	size_t count;

	if (zr__fh_collect(fs, st, ZR__K_BATCH, &open, &count)) {
		zr__fh_lose(fs, st);
		zr__elog_add(&st->log, st->path, "delete: no memory to gather "
			     "the open batch files not read yet: their reads "
			     "fail (EIO)");
		return;
	}
	for (size_t i = 0; i < count; i++) {
		prefill(fs, st, open[i]);
		zr__fh_put(fs, open[i]);
	}
	free(open);
}
