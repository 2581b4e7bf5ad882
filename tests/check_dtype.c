/*
 * check_dtype.c - dtype spellings: every accepted form maps to NumPy's
 * dtype.str, everything else is ZR_E_DTYPE.
 */
#include <string.h>

#include "check_suites.h"
#include "zrecord.h"

/* Canonical forms checked against NumPy 1.24's np.dtype(s).str. */
static const struct {
	const char *in, *str;
	char kind;
	unsigned size;
} good[] = {
	{ "<f4", "<f4", 'f', 4 },
	{ ">f4", ">f4", 'f', 4 },
	{ "=f4", "<f4", 'f', 4 },
	{ "|f4", "<f4", 'f', 4 },
	{ "f4", "<f4", 'f', 4 },
	{ "|u1", "|u1", 'u', 1 },
	{ "<u1", "|u1", 'u', 1 },
	{ ">i1", "|i1", 'i', 1 },
	{ "=b1", "|b1", 'b', 1 },
	{ "b1", "|b1", 'b', 1 },
	{ ">c16", ">c16", 'c', 16 },
	{ "=c16", "<c16", 'c', 16 },
	{ "<c8", "<c8", 'c', 8 },
	{ ">f2", ">f2", 'f', 2 },
	{ "<i8", "<i8", 'i', 8 },
	{ ">u8", ">u8", 'u', 8 },
	{ "<u2", "<u2", 'u', 2 },
	{ ">i4", ">i4", 'i', 4 },
	{ "bool", "|b1", 'b', 1 },
	{ "int8", "|i1", 'i', 1 },
	{ "int16", "<i2", 'i', 2 },
	{ "int32", "<i4", 'i', 4 },
	{ "int64", "<i8", 'i', 8 },
	{ "uint8", "|u1", 'u', 1 },
	{ "uint16", "<u2", 'u', 2 },
	{ "uint32", "<u4", 'u', 4 },
	{ "uint64", "<u8", 'u', 8 },
	{ "float16", "<f2", 'f', 2 },
	{ "float32", "<f4", 'f', 4 },
	{ "float64", "<f8", 'f', 8 },
	{ "complex64", "<c8", 'c', 8 },
	{ "complex128", "<c16", 'c', 16 },
};

static const char *const bad[] = {
	"", "<", "f", "<f", "<f3", "<f16", "<c4", "<c32", "<b2", "<i16",
	"<u3", "<U4", "|O", "|V8", "<M8", "<m8", "S5", "<f04", "<f4 ", " <f4",
	"<<f4", "!f4", "float", "int", "Float32", "float128", "complex256",
	"bool_", "<f4x", "<F4", "?", "<i2\n", "object", "str", "<f+4", "<f-4",
	"<f99999999999",
};

START_TEST(test_good)
{
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		zr_dtype d;

		memset(&d, 0x55, sizeof(d));
		ck_assert_msg(zr_dtype_parse(good[i].in, &d) == 0, "%s",
			      good[i].in);
		ck_assert_str_eq(d.str, good[i].str);
		ck_assert_int_eq(d.kind, good[i].kind);
		ck_assert_uint_eq(d.itemsize, good[i].size);
		ck_assert_int_eq(d.order, good[i].str[0]);
	}
}
END_TEST

START_TEST(test_bad)
{
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		zr_dtype d = { .str = "zzz", .itemsize = 99 };

		ck_assert_msg(zr_dtype_parse(bad[i], &d) == ZR_E_DTYPE,
			      "'%s' accepted", bad[i]);
		ck_assert_str_ne(zr_errmsg(), "");
		/* Outputs are written only on success. */
		ck_assert_str_eq(d.str, "zzz");
		ck_assert_uint_eq(d.itemsize, 99);
	}
}
END_TEST

Suite *suite_dtype(void)
{
	Suite *s = suite_create("dtype");
	TCase *tc = tcase_create("dtype");

	tcase_add_test(tc, test_good);
	tcase_add_test(tc, test_bad);
	suite_add_tcase(s, tc);
	return s;
}
