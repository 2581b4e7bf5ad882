/*
 * record.c - records/I.npy.  Open copies the record's file bytes into the
 * handle, so every read of the handle serves that one record whole,
 * whatever deletes or compacts happen before it is closed, and reads need
 * no store lock.  The kernel may keep the pages (keep_cache): a node's
 * content never changes (see Contents in fs.h).
 */
#include <errno.h>
#include <stdlib.h>

#include "files.h"
#include "layout.h"
#include "stlock.h"

int zr__record_open(struct zr__fh *fh)
{
	struct zr__node *n = fh->node;
	struct zr__fstore *st = n->st;
	uint64_t size;
	int err = zr__st_rdlock(st);

	if (err)
		return err;
	err = zr__rec_size(st, n->idx, &size);
	/* The name shows other bytes now.  Of another size: the kernel must
	 * look the name up again.  Of the same size, this open can serve
	 * them, past the node's page cache (which holds the old bytes). */
	if (err == -ENOENT || (!err && size != n->size))
		err = -ESTALE;
	else if (!err && !zr__rec_current(st, n))
		fh->uncached = 1;
	if (!err && !(fh->buf = malloc(size ? size : 1)))
		err = -ENOMEM;
	if (!err)
		err = zr__rec_fill(st, n->idx, fh->buf, size);
	zr__st_unlock(st);
	if (!err)
		fh->len = size;
	else if (err != -ESTALE && err != ZR__E_PARK)
		zr__elog_add(&st->log, st->path, "records/%llu.npy: %s",
			     (unsigned long long)n->idx,
			     *zr_errmsg() ? zr_errmsg() : zr_strerror(err));
	return err;
}
