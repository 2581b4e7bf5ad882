/*
 * batch.c - batch files (a store's batch/..., a dataset's @batch/...):
 * the whole file is gathered once at open into the handle's buffer, which
 * reads then answer from without another copy (direct_io), until release.
 */
#include <errno.h>
#include <stdlib.h>

#include "files.h"
#include "layout.h"

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
	int err = zr__fh_pin(fh, st, k);

	if (err)
		return err;
	zr__batch_lock(n);
	err = zr__plan_make(fs, n, &p);
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
	zr__batch_unlock(n);
	if (err && err != -ENOENT)
		log_failure(n, err);
	return err;
}
