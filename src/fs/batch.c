/*
 * batch.c - batch files (a store's batch/..., a dataset's @batch/...):
 * the whole file is gathered once at open into the handle's buffer, which
 * reads then answer from without another copy (direct_io), until release.
 * The file is the batch its node was looked up with, drawn from the
 * records the stores had then (appends since change nothing).  After a
 * delete or compact the batch is drawn anew; if its size differs from the
 * node's (ragged stores), open fails with ESTALE and the kernel looks the
 * name up again.
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

int zr__batch_open(struct zr__fs *fs, struct zr__fh *fh)
{
	const struct zr__node *n = fh->node;
	struct zr__fstore *const *st;
	size_t k = zr__batch_stores(n, &st);
	struct zr__plan p;
	int err = zr__st_rdlock_all(st, k);

	if (err)
		return err;
	/* Appends since the lookup change nothing in the node's batch: it
	 * samples the records the stores had then, which are as they were
	 * unless a delete or compact came between.  After one, the batch is
	 * drawn anew, and served if it has the node's size (a dense batch
	 * always has). */
	err = zr__plan_make(fs, n, &p, 0, zr__batch_gen(n) == n->ver[1] ?
					  n->ver[0] : 0);
	if (!err && p.total != n->size) {
		zr__plan_free(&p);
		err = -ESTALE;
	}
	if (err == -ENOENT)
		err = -ESTALE;
	if (err)
		goto out;
	fh->buf = zr__buf_get(p.total, &fh->cap);
	fh->cached = 1;
	if (!fh->buf) {
		err = -ENOMEM;
		goto out_plan;
	}
	err = zr__plan_fill(&p, fh->buf);
	fh->len = p.total;
out_plan:
	zr__plan_free(&p);
out:
	zr__st_unlock_all(st, k);
	if (err && err != -ESTALE && err != ZR__E_PARK)
		log_failure(n, err);
	return err;
}
