/*
 * check_stream.c - position streams: start 0 gives the sampler's batches,
 * start P continues them, elastic (world, batch) changes serve each
 * cycle's records exactly once, mixtures keep their shares and their
 * sources' cycles, skips and growth keep every other position's record,
 * and pinned answers of tests/fixtures/sampler_ref.py's Stream.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check_suites.h"
#include "zrecord.h"

static zr_stream *plain(zr_sampler_mode m, uint64_t seed, uint64_t n,
			uint64_t g)
{
	zr_stream *st = NULL;
	int rc = zr_stream_new(m, seed, n, g, &st);

	ck_assert_msg(rc == 0, "%s: %s", zr_errname(rc), zr_errmsg());
	return st;
}

static zr_stream *mix(uint64_t seed, uint32_t k, const uint64_t *len,
		      const uint64_t *w)
{
	zr_stream *st = NULL;
	int rc = zr_stream_new_mixture(seed, k, len, w, &st);

	ck_assert_msg(rc == 0, "%s: %s", zr_errname(rc), zr_errmsg());
	return st;
}

static void map_ok(const zr_stream *st, uint64_t pos, uint64_t n,
		   uint32_t *src, uint64_t *idx)
{
	int rc = zr_stream_map(st, pos, n, src, idx);

	ck_assert_msg(rc == 0, "%s: %s", zr_errname(rc), zr_errmsg());
}

START_TEST(test_start0_is_sampler)
{
	static const uint64_t lengths[] = { 1, 5, 1000, 1024, 4097 };

	for (int m = ZR_SAMPLER_SEQUENTIAL; m <= ZR_SAMPLER_CYCLIC; m++)
		for (size_t k = 0; k < 5; k++)
			for (uint32_t w = 1; w <= 3; w++) {
				uint64_t b = lengths[k] >= 3 * 7 ? 7 : 1;
				zr_sampler c = { .mode = m, .seed = 77,
						 .length = lengths[k],
						 .batch_size = b, .world = w };
				zr_stream *st;
				uint64_t want[7], got[7];

				if (m == ZR_SAMPLER_CYCLIC && w * b > c.length)
					continue;
				st = plain(m, 77, c.length, w * b);
				for (uint64_t t = 0; t < 400; t += 7)
					for (c.rank = 0; c.rank < w; c.rank++) {
						ck_assert_int_eq(zr_sampler_batch(
							&c, t, want), 0);
						ck_assert_int_eq(zr_stream_batch(
							st, 0, t, c.rank, w, b,
							NULL, got), 0);
						ck_assert_int_eq(memcmp(want, got,
							b * 8), 0);
						/* start = P continues at step
						 * t - P / (W B). */
						ck_assert_int_eq(zr_stream_batch(
							st, 3 * w * b, t, c.rank,
							w, b, NULL, got), 0);
						ck_assert_int_eq(zr_sampler_batch(
							&c, t + 3, want), 0);
						ck_assert_int_eq(memcmp(want, got,
							b * 8), 0);
					}
				zr_stream_free(st);
			}
}
END_TEST

/* A run of random (world, batch) changes at step boundaries over many
 * cycles: every cycle's positions serve distinct records, L of them. */
static void elastic_run(uint64_t n, uint64_t g, unsigned seed)
{
	zr_stream *st = plain(ZR_SAMPLER_CYCLIC, seed, n, g);
	uint64_t len = n / g * g, pos = 0, cycles = 0;
	unsigned char *seen = calloc(n, 1);
	uint64_t in_cycle = 0, idx[64];

	ck_assert_ptr_nonnull(seen);
	srand(seed);
	while (cycles < 12) {
		uint32_t w = 1 + (uint32_t)(rand() % 4);
		uint64_t b = 1 + (uint64_t)(rand() % 16), steps = 1 + rand() % 9;
		uint64_t start = pos;

		for (uint64_t t = 0; t < steps; t++)
			for (uint32_t r = 0; r < w; r++) {
				ck_assert_int_eq(zr_stream_batch(st, start, t,
						 r, w, b, NULL, idx), 0);
				for (uint64_t i = 0; i < b; i++) {
					uint64_t p = start + (t * w + r) * b + i;

					if (p / len != cycles) {
						ck_assert_uint_eq(in_cycle, len);
						memset(seen, 0, n);
						in_cycle = 0;
						cycles = p / len;
					}
					ck_assert_uint_lt(idx[i], n);
					ck_assert_msg(!seen[idx[i]], "record "
						      "%llu twice in cycle "
						      "%llu", (unsigned long
						      long)idx[i], (unsigned
						      long long)cycles);
					seen[idx[i]] = 1;
					in_cycle++;
				}
			}
		pos = start + steps * w * b;
	}
	free(seen);
	zr_stream_free(st);
}

START_TEST(test_elastic_exactly_once)
{
	elastic_run(1000, 64, 1);
	elastic_run(97, 12, 2);
	elastic_run(4096, 1, 3);
	elastic_run(65, 64, 4);
}
END_TEST

START_TEST(test_elastic_iid_unchanged)
{
	zr_stream *st = plain(ZR_SAMPLER_IID, 5, 1000, 32);
	uint64_t whole[96], part[12];

	ck_assert_int_eq(zr_stream_map(st, 100, 96, NULL, whole), 0);
	/* world 4 x batch 3 from position 100: the same stream. */
	for (uint64_t t = 0; t < 8; t++)
		for (uint32_t r = 0; r < 4; r++) {
			ck_assert_int_eq(zr_stream_batch(st, 100, t, r, 4, 3,
							 NULL, part), 0);
			ck_assert_int_eq(memcmp(part, whole + (t * 4 + r) * 3,
						24), 0);
		}
	zr_stream_free(st);
}
END_TEST

/* tests/fixtures/sampler_ref.py Stream: mixture ([5, 100, 17], [3, 1, 2]),
 * seed 7; then weights [1, 1, 0] from 9, grow source 0 to 8 at 10, skip
 * 11..13. */
static const uint64_t mix_want[20][2] = {
	{ 0, 4 }, { 2, 4 }, { 0, 1 }, { 1, 33 }, { 0, 2 }, { 2, 12 },
	{ 0, 3 }, { 2, 3 }, { 0, 0 }, { 0, 3 }, { 1, 28 }, { 0, 1 },
	{ 1, 64 }, { 0, 4 }, { 1, 34 }, { 0, 0 }, { 1, 50 }, { 0, 2 },
	{ 1, 82 }, { 0, 7 }
};
static const uint64_t batch_want[4][2] = { { 1, 8 }, { 0, 3 }, { 1, 25 },
					   { 0, 2 } };

START_TEST(test_mixture_known)
{
	static const uint64_t len[] = { 5, 100, 17 }, w[] = { 3, 1, 2 };
	static const uint64_t w2[] = { 1, 1, 0 };
	zr_stream *st = mix(7, 3, len, w);
	uint32_t src[20];
	uint64_t idx[20];

	ck_assert_uint_eq(zr_stream_sources(st), 3);
	map_ok(st, 0, 9, src, idx);
	for (int i = 0; i < 9; i++) {
		ck_assert_uint_eq(src[i], mix_want[i][0]);
		ck_assert_uint_eq(idx[i], mix_want[i][1]);
	}
	ck_assert_int_eq(zr_stream_weights(st, 9, w2), 0);
	ck_assert_int_eq(zr_stream_grow(st, 10, 0, 8), 0);
	ck_assert_int_eq(zr_stream_skip(st, 11, 13), 0);
	map_ok(st, 0, 20, src, idx);
	for (int i = 0; i < 20; i++) {
		ck_assert_uint_eq(src[i], mix_want[i][0]);
		ck_assert_uint_eq(idx[i], mix_want[i][1]);
	}
	/* One call per position agrees with one call for all. */
	for (int i = 0; i < 20; i++) {
		map_ok(st, (uint64_t)i, 1, src, idx);
		ck_assert_uint_eq(src[0], mix_want[i][0]);
		ck_assert_uint_eq(idx[0], mix_want[i][1]);
	}
	/* Step 2 of rank 1 of world 2, batch 4: served ordinals 20..23 are
	 * positions 22..25 (11 and 12 skipped). */
	ck_assert_int_eq(zr_stream_batch(st, 0, 2, 1, 2, 4, src, idx), 0);
	for (int i = 0; i < 4; i++) {
		ck_assert_uint_eq(src[i], batch_want[i][0]);
		ck_assert_uint_eq(idx[i], batch_want[i][1]);
	}
	zr_stream_free(st);
}
END_TEST

START_TEST(test_mixture_shares)
{
	static const uint64_t len[] = { 3, 1000, 50, 7, 1, 200, 9, 30, 11, 2 };
	static const uint64_t w[] = { 7, 2, 1, 13, 5, 40, 3, 1, 9, 19 };
	uint64_t per = 100, cnt[10] = { 0 }, pos = 0;
	zr_stream *st = mix(3, 10, len, w);
	uint32_t src[100];
	uint64_t idx[100], ctr[10] = { 0 };
	unsigned char *seen[10];

	for (int k = 0; k < 10; k++)
		ck_assert_ptr_nonnull(seen[k] = calloc(len[k], 1));
	for (int period = 0; period < 40; period++) {
		map_ok(st, pos, per, src, idx);
		for (uint64_t i = 0; i < per; i++) {
			uint32_t k = src[i];

			cnt[k]++;
			pos++;
			/* Within one record of the share at every prefix. */
			for (int j = 0; j < 10; j++) {
				double d = (double)cnt[j] - (double)((pos %
					   per ? pos % per : per) * w[j]) / per;

				ck_assert_msg(d > -1 && d < 1, "source %d at "
					      "%llu: %f", j,
					      (unsigned long long)pos, d);
			}
			/* Each source's own cycle: all records before a
			 * repeat. */
			if (ctr[k] % len[k] == 0)
				memset(seen[k], 0, len[k]);
			ck_assert_uint_lt(idx[i], len[k]);
			ck_assert(!seen[k][idx[i]]);
			seen[k][idx[i]] = 1;
			ctr[k]++;
		}
		for (int j = 0; j < 10; j++) {
			ck_assert_uint_eq(cnt[j], w[j]);
			cnt[j] = 0;
		}
	}
	for (int k = 0; k < 10; k++)
		free(seen[k]);
	zr_stream_free(st);
}
END_TEST

/* A weight change continues every source's cycle: the per-source record
 * sequences equal those of streams with one source each. */
START_TEST(test_mixture_weight_change)
{
	static const uint64_t len[] = { 10, 23 }, w[] = { 1, 1 }, w2[] = { 5, 1 };
	zr_stream *st = mix(11, 2, len, w), *one[2];
	uint32_t src[300];
	uint64_t idx[300], c[2] = { 0, 0 }, v;
	static const uint64_t only[2][2] = { { 1, 0 }, { 0, 1 } };

	for (int k = 0; k < 2; k++)
		one[k] = mix(11, 2, len, only[k]);
	ck_assert_int_eq(zr_stream_weights(st, 37, w2), 0);
	map_ok(st, 0, 300, src, idx);
	for (int i = 0; i < 300; i++) {
		uint32_t k = src[i];

		map_ok(one[k], c[k]++, 1, NULL, &v);
		ck_assert_uint_eq(idx[i], v);
	}
	ck_assert_uint_eq(c[0] + c[1], 300);
	ck_assert_uint_gt(c[0], 3 * c[1]);
	zr_stream_free(one[0]);
	zr_stream_free(one[1]);
	zr_stream_free(st);
}
END_TEST

START_TEST(test_skip_keeps_positions)
{
	zr_stream *a = plain(ZR_SAMPLER_CYCLIC, 9, 500, 20);
	zr_stream *b = plain(ZR_SAMPLER_CYCLIC, 9, 500, 20);
	uint64_t x[40], y[40], p;

	ck_assert_int_eq(zr_stream_skip(b, 100, 160), 0);
	ck_assert_int_eq(zr_stream_skip(b, 160, 180), 0); /* merged */
	ck_assert_int_eq(zr_stream_skip(b, 170, 200), -EINVAL);
	/* Step 5 of world 1, batch 20 reads 100..119 without the skip, 180..
	 * 199 with it. */
	ck_assert_int_eq(zr_stream_batch(b, 0, 5, 0, 1, 20, NULL, y), 0);
	map_ok(a, 180, 20, NULL, x);
	ck_assert_int_eq(memcmp(x, y, 160), 0);
	ck_assert_int_eq(zr_stream_position(b, 0, 100, &p), 0);
	ck_assert_uint_eq(p, 180);
	ck_assert_int_eq(zr_stream_position(b, 120, 0, &p), 0);
	ck_assert_uint_eq(p, 180);
	/* A straddling batch: 90..99 then 180..189. */
	ck_assert_int_eq(zr_stream_batch(b, 90, 0, 0, 1, 20, NULL, y), 0);
	map_ok(a, 90, 10, NULL, x);
	map_ok(a, 180, 10, NULL, x + 10);
	ck_assert_int_eq(memcmp(x, y, 160), 0);
	zr_stream_free(a);
	zr_stream_free(b);
}
END_TEST

START_TEST(test_grow)
{
	static const uint64_t cyc[30] = { 8, 5, 6, 7, 0, 3, 4, 9, 12, 4, 1, 7,
					  5, 2, 9, 3, 11, 8, 10, 0, 4, 7, 8, 3,
					  0, 10, 6, 11, 2, 9 };
	static const uint64_t iid[20] = { 1, 9, 3, 1, 5, 3, 3, 6, 6, 8, 5, 4,
					  18, 15, 12, 7, 11, 3, 14, 7 };
	zr_stream *c = plain(ZR_SAMPLER_CYCLIC, 42, 10, 4);
	zr_stream *i = plain(ZR_SAMPLER_IID, 3, 10, 6);
	zr_stream *s = plain(ZR_SAMPLER_SEQUENTIAL, 0, 5, 3);
	uint64_t out[30];

	ck_assert_int_eq(zr_stream_grow(c, 5, 0, 13), 0);
	map_ok(c, 0, 30, NULL, out);
	ck_assert_int_eq(memcmp(out, cyc, sizeof(cyc)), 0);
	ck_assert_int_eq(zr_stream_grow(i, 7, 0, 20), 0);
	map_ok(i, 0, 20, NULL, out);
	ck_assert_int_eq(memcmp(out, iid, sizeof(iid)), 0);
	ck_assert_int_eq(zr_stream_grow(s, 7, 0, 7), 0);
	map_ok(s, 8, 10, NULL, out);
	ck_assert_uint_eq(out[0], 3);
	ck_assert_uint_eq(out[2], 0);
	ck_assert_uint_eq(out[8], 6);
	ck_assert_uint_eq(out[9], 0);
	/* Shrinking, an entry out of order, a source out of range. */
	ck_assert_int_eq(zr_stream_grow(s, 9, 0, 6), -EINVAL);
	ck_assert_int_eq(zr_stream_grow(s, 6, 0, 8), -EINVAL);
	ck_assert_int_eq(zr_stream_grow(s, 9, 1, 8), -EINVAL);
	zr_stream_free(c);
	zr_stream_free(i);
	zr_stream_free(s);
}
END_TEST

START_TEST(test_bad_streams)
{
	static const uint64_t len[] = { 5, 0 }, w[] = { 1, 1 }, w0[] = { 0, 0 };
	static const uint64_t big[] = { 1u << 20, 1 };
	zr_stream *st = (zr_stream *)&st;
	uint64_t out[4];

	ck_assert_int_eq(zr_stream_new(ZR_SAMPLER_CYCLIC, 1, 10, 11, &st),
			 -EINVAL);
	ck_assert_int_eq(zr_stream_new(ZR_SAMPLER_IID, 1, 0, 1, &st), -EINVAL);
	ck_assert_int_eq(zr_stream_new(ZR_SAMPLER_IID, 1, 5, 0, &st), -EINVAL);
	ck_assert_int_eq(zr_stream_new((zr_sampler_mode)3, 1, 5, 1, &st),
			 -EINVAL);
	ck_assert_int_eq(zr_stream_new_mixture(1, 2, len, w, &st), -EINVAL);
	ck_assert_int_eq(zr_stream_new_mixture(1, 0, len, w, &st), -EINVAL);
	ck_assert_int_eq(zr_stream_new_mixture(1, 1, len, w0, &st), -EINVAL);
	ck_assert_int_eq(zr_stream_new_mixture(1, 2, (uint64_t[]){ 1, 1 },
					       big, &st), -EINVAL);
	ck_assert_str_ne(zr_errmsg(), "");
	ck_assert_ptr_eq(st, (zr_stream *)&st);
	st = plain(ZR_SAMPLER_IID, 1, 5, 2);
	ck_assert_int_eq(zr_stream_weights(st, 0, w), -EINVAL);
	ck_assert_int_eq(zr_stream_skip(st, 4, 4), -EINVAL);
	ck_assert_int_eq(zr_stream_batch(st, 0, 0, 2, 2, 1, NULL, out),
			 -EINVAL);
	ck_assert_int_eq(zr_stream_batch(st, 0, 0, 0, 1, 0, NULL, out),
			 -EINVAL);
	ck_assert_int_eq(zr_stream_batch(st, 0, UINT64_MAX, 0, 2, 4, NULL,
					 out), -EINVAL);
	ck_assert_int_eq(zr_stream_map(st, UINT64_MAX, 2, NULL, out), -EINVAL);
	ck_assert_int_eq(zr_stream_map(st, UINT64_MAX - 1, 1, NULL, out), 0);
	zr_stream_free(st);
	zr_stream_free(NULL);
}
END_TEST

Suite *suite_stream(void)
{
	Suite *s = suite_create("stream");
	TCase *tc = tcase_create("stream");

	tcase_add_test(tc, test_start0_is_sampler);
	tcase_add_test(tc, test_elastic_exactly_once);
	tcase_add_test(tc, test_elastic_iid_unchanged);
	tcase_add_test(tc, test_mixture_known);
	tcase_add_test(tc, test_mixture_shares);
	tcase_add_test(tc, test_mixture_weight_change);
	tcase_add_test(tc, test_skip_keeps_positions);
	tcase_add_test(tc, test_grow);
	tcase_add_test(tc, test_bad_streams);
	suite_add_tcase(s, tc);
	return s;
}
