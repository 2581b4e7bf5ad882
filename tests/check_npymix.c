/*
 * check_npymix.c - a mixture's fields as encoder streams (src/files/
 * npy_mix.h) on real stores of every codec: a mixture's gather is the
 * records its keys name, in batch order (dense rows and ragged records
 * with their boundaries), a STACK filled in pieces is the one filled
 * whole, its INDICES file holds the (source, index) pairs, and keys,
 * sources and schemas that do not fit are refused.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_suites.h"
#include "check_util.h"
#include "encoder.h"
#include "npy_mix.h"

#define N 9
#define B 11

static const zr_codec codecs[] = { ZR_CODEC_RAW, ZR_CODEC_ZSTD,
				   ZR_CODEC_RAW };

/* Two stores of one schema, different records (ragged: of lengths
 * 1 + (i + s) % 4 elements). */
static void two_stores(int ragged, int loop, zr_store **s)
{
	static const uint64_t shape[] = { 3 };

	for (int k = 0; k < 2; k++) {
		zr_schema sc = ck_schema("<i4", ragged ? -1 : 1, shape);
		char name[8];

		snprintf(name, sizeof(name), "s%d", k);
		s[k] = ck_store(ck_dir, name, &sc, codecs[(loop + k) % 3]);
		for (uint64_t i = 0; i < N; i++) {
			int32_t v[4];
			uint64_t len = ragged ? 1 + (i + k) % 4 : 3;
			zr_ragged_in r = { .data = v, .ndim = 1, .shape = &len };

			for (int e = 0; e < 4; e++)
				v[e] = (int32_t)(1000 * k + 10 * i + e);
			ck_assert_int_eq(ragged ? zr_store_append_ragged(
						 s[k], &r, 1) :
					 zr_store_append_dense(s[k], v, 1), 0);
		}
	}
}

/* Keys mixing both sources, some repeated, some runs of one source. */
static void keys(uint32_t *src, uint64_t *idx, uint64_t *key)
{
	for (size_t i = 0; i < B; i++) {
		src[i] = (i % 3 == 1 || i > 8) ? 1 : 0;
		idx[i] = (i * 5 + 2) % N;
	}
	ck_assert_int_eq(zrfile_mix_keys(src, idx, B, key), 0);
}

static zrfile_source *streams_of(zr_store **s)
{
	zrfile_source *grid, *st = zrfile_mix_alloc(2, 1, &grid);
	char msg[256];

	ck_assert_ptr_nonnull(st);
	grid[0] = (zrfile_source){ .zs = s[0] };
	grid[1] = (zrfile_source){ .zs = s[1] };
	ck_assert_int_eq(zrfile_mix_check(st, 2, 1, msg, sizeof(msg)), 0);
	return st;
}

START_TEST(test_gather_is_the_keys_records)
{
	zr_store *s[2];
	uint32_t src[B];
	uint64_t idx[B], key[B], off[B + 1], one[2], size;
	char got[B * 64], want[64];
	int ragged = _i >= 3;

	two_stores(ragged, _i % 3, s);
	keys(src, idx, key);
	zrfile_source *st = streams_of(s);

	/* as a store's gather: dense rows need no boundaries */
	ck_assert_int_eq(zrfile_source_gather_size(st, key, B, &size), 0);
	ck_assert_int_eq(zrfile_source_gather(st, key, B, got, sizeof(got),
					      ragged ? off : NULL), 0);
	ck_assert_uint_eq(size, ragged ? off[B] : B * 12);
	for (size_t i = 0, at = 0; i < B; i++) {
		ck_assert_int_eq(zr_store_gather(s[src[i]], &idx[i], 1, want,
						 sizeof(want), one), 0);
		if (!ragged)
			one[1] = 12;
		ck_assert_uint_eq(ragged ? off[i] : at, at);
		ck_assert_mem_eq(got + at, want, one[1]);
		at += one[1];
	}
	ck_assert_int_eq(zrfile_source_gather(st, key, B, got, 8, ragged ? off :
					      NULL), -EINVAL);
	free(st);
	zr_store_close(s[0]);
	zr_store_close(s[1]);
}
END_TEST

START_TEST(test_stack_in_pieces_and_pairs)
{
	zr_store *s[2];
	uint32_t src[B];
	uint64_t idx[B], key[B], row;
	zrfile_npy f, p;
	zr_npy_header h;
	char *whole, *pieces;

	two_stores(0, _i, s);
	keys(src, idx, key);
	zrfile_source *st = streams_of(s);

	ck_assert_int_eq(zrfile_npy_plan(&f, ZRFILE_STACK, st, 1, key, B), 0);
	whole = calloc(1, f.total);
	pieces = calloc(1, f.total);
	ck_assert_int_eq(zrfile_npy_fill(&f, whole), 0);
	zrfile_npy_rows_at(&f, &row);
	for (uint64_t first = 0; first < B; first += 4)
		ck_assert_int_eq(zrfile_npy_fill_rows(&f, pieces, first,
						      B - first < 4 ?
						      B - first : 4), 0);
	ck_assert_mem_eq(whole, pieces, f.total);
	ck_assert_int_eq(zr_npy_parse(whole, f.total, &h, NULL), 0);
	for (size_t i = 0; i < B; i++) {
		int32_t *v = (int32_t *)(whole + h.header_len + i * row);

		ck_assert_int_eq(v[0], 1000 * src[i] + 10 * idx[i]);
	}
	ck_assert_int_eq(zrfile_npy_plan(&p, ZRFILE_INDICES, st, 1, key, B),
			 0);
	free(whole);
	whole = calloc(1, p.total);
	ck_assert_int_eq(zrfile_npy_fill(&p, whole), 0);
	ck_assert_int_eq(zr_npy_parse(whole, p.total, &h, NULL), 0);
	ck_assert_uint_eq(h.ndim, 2);
	ck_assert_uint_eq(h.shape[0], B);
	ck_assert_uint_eq(h.shape[1], 2);
	for (size_t i = 0; i < B; i++) {
		int64_t *v = (int64_t *)(whole + h.header_len + 16 * i);

		ck_assert_int_eq(v[0], src[i]);
		ck_assert_int_eq(v[1], idx[i]);
	}
	zrfile_npy_free(&f);
	zrfile_npy_free(&p);
	free(whole);
	free(pieces);
	free(st);
	zr_store_close(s[0]);
	zr_store_close(s[1]);
}
END_TEST

START_TEST(test_refusals)
{
	zr_store *s[2], *r;
	zrfile_source *grid, *st;
	uint32_t src[1] = { 2 };
	uint64_t idx[1] = { 1ull << 54 }, key, size;
	zr_schema sc = ck_schema("<i4", -1, NULL);
	char msg[256], buf[64];

	two_stores(0, 0, s);
	/* an index past the keys' 54 bits; a source past the mixture's */
	ck_assert_int_eq(zrfile_mix_keys(src, idx, 1, &key), -EINVAL);
	idx[0] = 0;
	ck_assert_int_eq(zrfile_mix_keys(src, idx, 1, &key), 0);
	st = streams_of(s);
	ck_assert_int_eq(zrfile_source_gather(st, &key, 1, buf, sizeof(buf),
					      NULL), ZR_E_RANGE);
	ck_assert_int_eq(zrfile_source_gather_size(st, &key, 1, &size),
			 ZR_E_RANGE);
	free(st);
	/* a ragged source beside a dense one; fields of other names */
	r = ck_store(ck_dir, "rag", &sc, ZR_CODEC_RAW);
	st = zrfile_mix_alloc(2, 1, &grid);
	grid[0] = (zrfile_source){ .zs = s[0] };
	grid[1] = (zrfile_source){ .zs = r };
	ck_assert_int_eq(zrfile_mix_check(st, 2, 1, msg, sizeof(msg)),
			 ZR_E_SCHEMA);
	ck_assert_ptr_nonnull(strstr(msg, "source 1"));
	grid[0] = (zrfile_source){ .zs = s[0], .name = "x" };
	grid[1] = (zrfile_source){ .zs = s[1], .name = "y" };
	ck_assert_int_eq(zrfile_mix_check(st, 2, 1, msg, sizeof(msg)),
			 -EINVAL);
	ck_assert_ptr_nonnull(strstr(msg, "same fields"));
	ck_assert_ptr_null(zrfile_mix_alloc(0, 1, &grid));
	free(st);
	zr_store_close(r);
	zr_store_close(s[0]);
	zr_store_close(s[1]);
}
END_TEST

Suite *suite_npymix(void)
{
	Suite *s = suite_create("npymix");
	TCase *tc = tcase_create("npymix");

	tcase_add_checked_fixture(tc, ck_dir_setup, ck_dir_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_gather_is_the_keys_records, 0, 6);
	tcase_add_loop_test(tc, test_stack_in_pieces_and_pairs, 0, 3);
	tcase_add_test(tc, test_refusals);
	suite_add_tcase(s, tc);
	return s;
}
