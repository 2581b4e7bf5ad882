/*
 * check_ragged_pack.c - zr_ragged_pack on hand-made gathered batches: the
 * packed elements, boundaries and shapes of records of one rank, in
 * place; and each refusal (another rank, a bad prefix, offsets that go
 * back, bad arguments).
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

Suite *suite_ragged_pack(void)
{
	Suite *su = suite_create("ragged_pack");
	TCase *tc = tcase_create("pack");

	tcase_add_test(tc, packs_in_place);
	tcase_add_test(tc, refuses_what_it_cannot_pack);
	suite_add_tcase(su, tc);
	return su;
}
