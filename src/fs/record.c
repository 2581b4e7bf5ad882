/*
 * record.c - records/I.npy, and records/I.png for image records.  A record node's bytes never change (see
 * Contents in fs.h), so the kernel keeps their pages (keep_cache) and a
 * repeated open costs no decoding: a handle copies its record only when
 * the kernel first asks for a page it does not have.  Until then the
 * index must keep showing the node's bytes; a delete that would change
 * them first fills every such handle (zrfs_record_prefill), so every read
 * of a handle serves that one record whole, whatever deletes or compacts
 * happen before it is closed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "file_kinds.h"
#include "file_bytes.h"
#include "lookup.h"
#include "store_park.h"

/* Caller holds st's read (or write) lock and fh->mu. */
static int fill(struct zrfs_fh *fh)
{
	struct zrfs_node *n = fh->node;
	int err;

	if (fh->buf)
		return 0;
	fh->buf = malloc(fh->len ? fh->len : 1);
	if (!fh->buf)
		return -ENOMEM;
	err = zrfs_rec_fill(n->st, fh->view, n->idx, n->form, fh->buf,
			    fh->len);
	if (!err) {
		zr_view_end(fh->view); /* buf holds all it could show */
		fh->view = NULL;
	} else {
		free(fh->buf);
		fh->buf = NULL;
		zrfs_elog_add(&n->st->log, n->st->path, "records/%llu.%s: %s",
			     (unsigned long long)n->idx,
			     n->form == ZRFS_F_PNG ? "png" : "npy",
			     *zr_errmsg() ? zr_errmsg() : zr_strerror(err));
	}
	return err;
}

int zrfs_record_open(struct zrfs_fh *fh)
{
	struct zrfs_node *n = fh->node;
	struct zrfs_fstore *st = n->st;
	uint64_t size;
	int err = zrfs_st_rdlock(st);

	if (err)
		return err;
	err = zrfs_rec_size(st, n->idx, n->form, &size);
	if (err == ZR_E_DTYPE || err == ZR_E_SHAPE)
		err = -ENOENT; /* no longer an image: no .png */
	/* The name shows other bytes now.  Of another size: the kernel must
	 * look the name up again.  Of the same size, this open serves them,
	 * copied now and past the node's page cache (which has the old). */
	if (err == -ENOENT || (!err && size != n->size))
		err = -ESTALE;
	else if (!err && !zrfs_rec_current(st, n))
		fh->uncached = 1;
	fh->len = size;
	/* What the handle serves, read at its first fill.  Never waits: the
	 * library deletes and compacts only under st's write lock. */
	if (!err)
		err = zr_view_begin(st->zs, ZR_VIEW_WAIT, &fh->view);
	if (!err && fh->uncached) {
		pthread_mutex_lock(&fh->mu);
		err = fill(fh);
		pthread_mutex_unlock(&fh->mu);
		atomic_store_explicit(&fh->filled, !err, memory_order_release);
	}
	zrfs_st_unlock(st);
	return err;
}

int zrfs_record_read(fuse_req_t req, struct zrfs_fh *fh, size_t size,
		    off_t off)
{
	struct zrfs_fstore *st = fh->node->st;
	int err;

	if (!atomic_load_explicit(&fh->filled, memory_order_acquire)) {
		err = zrfs_st_rdlock(st);
		if (err)
			return err;
		pthread_mutex_lock(&fh->mu);
		/* Not filled before a delete changed the index (prefill had
		 * no memory): the node's bytes are gone. */
		if (!fh->buf && !zrfs_rec_current(st, fh->node))
			err = -EIO;
		else
			err = fill(fh);
		pthread_mutex_unlock(&fh->mu);
		zrfs_st_unlock(st);
		if (err)
			return err;
		/* buf is complete: later reads need no lock */
		atomic_store_explicit(&fh->filled, 1, memory_order_release);
	}
	zrfs_fh_reply(req, fh, size, off);
	return 0;
}

void zrfs_record_unname(struct zrfs_fs *fs, const struct zrfs_fstore *st,
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

void zrfs_record_prefill(struct zrfs_fs *fs, struct zrfs_fstore *st,
			const uint64_t *del, size_t n)
{
	uint64_t len = zr_store_length(st->zs);
	uint64_t end = n < len ? len - n : 0;
	struct zrfs_fh **open;
	size_t count;

	if (zrfs_fh_collect(fs, st, ZRFS_K_RECORD, &open, &count))
		return; /* no memory: those handles fail their reads (EIO) */
	for (size_t i = 0; i < count; i++) {
		struct zrfs_fh *fh = open[i];
		uint64_t idx = fh->node->idx;

		pthread_mutex_lock(&fh->mu);
		if (!fh->buf && (idx >= end || bsearch(&idx, del, n,
						       sizeof(*del),
						       zrfs_cmp_u64)))
			fill(fh);
		pthread_mutex_unlock(&fh->mu);
		zrfs_fh_put(fs, fh);
	}
	free(open);
}
