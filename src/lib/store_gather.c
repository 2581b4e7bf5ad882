/*
 * store_gather.c - the read path: batched gathers straight into the
 * caller's buffer (fanned out over the pool), their size, and a ragged
 * record's shape without decoding its payload.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "codec.h"
#include "error.h"
#include "pool.h"
#include "s3_cache.h"
#include "store_stage.h"
#include "store_view.h"

/* Bytes worth handing to another lane (the smallest chunk; a batch of at
 * most this much runs on the caller alone): an idle worker joins within a
 * microsecond or two, about the time it takes to copy this much, or to
 * decode a quarter of it. */
#define ZR__GRAIN_RAW (32u << 10)
#define ZR__GRAIN_ZSTD (8u << 10)

struct gather {
	zr_store *s;
	const uint64_t *idx;
	uint8_t *dst;
	const uint64_t *offsets; /* ragged boundaries, NULL for dense */
	const uint8_t **staged;	/* record k's stored bytes, or NULL  */
	/* What every lane validates with and reads through (the mappings
	 * current when it was taken cover it, and the guard covers them). */
	struct zr__snap sn;
};

/* Adds which record to the message of a failed prefix check. */
static int record_corrupt(const zr_store *s, uint64_t idx)
{
	char why[ZR__MSG_MAX];

	snprintf(why, sizeof(why), "%s", zr_errmsg());
	return zr__fail(ZR_E_CORRUPT, "%s/data.zr: record %" PRIu64 ": %s",
			s->path, idx, why);
}

/* Validates the shape prefix of a decoded ragged record. */
static int ragged_check(const zr_store *s, uint64_t idx, const uint8_t *rec,
			size_t len)
{
	uint32_t ndim;

	if (!zr__ragged_head(rec, len, len, s->schema.dtype.itemsize, &ndim,
			     NULL, NULL))
		return 0;
	return record_corrupt(s, idx);
}

/* Records resolved at once: their table entries are independent loads, so
 * looking them all up before copying overlaps the cache misses that one
 * lookup per copy would pay in turn. */
#define ZR__GATHER_RUN 16

/* Decodes records [b, e) whose entries are l[0..e-b). */
static int gather_run(const struct gather *g, size_t b, size_t e,
		      const zr_loc *l)
{
	const zr_store *s = g->s;
	int err = 0;

	for (size_t k = b; !err && k < e; k++) {
		const zr_loc *lk = &l[k - b];
		uint8_t *dst = g->offsets ? g->dst + g->offsets[k]
					  : g->dst + k * s->row_bytes;

		err = g->staged ?
		      zr__record_from(s, g->idx[k], lk, g->staged[k], dst) :
		      zr__record_read(s, g->sn.data, g->idx[k], lk, dst);
		if (!err && g->offsets)
			err = ragged_check(s, g->idx[k], dst, lk->logic_length);
	}
	return err;
}

/* Warms the table entries of the run after [.., b) while this one is
 * copied. */
static void prefetch_locs(const struct gather *g, size_t b, size_t e)
{
	const uint8_t *meta = g->sn.meta->base;

	for (size_t k = b; k < e && k < b + ZR__GATHER_RUN; k++)
		if (g->idx[k] < g->sn.len)
			__builtin_prefetch(meta + zr__loc_pos(g->idx[k]));
}

/* Starts loading the first bytes of n validated records: each is a
 * random place in data.zr, so this overlaps their TLB and cache misses
 * instead of paying them one copy at a time (a prefetch never faults). */
static void prefetch_heads(const struct gather *g, const zr_loc *l, size_t n)
{
	if (!g->sn.data->base) /* a backend without map reads them */
		return;
	for (size_t k = 0; k < n; k++)
		__builtin_prefetch(g->sn.data->base + l[k].offset);
}

/* Gathers records [b, e), reading the mappings without a guard. */
static int gather_records(const struct gather *g, size_t b, size_t e)
{
	zr_loc l[ZR__GATHER_RUN];
	int err = 0;

	while (!err && b < e) {
		size_t n = e - b < ZR__GATHER_RUN ? e - b : ZR__GATHER_RUN;
		size_t ok = 0;

		prefetch_locs(g, b + n, e);
		while (!err && ok < n) {
			err = zr__snap_loc(g->s, &g->sn, g->idx[b + ok],
					   &l[ok]);
			ok += !err;
		}
		/* Records before a bad entry still fail first, as they
		 * would one at a time. */
		if (ok) {
			int derr;

			prefetch_heads(g, l, ok);
			derr = gather_run(g, b, b + ok, l);

			err = derr ? derr : err;
		}
		b += n;
	}
	return err;
}

struct block {
	const struct gather *g;
	size_t b, e;
};

static int block_load(void *arg)
{
	const struct block *k = arg;

	return gather_records(k->g, k->b, k->e);
}

/* A pool chunk.  With the guard on it arms once for the chunk rather
 * than twice a record (the sigsetjmp would cost as much as copying a
 * small record); a fault fails the chunk, so the gather. */
static int gather_block(void *ctx, size_t b, size_t e, unsigned lane)
{
	const struct gather *g = ctx;
	struct block k = { g, b, e };

	(void)lane;
	return zr__maps_read(g->s, g->sn.meta, g->sn.data, block_load, &k);
}

static int dense_bounds(const zr_store *s, size_t count, size_t cap)
{
	if (count > SIZE_MAX / s->row_bytes || count * s->row_bytes > cap)
		return zr__fail(-EINVAL, "%s: gather of %zu rows of %zu bytes "
				"needs more than dst_cap %zu", s->path, count,
				s->row_bytes, cap);
	return 0;
}

/* The stored lengths of records idx[0..count): their sum, and with
 * offsets its running sums (offsets[0] = 0, offsets[k + 1] = the first k
 * + 1 records' bytes). */
struct lengths {
	const struct gather *g;
	size_t count;
	uint64_t *offsets;	/* count + 1, or NULL */
	uint64_t sum;
};

static int lengths_load(void *arg)
{
	struct lengths *a = arg;
	const struct gather *g = a->g;

	a->sum = 0;
	if (a->offsets)
		a->offsets[0] = 0;
	for (size_t k = 0; k < a->count; k++) {
		zr_loc l;
		int err = zr__snap_loc(g->s, &g->sn, g->idx[k], &l);

		if (err)
			return err;
		a->sum += l.logic_length;
		if (a->offsets)
			a->offsets[k + 1] = a->sum;
	}
	return 0;
}

/* The boundaries of a ragged gather: every entry read under one guard. */
static int ragged_bounds(const struct gather *g, size_t count,
			 uint64_t *offsets, size_t cap)
{
	struct lengths a = { g, count, offsets, 0 };
	int err = zr__maps_read(g->s, g->sn.meta, NULL, lengths_load, &a);

	if (err)
		return err;
	if (offsets[count] > cap)
		return zr__fail(-EINVAL, "%s: gather needs %" PRIu64 " bytes, "
				"dst_cap is %zu", g->s->path, offsets[count],
				cap);
	return 0;
}

static size_t grain(const zr_store *s, uint64_t bytes, size_t count)
{
	uint64_t avg = bytes / count + 1;
	uint64_t want = s->codec == ZR_CODEC_RAW ? ZR__GRAIN_RAW
						 : ZR__GRAIN_ZSTD;

	return (size_t)(want / avg + 1);
}

/* The store's snapshot: now (v NULL, an implicit view for one call) or
 * view v's.  The caller holds rw shared. */
static void snap_take(zr_store *s, const zr_view *v, struct zr__snap *out)
{
	if (v)
		zr__view_snap(v, out);
	else
		zr__snap_now(s, out);
}

static int gather(zr_store *s, const zr_view *v, const uint64_t *idx,
		  size_t count, void *dst, size_t dst_cap, uint64_t *offsets)
{
	struct gather g = { .s = s, .idx = idx, .dst = dst };
	struct zr__stage st = { 0 };
	int err;

	zr__clear();
	if (s->schema.ragged && !offsets)
		return zr__fail(-EINVAL, "%s: ragged gather needs offsets",
				s->path);
	if (count == 0) {
		if (s->schema.ragged)
			offsets[0] = 0;
		return 0;
	}
	if (!idx || !dst)
		return zr__fail(-EINVAL, "%s: gather: NULL idx or dst",
				s->path);
	err = zr__view_rdlock(s, v);
	if (err)
		return err;
	snap_take(s, v, &g.sn);
	if (s->schema.ragged) {
		g.offsets = offsets;
		err = ragged_bounds(&g, count, offsets, dst_cap);
	} else {
		err = dense_bounds(s, count, dst_cap);
	}
	/* A backend without map: the batch's bytes first, all at once. */
	if (!err)
		err = zr__stage_fetch(s, &g.sn, idx, count, &st);
	g.staged = st.src;
	/* Each lane arms its guard inside gather_block, below this frame:
	 * a fault's jump lands there, and the rwlock is still released
	 * here. */
	if (!err)
		err = zr__pool_run(gather_block, &g, count,
				   grain(s, g.offsets ? offsets[count]
						      : count * s->row_bytes,
					 count));
	pthread_rwlock_unlock(&s->rw);
	zr__stage_free(&st);
	return err;
}

int zr_store_gather(zr_store *s, const uint64_t *idx, size_t count,
		    void *dst, size_t dst_cap, uint64_t *offsets)
{
	return gather(s, NULL, idx, count, dst, dst_cap, offsets);
}

int zr_view_gather(zr_view *v, const uint64_t *idx, size_t count, void *dst,
		   size_t dst_cap, uint64_t *offsets)
{
	return gather(v->s, v, idx, count, dst, dst_cap, offsets);
}

/* The records' stored bytes staged and let go: through the host cache,
 * which keeps them.  A mapped data.zr stages nothing. */
int zr_view_warm(zr_view *v, const uint64_t *idx, size_t count)
{
	struct zr__stage st = { 0 };
	struct zr__snap sn;
	zr_store *s = v->s;
	int err;

	zr__clear();
	if (count && !idx)
		return zr__fail(-EINVAL, "%s: warm: NULL idx", s->path);
	if (count < 2 || s->file[ZR__DATA]->io->map || !zr__cache_on())
		return 0;
	err = zr__view_rdlock(s, v);
	if (err)
		return err;
	snap_take(s, v, &sn);
	err = zr__stage_fetch(s, &sn, idx, count, &st);
	pthread_rwlock_unlock(&s->rw);
	zr__stage_free(&st);
	return err;
}

static int gather_size(zr_store *s, const zr_view *v, const uint64_t *idx,
		       size_t count, uint64_t *out)
{
	struct gather g = { .s = s, .idx = idx };
	struct lengths a = { &g, count, NULL, 0 };
	int err;

	zr__clear();
	if (count && !idx)
		return zr__fail(-EINVAL, "%s: gather_size: NULL idx",
				s->path);
	err = zr__view_rdlock(s, v);
	if (err)
		return err;
	snap_take(s, v, &g.sn);
	/* One guard for the call: the rwlock is taken and released out
	 * here, so a fault's jump never leaves it held. */
	err = zr__maps_read(s, g.sn.meta, NULL, lengths_load, &a);
	pthread_rwlock_unlock(&s->rw);
	if (!err)
		*out = a.sum;
	return err;
}

int zr_store_gather_size(zr_store *s, const uint64_t *idx, size_t count,
			 uint64_t *out)
{
	return gather_size(s, NULL, idx, count, out);
}

int zr_view_gather_size(zr_view *v, const uint64_t *idx, size_t count,
			uint64_t *out)
{
	return gather_size(v->s, v, idx, count, out);
}

struct head_read {
	const zr_store *s;
	const zr_loc *l;
	const uint8_t *src;
	uint8_t *head;
	size_t want;
	const char *what;
};

static int head_load(void *arg)
{
	const struct head_read *r = arg;

	if (r->s->codec == ZR_CODEC_RAW) {
		memcpy(r->head, r->src, r->want);
		return 0;
	}
	return zr__decode_head(r->s->ddict, r->src, r->l->phys_length,
			       r->head, r->want, r->what);
}

static int read_head(zr_store *s, const struct zr__snap *sn, uint64_t idx,
		     uint32_t *ndim, uint64_t *shape)
{
	uint8_t head[ZR__RAGGED_HEAD_MAX];
	zr_loc l;
	char what[64];
	struct head_read r = { .s = s, .l = &l, .head = head, .what = what };
	uint8_t *buf = NULL;
	int err = zr__snap_loc_get(s, sn, idx, &l);

	if (!err)
		err = zr__record_src(s, sn->data, &l, &r.src, &buf);
	if (err)
		return err;
	r.want = l.logic_length < sizeof(head) ? l.logic_length : sizeof(head);
	snprintf(what, sizeof(what), "data.zr record %" PRIu64, idx);
	err = zr__map_read(s, sn->data, ZR__DATA, idx, head_load, &r);
	free(buf);
	if (err)
		return err;
	if (zr__ragged_head(head, r.want, l.logic_length,
			    s->schema.dtype.itemsize, ndim, shape, NULL))
		return record_corrupt(s, idx);
	return 0;
}

static int ragged_shape(zr_store *s, const zr_view *v, uint64_t idx,
			uint32_t *ndim, uint64_t shape[ZR_MAX_NDIM])
{
	struct zr__snap sn;
	uint64_t dims[ZR_MAX_NDIM];
	uint32_t n;
	int err;

	zr__clear();
	if (!s->schema.ragged)
		return zr__fail(-EINVAL, "%s: not a ragged store", s->path);
	err = zr__view_rdlock(s, v);
	if (err)
		return err;
	snap_take(s, v, &sn);
	err = read_head(s, &sn, idx, &n, dims);
	pthread_rwlock_unlock(&s->rw);
	if (err)
		return err;
	*ndim = n;
	if (shape)
		memcpy(shape, dims, n * sizeof(dims[0]));
	return 0;
}

int zr_ragged_shape(zr_store *s, uint64_t idx, uint32_t *ndim,
		    uint64_t shape[ZR_MAX_NDIM])
{
	return ragged_shape(s, NULL, idx, ndim, shape);
}

int zr_view_ragged_shape(zr_view *v, uint64_t idx, uint32_t *ndim,
			 uint64_t shape[ZR_MAX_NDIM])
{
	return ragged_shape(v->s, v, idx, ndim, shape);
}
