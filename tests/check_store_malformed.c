/*
 * check_store_malformed.c - damaged stores: every kind of bad header, file
 * size, table entry, dictionary and frame gives its documented error (and
 * a message), never a crash.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "check_suites.h"
#include "check_util.h"
#include "zrecord.h"

static char dir[4096];
static char path[4096];

/* A closed store "s" with 4 records: dense <u4 (8) or ragged |u1. */
static void make_store(zr_codec codec, int ragged)
{
	static const uint64_t shape[] = { 8 };
	zr_schema sc = ragged ? ck_schema("|u1", -1, NULL)
			      : ck_schema("<u4", 1, shape);
	zr_store *s;
	uint8_t data[4 * 32];
	uint64_t len[4] = { 20, 32, 9, 17 };
	zr_ragged_in in[4];

	ck_tmpdir(dir, sizeof(dir));
	ck_path(path, sizeof(path), dir, "s");
	s = ck_store(dir, "s", &sc, codec);
	ck_fill(data, sizeof(data), 3);
	for (int i = 0; i < 4; i++)
		in[i] = (zr_ragged_in){ data + 32 * i, 1, &len[i] };
	if (ragged)
		ck_assert_int_eq(zr_store_append_ragged(s, in, 4), 0);
	else
		ck_assert_int_eq(zr_store_append_dense(s, data, 4), 0);
	ck_assert_int_eq(zr_store_close(s), 0);
}

static void teardown(void)
{
	zr_rmtree(dir);
}

static void expect_open(int err)
{
	zr_store *s = NULL;
	int got = zr_store_open(path, 0, &s);

	ck_assert_msg(got == err, "open gave %s (%s), want %s",
		      zr_errname(got), zr_errmsg(), zr_errname(err));
	if (!err) {
		ck_assert_int_eq(zr_store_close(s), 0);
		return;
	}
	ck_assert_ptr_null(s);
	ck_assert_str_ne(zr_errmsg(), "");
}

static void poke(const char *file, uint64_t off, const void *b, size_t n)
{
	char p[64];

	snprintf(p, sizeof(p), "s/%s", file);
	ck_file_write(dir, p, off, b, n);
}

static void poke64(const char *file, uint64_t off, uint64_t v)
{
	uint8_t b[8];

	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	poke(file, off, b, 8);
}

static void poke32(const char *file, uint64_t off, uint32_t v)
{
	uint8_t b[4];

	for (int i = 0; i < 4; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	poke(file, off, b, 4);
}

START_TEST(test_bad_header)
{
	uint8_t one = 1, seven = 7, slen[4];

	make_store(ZR_CODEC_ZSTD, _i);
	ck_file_read(dir, "s/meta.zr", 16, slen, 4);
	poke32("meta.zr", 16, 0);
	expect_open(ZR_E_CORRUPT);
	poke32("meta.zr", 16, 5000);
	expect_open(ZR_E_CORRUPT);
	ck_assert_ptr_nonnull(strstr(zr_errmsg(), "5000"));
	poke("meta.zr", 16, slen, 4); /* back to the real length */
	expect_open(0);
	poke("meta.zr", 25, &one, 1);
	expect_open(ZR_E_CORRUPT);
	ck_assert_ptr_nonnull(strstr(zr_errmsg(), "reserved"));
	one = 0;
	poke("meta.zr", 25, &one, 1);
	poke("meta.zr", 31, &seven, 1);
	expect_open(ZR_E_CORRUPT);
	ck_assert_ptr_nonnull(strstr(zr_errmsg(), "codec"));
}
END_TEST

START_TEST(test_bad_schema)
{
	static const uint8_t garbage[] = { 0xc1, 0x00, 0x13 };
	static const uint8_t shorter[] = { 0x81, 0xa5, 'd', 't', 'y', 'p', 'e',
					   0xa3, '<', 'q', '9' };

	make_store(ZR_CODEC_RAW, 1);
	poke("meta.zr", 32, garbage, sizeof(garbage));
	expect_open(ZR_E_SCHEMA);
	poke("meta.zr", 32, shorter, sizeof(shorter));
	expect_open(ZR_E_SCHEMA);
	ck_assert_ptr_nonnull(strstr(zr_errmsg(), "meta.zr"));
}
END_TEST

START_TEST(test_bad_sizes)
{
	char p[4200];

	make_store(ZR_CODEC_RAW, 0);
	ck_file_truncate(dir, "s/meta.zr", 4096 + 16 * 3);
	expect_open(ZR_E_CORRUPT);
	ck_file_truncate(dir, "s/meta.zr", 100);
	expect_open(ZR_E_CORRUPT);
	ck_file_truncate(dir, "s/meta.zr", 0);
	expect_open(ZR_E_CORRUPT);
	teardown();

	make_store(ZR_CODEC_RAW, 0);
	poke64("meta.zr", 0, (uint64_t)1 << 62);
	expect_open(ZR_E_CORRUPT);
	poke64("meta.zr", 0, 4);
	ck_file_truncate(dir, "s/data.zr", 4 * 32 - 1);
	expect_open(ZR_E_CORRUPT);
	ck_assert_ptr_nonnull(strstr(zr_errmsg(), "tail_offset"));
	snprintf(p, sizeof(p), "%s/data.zr", path);
	ck_assert_int_eq(unlink(p), 0);
	expect_open(ZR_E_CORRUPT);
}
END_TEST

START_TEST(test_dict_presence)
{
	char p[4200];

	make_store(ZR_CODEC_ZSTD_DICT, _i);
	snprintf(p, sizeof(p), "%s/dict.zr", path);
	ck_assert_int_eq(unlink(p), 0);
	expect_open(ZR_E_CORRUPT);
	ck_assert_ptr_nonnull(strstr(zr_errmsg(), "dict.zr"));
	ck_file_write(dir, "s/dict.zr", 0, "", 0);
	expect_open(ZR_E_CORRUPT);
	teardown();

	make_store(ZR_CODEC_ZSTD, _i);
	ck_file_write(dir, "s/dict.zr", 0, "dictionary", 10);
	expect_open(ZR_E_CORRUPT);
	ck_assert_ptr_nonnull(strstr(zr_errmsg(), "dict.zr"));
}
END_TEST

/* Opens the store, then expects err from gathering record idx (and from
 * its table entry when loc_err is set). */
static void expect_gather(uint64_t idx, int err, int loc_err)
{
	zr_store *s;
	uint8_t dst[1 << 16];
	uint64_t off[2], total;
	zr_loc loc;
	uint32_t ndim;
	uint64_t shape[ZR_MAX_NDIM];
	int ragged, got;

	ck_assert_int_eq(zr_store_open(path, ZR_OPEN_RDONLY, &s), 0);
	ragged = zr_store_schema(s)->ragged;
	got = zr_store_gather(s, &idx, 1, dst, sizeof(dst), off);
	ck_assert_msg(got == err, "gather gave %s (%s), want %s",
		      zr_errname(got), zr_errmsg(), zr_errname(err));
	ck_assert_str_ne(zr_errmsg(), "");
	if (loc_err) {
		ck_assert_int_eq(zr_store_loc(s, idx, &loc), ZR_E_CORRUPT);
		ck_assert_int_eq(zr_store_gather_size(s, &idx, 1, &total),
				 ZR_E_CORRUPT);
	}
	if (ragged && loc_err)
		ck_assert_int_eq(zr_ragged_shape(s, idx, &ndim, shape),
				 ZR_E_CORRUPT);
	ck_assert_int_eq(zr_store_verify(s, NULL, NULL, NULL, NULL), 1);
	ck_assert_int_eq(zr_store_close(s), 0);
}

START_TEST(test_bad_entries)
{
	const uint64_t e2 = 4096 + 16 * 2;

	make_store((zr_codec)(_i % 3), _i >= 3);
	poke64("meta.zr", e2, 1u << 20); /* past the frontier */
	expect_gather(2, ZR_E_CORRUPT, 1);
	poke64("meta.zr", e2, UINT64_MAX - 4); /* offset + phys overflows */
	expect_gather(2, ZR_E_CORRUPT, 1);
	poke64("meta.zr", e2, 0);
	poke32("meta.zr", e2 + 8, 0); /* phys 0 */
	expect_gather(2, ZR_E_CORRUPT, 1);
	poke32("meta.zr", e2 + 8, 4);
	poke32("meta.zr", e2 + 12, (1u << 31) + 1); /* logic over 2 GiB */
	expect_gather(2, ZR_E_CORRUPT, 1);
	poke32("meta.zr", e2 + 12, _i >= 3 ? 7 : 31); /* short row/prefix */
	expect_gather(2, ZR_E_CORRUPT, 1);
}
END_TEST

/* A frame that decodes to far more than its logic_length, placed as
 * record 1 of a compressed ragged store. */
START_TEST(test_decompression_bomb)
{
	size_t big = 1 << 20, cap = ZSTD_compressBound(big), n;
	uint8_t *src = calloc(1, big), *frame = malloc(cap);
	uint64_t tail;

	make_store(_i ? ZR_CODEC_ZSTD_DICT : ZR_CODEC_ZSTD, 1);
	src[0] = 1; /* a valid prefix: ndim 1 ... */
	n = ZSTD_compress(frame, cap, src, big, 1);
	ck_assert(!ZSTD_isError(n));
	tail = ck_file_size(dir, "s/data.zr");
	poke("data.zr", tail, frame, n);
	poke64("meta.zr", 8, tail + n);
	poke64("meta.zr", 4096 + 16, tail);
	poke32("meta.zr", 4096 + 16 + 8, (uint32_t)n);
	expect_gather(1, ZR_E_CORRUPT, 0);
	free(src);
	free(frame);
}
END_TEST

static void count_bad(void *ctx, uint64_t idx, int err)
{
	ck_assert_uint_eq(idx, 2);
	ck_assert_int_eq(err, ZR_E_CORRUPT);
	++*(int *)ctx;
}

/* A table entry that claims 2 GiB over a small frame is one bad record for
 * verify (which checks the frame's declared size before it allocates a
 * buffer of the claimed size), not a failed scan. */
START_TEST(test_verify_claimed_size)
{
	zr_store *s;
	int bad = 0;

	make_store(ZR_CODEC_ZSTD, 1);
	poke32("meta.zr", 4096 + 16 * 2 + 12, ZR_RECORD_MAX);
	ck_assert_int_eq(zr_store_open(path, ZR_OPEN_RDONLY, &s), 0);
	ck_assert_int_eq(zr_store_verify(s, count_bad, &bad, NULL, NULL), 1);
	ck_assert_int_eq(bad, 1);
	ck_assert_int_eq(zr_store_close(s), 0);
}
END_TEST

START_TEST(test_corrupt_frame)
{
	static const uint8_t junk[4] = { 0xde, 0xad, 0xbe, 0xef };
	zr_store *s;
	zr_loc loc;
	uint8_t dst[64];
	uint64_t idx = 3;

	make_store(_i ? ZR_CODEC_ZSTD_DICT : ZR_CODEC_ZSTD, 0);
	ck_assert_int_eq(zr_store_open(path, ZR_OPEN_RDONLY, &s), 0);
	ck_assert_int_eq(zr_store_loc(s, 3, &loc), 0);
	ck_assert_int_eq(zr_store_close(s), 0);
	poke("data.zr", loc.offset, junk, sizeof(junk)); /* the magic */
	expect_gather(3, ZR_E_CODEC, 0);
	/* Truncate the frame by shrinking phys_length. */
	teardown();
	make_store(ZR_CODEC_ZSTD, 0);
	ck_assert_int_eq(zr_store_open(path, ZR_OPEN_RDONLY, &s), 0);
	ck_assert_int_eq(zr_store_loc(s, 3, &loc), 0);
	ck_assert_int_eq(zr_store_close(s), 0);
	poke32("meta.zr", 4096 + 16 * 3 + 8, loc.phys_length - 3);
	ck_assert_int_eq(zr_store_open(path, ZR_OPEN_RDONLY, &s), 0);
	ck_assert_int_ne(zr_store_gather(s, &idx, 1, dst, sizeof(dst), NULL),
			 0);
	ck_assert_int_eq(zr_store_close(s), 0);
}
END_TEST

START_TEST(test_bad_ragged_prefix)
{
	zr_store *s;
	zr_loc loc;

	make_store(ZR_CODEC_RAW, 1);
	/* Where record 1 lies: staging lanes place records in the order
	 * they finish, not necessarily by index. */
	ck_assert_int_eq(zr_store_open(path, ZR_OPEN_RDONLY, &s), 0);
	ck_assert_int_eq(zr_store_loc(s, 1, &loc), 0);
	ck_assert_int_eq(zr_store_close(s), 0);
	poke64("data.zr", loc.offset, 40); /* ndim 40 */
	expect_gather(1, ZR_E_CORRUPT, 0);
	poke64("data.zr", loc.offset, 1);
	poke64("data.zr", loc.offset + 8, 31); /* 31 elements, 32 bytes */
	expect_gather(1, ZR_E_CORRUPT, 0);
	poke64("data.zr", loc.offset + 8, 0); /* zero elements */
	expect_gather(1, ZR_E_CORRUPT, 0);
}
END_TEST

START_TEST(test_ragged_parse)
{
	uint8_t rec[64] = { 0 };
	uint64_t shape[ZR_MAX_NDIM];
	uint32_t ndim;
	size_t po;

	ck_assert_int_eq(zr_ragged_parse(rec, 4, 1, &ndim, shape, &po),
			 ZR_E_CORRUPT);
	rec[0] = 2;
	rec[8] = 3;
	rec[16] = 4;
	ck_assert_int_eq(zr_ragged_parse(rec, 24 + 24, 2, &ndim, shape, &po),
			 0);
	ck_assert_uint_eq(ndim, 2);
	ck_assert_uint_eq(shape[0], 3);
	ck_assert_uint_eq(shape[1], 4);
	ck_assert_uint_eq(po, 24);
	ck_assert_int_eq(zr_ragged_parse(rec, 24 + 23, 2, &ndim, shape, &po),
			 ZR_E_CORRUPT);
	ck_assert_int_eq(zr_ragged_parse(rec, 20, 2, &ndim, shape, &po),
			 ZR_E_CORRUPT);
	rec[0] = 0; /* a scalar */
	ck_assert_int_eq(zr_ragged_parse(rec, 8 + 8, 8, &ndim, shape, &po), 0);
	ck_assert_uint_eq(ndim, 0);
	memset(rec + 8, 0xff, 16); /* overflowing dims */
	rec[0] = 2;
	ck_assert_int_eq(zr_ragged_parse(rec, 64, 1, &ndim, shape, &po),
			 ZR_E_CORRUPT);
}
END_TEST

Suite *suite_store_malformed(void)
{
	Suite *s = suite_create("store_malformed");
	TCase *tc = tcase_create("store_malformed");

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_bad_header, 0, 2);
	tcase_add_test(tc, test_bad_schema);
	tcase_add_test(tc, test_bad_sizes);
	tcase_add_loop_test(tc, test_dict_presence, 0, 2);
	tcase_add_loop_test(tc, test_bad_entries, 0, 6);
	tcase_add_loop_test(tc, test_decompression_bomb, 0, 2);
	tcase_add_test(tc, test_verify_claimed_size);
	tcase_add_loop_test(tc, test_corrupt_frame, 0, 2);
	tcase_add_test(tc, test_bad_ragged_prefix);
	tcase_add_test(tc, test_ragged_parse);
	suite_add_tcase(s, tc);
	return s;
}
