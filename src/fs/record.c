/*
 * record.c - records/I.npy, and records/I.png for image records.  A record node's bytes never change (see
 * Contents in tree.h), so the kernel keeps their pages (keep_cache) and a
 * repeated open costs no decoding: a handle copies its record only when
 * the kernel first asks for a page it does not have, through the library
 * view it began at open, so every read of a handle serves that one record
 * whole, whatever deletes happen before it is closed (and a compact after
 * such a delete fails with EBUSY until it is: the view may still read the
 * bytes compact would move).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "file_kinds.h"
#include "store_park.h"
#include "file_bytes.h"
#include "lookup.h"
#include "u64.h"
#include "errors_log.h"

static void log_failure(const struct zrtree_node *n, int err)
{
	zrtree_elog_add(n->st->log, n->st->path, "records/%llu.%s: %s",
		      (unsigned long long)n->idx,
		      n->form == ZRTREE_F_PNG ? "png" : "npy",
		      *zr_errmsg() ? zr_errmsg() : zr_strerror(err));
}

/* Caller holds fh->mu. */
static int fill(struct zrfs_fh *fh)
{
	struct zrtree_node *n = fh->node;
	int err;

	if (fh->buf)
		return 0;
	fh->buf = malloc(fh->len ? fh->len : 1);
	if (!fh->buf)
		return -ENOMEM;
	err = zrfs_busy_to_park(zrtree_rec_fill(n->st, fh->view, n->idx,
						n->form, fh->buf, fh->len));
	if (!err) {
		zr_view_end(fh->view); /* buf holds all it could show */
		fh->view = NULL;
	} else {
		free(fh->buf);
		fh->buf = NULL;
		if (err != ZRFS_E_PARK)
			log_failure(n, err);
	}
	return err;
}

static int record_open(struct zrfs_fs *fs, struct zrfs_fh *fh, int flags)
{
	struct zrtree_node *n = fh->node;
	struct zrtree_store *st = n->st;
	uint64_t size;
	/* What the handle serves, read at its first fill. */
	int err = zrfs_busy_to_park(zrtree_views_begin(&st, 1, &fh->view));

	(void)fs, (void)flags;
	if (err)
		return err;
	err = zrfs_busy_to_park(zrtree_rec_size(st, fh->view, n->idx, n->form,
						&size));
	if (err == ZR_E_DTYPE || err == ZR_E_SHAPE)
		err = -ENOENT; /* no longer an image: no .png */
	/* The name shows other bytes now.  Of another size: the kernel must
	 * look the name up again.  Of the same size, this open serves them,
	 * copied now and past the node's page cache (which has the old). */
	if (err == -ENOENT || (!err && size != n->size))
		err = -ESTALE;
	else if (!err && !zrtree_rec_same(n, zr_view_epoch(fh->view)))
		fh->uncached = 1;
	fh->len = size;
	if (!err && fh->uncached) {
		pthread_mutex_lock(&fh->mu);
		err = fill(fh);
		pthread_mutex_unlock(&fh->mu);
		atomic_store_explicit(&fh->state, err ? ZRFS_FILL_NONE :
				      ZRFS_FILL_DONE, memory_order_release);
	}
	return err; /* the view ends with the handle */
}

static int record_read(fuse_req_t req, struct zrfs_fs *fs,
		       struct zrfs_fh *fh, size_t size, off_t off)
{
	int err;

	(void)fs;
	if (atomic_load_explicit(&fh->state, memory_order_acquire) !=
	    ZRFS_FILL_DONE) {
		pthread_mutex_lock(&fh->mu);
		err = fill(fh);
		pthread_mutex_unlock(&fh->mu);
		if (err)
			return err;
		/* buf is complete: later reads need no lock */
		atomic_store_explicit(&fh->state, ZRFS_FILL_DONE,
				      memory_order_release);
	}
	zrfs_fh_reply(req, fh, size, off);
	return 0;
}

/* Makes the kernel look records/IDX.npy (and .png) up again at its next
 * use. */
static void unname(struct zrfs_fs *fs, const struct zrtree_store *st,
		   uint64_t idx)
{
	static const char *const ext[] = { "npy", "png" };
	char name[32];

	for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]); i++) {
		int n = snprintf(name, sizeof(name), "%llu.%s",
				 (unsigned long long)idx, ext[i]);

		fuse_lowlevel_notify_inval_entry(fs->se, st->records_ino,
						 name, (size_t)n);
	}
}

void zrfs_record_unname_changed(struct zrfs_fs *fs,
			       const struct zrtree_store *st,
			       const uint64_t *del, size_t ndel,
			       uint64_t length)
{
	uint64_t *known;
	size_t nknown;

	if (zrfs_ns_records(fs, st, &known, &nknown))
		return;
	for (size_t i = 0; i < nknown; i++) {
		uint64_t idx = known[i];

		if (idx < length && !bsearch(&idx, del, ndel, sizeof(*del),
					     zrtree_cmp_u64))
			continue;
		unname(fs, st, idx);
	}
	free(known);
}

const struct zrfs_kind_ops zrfs_record_kind = {
	.mode = S_IFREG | 0444,
	.flags = ZRFS_KF_KEEP_CACHE | ZRFS_KF_HANDLE_SIZE,
	.attr_ttl = ZRFS_TTL_LONG,
	.entry_ttl = ZRFS_TTL_LONG,
	.open = record_open,
	.read = record_read,
	.size = zrfs_node_size,
};
