/*
 * check_ragged_pack.c - the packed and padded forms on hand-made gathered
 * batches: zr_ragged_pack's elements, boundaries and shapes of records of
 * one rank, in place and into another buffer; zr_ragged_pad_shape and
 * zr_ragged_pad, into another buffer and in place, with a pad value and
 * with zeros; and each refusal (another rank, a bad prefix, offsets that
 * go back, shapes that differ beyond axis 0, a buffer too small, bad
 * arguments).
 */
#include <check.h>
#include <errno.h>
#include <string.h>

#include "check_suites.h"
#include "zrecord.h"

/* Appends one stored ragged record (prefix, then int16 elements k*100+i)
 * at buf + *at; its shape is dims[0..ndim). */
static void put(uint8_t *buf, uint64_t *at, uint32_t ndim,
		const uint64_t *dims, int k)
{
	uint64_t elems = 1, n = ndim;

	memcpy(buf + *at, &n, 8); /* the tests run little-endian */
	for (uint32_t d = 0; d < ndim; d++) {
		memcpy(buf + *at + 8 + 8 * d, &dims[d], 8);
		elems *= dims[d];
	}
	*at += 8 + 8 * ndim;
	for (uint64_t i = 0; i < elems; i++) {
		int16_t v = (int16_t)(k * 100 + (int)i);

		memcpy(buf + *at, &v, 2);
		*at += 2;
	}
}

START_TEST(packs_in_place)
{
	static const uint64_t dims[3][2] = { { 2, 3 }, { 1, 1 }, { 4, 2 } };
	uint8_t buf[512];
	uint64_t off[4] = { 0 }, packed[4], shapes[6], at = 0;
	int16_t want[6 + 1 + 8], *got = (int16_t *)buf;
	size_t w = 0;

	for (int k = 0; k < 3; k++) {
		put(buf, &at, 2, dims[k], k);
		off[k + 1] = at;
		for (uint64_t i = 0; i < dims[k][0] * dims[k][1]; i++)
			want[w++] = (int16_t)(k * 100 + (int)i);
	}
	ck_assert_int_eq(zr_ragged_pack(buf, off, 3, 2, 2, shapes, packed), 0);
	ck_assert_uint_eq(packed[0], 0);
	ck_assert_uint_eq(packed[1], 12);
	ck_assert_uint_eq(packed[2], 14);
	ck_assert_uint_eq(packed[3], 30);
	ck_assert_mem_eq(shapes, dims, sizeof(shapes));
	ck_assert_mem_eq(got, want, sizeof(want));
	/* no records: one boundary, nothing else touched */
	packed[0] = 7;
	ck_assert_int_eq(zr_ragged_pack(NULL, NULL, 0, 2, 1, NULL, packed), 0);
	ck_assert_uint_eq(packed[0], 0);
}
END_TEST

START_TEST(refuses_what_it_cannot_pack)
{
	static const uint64_t one[1] = { 3 }, two[2] = { 1, 2 };
	uint8_t buf[256];
	uint64_t off[3] = { 0 }, packed[3], shapes[4], at = 0;

	put(buf, &at, 1, one, 0);
	off[1] = at;
	put(buf, &at, 2, two, 1);
	off[2] = at;
	ck_assert_int_eq(zr_ragged_pack(buf, off, 2, 2, 1, shapes, packed),
			 ZR_E_SHAPE);
	ck_assert_ptr_nonnull(strstr(zr_errmsg(), "record 1 has 2"));
	/* a payload one element short of its shape */
	off[1] = 0;
	at = 0;
	put(buf, &at, 1, one, 0);
	off[1] = at - 2;
	ck_assert_int_eq(zr_ragged_pack(buf, off, 1, 2, 1, shapes, packed),
			 ZR_E_CORRUPT);
	/* offsets that go back */
	off[1] = at;
	off[2] = at - 1;
	ck_assert_int_eq(zr_ragged_pack(buf, off, 2, 2, 1, shapes, packed),
			 -EINVAL);
	ck_assert_int_eq(zr_ragged_pack(buf, off, 1, 2, 1, shapes, NULL),
			 -EINVAL);
	ck_assert_int_eq(zr_ragged_pack(buf, off, 1, 2, 1, NULL, packed),
			 -EINVAL);
	ck_assert_int_eq(zr_ragged_pack(buf, off, 1, 2, ZR_MAX_NDIM + 1,
					shapes, packed), -EINVAL);
}
END_TEST

START_TEST(packs_into_another_buffer)
{
	static const uint64_t dims[2][1] = { { 3 }, { 2 } };
	uint8_t buf[128], copy[128], dst[10];
	uint64_t off[3] = { 0 }, packed[3], shapes[2], at = 0;
	static const int16_t want[5] = { 0, 1, 2, 100, 101 };

	for (int k = 0; k < 2; k++) {
		put(buf, &at, 1, dims[k], k);
		off[k + 1] = at;
	}
	memcpy(copy, buf, at);
	ck_assert_int_eq(zr_ragged_pack_into(buf, off, 2, 2, 1, dst,
					     sizeof(dst), shapes, packed), 0);
	ck_assert_mem_eq(dst, want, sizeof(want));
	ck_assert_mem_eq(buf, copy, at); /* the source is left alone */
	ck_assert_uint_eq(packed[2], 10);
	ck_assert_uint_eq(shapes[0], 3);
	ck_assert_uint_eq(shapes[1], 2);
	/* one byte short: refused, not overrun */
	ck_assert_int_eq(zr_ragged_pack_into(buf, off, 2, 2, 1, dst,
					     sizeof(dst) - 1, shapes, packed),
			 -EINVAL);
	ck_assert_ptr_nonnull(strstr(zr_errmsg(), "dst_cap"));
}
END_TEST

/* A packed batch of three int16 records of shapes (2, 2), (3, 2), (1, 2):
 * elements k*100+i, boundaries and shapes as zr_ragged_pack gives them. */
static void packed_batch(uint8_t *buf, uint64_t *packed, uint64_t *shapes)
{
	static const uint64_t dims[3][2] = { { 2, 2 }, { 3, 2 }, { 1, 2 } };
	uint64_t off[4] = { 0 }, at = 0;

	for (int k = 0; k < 3; k++) {
		put(buf, &at, 2, dims[k], k);
		off[k + 1] = at;
	}
	ck_assert_int_eq(zr_ragged_pack(buf, off, 3, 2, 2, shapes, packed), 0);
}

START_TEST(pads_along_axis_0)
{
	uint8_t buf[256], same[256];
	uint64_t packed[4], shapes[6], padded[ZR_MAX_NDIM];
	int16_t out[3 * 3 * 2], pad = -7;
	static const int16_t want[3 * 3 * 2] = {
		0, 1, 2, 3, -7, -7,
		100, 101, 102, 103, 104, 105,
		200, 201, -7, -7, -7, -7,
	};

	packed_batch(buf, packed, shapes);
	ck_assert_int_eq(zr_ragged_pad_shape(shapes, 3, 2, padded), 0);
	ck_assert_uint_eq(padded[0], 3);
	ck_assert_uint_eq(padded[1], 2);
	ck_assert_int_eq(zr_ragged_pad(buf, packed, 3, 2, 2, shapes, padded,
				       &pad, out, sizeof(out)), 0);
	ck_assert_mem_eq(out, want, sizeof(want));
	/* in place, with zeros: the same layout, 0 where the pad was */
	memcpy(same, buf, sizeof(buf));
	ck_assert_int_eq(zr_ragged_pad(same, packed, 3, 2, 2, shapes, padded,
				       NULL, same, sizeof(same)), 0);
	for (size_t i = 0; i < 3 * 3 * 2; i++) {
		int16_t v;

		memcpy(&v, same + 2 * i, 2);
		ck_assert_int_eq(v, want[i] == -7 ? 0 : want[i]);
	}
	/* one byte short */
	ck_assert_int_eq(zr_ragged_pad(buf, packed, 3, 2, 2, shapes, padded,
				       &pad, out, sizeof(out) - 1), -EINVAL);
	/* a record longer than the padded shape */
	padded[0] = 2;
	ck_assert_int_eq(zr_ragged_pad(buf, packed, 3, 2, 2, shapes, padded,
				       &pad, out, sizeof(out)), ZR_E_SHAPE);
	ck_assert_ptr_nonnull(strstr(zr_errmsg(), "record 1"));
}
END_TEST

START_TEST(refuses_what_it_cannot_pad)
{
	static const uint64_t shapes[6] = { 2, 3, 4, 3, 1, 5 };
	uint64_t padded[ZR_MAX_NDIM];

	ck_assert_int_eq(zr_ragged_pad_shape(shapes, 2, 2, padded), 0);
	ck_assert_uint_eq(padded[0], 4);
	ck_assert_int_eq(zr_ragged_pad_shape(shapes, 3, 2, padded), ZR_E_SHAPE);
	ck_assert_ptr_nonnull(strstr(zr_errmsg(), "differ beyond axis 0"));
	ck_assert_ptr_nonnull(strstr(zr_errmsg(), "record 2"));
	ck_assert_int_eq(zr_ragged_pad_shape(shapes, 3, 0, padded), ZR_E_SHAPE);
	ck_assert_ptr_nonnull(strstr(zr_errmsg(), "0-d"));
	ck_assert_int_eq(zr_ragged_pad_shape(NULL, 3, 2, padded), -EINVAL);
	ck_assert_int_eq(zr_ragged_pad_shape(shapes, 3, ZR_MAX_NDIM + 1,
					     padded), -EINVAL);
	/* no records: nothing to pad to */
	ck_assert_int_eq(zr_ragged_pad_shape(NULL, 0, 2, padded), 0);
	ck_assert_uint_eq(padded[0], 0);
	ck_assert_int_eq(zr_ragged_pad(NULL, NULL, 0, 2, 2, NULL, padded, NULL,
				       NULL, 0), 0);
}
END_TEST

Suite *suite_ragged_pack(void)
{
	Suite *su = suite_create("ragged_pack");
	TCase *tc = tcase_create("pack");

	tcase_add_test(tc, packs_in_place);
	tcase_add_test(tc, refuses_what_it_cannot_pack);
	tcase_add_test(tc, packs_into_another_buffer);
	tcase_add_test(tc, pads_along_axis_0);
	tcase_add_test(tc, refuses_what_it_cannot_pad);
	suite_add_tcase(su, tc);
	return su;
}
