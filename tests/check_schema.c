/*
 * check_schema.c - schema MsgPack bytes identical to the seed's Python
 * encoder, strict decoding of malformed bytes, row width and JSON.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_suites.h"
#include "zrecord.h"

/* Expected bytes computed with python3-msgpack 1.0.3 by
 * tests/fixtures/schema_bytes.py (msgpack.packb of the seed's dict).
 * ndim -1 means ragged. */
static const struct {
	const char *dtype;
	int ndim;
	uint64_t shape[17];
	const char *hex;
} python_bytes[] = {
	{ "<f4", 3, { 3, 224, 224 },
	  "82a56474797065a33c6634aa6974656d5f73686170659303cce0cce0" },
	{ "|u1", 2, { 28, 28 },
	  "82a56474797065a37c7531aa6974656d5f7368617065921c1c" },
	{ "<i8", 0, { 0 }, "82a56474797065a33c6938aa6974656d5f736861706590" },
	{ ">c16", 1, { 1 },
	  "82a56474797065a43e633136aa6974656d5f73686170659101" },
	{ "|b1", 4, { 127, 128, 255, 256 },
	  "82a56474797065a37c6231aa6974656d5f7368617065947fcc80ccffcd0100" },
	{ "<u2", 1, { 65535 },
	  "82a56474797065a33c7532aa6974656d5f736861706591cdffff" },
	{ "<u4", 1, { 65536 },
	  "82a56474797065a33c7534aa6974656d5f736861706591ce00010000" },
	{ "|u1", 1, { 2147483648 },
	  "82a56474797065a37c7531aa6974656d5f736861706591ce80000000" },
	{ "<i4", -1, { 0 }, "81a56474797065a33c6934" },
	{ "|u1", -1, { 0 }, "81a56474797065a37c7531" },
	{ ">f8", -1, { 0 }, "81a56474797065a33e6638" },
	{ "<f2", 17, { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 3 },
	  "82a56474797065a33c6632aa6974656d5f7368617065dc0011010101010101010101"
	  "0101010101010203" },
};

/* Malformed schemas (bytes also made with python3-msgpack). */
static const struct {
	const char *name;
	const char *hex;
	int err;
} bad_bytes[] = {
	{ "array, not a map", "93010203", ZR_E_SCHEMA },
	{ "unknown key",
	  "83a56474797065a33c6634aa6974656d5f73686170659103a17801",
	  ZR_E_SCHEMA },
	{ "only item_shape", "81aa6974656d5f73686170659103", ZR_E_SCHEMA },
	{ "empty map", "80", ZR_E_SCHEMA },
	{ "plain name", "81a56474797065a7666c6f61743332", ZR_E_SCHEMA },
	{ "native order", "81a56474797065a33d6634", ZR_E_SCHEMA },
	{ "one-byte with <", "81a56474797065a33c7531", ZR_E_SCHEMA },
	{ "| on f4", "81a56474797065a37c6634", ZR_E_SCHEMA },
	{ "unicode dtype", "81a56474797065a33c5538", ZR_E_SCHEMA },
	{ "object dtype", "81a56474797065a27c4f", ZR_E_SCHEMA },
	{ "dtype int", "81a5647479706504", ZR_E_SCHEMA },
	{ "dtype bin", "81a56474797065c4033c6634", ZR_E_SCHEMA },
	{ "key bin", "81c4056474797065a33c6634", ZR_E_SCHEMA },
	{ "negative dim", "82a56474797065a33c6634aa6974656d5f736861706591ff",
	  ZR_E_SCHEMA },
	{ "float dim",
	  "82a56474797065a33c6634aa6974656d5f736861706591cb4008000000000000",
	  ZR_E_SCHEMA },
	{ "shape not array", "82a56474797065a33c6634aa6974656d5f736861706503",
	  ZR_E_SCHEMA },
	{ "shape nil", "82a56474797065a33c6634aa6974656d5f7368617065c0",
	  ZR_E_SCHEMA },
	{ "zero dim", "82a56474797065a33c6634aa6974656d5f7368617065920300",
	  ZR_E_SCHEMA },
	{ "33 dims",
	  "82a56474797065a37c7531aa6974656d5f7368617065dc0021010101010101010101"
	  "010101010101010101010101010101010101010101010101",
	  ZR_E_SCHEMA },
	{ "nested map", "81a5647479706581a16101", ZR_E_SCHEMA },
	{ "record over 2 GiB",
	  "82a56474797065a37c7531aa6974656d5f736861706591ce80000001",
	  ZR_E_TOOBIG },
	{ "product overflow",
	  "82a56474797065a33c6638aa6974656d5f736861706593cf0000000100000000cf00"
	  "00000100000000cf0000000100000000",
	  ZR_E_TOOBIG },
	{ "trailing byte", "81a56474797065a33c663400", ZR_E_SCHEMA },
	{ "truncated", "82a56474797065a33c6634aa6974656d5f736861706591",
	  ZR_E_SCHEMA },
	{ "duplicate dtype", "82a56474797065a33c6634a56474797065a33c6634",
	  ZR_E_SCHEMA },
	{ "duplicate shape",
	  "83a56474797065a33c6634aa6974656d5f73686170659101aa6974656d5f736861"
	  "70659101",
	  ZR_E_SCHEMA },
	{ "nil", "c0", ZR_E_SCHEMA },
	{ "never-used code", "c1", ZR_E_SCHEMA },
	/* Declared sizes far past the input must fail without allocating
	 * them (msgpack-c would try to). */
	{ "huge array32",
	  "82a56474797065a33c6634aa6974656d5f7368617065ddffffffff",
	  ZR_E_SCHEMA },
	{ "huge map32", "dfffffffff", ZR_E_SCHEMA },
	{ "huge str32", "81a56474797065dbffffffff", ZR_E_SCHEMA },
	{ "huge ext32", "81a56474797065c9ffffffff01", ZR_E_SCHEMA },
	{ "nested array",
	  "82a56474797065a33c6634aa6974656d5f7368617065919101", ZR_E_SCHEMA },
};

static size_t unhex(const char *hex, uint8_t *dst, size_t cap)
{
	size_t n = strlen(hex) / 2;

	ck_assert_uint_le(n, cap);
	for (size_t i = 0; i < n; i++) {
		unsigned v;

		ck_assert_int_eq(sscanf(hex + 2 * i, "%2x", &v), 1);
		dst[i] = (uint8_t)v;
	}
	return n;
}

static void make_schema(size_t i, zr_schema *s)
{
	memset(s, 0, sizeof(*s));
	ck_assert_int_eq(zr_dtype_parse(python_bytes[i].dtype, &s->dtype), 0);
	s->ragged = python_bytes[i].ndim < 0;
	s->ndim = s->ragged ? 0 : (uint32_t)python_bytes[i].ndim;
	memcpy(s->shape, python_bytes[i].shape, sizeof(python_bytes[i].shape));
}

START_TEST(test_python_bytes)
{
	uint8_t want[256], got[256];

	for (size_t i = 0; i < sizeof(python_bytes) / sizeof(python_bytes[0]);
	     i++) {
		size_t n = unhex(python_bytes[i].hex, want, sizeof(want)), len;
		zr_schema s, back;

		make_schema(i, &s);
		ck_assert_int_eq(zr_schema_encode(&s, got, sizeof(got), &len),
				 0);
		ck_assert_uint_eq(len, n);
		ck_assert_msg(!memcmp(got, want, n), "case %zu differs", i);
		ck_assert_int_eq(zr_schema_decode(want, n, &back), 0);
		ck_assert_str_eq(back.dtype.str, s.dtype.str);
		ck_assert_uint_eq(back.dtype.itemsize, s.dtype.itemsize);
		ck_assert_int_eq(back.ragged, s.ragged);
		ck_assert_uint_eq(back.ndim, s.ndim);
		ck_assert_int_eq(memcmp(back.shape, s.shape, sizeof(s.shape)),
				 0);
		ck_assert_int_eq(zr_schema_encode(&s, got, n - 1, &len),
				 ZR_E_SCHEMA);
	}
}
END_TEST

START_TEST(test_bad_bytes)
{
	uint8_t buf[256];
	zr_schema s;

	for (size_t i = 0; i < sizeof(bad_bytes) / sizeof(bad_bytes[0]); i++) {
		size_t n = unhex(bad_bytes[i].hex, buf, sizeof(buf));
		int rc = zr_schema_decode(buf, n, &s);

		ck_assert_msg(rc == bad_bytes[i].err, "%s: got %s",
			      bad_bytes[i].name, zr_errname(rc));
		ck_assert_str_ne(zr_errmsg(), "");
	}
}
END_TEST

START_TEST(test_lengths_and_order)
{
	static uint8_t big[ZR_SCHEMA_MAX + 1];
	uint8_t buf[64] = { 0 };
	zr_schema s;
	size_t n;

	ck_assert_int_eq(zr_schema_decode(buf, 0, &s), ZR_E_SCHEMA);
	n = unhex("81a56474797065a33c6934", big, sizeof(big));
	ck_assert_int_eq(zr_schema_decode(big, n, &s), 0);
	ck_assert_int_eq(zr_schema_decode(big, sizeof(big), &s), ZR_E_SCHEMA);
	/* Python decodes any key order and int width; so do we. */
	n = unhex("82aa6974656d5f7368617065920203a56474797065a33c6932", buf,
		  sizeof(buf));
	ck_assert_int_eq(zr_schema_decode(buf, n, &s), 0);
	ck_assert_str_eq(s.dtype.str, "<i2");
	ck_assert_int_eq(s.ragged, 0);
	ck_assert_uint_eq(s.ndim, 2);
	ck_assert_uint_eq(s.shape[1], 3);
	n = unhex("82a56474797065a33c6932aa6974656d5f736861706591cf000000000000"
		  "0003", buf, sizeof(buf));
	ck_assert_int_eq(zr_schema_decode(buf, n, &s), 0);
	ck_assert_uint_eq(s.shape[0], 3);
}
END_TEST

START_TEST(test_row_bytes)
{
	zr_schema s = { .ndim = 3, .shape = { 3, 224, 224 } };
	size_t row;

	ck_assert_int_eq(zr_dtype_parse("<f4", &s.dtype), 0);
	ck_assert_int_eq(zr_schema_row_bytes(&s, &row), 0);
	ck_assert_uint_eq(row, 3 * 224 * 224 * 4);
	s.ndim = 0;
	ck_assert_int_eq(zr_schema_row_bytes(&s, &row), 0);
	ck_assert_uint_eq(row, 4);
	s.ndim = 2;
	s.shape[0] = 1u << 29;
	s.shape[1] = 4;
	ck_assert_int_eq(zr_schema_row_bytes(&s, &row), ZR_E_TOOBIG);
	s.shape[1] = 1;
	ck_assert_int_eq(zr_schema_row_bytes(&s, &row), 0);
	ck_assert_uint_eq(row, ZR_RECORD_MAX);
	s.shape[0] = UINT64_MAX;
	ck_assert_int_eq(zr_schema_row_bytes(&s, &row), ZR_E_TOOBIG);
	s.shape[0] = 3;
	s.shape[1] = 0;
	ck_assert_int_eq(zr_schema_row_bytes(&s, &row), ZR_E_SCHEMA);
	s.ragged = 1;
	ck_assert_int_eq(zr_schema_row_bytes(&s, &row), -EINVAL);
}
END_TEST

START_TEST(test_encode_rejects)
{
	zr_schema s = { .ndim = 2, .shape = { 3, 0 } };
	uint8_t buf[256];
	size_t len;

	ck_assert_int_eq(zr_dtype_parse("<f4", &s.dtype), 0);
	ck_assert_int_eq(zr_schema_encode(&s, buf, sizeof(buf), &len),
			 ZR_E_SCHEMA);
	s.shape[1] = 2;
	s.ndim = ZR_MAX_NDIM + 1;
	ck_assert_int_eq(zr_schema_encode(&s, buf, sizeof(buf), &len),
			 ZR_E_SCHEMA);
	s.ndim = 2;
	memcpy(s.dtype.str, "=f4", 4);
	ck_assert_int_eq(zr_schema_encode(&s, buf, sizeof(buf), &len),
			 ZR_E_SCHEMA);
	memset(s.dtype.str, 'x', sizeof(s.dtype.str));
	ck_assert_int_eq(zr_schema_encode(&s, buf, sizeof(buf), &len),
			 ZR_E_SCHEMA);
}
END_TEST

START_TEST(test_json)
{
	zr_schema s = { .ndim = 2, .shape = { 3, 4 } };
	char buf[128];

	ck_assert_int_eq(zr_dtype_parse("float32", &s.dtype), 0);
	ck_assert_int_eq(zr_schema_json(&s, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "{\"dtype\": \"<f4\", \"item_shape\": [3, 4]}");
	ck_assert_int_eq(zr_schema_json(&s, buf, strlen(buf) + 1), 0);
	ck_assert_int_eq(zr_schema_json(&s, buf, strlen(buf)), -ENOBUFS);
	s.ndim = 1;
	ck_assert_int_eq(zr_schema_json(&s, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "{\"dtype\": \"<f4\", \"item_shape\": [3]}");
	s.ndim = 0;
	ck_assert_int_eq(zr_schema_json(&s, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "{\"dtype\": \"<f4\", \"item_shape\": []}");
	s.ragged = 1;
	ck_assert_int_eq(zr_dtype_parse(">c16", &s.dtype), 0);
	ck_assert_int_eq(zr_schema_json(&s, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "{\"dtype\": \">c16\"}");
}
END_TEST

Suite *suite_schema(void)
{
	Suite *s = suite_create("schema");
	TCase *tc = tcase_create("schema");

	tcase_add_test(tc, test_python_bytes);
	tcase_add_test(tc, test_bad_bytes);
	tcase_add_test(tc, test_lengths_and_order);
	tcase_add_test(tc, test_row_bytes);
	tcase_add_test(tc, test_encode_rejects);
	tcase_add_test(tc, test_json);
	suite_add_tcase(s, tc);
	return s;
}
