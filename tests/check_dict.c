/*
 * check_dict.c - dictionary tiers and training: a trained dictionary makes
 * a zstd_dict store smaller than plain zstd on small similar records, works
 * from a store's own records, and bad inputs fail cleanly.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check_suites.h"
#include "check_util.h"
#include "zrecord.h"

START_TEST(test_tiers)
{
	zr_dict_tier t;

	ck_assert_int_eq(zr_dict_tier_parse("fast", &t), 0);
	ck_assert_int_eq(t, ZR_DICT_FAST);
	ck_assert_int_eq(zr_dict_tier_parse("balanced", &t), 0);
	ck_assert_int_eq(t, ZR_DICT_BALANCED);
	ck_assert_int_eq(zr_dict_tier_parse("max", &t), 0);
	ck_assert_int_eq(t, ZR_DICT_MAX);
	ck_assert_int_eq(zr_dict_tier_parse("huge", &t), -EINVAL);
	ck_assert_str_eq(zr_dict_tier_name(ZR_DICT_BALANCED), "balanced");
	ck_assert_uint_eq(zr_dict_tier_dict_size(ZR_DICT_FAST), 32 << 10);
	ck_assert_uint_eq(zr_dict_tier_dict_size(ZR_DICT_BALANCED), 128 << 10);
	ck_assert_uint_eq(zr_dict_tier_dict_size(ZR_DICT_MAX), 1 << 20);
	ck_assert_uint_eq(zr_dict_tier_sample_size(ZR_DICT_FAST), 4 << 20);
	ck_assert_uint_eq(zr_dict_tier_sample_size(ZR_DICT_BALANCED),
			  16 << 20);
	ck_assert_uint_eq(zr_dict_tier_sample_size(ZR_DICT_MAX), 64 << 20);
}
END_TEST

/* Small, similar token-like records: what a dictionary is for. */
enum { NREC = 2000, RECLEN = 200 };

static void make_tokens(uint8_t *data)
{
	static const char *const words[] = { "the ", "store ", "record ",
					     "gather ", "zstd ", "of ",
					     "frame ", "index " };

	for (size_t i = 0; i < NREC; i++) {
		uint8_t *r = data + i * RECLEN;
		size_t pos = 0, w = i * 2654435761u;

		while (pos < RECLEN) {
			const char *word = words[(w >> 3) % 8];
			size_t n = strlen(word);

			w = w * 6364136223846793005ull + 1;
			n = n < RECLEN - pos ? n : RECLEN - pos;
			memcpy(r + pos, word, n);
			pos += n;
		}
		memcpy(r, &i, sizeof(i)); /* unique per record */
	}
}

static uint64_t store_size(const char *name, zr_codec codec,
			   const void *dict, size_t dict_len,
			   const uint8_t *data)
{
	static const uint64_t shape[] = { RECLEN };
	zr_schema sc = ck_schema("|u1", 1, shape);
	zr_store *s;
	uint64_t idx[3] = { 1999, 0, 777 };
	uint8_t out[3 * RECLEN];
	zr_stats st;
	char p[4096];

	ck_path(p, sizeof(p), ck_dir, name);
	ck_assert_int_eq(zr_store_create(p, &sc, codec, dict, dict_len, &s),
			 0);
	ck_assert_int_eq(zr_store_append_dense(s, data, NREC), 0);
	ck_assert_int_eq(zr_store_gather(s, idx, 3, out, sizeof(out), NULL),
			 0);
	for (int k = 0; k < 3; k++)
		ck_assert_mem_eq(out + k * RECLEN, data + idx[k] * RECLEN,
				 RECLEN);
	ck_assert_int_eq(zr_store_stats(s, &st), 0);
	ck_assert_int_eq(zr_store_close(s), 0);
	return st.data_bytes;
}

START_TEST(test_dict_beats_plain_zstd)
{
	uint8_t *data = malloc((size_t)NREC * RECLEN);
	const void *ptrs[NREC];
	size_t sizes[NREC], len, cap = zr_dict_tier_dict_size(ZR_DICT_FAST);
	uint8_t *dict = malloc(cap);
	uint64_t plain, withdict;

	make_tokens(data);
	for (size_t i = 0; i < NREC; i++) {
		ptrs[i] = data + i * RECLEN;
		sizes[i] = RECLEN;
	}
	ck_assert_int_eq(zr_dict_train(ptrs, sizes, NREC, ZR_DICT_FAST, dict,
				       cap, &len), 0);
	ck_assert_uint_gt(len, 0);
	ck_assert_uint_le(len, cap);
	plain = store_size("zstd", ZR_CODEC_ZSTD, NULL, 0, data);
	withdict = store_size("dict", ZR_CODEC_ZSTD_DICT, dict, len, data);
	ck_assert_uint_lt(withdict * 2, plain);
	ck_assert_uint_eq(ck_file_size(ck_dir, "dict/dict.zr"), len);
	free(dict);
	free(data);
}
END_TEST

START_TEST(test_train_from_store)
{
	zr_schema sc = ck_schema("<i4", -1, NULL);
	zr_store *s = ck_store(ck_dir, "src", &sc, ZR_CODEC_ZSTD);
	size_t cap = zr_dict_tier_dict_size(ZR_DICT_FAST), len;
	uint8_t *data = malloc((size_t)NREC * RECLEN), *dict = malloc(cap);
	zr_ragged_in in[NREC];
	uint64_t n[NREC];

	make_tokens(data);
	for (size_t i = 0; i < NREC; i++) {
		n[i] = RECLEN / 4 - i % 10;
		in[i] = (zr_ragged_in){ data + i * RECLEN, 1, &n[i] };
	}
	ck_assert_int_eq(zr_dict_train_store(s, ZR_DICT_FAST, dict, cap, &len),
			 -EINVAL); /* empty */
	ck_assert_int_eq(zr_store_append_ragged(s, in, NREC), 0);
	ck_assert_int_eq(zr_dict_train_store(s, ZR_DICT_FAST, dict, cap, &len),
			 0);
	ck_assert_uint_gt(len, 0);
	ck_assert_int_eq(zr_store_close(s), 0);
	free(dict);
	free(data);
}
END_TEST

START_TEST(test_train_errors)
{
	size_t cap = zr_dict_tier_dict_size(ZR_DICT_FAST), len = 77;
	uint8_t *dict = malloc(cap), *big = malloc(1 << 20);
	const void *ptrs[1] = { big };
	size_t sizes[1] = { 1 << 20 };

	ck_assert_int_eq(zr_dict_train(ptrs, sizes, 1, ZR_DICT_FAST, dict,
				       cap - 1, &len), -EINVAL);
	ck_assert_int_eq(zr_dict_train(ptrs, sizes, 1, (zr_dict_tier)9, dict,
				       cap, &len), -EINVAL);
	ck_assert_int_eq(zr_dict_train(NULL, NULL, 0, ZR_DICT_FAST, dict, cap,
				       &len), ZR_E_CODEC);
	ck_assert_str_ne(zr_errmsg(), "");
	/* One large record is cut into chunks ZDICT can train on. */
	ck_fill(big, 1 << 20, 5);
	ck_assert_int_eq(zr_dict_train(ptrs, sizes, 1, ZR_DICT_FAST, dict,
				       cap, &len), 0);
	ck_assert_uint_le(len, cap);
	free(big);
	free(dict);
}
END_TEST

Suite *suite_dict(void)
{
	Suite *s = suite_create("dict");
	TCase *tc = tcase_create("dict");

	tcase_add_checked_fixture(tc, ck_dir_setup, ck_dir_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_tiers);
	tcase_add_test(tc, test_dict_beats_plain_zstd);
	tcase_add_test(tc, test_train_from_store);
	tcase_add_test(tc, test_train_errors);
	suite_add_tcase(s, tc);
	return s;
}
