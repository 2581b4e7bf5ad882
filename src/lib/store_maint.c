/*
 * store_maint.c - maintenance: swap-last delete, in-place compaction,
 * stats, sync and a full verify.  Delete and compact hold the store's
 * rwlock exclusively, so no gather sees a table being rewritten; the
 * journal (journal.h) makes each of them atomic across a crash, and the
 * delete log (store_view.c) keeps each open view's records as they were.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "codec.h"
#include "error.h"
#include "journal.h"
#include "pool.h"
#include "store_view.h"

#define ZR__VERIFY_WINDOW 4096u    /* records verified per pool job */
#define ZR__PROGRESS_EVERY 1024u

static void unlock_exclusive(zr_store *s)
{
	zr__lock_share(s);
	pthread_rwlock_unlock(&s->rw);
}

/* Takes the exclusive locks, in the process and on meta.zr (no follower
 * may read a table being rewritten), unless an append session is open. */
static int lock_exclusive(zr_store *s, const char *name)
{
	int err = zr__writable(s, name);

	if (err)
		return err;
	pthread_rwlock_wrlock(&s->rw);
	if (atomic_load(&s->appending))
		err = zr__fail(-EBUSY, "%s: %s while an append session is "
			       "open", s->path, name);
	else
		err = zr__lock_exclusive(s, name);
	if (!err)
		err = zr__guard_check(s, name);
	if (err)
		unlock_exclusive(s);
	return err;
}

static int cmp_desc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

/* What sync does: everything the header will point at first (payloads,
 * then table entries), then the header, then the header itself.  The
 * header carries a snapshot taken before the flushes, so a commit that
 * lands meanwhile is covered by neither the header nor its promise.
 * Length before tail: commit publishes tail first, so the snapshot's tail
 * covers the snapshot's records.  Takes no lock (delete calls it under
 * the exclusive one). */
static int sync_files(zr_store *s)
{
	uint64_t len = zr__length(s), tail = zr__tail(s);
	int err = zr__flush(s, ZR__DATA);

	if (!err)
		err = zr__flush(s, ZR__META);
	/* Nothing new to publish: the header on disk is ours already, or
	 * another writer's that this one must not overwrite. */
	if (len == s->disk_len && tail == s->disk_tail)
		return err;
	if (!err)
		err = zr__guard_check(s, "sync");
	if (!err)
		err = zr__header_write(s, len, tail);
	if (!err)
		err = zr__sync(s, ZR__META, ZR__SYNC_ALL);
	if (!err)
		zr__guard_wrote(s, len, tail);
	return err;
}

static int swap_last(zr_store *s, const uint64_t *sorted, size_t count,
		     uint64_t *len)
{
	const struct zr__map *m = atomic_load(&s->map[ZR__META]);

	for (size_t i = 0; i < count; i++) {
		uint64_t last = *len - 1;
		int err = 0;

		if (i && sorted[i] == sorted[i - 1])
			continue;
		if (sorted[i] != last)
			err = zr__pwrite_all(s, ZR__META,
					     m->base + zr__loc_pos(last),
					     ZR__LOC, zr__loc_pos(sorted[i]));
		if (err)
			return err;
		*len = last;
	}
	return 0;
}

/* Takes the deleted records (sorted, maybe repeated) out of the live sum;
 * an entry that cannot be read makes the next stats rescan instead. */
static void forget_live(zr_store *s, const uint64_t *sorted, size_t count,
			uint64_t len)
{
	uint64_t tail = zr__tail(s);

	pthread_mutex_lock(&s->live_lock);
	for (size_t i = 0; s->live_known && i < count; i++) {
		zr_loc l;

		if (i && sorted[i] == sorted[i - 1])
			continue;
		if (zr__loc_get(s, sorted[i], len, tail, &l))
			s->live_known = 0;
		else
			s->live -= l.phys_length;
	}
	pthread_mutex_unlock(&s->live_lock);
}

/* Sorted descending: drops the repeats, returns how many are left. */
static size_t dedup(uint64_t *sorted, size_t count)
{
	size_t n = 0;

	for (size_t i = 0; i < count; i++)
		if (!n || sorted[i] != sorted[n - 1])
			sorted[n++] = sorted[i];
	return n;
}

/* A failed delete: the journal puts the table and header back, and the
 * handle follows (if even that fails, the next open retries, and 0 is
 * not returned). */
static int roll_back(zr_store *s)
{
	uint64_t len = zr__length(s), tail = zr__tail(s);
	int err = zr__journal_recover(s, &len, &tail);

	if (err)
		return err;
	atomic_store_explicit(&s->length, len, memory_order_release);
	pthread_mutex_lock(&s->live_lock);
	s->live_known = 0;
	pthread_mutex_unlock(&s->live_lock);
	return 0;
}

/* Syncs first, so that the header on disk is the state the undo slot
 * restores; then the slot, the swaps, the new header, the end.  What the
 * swaps overwrite is saved for the open views first (store_view.c), and
 * published unless the table is as it was. */
static int delete_locked(zr_store *s, uint64_t *sorted, size_t n)
{
	uint64_t len = zr__length(s);
	struct zr__dlog *log;
	int err = zr__log_make(s, sorted, n, len, &log);

	if (!err)
		err = sync_files(s);
	if (!err)
		err = zr__journal_delete(s, len, zr__tail(s), sorted, n);
	if (err) {
		zr__log_drop(log);
		return err;
	}
	forget_live(s, sorted, n, len);
	err = swap_last(s, sorted, n, &len);
	atomic_store_explicit(&s->length, len, memory_order_release);
	if (!err)
		err = sync_files(s);
	if (!err)
		err = zr__journal_end(s, NULL);
	if (err && !roll_back(s))
		zr__log_drop(log);
	else
		zr__log_publish(s, log, sorted, n);
	return err;
}

int zr_store_delete(zr_store *s, const uint64_t *idx, size_t count)
{
	uint64_t *sorted = NULL, len;
	int err;

	zr__clear();
	if (count && !idx)
		return zr__fail(-EINVAL, "%s: delete: NULL indices", s->path);
	err = lock_exclusive(s, "delete");
	if (err)
		return err;
	len = zr__length(s);
	for (size_t i = 0; !err && i < count; i++)
		if (idx[i] >= len)
			err = zr__fail(ZR_E_RANGE, "%s: delete: index %" PRIu64
				       " out of range (length %" PRIu64 ")",
				       s->path, idx[i], len);
	if (!err && count) {
		sorted = malloc(count * sizeof(*sorted));
		if (!sorted)
			err = zr__fail(-ENOMEM, "%s: no memory", s->path);
	}
	if (!err && count) {
		memcpy(sorted, idx, count * sizeof(*sorted));
		qsort(sorted, count, sizeof(*sorted), cmp_desc);
		err = delete_locked(s, sorted, dedup(sorted, count));
	}
	unlock_exclusive(s);
	free(sorted);
	return err;
}

struct placed {
	uint64_t off;
	uint64_t idx;
	uint32_t phys;
};

static int cmp_off(const void *a, const void *b)
{
	const struct placed *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/* Every live record, validated, in physical order, checked not to
 * overlap: what makes the in-place rewrite safe. */
static int collect(zr_store *s, uint64_t len, struct placed *p)
{
	uint64_t tail = zr__tail(s);

	for (uint64_t i = 0; i < len; i++) {
		zr_loc l;
		int err = zr__loc_get(s, i, len, tail, &l);

		if (err)
			return err;
		p[i] = (struct placed){ l.offset, i, l.phys_length };
	}
	qsort(p, (size_t)len, sizeof(*p), cmp_off);
	for (uint64_t i = 1; i < len; i++)
		if (p[i].off < p[i - 1].off + p[i - 1].phys)
			return zr__fail(ZR_E_CORRUPT, "%s/meta.zr: records %"
					PRIu64 " and %" PRIu64 " overlap",
					s->path, p[i - 1].idx, p[i].idx);
	return 0;
}

/* Moves the records p[0..n) that fit one journal slot down to *front,
 * in one batch; how many (> 0) or an error.  r has room for n. */
static int64_t move_batch(zr_store *s, uint8_t *bounce, struct zr__jmove *j,
			  const struct placed *p, uint64_t n,
			  struct zr__jrec *r, uint64_t *front)
{
	uint64_t k = 0, bytes = 0;
	int err;

	while (k < n && zr__journal_batch_fits(k + 1, bytes + p[k].phys)) {
		r[k] = (struct zr__jrec){ p[k].idx, p[k].off, p[k].phys };
		bytes += p[k++].phys;
	}
	err = zr__journal_batch(s, j, r, (size_t)k, *front, bounce);
	*front += bytes;
	return err ? err : (int64_t)k;
}

/* The header is written (by the one sync path) before the files shrink:
 * a header on disk never names a tail past the end of data.zr. */
static int finish_compact(zr_store *s, uint64_t front, uint64_t len)
{
	int err;

	/* Packed densely: the live records are exactly [0, front). */
	pthread_mutex_lock(&s->live_lock);
	s->live = front;
	s->live_known = 1;
	pthread_mutex_unlock(&s->live_lock);
	atomic_store_explicit(&s->tail, front, memory_order_release);
	err = sync_files(s);
	if (!err)
		err = zr__truncate(s, ZR__DATA, front);
	if (!err)
		err = zr__truncate(s, ZR__META, zr__loc_pos(len));
	if (!err)
		err = zr__flush(s, ZR__DATA);
	return err ? err : zr__flush(s, ZR__META);
}

/* One step from record p[0]: in place already, a record too large for a
 * batch (moved chunk by chunk), or a batch.  How many records it placed,
 * or an error. */
static int64_t compact_step(zr_store *s, uint8_t *bounce, struct zr__jmove *j,
			    const struct placed *p, uint64_t n,
			    struct zr__jrec *r, uint64_t *front)
{
	int err = 0;

	if (p->off == *front || !zr__journal_batch_fits(1, p->phys)) {
		if (p->off != *front)
			err = zr__journal_move(s, j, p->idx, p->off, *front,
					       p->phys, 0, bounce);
		*front += p->phys;
		return err ? err : 1;
	}
	return move_batch(s, bounce, j, p, n, r, front);
}

static int compact_locked(zr_store *s, zr_progress_fn progress, void *ctx)
{
	uint64_t len = zr__length(s), front = 0, done = 0, told = 0;
	struct placed *p = malloc((len ? len : 1) * sizeof(*p));
	struct zr__jrec *r = malloc((len ? len : 1) * sizeof(*r));
	uint8_t *bounce = malloc(ZR__J_CHUNK);
	struct zr__jmove j = { NULL, 0 };
	int err = 0;

	if (!p || !r || !bounce || len > SIZE_MAX / sizeof(*p))
		err = zr__fail(-ENOMEM, "%s: no memory to compact", s->path);
	/* The header on disk must cover every record a slot may name: a
	 * redo at open checks them against it. */
	if (!err)
		err = sync_files(s);
	if (!err)
		err = collect(s, len, p);
	while (!err && done < len) {
		int64_t k = compact_step(s, bounce, &j, p + done, len - done,
					 r, &front);

		err = k < 0 ? (int)k : 0;
		done += k > 0 ? (uint64_t)k : 0;
		if (progress && (done - told >= ZR__PROGRESS_EVERY ||
				 done == len)) {
			progress(ctx, done, len);
			told = done;
		}
	}
	if (!err && j.seq)
		err = zr__journal_idle(s, &j);
	if (!err)
		err = finish_compact(s, front, len);
	/* A move cut short by an error: finish it from its journal. */
	if (err && j.seq) {
		uint64_t l = len, t = zr__tail(s);

		zr__journal_recover(s, &l, &t);
	} else if (!err && j.seq) {
		err = zr__journal_end(s, &j);
	}
	zr__io_close(j.f);
	free(bounce);
	free(r);
	free(p);
	return err;
}

int zr_store_compact(zr_store *s, zr_progress_fn progress, void *ctx)
{
	int err;

	zr__clear();
	err = lock_exclusive(s, "compact");
	if (err)
		return err;
	/* It moves bytes: not while a view may still read a deleted
	 * record's, or a live one's at the place the log saved. */
	err = zr__views_block(s, "compact");
	if (!err)
		err = compact_locked(s, progress, ctx);
	unlock_exclusive(s);
	return err;
}

/* Sum of phys_length over records [0, len): one validated table scan. */
static int scan_live(zr_store *s, uint64_t len, uint64_t tail, uint64_t *out)
{
	uint64_t live = 0;
	int err = 0;

	for (uint64_t i = 0; !err && i < len; i++) {
		zr_loc l;

		err = zr__loc_get(s, i, len, tail, &l);
		live += err ? 0 : l.phys_length;
	}
	if (!err)
		*out = live;
	return err;
}

int zr_store_stats(zr_store *s, zr_stats *out)
{
	uint64_t len, tail, live;
	int err = 0;

	zr__clear();
	pthread_rwlock_rdlock(&s->rw);
	pthread_mutex_lock(&s->live_lock);
	len = zr__length(s);
	tail = zr__tail(s);
	if (!s->live_known)
		err = scan_live(s, len, tail, &s->live);
	s->live_known = !err;
	live = s->live;
	pthread_mutex_unlock(&s->live_lock);
	pthread_rwlock_unlock(&s->rw);
	if (err)
		return err;
	out->records = len;
	out->live_bytes = live;
	out->data_bytes = tail;
	out->reclaimable = tail > live ? tail - live : 0;
	return 0;
}

/* Shared: delete and compact must not rewrite the table under a sync,
 * but gathers and an append session run on (a commit meanwhile is left
 * for the next sync).  sync_lock keeps two syncs from writing their
 * headers out of order, which could leave the older one on disk after
 * the newer call returned. */
int zr_store_sync(zr_store *s)
{
	int err;

	zr__clear();
	err = zr__writable(s, "sync");
	if (err)
		return err;
	pthread_rwlock_rdlock(&s->rw);
	pthread_mutex_lock(&s->sync_lock);
	err = sync_files(s);
	pthread_mutex_unlock(&s->sync_lock);
	pthread_rwlock_unlock(&s->rw);
	return err;
}

struct verify {
	zr_store *s;
	uint64_t first, len, tail;
	int *errs;                /* per record of the window */
	struct {
		uint8_t *buf;
		size_t cap;
	} *lanes;
};

struct frame_read {
	const zr_store *s;
	const uint8_t *src;
	const zr_loc *l;
	uint64_t idx;
};

static int frame_load(void *arg)
{
	const struct frame_read *r = arg;

	return zr__frame_check(r->src, r->l->phys_length,
			       r->l->logic_length, r->s->path, r->idx);
}

/* The frame header names its content size: checked before a decode that
 * could be bounded only by logic_length. */
static int frame_check(zr_store *s, uint64_t i, const zr_loc *l)
{
	const struct zr__map *m = zr__map_of(s, ZR__DATA);
	struct frame_read r = { s, NULL, l, i };
	uint8_t *buf;
	int err = zr__record_src(s, m, l, &r.src, &buf);

	if (!err)
		err = zr__map_read(s, m, ZR__DATA, i, frame_load, &r);
	free(buf);
	return err;
}

static int verify_one(struct verify *v, uint64_t i, unsigned lane)
{
	zr_store *s = v->s;
	zr_loc l;
	uint32_t nd;
	int err = zr__loc_get(s, i, v->len, v->tail, &l);

	if (err)
		return err;
	if (s->codec != ZR_CODEC_RAW) {
		err = frame_check(s, i, &l);
		if (err)
			return err;
	}
	if (v->lanes[lane].cap < l.logic_length) {
		uint8_t *p = realloc(v->lanes[lane].buf, l.logic_length);

		if (!p)
			return zr__fail(-ENOMEM, "%s: no memory", s->path);
		v->lanes[lane].buf = p;
		v->lanes[lane].cap = l.logic_length;
	}
	err = zr__record_decode(s, i, &l, v->lanes[lane].buf);
	if (!err && s->schema.ragged)
		err = zr__ragged_head(v->lanes[lane].buf, l.logic_length,
				      l.logic_length,
				      s->schema.dtype.itemsize, &nd, NULL,
				      NULL);
	return err;
}

static int verify_block(void *ctx, size_t b, size_t e, unsigned lane)
{
	struct verify *v = ctx;

	for (size_t k = b; k < e; k++) {
		v->errs[k] = verify_one(v, v->first + k, lane);
		if (v->errs[k] == -ENOMEM)
			return -ENOMEM; /* cannot judge: stop the scan */
	}
	return 0;
}

static int64_t verify_windows(struct verify *v, zr_bad_fn bad, void *bad_ctx,
			      zr_progress_fn progress, void *progress_ctx)
{
	int64_t nbad = 0;

	for (v->first = 0; v->first < v->len;
	     v->first += ZR__VERIFY_WINDOW) {
		size_t n = v->len - v->first < ZR__VERIFY_WINDOW
				   ? v->len - v->first
				   : ZR__VERIFY_WINDOW;
		int err = zr__pool_run(verify_block, v, n, 1);

		if (err)
			return err;
		for (size_t k = 0; k < n; k++) {
			if (!v->errs[k])
				continue;
			nbad++;
			if (bad)
				bad(bad_ctx, v->first + k, v->errs[k]);
		}
		if (progress)
			progress(progress_ctx, v->first + n, v->len);
	}
	return nbad;
}

int64_t zr_store_verify(zr_store *s, zr_bad_fn bad, void *bad_ctx,
			zr_progress_fn progress, void *progress_ctx)
{
	struct verify v = { .s = s };
	unsigned lanes = zr__pool_lanes();
	int64_t ret;

	zr__clear();
	v.errs = malloc(ZR__VERIFY_WINDOW * sizeof(*v.errs));
	v.lanes = calloc(lanes, sizeof(*v.lanes));
	if (!v.errs || !v.lanes) {
		ret = zr__fail(-ENOMEM, "%s: no memory to verify", s->path);
		goto out;
	}
	pthread_rwlock_rdlock(&s->rw);
	v.len = zr__length(s);
	v.tail = zr__tail(s);
	ret = verify_windows(&v, bad, bad_ctx, progress, progress_ctx);
	pthread_rwlock_unlock(&s->rw);
	/* The per-record messages are not this call's failure. */
	if (ret >= 0)
		zr__clear();
out:
	for (unsigned i = 0; v.lanes && i < lanes; i++)
		free(v.lanes[i].buf);
	free(v.lanes);
	free(v.errs);
	return ret;
}
