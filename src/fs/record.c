/*
 * record.c - records/I.npy.  The kernel caches these pages (keep_cache),
 * so the daemon fills a handle's buffer only on its first read, and again
 * when a delete has changed records since (the store's generation).  Reads
 * reply under the store's read lock so a reply can never land in the page
 * cache after a delete's invalidation.
 */
#include <errno.h>
#include <stdlib.h>

#include "files.h"
#include "layout.h"
#include "ns.h"

int zr__record_open(struct zr__fs *fs, struct zr__fh *fh)
{
	struct zr__node *n = fh->node;

	(void)fs;
	if (n->idx >= zr__st_length(n->st))
		return -ENOENT;
	return zr__fh_pin(fh, &n->st, 1);
}

/* Caller holds fh->mu and the store's read lock. */
static int refill(struct zr__fh *fh)
{
	struct zr__fstore *st = fh->node->st;
	uint64_t size;
	int err = zr__rec_size(st, fh->node->idx, &size);

	if (err)
		return err;
	if (size > fh->cap) {
		char *p = realloc(fh->buf, size);

		if (!p)
			return -ENOMEM;
		fh->buf = p;
		fh->cap = size;
	}
	fh->filled = 0;
	err = zr__rec_fill(st, fh->node->idx, fh->buf, size);
	if (err)
		return err;
	fh->len = size;
	fh->gen = st->gen;
	fh->filled = 1;
	return 0;
}

void zr__record_read(fuse_req_t req, struct zr__fh *fh, size_t size,
		     off_t off)
{
	struct zr__fstore *st = fh->node->st;
	int err = 0;

	pthread_mutex_lock(&fh->mu);
	pthread_rwlock_rdlock(&st->rw);
	if (!fh->filled || fh->gen != st->gen)
		err = refill(fh);
	if (err) {
		zr__elog_add(&st->log, st->path, "records/%llu.npy: %s",
			     (unsigned long long)fh->node->idx,
			     *zr_errmsg() ? zr_errmsg() : zr_strerror(err));
		fuse_reply_err(req, zr_errno(err));
	} else {
		zr__fh_reply(req, fh, size, off);
	}
	pthread_rwlock_unlock(&st->rw);
	pthread_mutex_unlock(&fh->mu);
}
