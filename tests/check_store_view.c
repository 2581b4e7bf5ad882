/*
 * check_store_view.c - read views (zr_view_*): what a view shows stays
 * what it showed at begin across deletes, appends and compact; the compact
 * and begin busy rules, ZR_VIEW_TRY; which indices deletes changed
 * (zr_store_index_changed); the delete log freed as views end; and gathers
 * through views on many threads racing deletes, appends and compacts.
 * Every record's bytes name it (its id), so a check can tell which record
 * an index shows and that its bytes are whole.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check_suites.h"
#include "check_util.h"
#include "store.h"
#include "zrecord.h"

#define DENSE_ROW 48 /* <u8 (6,) */

/* Loop index i: codec i % 3, ragged for i >= 3. */
static zr_store *make(int i)
{
	uint64_t shape[1] = { DENSE_ROW / 8 };
	zr_schema sc = i >= 3 ? ck_schema("|u1", -1, NULL)
			      : ck_schema("<u8", 1, shape);

	return ck_store(ck_dir, "s", &sc, ck_codecs[i % 3]);
}

static size_t rec_len(int ragged, uint64_t id)
{
	return ragged ? 40 + id % 50 : DENSE_ROW;
}

/* The bytes of record id (its payload, for a ragged one). */
static void rec_bytes(uint8_t *b, size_t len, uint64_t id)
{
	ck_fill(b, len, id);
	memcpy(b, &id, 8);
}

/* Appends records first .. first + n - 1. */
static void put(zr_store *s, uint64_t first, uint64_t n)
{
	int ragged = zr_store_schema(s)->ragged;
	uint8_t *rows = malloc(n * 90);
	zr_ragged_in *in = calloc(n, sizeof(*in));
	uint64_t *lens = calloc(n, sizeof(*lens));

	for (uint64_t k = 0; k < n; k++) {
		lens[k] = rec_len(ragged, first + k);
		rec_bytes(rows + k * 90, lens[k], first + k);
		in[k] = (zr_ragged_in){ rows + k * 90, 1, &lens[k] };
		if (!ragged)
			memmove(rows + k * DENSE_ROW, rows + k * 90, DENSE_ROW);
	}
	if (ragged)
		ck_assert_int_eq(zr_store_append_ragged(s, in, n), 0);
	else
		ck_assert_int_eq(zr_store_append_dense(s, rows, n), 0);
	free(lens);
	free(in);
	free(rows);
}

/* Checks one gathered record (a ragged one with its prefix) is whole and
 * returns its id, or UINT64_MAX if it is not. */
static uint64_t rec_id(int ragged, const uint8_t *p, size_t len)
{
	uint8_t want[128];
	uint64_t id;

	if (ragged) {
		if (len < 16)
			return UINT64_MAX;
		p += 16;
		len -= 16;
	}
	memcpy(&id, p, 8);
	if (len != rec_len(ragged, id))
		return UINT64_MAX;
	rec_bytes(want, len, id);
	return memcmp(p, want, len) ? UINT64_MAX : id;
}

/* The ids records idx[0..n) show through v (NULL: the store now), each
 * checked whole; 0 or the gather's error.  ids has room for n. */
static int ids_of(zr_store *s, zr_view *v, const uint64_t *idx, size_t n,
		  uint64_t *ids)
{
	int ragged = zr_store_schema(s)->ragged;
	uint64_t total = n * DENSE_ROW;
	uint64_t *off = malloc((n + 1) * sizeof(*off));
	uint8_t *dst;
	int err = 0;

	if (ragged)
		err = v ? zr_view_gather_size(v, idx, n, &total)
			: zr_store_gather_size(s, idx, n, &total);
	dst = malloc(total + 1);
	if (!err)
		err = v ? zr_view_gather(v, idx, n, dst, total, off)
			: zr_store_gather(s, idx, n, dst, total, off);
	for (size_t k = 0; !err && k < n; k++) {
		size_t lo = ragged ? off[k] : k * DENSE_ROW;
		size_t hi = ragged ? off[k + 1] : lo + DENSE_ROW;

		ids[k] = rec_id(ragged, dst + lo, hi - lo);
	}
	free(dst);
	free(off);
	return err;
}

/* Every id records 0..len-1 show through v. */
static uint64_t *all_ids(zr_store *s, zr_view *v, uint64_t len)
{
	uint64_t *idx = malloc((len + 1) * sizeof(*idx));
	uint64_t *ids = malloc((len + 1) * sizeof(*ids));

	for (uint64_t i = 0; i < len; i++)
		idx[i] = i;
	ck_assert_int_eq(ids_of(s, v, idx, len, ids), 0);
	free(idx);
	return ids;
}

/* v shows exactly want[0..len), bytes, sizes, shapes and entries. */
static void check_view(zr_store *s, zr_view *v, const uint64_t *want,
		       uint64_t len)
{
	int ragged = zr_store_schema(s)->ragged;
	uint64_t *ids, size, beyond = len;
	uint32_t ndim;
	uint64_t shape[ZR_MAX_NDIM];
	zr_loc l;

	ck_assert_uint_eq(zr_view_length(v), len);
	ck_assert_ptr_eq(zr_view_store(v), s);
	ids = all_ids(s, v, len);
	for (uint64_t i = 0; i < len; i++) {
		ck_assert_uint_eq(ids[i], want[i]);
		ck_assert_int_eq(zr_view_loc(v, i, &l), 0);
		ck_assert_uint_eq(l.logic_length,
				  rec_len(ragged, want[i]) + (ragged ? 16 : 0));
		if (!ragged)
			continue;
		ck_assert_int_eq(zr_view_gather_size(v, &i, 1, &size), 0);
		ck_assert_uint_eq(size, 16 + rec_len(1, want[i]));
		ck_assert_int_eq(zr_view_ragged_shape(v, i, &ndim, shape), 0);
		ck_assert_uint_eq(ndim, 1);
		ck_assert_uint_eq(shape[0], rec_len(1, want[i]));
	}
	ck_assert_int_eq(zr_view_loc(v, beyond, &l), ZR_E_RANGE);
	ck_assert_int_eq(zr_view_gather(v, &beyond, 1, &size, 0, &size),
			 ragged ? ZR_E_RANGE : -EINVAL);
	free(ids);
}

static void del(zr_store *s, const uint64_t *idx, size_t n)
{
	ck_assert_int_eq(zr_store_delete(s, idx, n), 0);
}

/* Several deletes (overlapping indices, the last record, every index a
 * second time) and appends: each view shows what it did at begin. */
START_TEST(test_view_keeps_what_it_saw)
{
	zr_store *s;
	zr_view *v0, *v1, *v2, *v3;
	uint64_t *w0, *w1, *w2, *now;
	const uint64_t d1[] = { 5, 99, 50 }, d2[] = { 0, 1, 2, 96, 5, 5 };
	uint64_t last;

	/* The second six: the same through the SIGBUS guard's paths. */
	if (_i >= 6)
		ck_assert_int_eq(zr_sigbus_guard(), 0);
	s = make(_i % 6);
	put(s, 0, 100);
	ck_assert_int_eq(zr_view_begin(s, 0, &v0), 0);
	w0 = all_ids(s, v0, 100);
	for (uint64_t i = 0; i < 100; i++)
		ck_assert_uint_eq(w0[i], i);
	del(s, d1, 3);
	ck_assert_int_eq(zr_view_begin(s, 0, &v1), 0);
	w1 = all_ids(s, v1, 97);
	del(s, d2, 6);
	last = zr_store_length(s) - 1;
	del(s, &last, 1);
	put(s, 100, 20);
	ck_assert_int_eq(zr_view_begin(s, 0, &v2), 0);
	w2 = all_ids(s, v2, zr_store_length(s));
	/* The store itself moved on: 100 - 3 - 5 - 1 + 20 records. */
	ck_assert_uint_eq(zr_store_length(s), 111);
	now = all_ids(s, NULL, 111);
	ck_assert_uint_ne(now[5], w0[5]);
	check_view(s, v0, w0, 100);
	check_view(s, v1, w1, 97);
	ck_assert_uint_eq(zr_view_epoch(v0), 0);
	ck_assert_uint_eq(zr_view_epoch(v1), 1);
	ck_assert_uint_eq(zr_view_epoch(v2), 3);
	/* Delete everything: every older view still reads every record. */
	{
		uint64_t *every = malloc(111 * sizeof(*every));

		for (uint64_t i = 0; i < 111; i++)
			every[i] = i;
		del(s, every, 111);
		free(every);
	}
	ck_assert_uint_eq(zr_store_length(s), 0);
	check_view(s, v0, w0, 100);
	check_view(s, v1, w1, 97);
	check_view(s, v2, w2, 111);
	/* Appends after it land on the saved entries' places. */
	put(s, 200, 30);
	check_view(s, v0, w0, 100);
	check_view(s, v2, w2, 111);
	ck_assert_int_eq(zr_view_begin(s, 0, &v3), 0);
	ck_assert_uint_eq(zr_view_epoch(v3), 4);
	ck_assert_uint_eq(zr_view_length(v3), 30);
	zr_view_end(v1);
	zr_view_end(v0);
	zr_view_end(v3);
	check_view(s, v2, w2, 111);
	zr_view_end(v2);
	zr_view_end(NULL);
	free(w0);
	free(w1);
	free(w2);
	free(now);
	ck_assert_int_eq(zr_store_close(s), 0);
}
END_TEST

/* Appends are invisible to a view; a view begun after them sees them. */
START_TEST(test_view_length_fixed)
{
	zr_store *s = make(_i);
	zr_view *v, *w;
	uint64_t *ids, idx = 10;

	put(s, 0, 10);
	ck_assert_int_eq(zr_view_begin(s, 0, &v), 0);
	put(s, 10, 5);
	ck_assert_uint_eq(zr_store_length(s), 15);
	ck_assert_uint_eq(zr_view_length(v), 10);
	ids = all_ids(s, v, 10);
	ck_assert_int_eq(ids_of(s, v, &idx, 1, ids), ZR_E_RANGE);
	free(ids);
	ck_assert_int_eq(zr_view_begin(s, 0, &w), 0);
	ck_assert_uint_eq(zr_view_length(w), 15);
	ck_assert_uint_eq(zr_view_epoch(w), zr_view_epoch(v));
	ck_assert_int_eq(ids_of(s, w, &idx, 1, &idx), 0);
	ck_assert_uint_eq(idx, 10);
	zr_view_end(w);
	zr_view_end(v);
	ck_assert_int_eq(zr_store_close(s), 0);
}
END_TEST

/* Compact refuses, changing nothing, while a view begun before the last
 * delete lives; a view begun after it neither blocks it nor is harmed. */
START_TEST(test_compact_busy_rule)
{
	zr_store *s = make(_i);
	zr_view *old, *fresh;
	uint64_t *w_old, *w_fresh, *before;
	const uint64_t d[] = { 3, 17, 40 };
	zr_stats st, st2;

	put(s, 0, 60);
	ck_assert_int_eq(zr_view_begin(s, 0, &old), 0);
	w_old = all_ids(s, old, 60);
	del(s, d, 3);
	ck_assert_int_eq(zr_store_stats(s, &st), 0);
	before = all_ids(s, NULL, 57);
	ck_assert_int_eq(zr_store_compact(s, NULL, NULL), ZR_E_BUSY);
	ck_assert_ptr_nonnull(strstr(zr_errmsg(), "1 open view began before"
					  " the last delete"));
	ck_assert_ptr_nonnull(strstr(zr_errmsg(), "retry"));
	ck_assert_int_eq(zr_store_stats(s, &st2), 0);
	ck_assert_mem_eq(&st, &st2, sizeof(st));
	ck_assert_uint_gt(st.reclaimable, 0);
	check_view(s, old, w_old, 60);
	/* A view of the store after the delete does not hold compact. */
	ck_assert_int_eq(zr_view_begin(s, 0, &fresh), 0);
	w_fresh = all_ids(s, fresh, 57);
	ck_assert_mem_eq(w_fresh, before, 57 * sizeof(*before));
	zr_view_end(old);
	ck_assert_int_eq(zr_store_compact(s, NULL, NULL), 0);
	ck_assert_int_eq(zr_store_stats(s, &st2), 0);
	ck_assert_uint_eq(st2.reclaimable, 0);
	check_view(s, fresh, w_fresh, 57);
	/* And after it, deletes go on being kept for it. */
	del(s, d, 3);
	check_view(s, fresh, w_fresh, 57);
	ck_assert_int_eq(zr_store_compact(s, NULL, NULL), ZR_E_BUSY);
	zr_view_end(fresh);
	ck_assert_int_eq(zr_store_compact(s, NULL, NULL), 0);
	free(w_old);
	free(w_fresh);
	free(before);
	ck_assert_int_eq(zr_store_close(s), 0);
}
END_TEST

/* The saved entries live exactly as long as a view older than their
 * delete: ended out of order, the log shrinks as the oldest ends. */
START_TEST(test_log_freed_as_views_end)
{
	zr_store *s = make(_i);
	zr_view *a, *b, *c;
	const uint64_t d1[] = { 1, 2, 3 }, d2[] = { 10, 11 };

	put(s, 0, 40);
	del(s, d1, 3); /* no view: nothing kept */
	ck_assert_uint_eq(s->dlog_entries, 0);
	ck_assert_ptr_null(atomic_load(&s->dlog));
	ck_assert_int_eq(zr_view_begin(s, 0, &a), 0);
	del(s, d1, 3); /* 3 holes below the new length, 3 past it */
	ck_assert_uint_eq(s->dlog_entries, 6);
	ck_assert_int_eq(zr_view_begin(s, 0, &b), 0);
	ck_assert_int_eq(zr_view_begin(s, 0, &c), 0);
	del(s, d2, 2);
	ck_assert_uint_eq(s->dlog_entries, 10);
	zr_view_end(b); /* a still needs both */
	ck_assert_uint_eq(s->dlog_entries, 10);
	zr_view_end(a); /* c needs the second only */
	ck_assert_uint_eq(s->dlog_entries, 4);
	ck_assert_ptr_null(atomic_load(&atomic_load(&s->dlog)->older));
	zr_view_end(c);
	ck_assert_uint_eq(s->dlog_entries, 0);
	ck_assert_ptr_null(atomic_load(&s->dlog));
	/* A view that ends during no delete: the next delete keeps nothing. */
	ck_assert_int_eq(zr_view_begin(s, 0, &a), 0);
	zr_view_end(a);
	del(s, d2, 2);
	ck_assert_uint_eq(s->dlog_entries, 0);
	ck_assert_int_eq(zr_store_close(s), 0);
}
END_TEST

START_TEST(test_begin_bad_arguments)
{
	zr_store *s = make(0);
	zr_view *v = NULL;

	ck_assert_int_eq(zr_view_begin(s, 4, &v), -EINVAL);
	ck_assert_int_eq(zr_view_begin(NULL, 0, &v), -EINVAL);
	ck_assert_int_eq(zr_view_begin(s, 0, NULL), -EINVAL);
	ck_assert_ptr_null(v);
	ck_assert_int_eq(zr_store_close(s), 0);
}
END_TEST

static int changed(zr_store *s, uint64_t a, uint64_t b, uint64_t idx)
{
	return zr_store_index_changed(s, a, b, idx);
}

static uint64_t epoch_now(zr_store *s)
{
	zr_view *v;
	uint64_t e;

	ck_assert_int_eq(zr_view_begin(s, 0, &v), 0);
	e = zr_view_epoch(v);
	zr_view_end(v);
	return e;
}

/* Which indices each delete changed: its holes below the new length and
 * everything past it; either order of epochs; none between equal ones. */
START_TEST(test_index_changed)
{
	zr_store *s = make(_i * 3);
	const uint64_t d1[] = { 9, 2 }, d2[] = { 0 };

	put(s, 0, 10);
	ck_assert_uint_eq(epoch_now(s), 0);
	ck_assert_int_eq(changed(s, 0, 0, 4), 0);
	del(s, d1, 2); /* length 8: 2 refilled */
	ck_assert_uint_eq(epoch_now(s), 1);
	ck_assert_int_eq(changed(s, 0, 1, 2), 1);
	ck_assert_int_eq(changed(s, 1, 0, 2), 1);
	ck_assert_int_eq(changed(s, 0, 1, 8), 1);
	ck_assert_int_eq(changed(s, 0, 1, 9), 1);
	ck_assert_int_eq(changed(s, 0, 1, 3), 0);
	ck_assert_int_eq(changed(s, 0, 1, 0), 0);
	ck_assert_int_eq(changed(s, 1, 1, 2), 0);
	put(s, 10, 5); /* appends change no epoch and no index */
	ck_assert_int_eq(changed(s, 0, 1, 3), 0);
	del(s, d2, 1); /* length 12: 0 refilled */
	ck_assert_int_eq(changed(s, 1, 2, 0), 1);
	ck_assert_int_eq(changed(s, 1, 2, 2), 0);
	ck_assert_int_eq(changed(s, 0, 2, 2), 1);
	ck_assert_int_eq(changed(s, 1, 2, 12), 1);
	ck_assert_int_eq(changed(s, 1, 2, 11), 0);
	ck_assert_int_eq(zr_store_compact(s, NULL, NULL), 0);
	ck_assert_uint_eq(epoch_now(s), 2);
	ck_assert_int_eq(changed(s, 1, 2, 11), 0);
	/* an epoch this handle never had */
	ck_assert_int_eq(changed(s, 2, 3, 5), 1);
	ck_assert_int_eq(zr_store_close(s), 0);
}
END_TEST

/* A delete of more holes than the handle remembers forgets the deletes
 * before it, which then answer "changed"; later ones are known again. */
START_TEST(test_index_changed_forgets)
{
	zr_store *s = make(0);
	uint64_t n = (1u << 16) + 1, *idx = malloc(n * sizeof(*idx));
	const uint64_t d[] = { 1 }, last[] = { 5 };

	put(s, 0, n + 100);
	del(s, d, 1);
	for (uint64_t i = 0; i < n; i++)
		idx[i] = 10 + i;
	del(s, idx, n);
	ck_assert_int_eq(changed(s, 1, 2, 0), 1);
	ck_assert_int_eq(changed(s, 0, 1, 0), 1);
	ck_assert_int_eq(changed(s, 2, 2, 0), 0);
	del(s, last, 1);
	ck_assert_int_eq(changed(s, 2, 3, 0), 0);
	ck_assert_int_eq(changed(s, 2, 3, 5), 1);
	free(idx);
	ck_assert_int_eq(zr_store_close(s), 0);
}
END_TEST

START_TEST(test_appending)
{
	zr_store *s = make(0);
	const uint64_t d[] = { 0 };
	zr_append *a;

	put(s, 0, 3);
	ck_assert_int_eq(zr_store_appending(s), 0);
	ck_assert_int_eq(zr_append_begin(s, &a), 0);
	ck_assert_int_eq(zr_store_appending(s), 1);
	ck_assert_int_eq(zr_store_delete(s, d, 1), -EBUSY);
	zr_append_abort(a);
	ck_assert_int_eq(zr_store_appending(s), 0);
	del(s, d, 1);
	ck_assert_int_eq(zr_store_close(s), 0);
}
END_TEST

/* -- begin during a compact: it holds the store while its progress
 * callback waits, so the other thread's begin meets it for sure. */
struct hold {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int in_compact, release;
	zr_store *s;
	int waited_rc;
	atomic_int waited_done;
};

static void hold_progress(void *ctx, uint64_t done, uint64_t total)
{
	struct hold *h = ctx;

	(void)done;
	(void)total;
	pthread_mutex_lock(&h->mu);
	h->in_compact = 1;
	pthread_cond_broadcast(&h->cv);
	while (!h->release)
		pthread_cond_wait(&h->cv, &h->mu);
	pthread_mutex_unlock(&h->mu);
}

static void *compact_thread(void *arg)
{
	struct hold *h = arg;

	ck_assert_int_eq(zr_store_compact(h->s, hold_progress, h), 0);
	return NULL;
}

static void *wait_thread(void *arg)
{
	struct hold *h = arg;
	zr_view *v = NULL;

	h->waited_rc = zr_view_begin(h->s, ZR_VIEW_WAIT, &v);
	atomic_store(&h->waited_done, 1);
	zr_view_end(v);
	return NULL;
}

/* Every call through a ZR_VIEW_TRY view answers ZR_E_BUSY at once while
 * a compact holds the store (a plain view's would wait). */
static void try_busy(zr_store *s, zr_view *v)
{
	uint64_t idx = 3, size, shape[ZR_MAX_NDIM], off[2];
	uint8_t buf[256];
	uint32_t ndim;
	zr_loc l;

	ck_assert_int_eq(zr_view_gather(v, &idx, 1, buf, sizeof(buf), off),
			 ZR_E_BUSY);
	ck_assert_ptr_nonnull(strstr(zr_errmsg(), "ZR_VIEW_TRY"));
	ck_assert_int_eq(zr_view_gather_size(v, &idx, 1, &size), ZR_E_BUSY);
	ck_assert_int_eq(zr_view_loc(v, idx, &l), ZR_E_BUSY);
	if (zr_store_schema(s)->ragged)
		ck_assert_int_eq(zr_view_ragged_shape(v, idx, &ndim, shape),
				 ZR_E_BUSY);
}

START_TEST(test_begin_busy_during_compact)
{
	struct hold h = { .mu = PTHREAD_MUTEX_INITIALIZER,
			  .cv = PTHREAD_COND_INITIALIZER };
	const uint64_t d[] = { 0, 7 };
	pthread_t ct, wt;
	zr_view *v = NULL, *before, *tried;
	uint64_t one = 3, ids[1];

	h.s = make(_i);
	put(h.s, 0, 30);
	ck_assert_int_eq(zr_view_begin(h.s, 0, &before), 0);
	del(h.s, d, 2);
	zr_view_end(before);
	/* begun after the delete: compact does not refuse for it */
	ck_assert_int_eq(zr_view_begin(h.s, ZR_VIEW_TRY, &tried), 0);
	pthread_create(&ct, NULL, compact_thread, &h);
	pthread_mutex_lock(&h.mu);
	while (!h.in_compact)
		pthread_cond_wait(&h.cv, &h.mu);
	pthread_mutex_unlock(&h.mu);
	ck_assert_int_eq(zr_view_begin(h.s, 0, &v), ZR_E_BUSY);
	ck_assert_ptr_null(v);
	ck_assert_ptr_nonnull(strstr(zr_errmsg(), "a delete or compact is "
					  "running"));
	try_busy(h.s, tried);
	pthread_create(&wt, NULL, wait_thread, &h);
	/* The waiting begin cannot finish while compact holds the store. */
	for (int i = 0; i < 20; i++) {
		struct timespec ts = { 0, 1000000 };

		nanosleep(&ts, NULL);
		ck_assert_int_eq(atomic_load(&h.waited_done), 0);
	}
	pthread_mutex_lock(&h.mu);
	h.release = 1;
	pthread_cond_broadcast(&h.cv);
	pthread_mutex_unlock(&h.mu);
	pthread_join(ct, NULL);
	pthread_join(wt, NULL);
	ck_assert_int_eq(h.waited_rc, 0);
	ck_assert_int_eq(zr_view_begin(h.s, 0, &v), 0);
	zr_view_end(v);
	/* the compact returned: the same calls go through */
	ck_assert_int_eq(ids_of(h.s, tried, &one, 1, ids), 0);
	ck_assert_uint_eq(ids[0], 3);
	zr_view_end(tried);
	ck_assert_int_eq(zr_store_close(h.s), 0);
}
END_TEST

/* -- many readers through views against one thread deleting, appending
 * and compacting (the TSan phase runs this suite) */
#define RACE_RECORDS 300
#define RACE_READERS 3

struct race {
	zr_store *s;
	atomic_int stop;
	atomic_int reads, busy, deletes, compacts;
	atomic_uint_fast64_t next_id;
};

/* One view: everything at begin, then random subsets many times over,
 * each the same as at begin; ids unique (no torn delete). */
static void race_view(struct race *r, unsigned *seed)
{
	zr_view *v;
	uint64_t len, top, *want, idx[32], got[32];
	int err = zr_view_begin(r->s, 0, &v);
	char *seen;

	if (err == ZR_E_BUSY) {
		atomic_fetch_add(&r->busy, 1);
		err = zr_view_begin(r->s, ZR_VIEW_WAIT, &v);
	}
	ck_assert_int_eq(err, 0);
	len = zr_view_length(v);
	want = all_ids(r->s, v, len);
	top = atomic_load(&r->next_id);
	seen = calloc(top + 1, 1);
	for (uint64_t i = 0; i < len; i++) {
		ck_assert_uint_lt(want[i], top);
		ck_assert_int_eq(seen[want[i]], 0);
		seen[want[i]] = 1;
	}
	for (int round = 0; len && round < 20; round++) {
		for (int k = 0; k < 32; k++)
			idx[k] = (uint64_t)rand_r(seed) % len;
		ck_assert_int_eq(ids_of(r->s, v, idx, 32, got), 0);
		for (int k = 0; k < 32; k++)
			ck_assert_uint_eq(got[k], want[idx[k]]);
	}
	atomic_fetch_add(&r->reads, 1);
	free(seen);
	free(want);
	zr_view_end(v);
}

static void *race_reader(void *arg)
{
	struct race *r = arg;
	unsigned seed = (unsigned)(uintptr_t)&seed;

	while (!atomic_load(&r->stop))
		race_view(r, &seed);
	return NULL;
}

static void race_write(struct race *r, unsigned *seed, int round)
{
	uint64_t len = zr_store_length(r->s), d[4];
	int err;

	for (int k = 0; k < 4; k++)
		d[k] = (uint64_t)rand_r(seed) % len;
	ck_assert_int_eq(zr_store_delete(r->s, d, 4), 0);
	atomic_fetch_add(&r->deletes, 1);
	if (zr_store_length(r->s) < RACE_RECORDS) {
		uint64_t first = atomic_load(&r->next_id);
		uint64_t n = RACE_RECORDS - zr_store_length(r->s);

		/* Ids are taken before they can be seen. */
		atomic_store(&r->next_id, first + n);
		put(r->s, first, n);
	}
	if (round % 8 == 7) {
		err = zr_store_compact(r->s, NULL, NULL);
		ck_assert(err == 0 || err == ZR_E_BUSY);
		atomic_fetch_add(&r->compacts, !err);
	}
}

START_TEST(test_views_race_maintenance)
{
	struct race r = { .s = make(_i) };
	pthread_t t[RACE_READERS];
	unsigned seed = 7;
	struct timespec end, now;

	put(r.s, 0, RACE_RECORDS);
	atomic_store(&r.next_id, RACE_RECORDS);
	for (int i = 0; i < RACE_READERS; i++)
		pthread_create(&t[i], NULL, race_reader, &r);
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += 2;
	for (int round = 0;; round++) {
		race_write(&r, &seed, round);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > end.tv_sec ||
		    (now.tv_sec == end.tv_sec && now.tv_nsec > end.tv_nsec))
			break;
	}
	atomic_store(&r.stop, 1);
	for (int i = 0; i < RACE_READERS; i++)
		pthread_join(t[i], NULL);
	ck_assert_int_gt(atomic_load(&r.reads), 0);
	ck_assert_int_gt(atomic_load(&r.deletes), 0);
	/* Every view ended: nothing of the log is left. */
	ck_assert_uint_eq(r.s->dlog_entries, 0);
	ck_assert_ptr_null(atomic_load(&r.s->dlog));
	ck_assert_int_eq(zr_store_compact(r.s, NULL, NULL), 0);
	ck_assert_int_eq(zr_store_close(r.s), 0);
}
END_TEST

Suite *suite_store_view(void)
{
	Suite *s = suite_create("store_view");
	TCase *tc = tcase_create("view");

	tcase_add_checked_fixture(tc, ck_dir_setup, ck_dir_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_view_keeps_what_it_saw, 0, 12);
	tcase_add_loop_test(tc, test_view_length_fixed, 0, 6);
	tcase_add_loop_test(tc, test_compact_busy_rule, 0, 6);
	tcase_add_loop_test(tc, test_log_freed_as_views_end, 0, 6);
	tcase_add_test(tc, test_begin_bad_arguments);
	tcase_add_loop_test(tc, test_index_changed, 0, 2);
	tcase_add_test(tc, test_index_changed_forgets);
	tcase_add_test(tc, test_appending);
	tcase_add_loop_test(tc, test_begin_busy_during_compact, 0, 6);
	tcase_add_loop_test(tc, test_views_race_maintenance, 0, 6);
	suite_add_tcase(s, tc);
	return s;
}
