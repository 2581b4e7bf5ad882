/*
 * store_append.c - append sessions.  Records are staged past the committed
 * frontier: payloads at a session-private data.zr frontier, table entries
 * at 4096 + 16 * (length + staged), both written as they are produced so
 * memory stays bounded by the per-lane buffers.  Nothing is visible until
 * commit publishes tail and length.  Abort or failure forgets the session
 * frontier and truncates data.zr back to the committed one; table entries
 * past length are garbage that the next append overwrites.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <sys/uio.h>

#include "append.h"
#include "codec.h"
#include "error.h"
#include "pool.h"
#include "store_io.h"

#define ZR__DICT_LEVEL 19
/* Table entries a lane collects before one pwrite. */
#define ZR__ENT_BATCH 4096

/* One staging call fanned out over the pool. */
struct stage {
	zr_append *a;
	const uint8_t *rows;       /* dense */
	const zr_ragged_in *recs;  /* ragged */
	uint64_t first;            /* table index of item 0 */
};

static void session_free(zr_append *a)
{
	for (unsigned i = 0; a->lanes && i < a->nlanes; i++) {
		free(a->lanes[i].buf);
		free(a->lanes[i].ents);
	}
	free(a->lanes);
	pthread_mutex_destroy(&a->lock);
	atomic_store(&a->s->appending, 0);
	free(a);
}

/* Gives back the disk space of records that will never be published, so
 * that an append that ran out of space leaves room for smaller ones. */
static void drop_staged(zr_append *a)
{
	uint64_t tail = zr__tail(a->s);
	int rc = 0;

	if (a->frontier > tail)
		rc = zr__io_truncate(a->s->file[ZR__DATA], tail);
	(void)rc; /* best effort: the bytes are garbage either way */
}

int zr__append_fail(zr_append *a, int err)
{
	zr__error_capture(&a->failure, err);
	return err;
}

static int make_cdict(zr_store *s)
{
	if (s->codec != ZR_CODEC_ZSTD_DICT || s->cdict)
		return 0;
	s->cdict = ZSTD_createCDict(s->dict, s->dict_len, ZR__DICT_LEVEL);
	if (!s->cdict)
		return zr__fail(ZR_E_CODEC, "%s/dict.zr: cannot build a "
				"compression dictionary", s->path);
	return 0;
}

static int claim_session(zr_store *s)
{
	int idle = 0, ok;

	/* Under the lock so that delete and compact see the flag. */
	pthread_rwlock_rdlock(&s->rw);
	ok = atomic_compare_exchange_strong(&s->appending, &idle, 1);
	pthread_rwlock_unlock(&s->rw);
	if (!ok)
		return zr__fail(-EBUSY, "%s: an append session is already "
				"open", s->path);
	return 0;
}

int zr_store_appending(const zr_store *s)
{
	return atomic_load(&s->appending);
}

int zr_append_begin(zr_store *s, zr_append **out)
{
	zr_append *a;
	int err;

	zr__clear();
	err = zr__writable(s, "append");
	if (!err)
		err = claim_session(s);
	if (err)
		return err;
	/* Before the first payload lands where another writer's may be. */
	pthread_mutex_lock(&s->sync_lock);
	err = zr__guard_check(s, "append");
	pthread_mutex_unlock(&s->sync_lock);
	if (err) {
		atomic_store(&s->appending, 0);
		return err;
	}
	a = calloc(1, sizeof(*a));
	if (!a) {
		atomic_store(&s->appending, 0);
		return zr__fail(-ENOMEM, "%s: no memory", s->path);
	}
	a->s = s;
	pthread_mutex_init(&a->lock, NULL);
	a->base = zr__length(s);
	a->frontier = zr__tail(s);
	a->nlanes = zr__pool_lanes();
	a->lanes = calloc(a->nlanes, sizeof(*a->lanes));
	err = a->lanes ? make_cdict(s)
		       : zr__fail(-ENOMEM, "%s: no memory", s->path);
	if (err) {
		session_free(a);
		return err;
	}
	*out = a;
	return 0;
}

int zr__append_reserve(zr_append *a, size_t len, uint64_t *off)
{
	int err = 0;

	pthread_mutex_lock(&a->lock);
	if (a->frontier > (uint64_t)INT64_MAX - len)
		err = -EFBIG;
	*off = a->frontier;
	a->frontier += err ? 0 : len;
	/* Ahead of the write: a sync meanwhile must not take it for
	 * another writer's. */
	if (atomic_load(&a->s->data_seen) < a->frontier)
		atomic_store(&a->s->data_seen, a->frontier);
	pthread_mutex_unlock(&a->lock);
	if (err)
		return zr__fail(err, "%s/data.zr: would grow past the largest "
				"file offset", a->s->path);
	return 0;
}

static int pwrite2(zr_store *s, const void *head, size_t hl,
		   const void *body, size_t bl, uint64_t off)
{
	struct iovec iov[2] = { { (void *)head, hl }, { (void *)body, bl } };
	const uint8_t *h = head, *b = body;
	ssize_t n;
	size_t done;
	int err;

	struct zr__file *f = s->file[ZR__DATA];

	do
		n = f->io->writev ? f->io->writev(f, iov, 2, off) : 0;
	while (n == -EINTR);
	/* Let the retrying writer finish a short or failed write. */
	done = n < 0 ? 0 : (size_t)n;
	if (done < hl) {
		err = zr__pwrite_all(s, ZR__DATA, h + done, hl - done,
				     off + done);
		return err ? err : zr__pwrite_all(s, ZR__DATA, b, bl,
						  off + hl);
	}
	return zr__pwrite_all(s, ZR__DATA, b + (done - hl), bl - (done - hl),
			      off + done);
}

/* The bytes of item k: an optional shape prefix and the payload. */
static void item_bytes(const struct stage *st, size_t k, uint8_t *head,
		       size_t *hl, const void **body, size_t *bl)
{
	const zr_store *s = st->a->s;
	const zr_ragged_in *r;
	uint64_t elems = 1;

	if (s->row_bytes) {
		*hl = 0;
		*body = st->rows + k * s->row_bytes;
		*bl = s->row_bytes;
		return;
	}
	r = &st->recs[k];
	zr__put64(head, r->ndim);
	for (uint32_t i = 0; i < r->ndim; i++) {
		zr__put64(head + 8 + 8 * i, r->shape[i]);
		elems *= r->shape[i];
	}
	*hl = 8 + 8 * (size_t)r->ndim;
	*body = r->data;
	*bl = (size_t)elems * s->schema.dtype.itemsize;
}

static int grow(struct lane_buf *lb, size_t need, const char *path)
{
	uint8_t *p;

	if (lb->cap >= need)
		return 0;
	p = realloc(lb->buf, need);
	if (!p)
		return zr__fail(-ENOMEM, "%s: no memory for a %zu-byte frame",
				path, need);
	lb->buf = p;
	lb->cap = need;
	return 0;
}

static int stage_one(const struct stage *st, size_t k, struct lane_buf *lb,
		     zr_loc *l)
{
	zr_store *s = st->a->s;
	uint8_t head[ZR__RAGGED_HEAD_MAX];
	const void *body;
	size_t hl, bl, n;
	int err;

	item_bytes(st, k, head, &hl, &body, &bl);
	l->logic_length = (uint32_t)(hl + bl);
	if (s->codec == ZR_CODEC_RAW) {
		l->phys_length = l->logic_length;
		err = zr__append_reserve(st->a, hl + bl, &l->offset);
		return err ? err : pwrite2(s, head, hl, body, bl, l->offset);
	}
	err = grow(lb, ZSTD_compressBound(hl + bl), s->path);
	if (!err)
		err = zr__encode(s->cdict, head, hl, body, bl, lb->buf,
				 lb->cap, &n);
	if (!err && n > UINT32_MAX)
		err = zr__fail(ZR_E_TOOBIG, "%s: frame of %zu bytes", s->path,
			       n);
	if (!err)
		err = zr__append_reserve(st->a, n, &l->offset);
	if (err)
		return err;
	l->phys_length = (uint32_t)n;
	return zr__pwrite_all(s, ZR__DATA, lb->buf, n, l->offset);
}

static int flush_ents(zr_store *s, const uint8_t *ents, uint64_t idx,
		      size_t n)
{
	return zr__pwrite_all(s, ZR__META, ents, n * ZR__LOC,
			      zr__loc_pos(idx));
}

static int lane_ents(struct lane_buf *lb, const char *path)
{
	if (!lb->ents && !(lb->ents = malloc(ZR__ENT_BATCH * ZR__LOC)))
		return zr__fail(-ENOMEM, "%s: no memory", path);
	return 0;
}

static int stage_block(void *ctx, size_t b, size_t e, unsigned lane)
{
	const struct stage *st = ctx;
	struct lane_buf *lb = &st->a->lanes[lane];
	size_t done = b;
	int err = lane_ents(lb, st->a->s->path);

	for (size_t k = b; !err && k < e; k++) {
		zr_loc l;

		err = stage_one(st, k, lb, &l);
		if (err)
			break;
		zr__loc_encode(lb->ents + ZR__LOC * (k - done), &l);
		if (k + 1 - done == ZR__ENT_BATCH || k + 1 == e) {
			err = flush_ents(st->a->s, lb->ents, st->first + done,
					 k + 1 - done);
			done = k + 1;
		}
	}
	return err;
}

/* The table entries of raw dense rows are arithmetic: row i of the
 * block is at off + i * row_bytes. */
int zr__append_raw_rows(zr_append *a, uint64_t off, uint64_t count)
{
	zr_store *s = a->s;
	size_t row = s->row_bytes;
	struct lane_buf *lb = &a->lanes[0];
	int err = lane_ents(lb, s->path);

	for (uint64_t i = 0; !err && i < count; i += ZR__ENT_BATCH) {
		size_t n = count - i < ZR__ENT_BATCH ? count - i
						     : ZR__ENT_BATCH;

		for (size_t j = 0; j < n; j++) {
			zr_loc l = { off + (i + j) * row, (uint32_t)row,
				     (uint32_t)row };

			zr__loc_encode(lb->ents + ZR__LOC * j, &l);
		}
		err = flush_ents(s, lb->ents, a->base + a->staged + i, n);
	}
	return err;
}

/* Raw dense rows are already laid out as data.zr wants them: one write of
 * the whole block, then the table entries. */
static int dense_raw(zr_append *a, const uint8_t *rows, uint64_t count)
{
	zr_store *s = a->s;
	uint64_t off;
	int err = zr__append_reserve(a, (size_t)count * s->row_bytes, &off);

	if (!err)
		err = zr__pwrite_all(s, ZR__DATA, rows,
				     (size_t)count * s->row_bytes, off);
	return err ? err : zr__append_raw_rows(a, off, count);
}

static int stage_run(zr_append *a, struct stage *st, uint64_t count)
{
	int err;

	st->a = a;
	st->first = a->base + a->staged;
	if (a->s->codec == ZR_CODEC_RAW && a->s->row_bytes)
		err = dense_raw(a, st->rows, count);
	else
		err = zr__pool_run(stage_block, st, (size_t)count, 1);
	if (err)
		return zr__append_fail(a, err);
	a->staged += count;
	return 0;
}

/* A reservation given back (store_reserve.c): data.zr back to its size
 * before the puts, or to the frontier if the session has grown it past
 * that: slots not staged leave no bytes behind (best effort: they are
 * garbage past the tail anyway). */
static void trim(zr_append *a)
{
	off_t keep = a->win.size_before;
	int rc;

	if ((uint64_t)keep < a->frontier)
		keep = (off_t)a->frontier;
	rc = zr__io_truncate(a->s->file[ZR__DATA], (uint64_t)keep);
	(void)rc;
}

void zr__append_window_drop(zr_append *a)
{
	if (!a->win.count)
		return;
	if (a->win.buf)
		free(a->win.buf);
	else
		trim(a);
	memset(&a->win, 0, sizeof(a->win));
}

int zr__append_check(zr_append *a, int ragged, uint64_t count)
{
	zr_store *s;

	zr__clear();
	if (!a)
		return zr__fail(-EINVAL, "append: NULL session");
	zr__append_window_drop(a);
	if (a->failure.err)
		return zr__error_replay(&a->failure);
	s = a->s;
	if (ragged != s->schema.ragged)
		return zr__append_fail(a, zr__fail(-EINVAL, "%s: %s append on a "
						"%s store", s->path,
						ragged ? "ragged" : "dense",
						ragged ? "dense" : "ragged"));
	if (count > ((uint64_t)INT64_MAX - ZR__PAGE) / ZR__LOC - a->base -
			    a->staged)
		return zr__append_fail(a, zr__fail(ZR_E_TOOBIG, "%s: too many "
						"records", s->path));
	return 0;
}

int zr_append_dense(zr_append *a, const void *rows, uint64_t count)
{
	struct stage st = { .rows = rows };
	int err = zr__append_check(a, 0, count);

	if (err || count == 0)
		return err;
	if (count > SIZE_MAX / a->s->row_bytes)
		return zr__append_fail(a, zr__fail(ZR_E_TOOBIG, "%s: %" PRIu64
						" rows overflow", a->s->path,
						count));
	if (!rows)
		return zr__append_fail(a, zr__fail(-EINVAL, "append: NULL rows"));
	return stage_run(a, &st, count);
}

static int check_ragged(const zr_store *s, const zr_ragged_in *r,
			uint64_t n)
{
	uint64_t elems = 1, bytes;

	if (r->ndim > ZR_MAX_NDIM)
		return zr__fail(ZR_E_SHAPE, "%s: record %" PRIu64 ": ndim %"
				PRIu32 " over %d", s->path, n, r->ndim,
				ZR_MAX_NDIM);
	if (r->ndim && !r->shape)
		return zr__fail(-EINVAL, "%s: record %" PRIu64 ": NULL shape",
				s->path, n);
	for (uint32_t i = 0; i < r->ndim; i++) {
		if (r->shape[i] && elems > UINT64_MAX / r->shape[i])
			return zr__fail(ZR_E_TOOBIG, "%s: record %" PRIu64
					": shape overflows", s->path, n);
		elems *= r->shape[i];
	}
	if (elems == 0)
		return zr__fail(ZR_E_EMPTY, "%s: record %" PRIu64 " has no "
				"elements", s->path, n);
	bytes = elems * s->schema.dtype.itemsize;
	if (elems > ZR_RECORD_MAX ||
	    bytes > ZR_RECORD_MAX - 8 - 8 * (uint64_t)r->ndim)
		return zr__fail(ZR_E_TOOBIG, "%s: record %" PRIu64 " over 2 "
				"GiB", s->path, n);
	if (!r->data)
		return zr__fail(-EINVAL, "%s: record %" PRIu64 ": NULL data",
				s->path, n);
	return 0;
}

int zr_append_ragged(zr_append *a, const zr_ragged_in *recs, uint64_t count)
{
	struct stage st = { .recs = recs };
	int err = zr__append_check(a, 1, count);

	if (err || count == 0)
		return err;
	if (!recs)
		return zr__append_fail(a, zr__fail(-EINVAL, "append: NULL recs"));
	/* Validate everything before the first byte is written. */
	for (uint64_t i = 0; i < count; i++) {
		err = check_ragged(a->s, &recs[i], a->staged + i);
		if (err)
			return zr__append_fail(a, err);
	}
	return stage_run(a, &st, count);
}

uint64_t zr_append_count(const zr_append *a)
{
	return a ? a->staged : 0;
}

int zr_append_commit(zr_append *a)
{
	zr_store *s;
	int err;

	zr__clear();
	if (!a)
		return zr__fail(-EINVAL, "append: NULL session");
	zr__append_window_drop(a);
	s = a->s;
	if (a->failure.err)
		err = zr__error_replay(&a->failure);
	else
		err = zr__map_ensure(s, ZR__META,
				     zr__loc_pos(a->base + a->staged));
	if (!err)
		err = zr__map_ensure(s, ZR__DATA, a->frontier);
	if (!err) {
		/* The session's payloads are exactly [tail, frontier). */
		pthread_mutex_lock(&s->live_lock);
		s->live += a->frontier - zr__tail(s);
		/* Tail first: a reader that sees the new length must see a
		 * frontier covering its records. */
		atomic_store_explicit(&s->tail, a->frontier,
				      memory_order_release);
		atomic_store_explicit(&s->length, a->base + a->staged,
				      memory_order_release);
		pthread_mutex_unlock(&s->live_lock);
	}
	if (err)
		drop_staged(a);
	session_free(a);
	return err;
}

void zr_append_abort(zr_append *a)
{
	if (!a)
		return;
	zr__append_window_drop(a);
	drop_staged(a);
	session_free(a);
}

int zr_store_append_dense(zr_store *s, const void *rows, uint64_t count)
{
	zr_append *a;
	int err = zr_append_begin(s, &a);

	if (err)
		return err;
	err = zr_append_dense(a, rows, count);
	if (err) {
		zr_append_abort(a);
		return err;
	}
	return zr_append_commit(a);
}

int zr_store_append_ragged(zr_store *s, const zr_ragged_in *recs,
			   uint64_t count)
{
	zr_append *a;
	int err = zr_append_begin(s, &a);

	if (err)
		return err;
	err = zr_append_ragged(a, recs, count);
	if (err) {
		zr_append_abort(a);
		return err;
	}
	return zr_append_commit(a);
}
