/*
 * check_store_reserve.c - dense rows put into reserved slots
 * (zr_append_dense_reserve/put/stage): what is staged is what
 * zr_append_dense of the kept rows stages (byte for byte in a raw store,
 * where the slots are data.zr's own rows), puts from several threads at
 * once, slots given back leave no bytes behind, and misuse fails the
 * session with -EINVAL.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_suites.h"
#include "check_util.h"
#include "zrecord.h"

/* Rows of 4 KiB and more are put with a pwrite each, smaller ones
 * collected: the tests run both sizes. */
#define ROW_MAX 4096
#define SLOTS 64

static size_t ROW = ROW_MAX; /* <u8 (ROW / 8,) */

static zr_store *make(const char *name, zr_codec codec)
{
	uint64_t shape[1] = { ROW / 8 };
	zr_schema sc = ck_schema("<u8", 1, shape);

	return ck_store(ck_dir, name, &sc, codec);
}

static void row_bytes(uint8_t *b, uint64_t id)
{
	ck_fill(b, ROW, id);
	memcpy(b, &id, 8);
}

struct putter {
	zr_append *a;
	unsigned parity;
	int rc;
};

/* Puts the slots of one parity: two of these race over one reservation. */
static void *put_half(void *arg)
{
	struct putter *p = arg;
	uint8_t b[ROW_MAX];

	for (uint64_t k = p->parity; k < SLOTS && !p->rc; k += 2) {
		row_bytes(b, 1000 + k);
		p->rc = zr_append_dense_put(p->a, k, b);
	}
	return NULL;
}

/* Store "r" through reservations (slots of a first batch kept with gaps,
 * a second batch whole), store "d" through zr_append_dense of the same
 * rows; returns the rows kept, in order, in ids. */
static size_t fill_both(zr_store *r, zr_store *d, uint64_t *ids)
{
	static const uint64_t keep[] = { 0, 2, 3, 9, 10, 40, 63 };
	const size_t nkeep = sizeof(keep) / sizeof(keep[0]);
	struct putter p[2];
	pthread_t t[2];
	zr_append *a;
	uint8_t b[ROW_MAX];
	size_t n = 0;

	ck_assert_int_eq(zr_append_begin(r, &a), 0);
	ck_assert_int_eq(zr_append_dense_reserve(a, SLOTS), 0);
	for (unsigned i = 0; i < 2; i++) {
		p[i] = (struct putter){ a, i, 0 };
		ck_assert_int_eq(pthread_create(&t[i], NULL, put_half, &p[i]),
				 0);
	}
	for (unsigned i = 0; i < 2; i++) {
		pthread_join(t[i], NULL);
		ck_assert_int_eq(p[i].rc, 0);
	}
	ck_assert_int_eq(zr_append_dense_stage(a, keep, nkeep), 0);
	for (size_t j = 0; j < nkeep; j++)
		ids[n++] = 1000 + keep[j];
	ck_assert_int_eq(zr_append_dense_reserve(a, 3), 0);
	for (uint64_t k = 0; k < 3; k++) {
		row_bytes(b, 5000 + k);
		ck_assert_int_eq(zr_append_dense_put(a, k, b), 0);
		ids[n++] = 5000 + k;
	}
	ck_assert_int_eq(zr_append_dense_stage(a, NULL, 3), 0);
	ck_assert_int_eq(zr_append_count(a), n);
	ck_assert_int_eq(zr_append_commit(a), 0);

	/* a row a call: one call's frames go where the pool's lanes put
	 * them, in the order they finish */
	ck_assert_int_eq(zr_append_begin(d, &a), 0);
	for (size_t j = 0; j < n; j++) {
		row_bytes(b, ids[j]);
		ck_assert_int_eq(zr_append_dense(a, b, 1), 0);
	}
	ck_assert_int_eq(zr_append_commit(a), 0);
	return n;
}

static void same_file(const char *a, const char *b, const char *file)
{
	char pa[4096], pb[4096];
	uint64_t n;
	uint8_t *x, *y;

	snprintf(pa, sizeof(pa), "%s/%s", a, file);
	snprintf(pb, sizeof(pb), "%s/%s", b, file);
	n = ck_file_size(ck_dir, pa);
	ck_assert_uint_eq(ck_file_size(ck_dir, pb), n);
	x = malloc(n);
	y = malloc(n);
	ck_file_read(ck_dir, pa, 0, x, n);
	ck_file_read(ck_dir, pb, 0, y, n);
	ck_assert(memcmp(x, y, n) == 0);
	free(x);
	free(y);
}

START_TEST(test_reserved_rows_are_dense_appends)
{
	zr_codec codec = ck_codecs[_i % 3];
	zr_store *r, *d;
	uint64_t ids[16], *got = malloc(16 * ROW_MAX);
	uint64_t idx[16];
	uint8_t want[ROW_MAX];
	size_t n;

	ROW = _i < 3 ? ROW_MAX : 24;
	r = make("r", codec);
	d = make("d", codec);
	n = fill_both(r, d, ids);

	ck_assert_uint_eq(zr_store_length(r), n);
	for (size_t j = 0; j < n; j++)
		idx[j] = j;
	ck_assert_int_eq(zr_store_gather(r, idx, n, got, 16 * ROW_MAX, NULL),
			 0);
	for (size_t j = 0; j < n; j++) {
		row_bytes(want, ids[j]);
		ck_assert(memcmp((uint8_t *)got + j * ROW, want, ROW) == 0);
	}
	ck_assert_int_eq(zr_store_close(r), 0);
	ck_assert_int_eq(zr_store_close(d), 0);
	/* A raw store's slots are its own rows: the files are the same.
	 * (A compressed one's frames are the pool's, placed as it goes.) */
	if (codec == ZR_CODEC_RAW) {
		same_file("r", "d", "meta.zr");
		same_file("r", "d", "data.zr");
	}
	free(got);
}
END_TEST

/* Slots put and not staged leave data.zr as it was. */
START_TEST(test_unstaged_slots_leave_nothing)
{
	zr_store *s;
	zr_append *a;
	uint8_t b[ROW_MAX];
	uint64_t before;

	ROW = _i ? 24 : ROW_MAX;
	s = make("s", ZR_CODEC_RAW);
	row_bytes(b, 1);
	ck_assert_int_eq(zr_store_append_dense(s, b, 1), 0);
	before = ck_file_size(ck_dir, "s/data.zr");
	ck_assert_int_eq(zr_append_begin(s, &a), 0);
	ck_assert_int_eq(zr_append_dense_reserve(a, 10), 0);
	for (uint64_t k = 0; k < 10; k++)
		ck_assert_int_eq(zr_append_dense_put(a, k, b), 0);
	ck_assert_int_eq(zr_append_dense_stage(a, NULL, 4), 0);
	ck_assert_uint_eq(ck_file_size(ck_dir, "s/data.zr"), before + 4 * ROW);
	/* a reservation that a commit ends unstaged */
	ck_assert_int_eq(zr_append_dense_reserve(a, 10), 0);
	ck_assert_int_eq(zr_append_dense_put(a, 9, b), 0);
	ck_assert_int_eq(zr_append_commit(a), 0);
	ck_assert_uint_eq(zr_store_length(s), 5);
	ck_assert_uint_eq(ck_file_size(ck_dir, "s/data.zr"), before + 4 * ROW);
	/* and one that abort gives back */
	ck_assert_int_eq(zr_append_begin(s, &a), 0);
	ck_assert_int_eq(zr_append_dense_reserve(a, 3), 0);
	ck_assert_int_eq(zr_append_dense_put(a, 2, b), 0);
	zr_append_abort(a);
	ck_assert_uint_eq(zr_store_length(s), 5);
	ck_assert_uint_eq(ck_file_size(ck_dir, "s/data.zr"), before + 4 * ROW);
	ck_assert_int_eq(zr_store_close(s), 0);
}
END_TEST

/* Each misuse: -EINVAL, and the session is failed (commit says so, the
 * store keeps its length). */
START_TEST(test_misuse_fails_the_session)
{
	static const uint64_t descending[] = { 2, 1 };
	zr_store *s = make("s", ck_codecs[_i % 3]);
	zr_append *a;
	uint8_t b[ROW_MAX] = { 0 };
	int step = _i / 3;

	ck_assert_int_eq(zr_append_begin(s, &a), 0);
	ck_assert_int_eq(zr_append_dense_reserve(a, 0), -EINVAL);
	if (step == 0) {
		ck_assert_int_eq(zr_append_dense_stage(a, NULL, 0), -EINVAL);
	} else {
		ck_assert_int_eq(zr_append_dense_reserve(a, 3), 0);
		if (step == 1)
			ck_assert_int_eq(zr_append_dense_put(a, 3, b),
					 -EINVAL);
		else
			ck_assert_int_eq(step == 2 ?
					 zr_append_dense_stage(a, NULL, 4) :
					 zr_append_dense_stage(a, descending,
							       2), -EINVAL);
	}
	ck_assert_int_eq(zr_append_commit(a), -EINVAL);
	ck_assert_uint_eq(zr_store_length(s), 0);
	ck_assert_int_eq(zr_store_close(s), 0);
}
END_TEST

Suite *suite_store_reserve(void)
{
	Suite *s = suite_create("store_reserve");
	TCase *tc = tcase_create("reserve");

	tcase_add_checked_fixture(tc, ck_dir_setup, ck_dir_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_reserved_rows_are_dense_appends, 0, 6);
	tcase_add_loop_test(tc, test_unstaged_slots_leave_nothing, 0, 2);
	tcase_add_loop_test(tc, test_misuse_fails_the_session, 0, 12);
	suite_add_tcase(s, tc);
	return s;
}
