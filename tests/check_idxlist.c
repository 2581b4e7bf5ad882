/*
 * check_idxlist.c - the record-index list parser (src/files/index_list.h)
 * that a mount's delete file and `zrecord delete --from` share, on plain
 * buffers: text cut at every place, .npy of every integer dtype in both
 * byte orders, refused headers, truncation, the size limit and the range
 * check, with the message each failure keeps; and the memory a long
 * list takes, bounded by the store's length.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_suites.h"
#include "index_list.h"

/* Feeds s[0, len) cut at the offsets cuts[0, ncuts) (ascending), then
 * finishes; returns the first failure, the indices in *idx, *n. */
static int parse_cut(const void *s, size_t len, const size_t *cuts,
		     size_t ncuts, uint64_t limit, uint64_t **idx, size_t *n,
		     char *msg, size_t msg_cap)
{
	zrfile_idxlist *p = NULL;
	size_t at = 0;
	int rc = 0;

	ck_assert_int_eq(zrfile_idxlist_new(&p), 0);
	for (size_t i = 0; i <= ncuts && !rc; i++) {
		size_t end = i < ncuts ? cuts[i] : len;

		rc = zrfile_idxlist_feed(p, (const char *)s + at, end - at,
					 limit);
		at = end;
	}
	if (!rc)
		rc = zrfile_idxlist_finish(p, limit, idx, n);
	if (msg)
		snprintf(msg, msg_cap, "%s", zrfile_idxlist_message(p));
	if (rc) {
		/* a failure is sticky and leaves a message */
		ck_assert_str_ne(zrfile_idxlist_message(p), "");
		ck_assert_int_eq(zrfile_idxlist_feed(p, "1", 1, limit), rc);
		ck_assert_int_eq(zrfile_idxlist_finish(p, limit, idx, n), rc);
	}
	zrfile_idxlist_free(p);
	return rc;
}

static int parse_whole(const void *s, size_t len, uint64_t limit,
		       uint64_t **idx, size_t *n, char *msg, size_t cap)
{
	return parse_cut(s, len, NULL, 0, limit, idx, n, msg, cap);
}

static void expect(const void *s, size_t len, const size_t *cuts,
		   size_t ncuts, uint64_t limit, const uint64_t *want,
		   size_t nwant)
{
	uint64_t *idx = NULL;
	size_t n = 0;
	char msg[256];
	int rc = parse_cut(s, len, cuts, ncuts, limit, &idx, &n, msg,
			   sizeof(msg));

	ck_assert_msg(rc == 0, "%s: %s", zr_errname(rc), msg);
	ck_assert_uint_eq(n, nwant);
	for (size_t i = 0; i < n; i++)
		ck_assert_uint_eq(idx[i], want[i]);
	free(idx);
}

/* Expects failure rc of the whole input, with msg containing want. */
static void expect_fail_whole(const void *s, size_t len, uint64_t limit,
			      int rc, const char *want)
{
	uint64_t *idx = NULL;
	size_t n = 0;
	char msg[256];

	ck_assert_int_eq(parse_whole(s, len, limit, &idx, &n, msg,
				     sizeof(msg)), rc);
	ck_assert_msg(strstr(msg, want), "'%s' lacks '%s'", msg, want);
}

/* The same at whatever chunking. */
static void expect_fail(const void *s, size_t len, uint64_t limit, int rc,
			const char *want)
{
	uint64_t *idx = NULL;
	size_t n = 0, cut;
	char msg[256];

	expect_fail_whole(s, len, limit, rc, want);
	for (cut = 1; cut < len; cut++) {
		ck_assert_int_eq(parse_cut(s, len, &cut, 1, limit, &idx, &n,
					   msg, sizeof(msg)), rc);
		ck_assert_msg(strstr(msg, want), "cut %zu: '%s' lacks '%s'",
			      cut, msg, want);
	}
}

START_TEST(test_text_any_chunking)
{
	static const char s[] = "3, 0\t17\r\n00039,5 5\n,,0";
	static const uint64_t want[] = { 3, 0, 17, 39, 5, 5, 0 };
	size_t len = strlen(s), cuts[2], all[sizeof(s)];

	expect(s, len, NULL, 0, 40, want, 7);
	for (cuts[0] = 1; cuts[0] < len; cuts[0]++)
		for (cuts[1] = cuts[0] + 1; cuts[1] < len; cuts[1]++)
			expect(s, len, cuts, 2, 40, want, 7);
	for (size_t i = 0; i + 1 < len; i++)
		all[i] = i + 1;
	expect(s, len, all, len - 1, 40, want, 7);
}
END_TEST

START_TEST(test_text_empty_and_blank)
{
	uint64_t *idx = (uint64_t *)&idx;
	size_t n = 7;

	ck_assert_int_eq(parse_whole("", 0, 5, &idx, &n, NULL, 0), 0);
	ck_assert_ptr_null(idx);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(parse_whole(" \n,\t", 4, 0, &idx, &n, NULL, 0), 0);
	ck_assert_uint_eq(n, 0);
}
END_TEST

START_TEST(test_text_bad_bytes)
{
	expect_fail("12x\n", 4, 40, -EINVAL,
		    "byte 2 (0x78) is neither a digit nor a separator");
	expect_fail("-1\n", 3, 40, -EINVAL, "byte 0 (0x2d)");
	expect_fail("1 +2", 4, 40, -EINVAL, "byte 2 (0x2b)");
	expect_fail("1;2", 3, 40, -EINVAL, "byte 1 (0x3b)");
	/* the bad byte of a number wins over the number's range (cut
	 * before the byte, "99" fails alone) */
	expect_fail_whole("99x", 3, 40, -EINVAL, "byte 2");
}
END_TEST

START_TEST(test_text_out_of_range)
{
	char big[64];

	expect_fail("1 40\n", 5, 40, ZR_E_RANGE,
		    "index 40 is out of range (the store holds 40 records)");
	expect_fail("0", 1, 0, ZR_E_RANGE, "index 0 is out of range");
	expect_fail("0007", 4, 5, ZR_E_RANGE, "index 7 is out of range");
	/* (cut, these fail at a prefix, shown as such) */
	expect_fail_whole("18446744073709551616", 20, 40, ZR_E_RANGE,
			  "index 18446744073709551616 is out");
	snprintf(big, sizeof(big), "000%s", "1234567890123456789012345678");
	expect_fail_whole(big, strlen(big), 40, ZR_E_RANGE,
			  "index 123456789012345678901234... is out of range");
	/* leading zeros, however many, are no digits of the index */
	expect_fail("0000000000000000000000000000000000000000000 7", 45, 5,
		    ZR_E_RANGE, "index 7 is out");
	/* a number cut by a chunk fails with the chunk that makes it too
	 * large, before its end is known */
	{
		zrfile_idxlist *p;

		ck_assert_int_eq(zrfile_idxlist_new(&p), 0);
		ck_assert_int_eq(zrfile_idxlist_feed(p, "1 3", 3, 40), 0);
		ck_assert_int_eq(zrfile_idxlist_feed(p, "9", 1, 40), 0);
		ck_assert_int_eq(zrfile_idxlist_feed(p, "0", 1, 40),
				 ZR_E_RANGE);
		ck_assert_str_eq(zrfile_idxlist_message(p), "index 390 is out "
				 "of range (the store holds 40 records)");
		zrfile_idxlist_free(p);
	}
}
END_TEST

START_TEST(test_finish_checks_the_final_limit)
{
	zrfile_idxlist *p;
	uint64_t *idx = NULL;
	size_t n = 0;

	ck_assert_int_eq(zrfile_idxlist_new(&p), 0);
	ck_assert_int_eq(zrfile_idxlist_feed(p, "5 30 2", 6, 40), 0);
	ck_assert_int_eq(zrfile_idxlist_finish(p, 20, &idx, &n), ZR_E_RANGE);
	ck_assert_str_eq(zrfile_idxlist_message(p), "index 30 is out of "
			 "range (the store holds 20 records)");
	ck_assert_ptr_null(idx);
	zrfile_idxlist_free(p);

	ck_assert_int_eq(zrfile_idxlist_new(&p), 0);
	ck_assert_int_eq(zrfile_idxlist_feed(p, "5 2", 3, 40), 0);
	ck_assert_int_eq(zrfile_idxlist_finish(p, 6, &idx, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(idx[0], 5);
	ck_assert_uint_eq(idx[1], 2);
	free(idx);
	/* finished: nothing more is taken */
	ck_assert_int_eq(zrfile_idxlist_feed(p, "1", 1, 40), -EINVAL);
	ck_assert_int_eq(zrfile_idxlist_finish(p, 40, &idx, &n), -EINVAL);
	zrfile_idxlist_free(p);
}
END_TEST

/* A .npy of vals[0, count) as dtype ds (1-d, or 0-d when ndim is 0);
 * values are cut to the item size (two's complement). */
static size_t make_npy(unsigned char *dst, size_t cap, const char *ds,
		       uint32_t ndim, const int64_t *vals, size_t count)
{
	uint64_t shape[1] = { count };
	zr_dtype dt;
	size_t len;

	ck_assert_int_eq(zr_dtype_parse(ds, &dt), 0);
	ck_assert_int_eq(zr_npy_write_header(&dt, ndim, shape, dst, cap, &len),
			 0);
	for (size_t i = 0; i < count; i++) {
		uint64_t x = (uint64_t)vals[i];

		ck_assert_uint_le(len + dt.itemsize, cap);
		for (unsigned b = 0; b < dt.itemsize; b++)
			dst[len + (dt.order == '>' ? dt.itemsize - 1 - b : b)]
				= (unsigned char)(x >> (8 * b));
		len += dt.itemsize;
	}
	return len;
}

/* A version 1.0 .npy whose header dict is dict, then data[0, dlen). */
static size_t raw_npy(unsigned char *dst, const char *dict, const void *data,
		      size_t dlen)
{
	size_t hl = strlen(dict) + 1, pad = (64 - (10 + hl) % 64) % 64;

	memcpy(dst, "\x93NUMPY\x01\x00", 8);
	dst[8] = (unsigned char)((hl + pad) & 0xff);
	dst[9] = (unsigned char)((hl + pad) >> 8);
	memcpy(dst + 10, dict, hl - 1);
	memset(dst + 9 + hl, ' ', pad);
	dst[9 + hl + pad] = '\n';
	memcpy(dst + 10 + hl + pad, data, dlen);
	return 10 + hl + pad + dlen;
}

START_TEST(test_npy_every_integer_dtype)
{
	static const char *const dts[] = {
		"|i1", "|u1", "<i2", ">i2", "<u2", ">u2", "<i4", ">i4",
		"<u4", ">u4", "<i8", ">i8", "<u8", ">u8",
	};
	static const int64_t vals[] = { 3, 0, 17, 99, 3, 126 };
	static const uint64_t want[] = { 3, 0, 17, 99, 3, 126 };
	unsigned char buf[256];

	for (size_t d = 0; d < sizeof(dts) / sizeof(dts[0]); d++) {
		size_t len = make_npy(buf, sizeof(buf), dts[d], 1, vals, 6);
		size_t all[sizeof(buf)], cuts[2];

		expect(buf, len, NULL, 0, 127, want, 6);
		for (size_t i = 0; i + 1 < len; i++)
			all[i] = i + 1;
		expect(buf, len, all, len - 1, 127, want, 6);
		for (cuts[0] = 1; cuts[0] < len; cuts[0] += 3)
			for (cuts[1] = cuts[0] + 1; cuts[1] < len; cuts[1] += 5)
				expect(buf, len, cuts, 2, 127, want, 6);
		/* a 0-d array is one index; an empty one none */
		len = make_npy(buf, sizeof(buf), dts[d], 0, vals + 2, 1);
		expect(buf, len, NULL, 0, 127, want + 2, 1);
		len = make_npy(buf, sizeof(buf), dts[d], 1, vals, 0);
		expect(buf, len, NULL, 0, 127, NULL, 0);
	}
}
END_TEST

START_TEST(test_npy_out_of_range_and_negative)
{
	static const int64_t neg[] = { 1, -2 }, big[] = { 1, -1 };
	static const int64_t at[] = { 4, 40 };
	unsigned char buf[256];
	size_t len;

	len = make_npy(buf, sizeof(buf), "<i4", 1, neg, 2);
	expect_fail(buf, len, 40, ZR_E_RANGE, "index -2 is out of range");
	len = make_npy(buf, sizeof(buf), "|i1", 1, neg, 2);
	expect_fail(buf, len, 40, ZR_E_RANGE, "index -2 is out of range");
	len = make_npy(buf, sizeof(buf), ">u8", 1, big, 2);
	expect_fail(buf, len, 40, ZR_E_RANGE,
		    "index 18446744073709551615 is out of range");
	len = make_npy(buf, sizeof(buf), ">u2", 1, at, 2);
	expect_fail(buf, len, 40, ZR_E_RANGE, "index 40 is out of range "
		    "(the store holds 40 records)");
}
END_TEST

START_TEST(test_npy_refused_headers)
{
	static const char i8[8] = { 1 };
	static const int64_t vals[] = { 1, 2, 3 };
	unsigned char buf[512];
	size_t len;

	len = make_npy(buf, sizeof(buf), "<f8", 1, vals, 3);
	expect_fail(buf, len, 40, ZR_E_NPY,
		    "the .npy must be a 1-d integer array");
	len = make_npy(buf, sizeof(buf), "|b1", 1, vals, 3);
	expect_fail(buf, len, 40, ZR_E_NPY, "1-d integer array");
	/* C order 2-d: refused for its shape */
	len = raw_npy(buf, "{'descr': '<i8', 'fortran_order': False, "
		      "'shape': (1, 1), }", i8, 8);
	expect_fail(buf, len, 40, ZR_E_NPY, "1-d integer array");
	/* Fortran order of two real axes: the header parser refuses it */
	len = raw_npy(buf, "{'descr': '|u1', 'fortran_order': True, "
		      "'shape': (2, 2), }", "\1\2\3\4", 4);
	expect_fail(buf, len, 40, ZR_E_NPY, "malformed .npy header");
	/* one axis: Fortran order is C order, taken */
	len = raw_npy(buf, "{'descr': '|u1', 'fortran_order': True, "
		      "'shape': (3,), }", "\1\2\3", 3);
	{
		static const uint64_t want[] = { 1, 2, 3 };

		expect(buf, len, NULL, 0, 40, want, 3);
	}
	/* bad magic fails at the first chunk that shows it */
	expect_fail("\x93NUMPX\x01\x00", 8, 40, ZR_E_NPY,
		    "malformed .npy header");
	expect_fail("\x93NUMPY\x09\x00\x10\x00", 10, 40, ZR_E_NPY,
		    "malformed .npy header");
}
END_TEST

START_TEST(test_npy_truncated_and_long)
{
	static const int64_t vals[] = { 1, 2, 3, 4 };
	unsigned char buf[256];
	size_t len = make_npy(buf, sizeof(buf), "<i2", 1, vals, 4), hlen;
	uint64_t *idx = NULL;
	size_t n = 0;
	char msg[256];

	hlen = len - 8;
	/* cut anywhere in the header: malformed at the end */
	for (size_t cut = 1; cut < hlen; cut++) {
		ck_assert_int_eq(parse_whole(buf, cut, 40, &idx, &n, msg,
					     sizeof(msg)), ZR_E_NPY);
		ck_assert_str_eq(msg, "malformed .npy header");
	}
	/* cut in the data, or one byte too many */
	for (size_t cut = hlen; cut < len; cut++) {
		ck_assert_int_eq(parse_whole(buf, cut, 40, &idx, &n, msg,
					     sizeof(msg)), ZR_E_NPY);
		ck_assert_str_eq(msg, "the .npy's size disagrees with its "
				 "shape");
	}
	buf[len] = 0;
	expect_fail(buf, len + 1, 40, ZR_E_NPY,
		    "the .npy's size disagrees with its shape");
}
END_TEST

START_TEST(test_input_limit)
{
	const size_t chunk = 1u << 20;
	char *spaces = malloc(chunk);
	zrfile_idxlist *p;
	uint64_t *idx = NULL;
	size_t n = 1;

	ck_assert_ptr_nonnull(spaces);
	memset(spaces, ' ', chunk);
	spaces[0] = '7';
	ck_assert_int_eq(zrfile_idxlist_new(&p), 0);
	for (size_t i = 0; i < ZRFILE_IDXLIST_MAX / chunk; i++)
		ck_assert_int_eq(zrfile_idxlist_feed(p, spaces, chunk, 8), 0);
	ck_assert_int_eq(zrfile_idxlist_feed(p, "1", 1, 8), -EFBIG);
	ck_assert_str_eq(zrfile_idxlist_message(p), "input over 256 MiB");
	ck_assert_int_eq(zrfile_idxlist_finish(p, 8, &idx, &n), -EFBIG);
	zrfile_idxlist_free(p);

	/* exactly the limit is taken */
	ck_assert_int_eq(zrfile_idxlist_new(&p), 0);
	for (size_t i = 0; i < ZRFILE_IDXLIST_MAX / chunk; i++)
		ck_assert_int_eq(zrfile_idxlist_feed(p, spaces, chunk, 8), 0);
	ck_assert_int_eq(zrfile_idxlist_finish(p, 8, &idx, &n), 0);
	ck_assert_uint_eq(n, ZRFILE_IDXLIST_MAX / chunk);
	free(idx);
	zrfile_idxlist_free(p);
	free(spaces);
}
END_TEST

/* The bound index_list.h promises a store of 1000 records: the 32 KiB a
 * short list may take (two bitmaps of 1000 bits are less). */
#define SMALL_STORE 1000
#define SMALL_BOUND (32u << 10)

/* 64 Mi indices, a 128 MiB uint16 .npy (as a list: 512 MiB, and more
 * while it doubled), fed in 1 MiB writes: the parser never holds more
 * than the bound, and hands each index back once, ascending. */
START_TEST(test_many_indices_bounded_memory)
{
	const size_t count = (size_t)64 << 20, chunk = 1u << 20;
	unsigned char *buf = malloc(chunk);
	uint64_t shape[1] = { count }, *idx = NULL;
	size_t len, n = 0, most = 0, next = 0;
	zrfile_idxlist *p;
	zr_dtype dt;

	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(zr_dtype_parse("<u2", &dt), 0);
	ck_assert_int_eq(zr_npy_write_header(&dt, 1, shape, buf, chunk, &len),
			 0);
	ck_assert_int_eq(zrfile_idxlist_new(&p), 0);
	ck_assert_int_eq(zrfile_idxlist_feed(p, buf, len, SMALL_STORE), 0);
	while (next < count) {
		for (len = 0; len < chunk; len += 2, next++) {
			buf[len] = (unsigned char)(next % SMALL_STORE);
			buf[len + 1] = (unsigned char)(next % SMALL_STORE >> 8);
		}
		ck_assert_int_eq(zrfile_idxlist_feed(p, buf, len, SMALL_STORE),
				 0);
		if (zrfile_idxlist_bytes(p) > most)
			most = zrfile_idxlist_bytes(p);
	}
	ck_assert_uint_le(most, SMALL_BOUND);
	ck_assert_int_eq(zrfile_idxlist_finish(p, SMALL_STORE, &idx, &n), 0);
	ck_assert_uint_eq(n, SMALL_STORE);
	for (size_t i = 0; i < n; i++)
		ck_assert_uint_eq(idx[i], i);
	free(idx);
	zrfile_idxlist_free(p);
	free(buf);
}
END_TEST

/* Past the short list, text with duplicates: "K " for K = 0.. (a list
 * while short), its head's input order kept until then. */
static zrfile_idxlist *long_list(const char *head, size_t more,
				 uint64_t limit)
{
	zrfile_idxlist *p;
	char num[24];

	ck_assert_int_eq(zrfile_idxlist_new(&p), 0);
	ck_assert_int_eq(zrfile_idxlist_feed(p, head, strlen(head), limit), 0);
	for (size_t i = 0; i < more; i++) {
		int len = snprintf(num, sizeof(num), "%zu ", i % 7);

		ck_assert_int_eq(zrfile_idxlist_feed(p, num, (size_t)len,
						     limit), 0);
	}
	return p;
}

/* Once bitmaps hold the indices, a limit that shrank before finish is
 * refused naming the first index past it in input order, as the list
 * did: not the smallest (992) nor the largest (999). */
START_TEST(test_bitmaps_name_the_first_past_the_limit)
{
	zrfile_idxlist *p = long_list("10 995 992 3 999 ", 20000,
				      SMALL_STORE);
	uint64_t *idx = NULL;
	size_t n = 0;

	ck_assert_uint_le(zrfile_idxlist_bytes(p), SMALL_BOUND);
	ck_assert_int_eq(zrfile_idxlist_finish(p, 990, &idx, &n), ZR_E_RANGE);
	ck_assert_str_eq(zrfile_idxlist_message(p), "index 995 is out of "
			 "range (the store holds 990 records)");
	zrfile_idxlist_free(p);

	/* the last number, cut by the input's end, is kept at finish (the
	 * 4097th: the list turns to bitmaps of the shrunk limit's bits), and
	 * the bitmaps reach past them to name it */
	p = long_list("", 4096, 2000);
	ck_assert_int_eq(zrfile_idxlist_feed(p, "1500", 4, 2000), 0);
	ck_assert_int_eq(zrfile_idxlist_finish(p, 100, &idx, &n), ZR_E_RANGE);
	ck_assert_str_eq(zrfile_idxlist_message(p), "index 1500 is out of "
			 "range (the store holds 100 records)");
	zrfile_idxlist_free(p);

	/* a store grown between writes: the bitmaps grow with it */
	p = long_list("10 995 ", 20000, SMALL_STORE);
	ck_assert_int_eq(zrfile_idxlist_feed(p, "50000", 5, 60000), 0);
	ck_assert_int_eq(zrfile_idxlist_finish(p, 60000, &idx, &n), 0);
	ck_assert_uint_eq(n, 10);	/* 0 to 6, 10, 995, 50000 */
	ck_assert_uint_eq(idx[7], 10);
	ck_assert_uint_eq(idx[8], 995);
	ck_assert_uint_eq(idx[9], 50000);
	free(idx);
	zrfile_idxlist_free(p);
}
END_TEST

Suite *suite_idxlist(void)
{
	Suite *s = suite_create("idxlist");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_text_any_chunking);
	tcase_add_test(tc, test_text_empty_and_blank);
	tcase_add_test(tc, test_text_bad_bytes);
	tcase_add_test(tc, test_text_out_of_range);
	tcase_add_test(tc, test_finish_checks_the_final_limit);
	tcase_add_test(tc, test_npy_every_integer_dtype);
	tcase_add_test(tc, test_npy_out_of_range_and_negative);
	tcase_add_test(tc, test_npy_refused_headers);
	tcase_add_test(tc, test_npy_truncated_and_long);
	tcase_add_test(tc, test_input_limit);
	tcase_add_test(tc, test_many_indices_bounded_memory);
	tcase_add_test(tc, test_bitmaps_name_the_first_past_the_limit);
	suite_add_tcase(s, tc);
	return s;
}
