/*
 * check_sampler.c - the sampler: pinned known answers (so the algorithm
 * can never change silently), determinism, cyclic coverage, iid
 * uniformity, rank/world slicing and config checks.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check_suites.h"
#include "zrecord.h"

/* Computed by tests/fixtures/sampler_ref.py, an independent Python
 * transcription of the algorithm documented in zrecord.h. */
static const struct {
	zr_sampler_mode mode;
	uint64_t seed, n, b, step;
	uint64_t want[8];
} known[] = {
	{ ZR_SAMPLER_IID, 42u, 1000000ull, 8, 0ull,
	  { 614640ull, 450108ull, 206392ull, 399864ull, 746061ull, 545292ull,
	    385685ull, 808332ull } },
	{ ZR_SAMPLER_IID, 42u, 1000000ull, 8, 1ull,
	  { 99334ull, 975627ull, 121431ull, 408344ull, 583202ull, 3244ull,
	    107373ull, 493626ull } },
	{ ZR_SAMPLER_IID, 7u, 10ull, 8, 3ull,
	  { 2ull, 9ull, 3ull, 9ull, 0ull, 0ull, 8ull, 2ull } },
	{ ZR_SAMPLER_IID, 1u, 1099511627776ull, 4, 5ull,
	  { 814346164012ull, 95971327257ull, 121451909375ull,
	    1031259360119ull } },
	{ ZR_SAMPLER_IID, 3u, 9223372036854775813ull, 4, 2ull,
	  { 8699803099087631019ull, 7076848711980738118ull,
	    5674762717336016789ull, 2062792391603613868ull } },
	{ ZR_SAMPLER_CYCLIC, 42u, 1000000ull, 8, 0ull,
	  { 110435ull, 613905ull, 821349ull, 954703ull, 601016ull, 430123ull,
	    32878ull, 713592ull } },
	{ ZR_SAMPLER_CYCLIC, 42u, 1000000ull, 8, 124999ull,
	  { 47450ull, 73141ull, 494116ull, 689455ull, 388739ull, 987207ull,
	    277027ull, 443320ull } },
	{ ZR_SAMPLER_CYCLIC, 42u, 1000000ull, 8, 125000ull,
	  { 879214ull, 640326ull, 292725ull, 47771ull, 380293ull, 927197ull,
	    545020ull, 1180ull } },
	{ ZR_SAMPLER_CYCLIC, 9u, 5ull, 2, 7ull, { 1ull, 4ull } },
	{ ZR_SAMPLER_CYCLIC, 5u, 1099511627776ull, 4, 3ull,
	  { 297017491050ull, 754030973610ull, 1062140722867ull,
	    432027608739ull } },
	{ ZR_SAMPLER_CYCLIC, 11u, 18446744073709551615ull, 3, 1ull,
	  { 16259550800586804941ull, 1791221175991374427ull,
	    3628767055237507951ull } },
	{ ZR_SAMPLER_SEQUENTIAL, 0u, 10ull, 4, 2ull,
	  { 8ull, 9ull, 0ull, 1ull } },
	{ ZR_SAMPLER_SEQUENTIAL, 0u, 18446744073709551615ull, 3,
	  9223372036854775808ull,
	  { 9223372036854775809ull, 9223372036854775810ull,
	    9223372036854775811ull } },
};

static zr_sampler cfg(zr_sampler_mode mode, uint64_t seed, uint64_t n,
		      uint64_t b)
{
	zr_sampler c = { .mode = mode, .seed = seed, .length = n,
			 .batch_size = b };

	return c;
}

static void batch_ok(const zr_sampler *c, uint64_t step, uint64_t *out)
{
	int rc = zr_sampler_batch(c, step, out);

	ck_assert_msg(rc == 0, "%s: %s", zr_errname(rc), zr_errmsg());
	for (uint64_t i = 0; i < c->batch_size; i++)
		ck_assert_uint_lt(out[i], c->length);
}

START_TEST(test_known_answers)
{
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		zr_sampler c = cfg(known[i].mode, known[i].seed, known[i].n,
				   known[i].b);
		uint64_t out[8];

		batch_ok(&c, known[i].step, out);
		for (uint64_t j = 0; j < known[i].b; j++)
			ck_assert_msg(out[j] == known[i].want[j],
				      "case %zu position %llu", i,
				      (unsigned long long)j);
	}
}
END_TEST

START_TEST(test_deterministic)
{
	for (int m = ZR_SAMPLER_IID; m <= ZR_SAMPLER_CYCLIC; m++) {
		zr_sampler a = cfg(m, 1234, 1000000, 64), b = a;
		uint64_t x[64], y[64], z[64];

		b.seed = 1235;
		batch_ok(&a, 77, x);
		batch_ok(&a, 77, y);
		batch_ok(&b, 77, z);
		ck_assert_int_eq(memcmp(x, y, sizeof(x)), 0);
		ck_assert_int_ne(memcmp(x, z, sizeof(x)), 0);
		batch_ok(&a, 78, y);
		ck_assert_int_ne(memcmp(x, y, sizeof(x)), 0);
	}
}
END_TEST

/* Runs one cycle of P steps and counts how often each index appears. */
static void count_cycle(const zr_sampler *c, uint64_t cycle, unsigned *seen)
{
	uint64_t wb = c->batch_size * (c->world > 1 ? c->world : 1);
	uint64_t p = c->length / wb, out[64];

	memset(seen, 0, c->length * sizeof(*seen));
	for (uint64_t t = cycle * p; t < (cycle + 1) * p; t++) {
		batch_ok(c, t, out);
		for (uint64_t i = 0; i < c->batch_size; i++)
			seen[out[i]]++;
	}
}

START_TEST(test_cyclic_coverage)
{
	static const uint64_t lengths[] = { 1000, 1024, 5, 2, 1, 63, 65, 4097 };
	static const uint64_t batches[] = { 64, 64, 2, 2, 1, 7, 64, 64 };
	unsigned *seen = calloc(4097, sizeof(*seen));

	ck_assert_ptr_nonnull(seen);
	for (size_t k = 0; k < sizeof(lengths) / sizeof(lengths[0]); k++) {
		zr_sampler c = cfg(ZR_SAMPLER_CYCLIC, 99, lengths[k],
				   batches[k]);
		uint64_t p = c.length / c.batch_size, distinct = 0;

		count_cycle(&c, 3, seen);
		for (uint64_t i = 0; i < c.length; i++) {
			ck_assert_uint_le(seen[i], 1);
			distinct += seen[i];
		}
		ck_assert_uint_eq(distinct, p * c.batch_size);
	}
	free(seen);
}
END_TEST

START_TEST(test_cyclic_remainder_moves)
{
	zr_sampler c = cfg(ZR_SAMPLER_CYCLIC, 5, 1000, 64);
	unsigned a[1000], b[1000];
	uint64_t missed_both = 0, missed_a = 0;

	count_cycle(&c, 0, a);
	count_cycle(&c, 1, b);
	for (int i = 0; i < 1000; i++) {
		missed_a += !a[i];
		missed_both += !a[i] && !b[i];
	}
	ck_assert_uint_eq(missed_a, 1000 - 15 * 64);
	ck_assert_uint_lt(missed_both, missed_a);
	/* The world-2 cycle serves the same positions as world 1, batch 2B. */
	c.world = 2;
	c.batch_size = 32;
	count_cycle(&c, 0, b);
	c.rank = 1;
	count_cycle(&c, 0, a);
	for (int i = 0; i < 1000; i++)
		ck_assert_uint_le(a[i] + b[i], 1);
}
END_TEST

START_TEST(test_small_and_large)
{
	uint64_t out[64];

	for (int m = ZR_SAMPLER_SEQUENTIAL; m <= ZR_SAMPLER_CYCLIC; m++) {
		zr_sampler one = cfg(m, 3, 1, 1), big = cfg(m, 3, 1ull << 40,
							     64);
		zr_sampler huge = cfg(m, 3, UINT64_MAX, 64);

		for (uint64_t t = 0; t < 50; t++) {
			batch_ok(&one, t, out);
			ck_assert_uint_eq(out[0], 0);
			batch_ok(&big, t * 1000003, out);
			batch_ok(&huge, UINT64_MAX - t, out);
		}
	}
	/* iid with a batch larger than the index space. */
	{
		zr_sampler c = cfg(ZR_SAMPLER_IID, 1, 2, 64);
		int ones = 0;

		batch_ok(&c, 0, out);
		for (int i = 0; i < 64; i++)
			ones += (int)out[i];
		ck_assert_int_gt(ones, 10);
		ck_assert_int_lt(ones, 54);
	}
}
END_TEST

START_TEST(test_iid_uniform)
{
	zr_sampler c = cfg(ZR_SAMPLER_IID, 2024, 100, 1000);
	uint64_t out[1000], hist[100] = { 0 };
	double chi2 = 0;

	for (uint64_t t = 0; t < 100; t++) {
		batch_ok(&c, t, out);
		for (int i = 0; i < 1000; i++)
			hist[out[i]]++;
	}
	for (int i = 0; i < 100; i++)
		chi2 += (hist[i] - 1000.0) * (hist[i] - 1000.0) / 1000.0;
	/* 99 degrees of freedom: the 99.9% critical value is 148.2. */
	ck_assert_msg(chi2 < 148.2, "chi2 = %f", chi2);
}
END_TEST

START_TEST(test_sequential)
{
	zr_sampler c = cfg(ZR_SAMPLER_SEQUENTIAL, 0, 10, 4);
	uint64_t out[4];

	batch_ok(&c, 0, out);
	ck_assert_uint_eq(out[0], 0);
	ck_assert_uint_eq(out[3], 3);
	batch_ok(&c, 2, out);
	ck_assert_uint_eq(out[0], 8);
	ck_assert_uint_eq(out[1], 9);
	ck_assert_uint_eq(out[2], 0);
	ck_assert_uint_eq(out[3], 1);
	c.seed = 99; /* unused */
	batch_ok(&c, 2, out);
	ck_assert_uint_eq(out[0], 8);
}
END_TEST

START_TEST(test_rank_world)
{
	for (int m = ZR_SAMPLER_SEQUENTIAL; m <= ZR_SAMPLER_CYCLIC; m++) {
		zr_sampler whole = cfg(m, 42, 1000, 12);
		uint64_t all[12], part[4];

		for (uint64_t t = 0; t < 200; t += 13) {
			batch_ok(&whole, t, all);
			for (uint32_t r = 0; r < 3; r++) {
				zr_sampler c = cfg(m, 42, 1000, 4);

				c.world = 3;
				c.rank = r;
				batch_ok(&c, t, part);
				ck_assert_int_eq(memcmp(part, all + 4 * r,
							sizeof(part)), 0);
			}
		}
	}
}
END_TEST

START_TEST(test_check)
{
	zr_sampler c = cfg(ZR_SAMPLER_CYCLIC, 1, 10, 5);
	uint64_t out[16] = { 7 };

	ck_assert_int_eq(zr_sampler_check(&c), 0);
	c.length = 0;
	ck_assert_int_eq(zr_sampler_batch(&c, 0, out), -EINVAL);
	ck_assert_uint_eq(out[0], 7);
	c.length = 10;
	c.batch_size = 0;
	ck_assert_int_eq(zr_sampler_check(&c), -EINVAL);
	c.batch_size = 11;
	ck_assert_int_eq(zr_sampler_check(&c), -EINVAL);
	c.batch_size = 5;
	c.world = 2;
	ck_assert_int_eq(zr_sampler_check(&c), 0);
	c.world = 3;
	ck_assert_int_eq(zr_sampler_check(&c), -EINVAL);
	c.mode = ZR_SAMPLER_IID;
	ck_assert_int_eq(zr_sampler_check(&c), 0);
	c.rank = 3;
	ck_assert_int_eq(zr_sampler_check(&c), -EINVAL);
	c.world = 0;
	c.rank = 1;
	ck_assert_int_eq(zr_sampler_check(&c), -EINVAL);
	c.rank = 0;
	c.world = 2;
	c.batch_size = 1ull << 63;
	ck_assert_int_eq(zr_sampler_check(&c), -EINVAL);
	ck_assert_str_ne(zr_errmsg(), "");
	c.batch_size = 1;
	c.mode = (zr_sampler_mode)3;
	ck_assert_int_eq(zr_sampler_check(&c), -EINVAL);
	ck_assert_int_eq(zr_sampler_check(NULL), -EINVAL);
}
END_TEST

START_TEST(test_mode_names)
{
	zr_sampler_mode m;

	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(zr_sampler_mode_parse(
			zr_sampler_mode_name((zr_sampler_mode)i), &m), 0);
		ck_assert_int_eq(m, i);
	}
	ck_assert_str_eq(zr_sampler_mode_name(ZR_SAMPLER_CYCLIC), "cyclic");
	ck_assert_int_eq(zr_sampler_mode_parse("random", &m), -EINVAL);
	ck_assert_int_eq(zr_sampler_mode_parse("IID", &m), -EINVAL);
}
END_TEST

Suite *suite_sampler(void)
{
	Suite *s = suite_create("sampler");
	TCase *tc = tcase_create("sampler");

	tcase_add_test(tc, test_known_answers);
	tcase_add_test(tc, test_deterministic);
	tcase_add_test(tc, test_cyclic_coverage);
	tcase_add_test(tc, test_cyclic_remainder_moves);
	tcase_add_test(tc, test_small_and_large);
	tcase_add_test(tc, test_iid_uniform);
	tcase_add_test(tc, test_sequential);
	tcase_add_test(tc, test_rank_world);
	tcase_add_test(tc, test_check);
	tcase_add_test(tc, test_mode_names);
	suite_add_tcase(s, tc);
	return s;
}
