/*
 * store_view.c - read views: a reader's own snapshot of the record table,
 * as an LMDB read transaction is (zrecord.h, Views).  A view keeps the
 * length and the delete epoch it began at.  A delete that runs while a
 * view lives first saves the table entries it will overwrite or leave past
 * the new length (where an append would overwrite them) in the delete log,
 * newest first; a view reads an index from the oldest saved entry of the
 * deletes after it began, else from the table, which nothing has changed
 * there since.  Data bytes are never reused but by compact, which refuses
 * while a view needs the log.  The log's oldest end is freed as the views
 * that need it end.
 *
 * Lock order (store.h): rw, then view_lock.  Delete and compact hold rw
 * exclusive; begin holds it shared for an instant (never waiting unless
 * asked); end takes view_lock alone, so it never waits for a delete.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "error.h"
#include "store_view.h"

/* Saved entries, all views together (24 bytes each: 96 MiB): past it a
 * delete fails rather than let open views grow memory without end. */
#define ZR__DLOG_MAX ((uint64_t)1 << 22)

void zr__snap_now(const zr_store *s, struct zr__snap *out)
{
	/* In the order commit publishes them in reverse (store.h). */
	out->len = zr__length(s);
	out->tail = zr__tail(s);
	out->meta = zr__map_of(s, ZR__META);
	out->data = zr__map_of(s, ZR__DATA);
	out->log = NULL;
	out->depth = 0;
}

void zr__view_snap(const zr_view *v, struct zr__snap *out)
{
	const zr_store *s = v->s;

	zr__snap_now(s, out);
	out->len = v->len;
	out->depth = s->epoch - v->epoch;
	if (out->depth)
		out->log = atomic_load_explicit(&s->dlog,
						memory_order_acquire);
}

static const uint8_t *log_find(const struct zr__dlog *d, uint64_t idx)
{
	size_t lo = 0, hi = d->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->ent[mid].idx == idx)
			return d->ent[mid].loc;
		if (d->ent[mid].idx < idx)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Walks exactly depth records, newest first: the `older` link of the
 * oldest one it needs is the one view_end may cut meanwhile, and it is
 * never read here. */
int zr__view_loc(const zr_store *s, const struct zr__snap *sn, uint64_t idx,
		 zr_loc *out)
{
	const struct zr__dlog *d = sn->log;
	const uint8_t *b = NULL;

	if (idx >= sn->len)
		return zr__fail(ZR_E_RANGE, "%s: index %" PRIu64
				" out of range (view length %" PRIu64 ")",
				s->path, idx, sn->len);
	for (uint64_t k = 0; k < sn->depth; k++) {
		const uint8_t *hit = log_find(d, idx);

		b = hit ? hit : b;
		if (k + 1 < sn->depth)
			d = atomic_load_explicit(&d->older,
						 memory_order_acquire);
	}
	if (!b)
		b = sn->meta->base + zr__loc_pos(idx);
	return zr__loc_decode(s, idx, sn->tail, b, out);
}

int zr_view_begin(zr_store *s, unsigned flags, zr_view **out)
{
	zr_view *v;

	zr__clear();
	if (!s || !out || (flags & ~(unsigned)(ZR_VIEW_WAIT | ZR_VIEW_TRY)))
		return zr__fail(-EINVAL, "zr_view_begin: bad arguments");
	v = calloc(1, sizeof(*v));
	if (!v)
		return zr__fail(-ENOMEM, "%s: no memory for a view", s->path);
	if (flags & ZR_VIEW_WAIT) {
		pthread_rwlock_rdlock(&s->rw);
	} else if (pthread_rwlock_tryrdlock(&s->rw)) {
		free(v);
		return zr__fail(ZR_E_BUSY, "%s: view: a delete or compact is "
				"running; retry once it is done (or begin with "
				"ZR_VIEW_WAIT to wait for it)", s->path);
	}
	v->s = s;
	v->try_only = !!(flags & ZR_VIEW_TRY);
	v->len = zr__length(s);
	v->epoch = s->epoch;
	pthread_mutex_lock(&s->view_lock);
	v->older = s->newest;
	if (s->newest)
		s->newest->newer = v;
	else
		s->oldest = v;
	s->newest = v;
	s->nviews++;
	pthread_mutex_unlock(&s->view_lock);
	pthread_rwlock_unlock(&s->rw);
	*out = v;
	return 0;
}

/* Cuts the log after the records some live view still needs (those newer
 * than the oldest view); the caller frees what it returns. */
static struct zr__dlog *log_cut(zr_store *s)
{
	uint64_t keep = s->oldest ? s->oldest->epoch : UINT64_MAX;
	struct zr__dlog *d = atomic_load_explicit(&s->dlog,
						  memory_order_relaxed);
	struct zr__dlog *newer = NULL;

	while (d && d->epoch > keep) {
		newer = d;
		d = atomic_load_explicit(&d->older, memory_order_relaxed);
	}
	if (!d)
		return NULL;
	if (newer)
		atomic_store_explicit(&newer->older, NULL,
				      memory_order_relaxed);
	else
		atomic_store_explicit(&s->dlog, NULL, memory_order_relaxed);
	for (struct zr__dlog *c = d; c;
	     c = atomic_load_explicit(&c->older, memory_order_relaxed))
		s->dlog_entries -= c->n;
	return d;
}

void zr__log_drop(struct zr__dlog *log)
{
	while (log) {
		struct zr__dlog *older = atomic_load_explicit(
			&log->older, memory_order_relaxed);

		free(log->ent);
		free(log);
		log = older;
	}
}

void zr_view_end(zr_view *v)
{
	zr_store *s;
	struct zr__dlog *cut;

	if (!v)
		return;
	s = v->s;
	pthread_mutex_lock(&s->view_lock);
	if (v->newer)
		v->newer->older = v->older;
	else
		s->newest = v->older;
	if (v->older)
		v->older->newer = v->newer;
	else
		s->oldest = v->newer;
	s->nviews--;
	cut = log_cut(s);
	pthread_mutex_unlock(&s->view_lock);
	zr__log_drop(cut);
	free(v);
}

uint64_t zr_view_length(const zr_view *v)
{
	return v->len;
}

uint64_t zr_view_epoch(const zr_view *v)
{
	return v->epoch;
}

zr_store *zr_view_store(const zr_view *v)
{
	return v->s;
}

int zr__view_rdlock(zr_store *s, const zr_view *v)
{
	if (!v || !v->try_only) {
		pthread_rwlock_rdlock(&s->rw);
		return 0;
	}
	if (pthread_rwlock_tryrdlock(&s->rw) == 0)
		return 0;
	return zr__fail(ZR_E_BUSY, "%s: a delete or compact is running; "
			"retry once it is done (a ZR_VIEW_TRY view)", s->path);
}

int zr_view_loc(zr_view *v, uint64_t idx, zr_loc *out)
{
	zr_store *s = v->s;
	struct zr__snap sn;
	zr_loc l;
	int err;

	zr__clear();
	err = zr__view_rdlock(s, v);
	if (err)
		return err;
	zr__view_snap(v, &sn);
	err = zr__snap_loc_get(s, &sn, idx, &l);
	pthread_rwlock_unlock(&s->rw);
	if (!err)
		*out = l;
	return err;
}

/* The entries of sorted[0..n) (descending, unique) below keep, then every
 * entry of [keep, len): ascending, each as the table holds it now. */
static void log_fill(const zr_store *s, const uint64_t *sorted, size_t n,
		     uint64_t keep, uint64_t len, struct zr__dlog_ent *e)
{
	const uint8_t *meta = zr__map_of(s, ZR__META)->base;
	size_t k = 0;

	for (size_t i = n; i-- > 0;)
		if (sorted[i] < keep)
			e[k++].idx = sorted[i];
	for (uint64_t i = keep; i < len; i++)
		e[k++].idx = i;
	for (size_t i = 0; i < k; i++)
		memcpy(e[i].loc, meta + zr__loc_pos(e[i].idx), ZR__LOC);
}

int zr__log_make(zr_store *s, const uint64_t *sorted, size_t n, uint64_t len,
		 struct zr__dlog **out)
{
	uint64_t keep = len - n, views, held;
	size_t below = 0, total;
	struct zr__dlog *d;

	*out = NULL;
	pthread_mutex_lock(&s->view_lock);
	views = s->nviews;
	held = s->dlog_entries;
	pthread_mutex_unlock(&s->view_lock);
	if (!views)
		return 0;
	for (size_t i = 0; i < n; i++)
		below += sorted[i] < keep;
	total = below + n;
	if (held + total > ZR__DLOG_MAX)
		return zr__fail(ZR_E_BUSY, "%s: delete: %" PRIu64 " open "
				"view%s already keep %" PRIu64 " deleted table "
				"entries and this delete would keep %zu more, "
				"past the bound of %" PRIu64 ": end the views "
				"(close the files or loaders reading the "
				"store) and retry", s->path, views,
				views == 1 ? "" : "s", held, total,
				ZR__DLOG_MAX);
	d = calloc(1, sizeof(*d));
	if (d)
		d->ent = malloc(total * sizeof(*d->ent));
	if (!d || !d->ent) {
		free(d);
		return zr__fail(-ENOMEM, "%s: delete: no memory for the "
				"entries of %" PRIu64 " open views", s->path,
				views);
	}
	d->n = total;
	log_fill(s, sorted, n, keep, len, d->ent);
	*out = d;
	return 0;
}

void zr__log_publish(zr_store *s, struct zr__dlog *log,
		      const uint64_t *sorted, size_t n)
{
	pthread_mutex_lock(&s->view_lock);
	s->epoch++;
	zr__changes_add(s, sorted, n, zr__length(s));
	/* The views it was made for may all have ended meanwhile. */
	if (log && s->nviews) {
		log->epoch = s->epoch;
		atomic_store_explicit(&log->older,
				      atomic_load_explicit(&s->dlog,
							   memory_order_relaxed),
				      memory_order_relaxed);
		atomic_store_explicit(&s->dlog, log, memory_order_release);
		s->dlog_entries += log->n;
		log = NULL;
	}
	pthread_mutex_unlock(&s->view_lock);
	zr__log_drop(log);
}

int zr__views_block(zr_store *s, const char *what)
{
	uint64_t n = 0;

	pthread_mutex_lock(&s->view_lock);
	for (const zr_view *v = s->oldest; v && v->epoch < s->epoch;
	     v = v->newer)
		n++;
	pthread_mutex_unlock(&s->view_lock);
	if (!n)
		return 0;
	return zr__fail(ZR_E_BUSY, "%s: %s: %" PRIu64 " open view%s began "
			"before the last delete and still read records whose "
			"bytes it would move; nothing was changed: end %s "
			"(close the files or loaders reading the store) and "
			"retry", s->path, what, n, n == 1 ? "" : "s",
			n == 1 ? "it" : "them");
}

void zr__views_free(zr_store *s)
{
	zr__changes_free(s);
	zr__log_drop(atomic_load_explicit(&s->dlog, memory_order_relaxed));
	atomic_store_explicit(&s->dlog, NULL, memory_order_relaxed);
}

struct loc_args {
	const zr_store *s;
	const struct zr__snap *sn;
	uint64_t idx;
	zr_loc *out;
};

static int loc_load(void *arg)
{
	const struct loc_args *a = arg;

	return zr__snap_loc(a->s, a->sn, a->idx, a->out);
}

int zr__snap_loc_get(const zr_store *s, const struct zr__snap *sn,
		     uint64_t idx, zr_loc *out)
{
	struct loc_args a = { s, sn, idx, out };

	if (!zr__guard_enabled())
		return zr__snap_loc(s, sn, idx, out);
	return zr__map_read_guarded(s, sn->meta, ZR__META, idx, loc_load, &a);
}
