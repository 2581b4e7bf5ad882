/*
 * check_batchfile.c - the batch planner `zrecord batch` and the mount share
 * (src/files/batch_file.h) on real stores: the indices of a plan are the
 * sampler's, its file is the encoder's and fills the same whole or in
 * pieces, the early bound and the byte cap refuse with the same words,
 * the schedule's and a form's refusals come back as text, and a
 * mixture's draw keeps the lengths it drew at and refuses others.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "batch_file.h"
#include "check_suites.h"
#include "check_util.h"
#include "npy_mix.h"

#define N 40
#define B 8

/* A dense <i4 (3,) store of N rows, or a ragged one whose record i has
 * ndim 1 + i % 2 (no packed or padded form takes two of them). */
static zr_store *store_of(const char *name, int ragged)
{
	static const uint64_t shape[] = { 3 };
	zr_schema sc = ck_schema("<i4", ragged ? -1 : 1, shape);
	zr_store *s = ck_store(ck_dir, name, &sc, ZR_CODEC_ZSTD);

	for (uint64_t i = 0; i < N; i++) {
		int32_t v[4] = { (int32_t)i, 1, 2, 3 };
		uint64_t dims[2] = { 2, 2 };
		zr_ragged_in r = { .data = v, .ndim = 1 + (uint32_t)(i % 2),
				   .shape = dims };

		ck_assert_int_eq(ragged ? zr_store_append_ragged(s, &r, 1) :
					  zr_store_append_dense(s, v, 1), 0);
	}
	return s;
}

static struct zrfile_batch_spec spec_of(int form, zrcommon_schedule *sc)
{
	struct zrfile_batch_spec s = {
		.cfg = { .mode = ZR_SAMPLER_CYCLIC, .seed = 7, .batch_size = B,
			 .world = 1 },
		.start = 3, .step = 2, .sched = sc, .form = form,
	};

	return s;
}

static int plan_one(zr_store *zs, const struct zrfile_batch_spec *s,
		    struct zrfile_batch *b, char *msg, size_t cap)
{
	zrfile_source *src = zrfile_batch_sources(b, 0, 1);

	ck_assert_ptr_nonnull(src);
	src->zs = zs;
	return zrfile_batch_plan(b, s, 0, 0, msg, cap);
}

START_TEST(test_plan_is_the_samplers_batch)
{
	zr_store *zs = store_of("d", 0);
	zrcommon_schedule sc = { 0 };
	struct zrfile_batch_spec s = spec_of(ZRFILE_STACK, &sc);
	struct zrfile_batch b;
	struct zrfile_batch_pieces pc;
	zr_sampler cfg = s.cfg;
	uint64_t want[B];
	zr_stream *st;
	char msg[320], *whole, *parts;

	ck_assert_int_eq(plan_one(zs, &s, &b, msg, sizeof(msg)), 0);
	ck_assert_str_eq(msg, "");
	cfg.length = N;
	ck_assert_int_eq(zr_stream_new(cfg.mode, cfg.seed, N, B, &st), 0);
	ck_assert_int_eq(zr_stream_batch(st, 3, 2, 0, 1, B, NULL, want), 0);
	zr_stream_free(st);
	ck_assert_uint_eq(b.count, B);
	ck_assert_uint_eq(b.length, N);
	ck_assert_mem_eq(b.idx, want, sizeof(want));
	ck_assert_uint_eq(b.total, b.file.total);
	/* pieces of one row each fill the file filled whole */
	zrfile_batch_pieces(&b, &pc);
	ck_assert_uint_ge(pc.at, 1);
	ck_assert_uint_eq(pc.n, 1); /* 8 rows of 12 bytes: one piece */
	ck_assert_uint_eq(zrfile_batch_piece_of(&pc, b.total - 1), 0);
	pc.bytes = 12;
	pc.n = B;
	ck_assert_uint_eq(zrfile_batch_piece_of(&pc, 0), 0);
	ck_assert_uint_eq(zrfile_batch_piece_of(&pc, pc.at + 12 * 5), 5);
	ck_assert_uint_eq(zrfile_batch_piece_of(&pc, b.total - 1), B - 1);
	whole = malloc(b.total);
	parts = calloc(1, b.total);
	ck_assert_int_eq(zrfile_batch_fill(&b, whole), 0);
	for (size_t k = B; k-- > 0;)
		ck_assert_int_eq(zrfile_batch_fill_piece(&b, &pc, parts, k),
				 0);
	ck_assert_mem_eq(whole, parts, b.total);
	free(whole);
	free(parts);
	zrfile_batch_free(&b);
	zr_store_close(zs);
}
END_TEST

START_TEST(test_refusals_say_why)
{
	zr_store *zs = store_of("d", 0), *rg = store_of("r", 1);
	zrcommon_schedule sc = { 0 };
	struct zrfile_batch_spec s = spec_of(ZRFILE_STACK, &sc);
	struct zrfile_batch_least l;
	struct zrfile_batch b;
	char msg[320];

	/* before any view: (8 + 12) bytes a record at least */
	s.max_batch = 20 * B - 1;
	zrfile_batch_least_init(&l, 0);
	zrfile_batch_least_add(&s, &l, zs);
	ck_assert_int_eq(zrfile_batch_bound(&s, &l, msg, sizeof(msg)), -EFBIG);
	ck_assert_ptr_nonnull(strstr(msg, "max_batch_bytes=159"));
	s.max_batch = 20 * B;
	ck_assert_int_eq(zrfile_batch_bound(&s, &l, msg, sizeof(msg)), 0);
	/* the file's header passes the cap the bound let through */
	ck_assert_int_eq(plan_one(zs, &s, &b, msg, sizeof(msg)), -EFBIG);
	ck_assert_ptr_nonnull(strstr(msg, "over max_batch_bytes=160"));
	zrfile_batch_free(&b);
	/* a batch past the records the schedule gives the store */
	s.max_batch = 0;
	ck_assert_int_eq(zrcommon_schedule_lengths(&sc, "41", ',', msg,
						   sizeof(msg)), 0);
	ck_assert_int_eq(plan_one(zs, &s, &b, msg, sizeof(msg)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(msg, "has 40 records, fewer than"));
	zrfile_batch_free(&b);
	zrcommon_schedule_free(&sc);
	/* records of two ndims cannot be packed nor padded */
	s.cfg.mode = ZR_SAMPLER_SEQUENTIAL;
	s.form = ZRFILE_PACKED;
	ck_assert_int_eq(plan_one(rg, &s, &b, msg, sizeof(msg)), -EINVAL);
	ck_assert_str_eq(msg, "its records cannot be packed: they must have "
			 "one ndim");
	zrfile_batch_free(&b);
	s.form = ZRFILE_LENGTHS;
	ck_assert_int_eq(plan_one(rg, &s, &b, msg, sizeof(msg)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(msg, "cannot be padded"));
	zrfile_batch_free(&b);
	zr_store_close(rg);
	zr_store_close(zs);
}
END_TEST

START_TEST(test_mixture_keeps_its_lengths)
{
	zr_store *zs[2] = { store_of("a", 0), store_of("b", 0) };
	uint64_t weight[2] = { 1, 3 }, lens[2];
	zrcommon_mixfile mf = { .k = 2, .weight = weight };
	zrcommon_schedule sc = { 0 };
	struct zrfile_batch_spec s = spec_of(ZRFILE_INDICES, &sc);
	struct zrfile_batch b, again;
	char msg[320];

	s.mix = &mf;
	for (int pass = 0; pass < 2; pass++) {
		zrfile_source *grid = zrfile_batch_sources(pass ? &again : &b,
							   2, 1);

		grid[0].zs = zs[0];
		grid[1].zs = zs[1];
	}
	ck_assert_int_eq(zrfile_batch_plan(&b, &s, 0, 0, msg, sizeof(msg)),
			 0);
	ck_assert_uint_eq(b.length, 2 * N);
	ck_assert_ptr_nonnull(b.lens);
	ck_assert_uint_eq(b.lens[1], N);
	for (size_t i = 0; i < B; i++) {
		ck_assert_uint_lt(ZRFILE_MIX_SRC(b.idx[i]), 2);
		ck_assert_uint_lt(ZRFILE_MIX_IDX(b.idx[i]), N);
	}
	/* the lengths a lookup drew at give its batch again; another sum is
	 * a batch drawn at other lengths */
	memcpy(lens, b.lens, sizeof(lens));
	s.lens = lens;
	ck_assert_int_eq(zrfile_batch_plan(&again, &s, 0, 2 * N, msg,
					   sizeof(msg)), 0);
	ck_assert_mem_eq(again.idx, b.idx, B * sizeof(*b.idx));
	zrfile_batch_free(&again);
	s.lens = NULL;
	zrfile_batch_sources(&again, 2, 1)[0].zs = zs[0];
	again.grid[1].zs = zs[1];
	ck_assert_int_eq(zrfile_batch_plan(&again, &s, 0, 2 * N + 1, msg,
					   sizeof(msg)), -ESTALE);
	zrfile_batch_free(&again);
	zrfile_batch_free(&b);
	zr_store_close(zs[0]);
	zr_store_close(zs[1]);
}
END_TEST

Suite *suite_batchfile(void)
{
	Suite *s = suite_create("batchfile");
	TCase *tc = tcase_create("batchfile");

	tcase_add_checked_fixture(tc, ck_dir_setup, ck_dir_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_plan_is_the_samplers_batch);
	tcase_add_test(tc, test_refusals_say_why);
	tcase_add_test(tc, test_mixture_keeps_its_lengths);
	suite_add_tcase(s, tc);
	return s;
}
