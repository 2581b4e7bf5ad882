/*
 * check_npy.c - .npy headers: byte-for-byte equality with the headers NumPy
 * writes (generated at test time by tests/fixtures/npy_headers.py with the
 * system python3-numpy), the ragged fixed-length headers, and a table of
 * malformed headers with the error each must give.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_suites.h"
#include "check_util.h"
#include "zrecord.h"

/* -- helpers ----------------------------------------------------------- */

static char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	ck_assert_msg(f != NULL, "open %s", path);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* Runs a fixture script of tests/fixtures with the system python3. */
static void run_fixture(const char *script, const char *dir)
{
	const char *py = getenv("PYTHON3"), *src = getenv("top_srcdir");
	char cmd[4096], here[1024];

	if (!src || !*src) {
		/* Run by hand: the source tree is where this file is. */
		snprintf(here, sizeof(here), "%s", __FILE__);
		*strrchr(here, '/') = '\0';
		*strrchr(here, '/') = '\0';
		src = here;
	}
	snprintf(cmd, sizeof(cmd), "'%s' '%s/tests/fixtures/%s' '%s'",
		 py && *py ? py : "/usr/bin/python3", src, script, dir);
	ck_assert_msg(system(cmd) == 0, "fixture failed: %s", cmd);
}

static void parse_ok(const void *buf, size_t len, zr_npy_header *h)
{
	int rc = zr_npy_parse(buf, len, h, NULL);

	ck_assert_msg(rc == 0, "parse: %s: %s", zr_errname(rc), zr_errmsg());
}

/* Feeding a header byte by byte must report truncation with a growing
 * need until the whole header is there. */
static void check_truncation(const char *buf, size_t header_len)
{
	zr_npy_header h;
	size_t have = 0, need = 0;

	for (;;) {
		int rc = zr_npy_parse(buf, have, &h, &need);

		if (rc == 0)
			break;
		ck_assert_int_eq(rc, ZR_E_TRUNCATED);
		ck_assert_uint_gt(need, have);
		ck_assert_uint_le(need, header_len);
		have = need;
	}
	ck_assert_uint_eq(have, header_len);
	ck_assert_uint_eq(h.header_len, header_len);
}

/* -- NumPy's own headers ------------------------------------------------ */

static void check_one(const char *dir, char *line)
{
	char name[64], descr[8], path[1200], mine[4096];
	int version, ndim, pos, n;
	uint64_t shape[ZR_MAX_NDIM];
	const char *p = line;
	zr_npy_header h;
	size_t len, wlen;
	char *buf;

	ck_assert_int_eq(sscanf(p, "%63s %d %7s %d%n", name, &version, descr,
				&ndim, &pos), 4);
	for (int i = 0; i < ndim; i++) {
		p += pos;
		ck_assert_int_eq(sscanf(p, "%" SCNu64 "%n", &shape[i], &pos),
				 1);
	}
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	buf = read_all(path, &len);
	parse_ok(buf, len, &h);
	ck_assert_str_eq(h.dtype.str, descr);
	ck_assert_uint_eq(h.ndim, (unsigned)ndim);
	for (int i = 0; i < ndim; i++)
		ck_assert_uint_eq(h.shape[i], shape[i]);
	/* Files named b* hold only a header; the others hold their data. */
	ck_assert_uint_eq(h.header_len + (name[0] == 'b' ? 0 : h.data_len),
			  len);
	if (version == 1) {
		ck_assert_uint_eq(zr_npy_header_len(&h.dtype, h.ndim, shape),
				  h.header_len);
		n = zr_npy_write_header(&h.dtype, h.ndim, shape, mine,
					sizeof(mine), &wlen);
		ck_assert_int_eq(n, 0);
		ck_assert_uint_eq(wlen, h.header_len);
		ck_assert_msg(!memcmp(mine, buf, wlen), "%s differs", name);
		ck_assert_int_eq(zr_npy_write_header(&h.dtype, h.ndim, shape,
						     mine, wlen - 1, &wlen),
				 -ENOBUFS);
	}
	if (name[1] == '1' || name[0] == 'v')
		check_truncation(buf, h.header_len);
	free(buf);
}

START_TEST(test_numpy_headers)
{
	char dir[256], path[300], line[1024];
	int count = 0;
	FILE *f;

	ck_tmpdir(dir, sizeof(dir));
	run_fixture("npy_headers.py", dir);
	snprintf(path, sizeof(path), "%s/manifest.txt", dir);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f)) {
		check_one(dir, line);
		count++;
	}
	fclose(f);
	ck_assert_int_gt(count, 500);
	zr_rmtree(dir);
}
END_TEST

/* -- hand-made headers -------------------------------------------------- */

/* A version-1.0 header holding exactly dict (no padding). */
static size_t wrap(const char *dict, char *dst)
{
	size_t n = strlen(dict);

	memcpy(dst, "\x93NUMPY\x01\x00", 8);
	dst[8] = (char)(n & 0xff);
	dst[9] = (char)(n >> 8);
	memcpy(dst + 10, dict, n);
	return n + 10;
}

static int parse_dict(const char *dict, zr_npy_header *h)
{
	char buf[2048];
	size_t len = wrap(dict, buf);

	return zr_npy_parse(buf, len, h, NULL);
}

static const struct {
	const char *dict;
	int err;
} bad_dicts[] = {
	{ "{'descr': '<f4', 'fortran_order': False}", ZR_E_NPY },
	{ "{'descr': '<f4', 'shape': (3,)}", ZR_E_NPY },
	{ "{'fortran_order': False, 'shape': (3,)}", ZR_E_NPY },
	{ "{}", ZR_E_NPY },
	{ "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'x': 1}",
	  ZR_E_NPY },
	{ "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, "
	  "'shape': (3,)}", ZR_E_NPY },
	{ "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}",
	  ZR_E_NPY },
	{ "{'descr': '<f4', 'fortran_order': False, 'shape': (3)}", ZR_E_NPY },
	{ "{'descr': '<f4', 'fortran_order': False, 'shape': [3]}", ZR_E_NPY },
	{ "{'descr': '<f4', 'fortran_order': False, 'shape': (3.0,)}",
	  ZR_E_NPY },
	{ "{'descr': '<f4', 'fortran_order': False, 'shape': (0x10,)}",
	  ZR_E_NPY },
	{ "{'descr': '<f4', 'fortran_order': False, 'shape': (03,)}",
	  ZR_E_NPY },
	{ "{'descr': '<f4', 'fortran_order': False, 'shape': (3,,)}",
	  ZR_E_NPY },
	{ "{'descr': '<f4', 'fortran_order': False, 'shape': (,)}", ZR_E_NPY },
	{ "{'descr': '<f4', 'fortran_order': 0, 'shape': (3,)}", ZR_E_NPY },
	{ "{'descr': '<f4', 'fortran_order': Falsey, 'shape': (3,)}",
	  ZR_E_NPY },
	{ "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3)}",
	  ZR_E_NPY },
	{ "{'descr': '<U4', 'fortran_order': False, 'shape': (3,)}",
	  ZR_E_DTYPE },
	{ "{'descr': '|O', 'fortran_order': False, 'shape': (3,)}",
	  ZR_E_DTYPE },
	{ "{'descr': '<f3', 'fortran_order': False, 'shape': (3,)}",
	  ZR_E_DTYPE },
	{ "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (3,)}",
	  ZR_E_DTYPE },
	{ "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, "
	  "4294967296)}", ZR_E_TOOBIG },
	{ "{'descr': '<f4', 'fortran_order': False, 'shape': "
	  "(99999999999999999999,)}", ZR_E_TOOBIG },
	{ "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'ab}",
	  ZR_E_NPY },
	{ "{'descr': '<f4' 'fortran_order': False, 'shape': (3,)}", ZR_E_NPY },
	{ "{'descr' '<f4', 'fortran_order': False, 'shape': (3,)}", ZR_E_NPY },
	{ "{'descr': '<f4', 'fortran_order': False, 'shape': (3,)} x",
	  ZR_E_NPY },
	{ "{'descr': '<f4', 'fortran_order': False, 'shape': (3,)",
	  ZR_E_NPY },
	{ "'descr': '<f4', 'fortran_order': False, 'shape': (3,)}", ZR_E_NPY },
	{ "{'descr': '<f\xc3\xa9', 'fortran_order': False, 'shape': (3,)}",
	  ZR_E_NPY },
	{ "{'de\\x73cr': '<f4', 'fortran_order': False, 'shape': (3,)}",
	  ZR_E_NPY },
	{ "{'descr': '<f4', 'fortran_order': False, 'shape': (3,)}\x01",
	  ZR_E_NPY },
};

START_TEST(test_bad_dicts)
{
	zr_npy_header h;

	for (size_t i = 0; i < sizeof(bad_dicts) / sizeof(bad_dicts[0]); i++) {
		int rc = parse_dict(bad_dicts[i].dict, &h);

		ck_assert_msg(rc == bad_dicts[i].err, "case %zu (%s): got %s",
			      i, bad_dicts[i].dict, zr_errname(rc));
		ck_assert_str_ne(zr_errmsg(), "");
	}
}
END_TEST

START_TEST(test_too_many_dims)
{
	char dict[1024];
	zr_npy_header h;
	int n;

	n = snprintf(dict, sizeof(dict), "{'descr': '<f4', 'fortran_order': "
		     "False, 'shape': (");
	for (int i = 0; i < 33; i++)
		n += snprintf(dict + n, sizeof(dict) - (size_t)n, "1, ");
	snprintf(dict + n, sizeof(dict) - (size_t)n, ")}");
	ck_assert_int_eq(parse_dict(dict, &h), ZR_E_NPY);
	/* The same with 32 dims is fine. */
	memcpy(strstr(dict, "1, )"), ")}", 3);
	ck_assert_int_eq(parse_dict(dict, &h), 0);
	ck_assert_uint_eq(h.ndim, 32);
	ck_assert_uint_eq(h.data_len, 4);
}
END_TEST

START_TEST(test_bad_prefix)
{
	char buf[2048];
	zr_npy_header h;
	size_t need = 0, len;

	ck_assert_int_eq(zr_npy_parse("\x93NUMPZ\x01\x00", 8, &h, &need),
			 ZR_E_NPY);
	ck_assert_int_eq(zr_npy_parse("PK\x03\x04", 4, &h, &need), ZR_E_NPY);
	ck_assert_int_eq(zr_npy_parse("\x93NUMPY\x04\x00\x10\x00", 10, &h,
				      &need), ZR_E_NPY);
	ck_assert_int_eq(zr_npy_parse("\x93NUMPY\x01\x01\x10\x00", 10, &h,
				      &need), ZR_E_NPY);
	ck_assert_int_eq(zr_npy_parse("\x93NUMPY\x02\x00\xff\xff\xff\xff", 12,
				      &h, &need), ZR_E_NPY);
	ck_assert_int_eq(zr_npy_parse("\x93NUM", 4, &h, &need),
			 ZR_E_TRUNCATED);
	ck_assert_uint_ge(need, 8);
	ck_assert_int_eq(zr_npy_parse("", 0, &h, &need), ZR_E_TRUNCATED);
	ck_assert_int_eq(zr_npy_parse("\x93NUMPY\x03\x00\x10", 9, &h, &need),
			 ZR_E_TRUNCATED);
	ck_assert_uint_eq(need, 12);
	len = wrap("{'descr': '<f4', 'fortran_order': False, 'shape': (3,)}",
		   buf);
	ck_assert_int_eq(zr_npy_parse(buf, len - 1, &h, &need),
			 ZR_E_TRUNCATED);
	ck_assert_uint_eq(need, len);
	/* A length field pointing inside the dict cuts it short. */
	buf[8] = (char)(len - 10 - 2);
	ck_assert_int_eq(zr_npy_parse(buf, len, &h, &need), ZR_E_NPY);
}
END_TEST

START_TEST(test_lenient_forms)
{
	static const char *const good[] = {
		"{'shape': (2, 3), 'descr': '<i2', 'fortran_order': False}",
		"{\"descr\": \"<i2\", \"fortran_order\": False, "
		"\"shape\": (2, 3,),}",
		" {\n'descr' : '<i2' ,\t'fortran_order':False,"
		"'shape':(2,3)} \n",
		"{'descr': 'int16', 'fortran_order': False, 'shape': (2, 3)}",
	};
	zr_npy_header h;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		ck_assert_msg(parse_dict(good[i], &h) == 0, "%s: %s", good[i],
			      zr_errmsg());
		ck_assert_str_eq(h.dtype.str, "<i2");
		ck_assert_uint_eq(h.ndim, 2);
		ck_assert_uint_eq(h.shape[0], 2);
		ck_assert_uint_eq(h.shape[1], 3);
		ck_assert_uint_eq(h.data_len, 12);
	}
	/* Fortran order is C order when at most one axis is longer than 1. */
	ck_assert_int_eq(parse_dict("{'descr': '>f8', 'fortran_order': True, "
				    "'shape': (1, 5, 1)}", &h), 0);
	ck_assert_uint_eq(h.data_len, 40);
	ck_assert_int_eq(parse_dict("{'descr': '|u1', 'fortran_order': False, "
				    "'shape': (4294967296, 0, 65536)}",
				    &h), 0);
	ck_assert_uint_eq(h.data_len, 0);
	ck_assert_int_eq(parse_dict("{'descr': '|u1', 'fortran_order': False, "
				    "'shape': (00,)}", &h), 0);
	ck_assert_uint_eq(h.shape[0], 0);
}
END_TEST

/* -- fixed-length (ragged) headers -------------------------------------- */

static void check_fixed(const zr_dtype *d, uint32_t n, const uint64_t *shape,
			size_t fixed)
{
	char buf[4096];
	zr_npy_header h;

	ck_assert_uint_le(zr_npy_header_len(d, n, shape), fixed);
	ck_assert_int_eq(zr_npy_write_header_fixed(d, n, shape, fixed, buf,
						   sizeof(buf)), 0);
	parse_ok(buf, fixed, &h);
	ck_assert_uint_eq(h.header_len, fixed);
	ck_assert_uint_eq(h.ndim, n);
	for (uint32_t i = 0; i < n; i++)
		ck_assert_uint_eq(h.shape[i], shape[i]);
	ck_assert_int_eq(buf[fixed - 1], '\n');
}

/* Every shape of one to three dims with elems elements fits the fixed
 * header length of its record. */
static void check_ragged_len(const zr_dtype *d, uint64_t elems)
{
	uint64_t shape[3] = { elems, 1, 1 };

	for (uint32_t n = 1; n <= 3; n++) {
		uint64_t logic = 8 + 8 * n + elems * d->itemsize;
		size_t fixed = zr_npy_ragged_header_len(d, logic);

		ck_assert_uint_eq(fixed % 64, 0);
		if (n == 1)
			check_fixed(d, 1, shape, fixed);
		for (uint64_t a = 1; n >= 2 && a <= elems; a++) {
			for (uint64_t b = 1; a * b <= elems; b++) {
				if (elems % (a * b) || (n == 2 && b > 1))
					continue;
				shape[0] = a;
				shape[1] = n == 2 ? elems / a : b;
				shape[2] = elems / (a * b);
				check_fixed(d, n, shape, fixed);
			}
		}
	}
}

START_TEST(test_ragged_header_len)
{
	static const uint64_t elems[] = { 1, 10, 12, 100, 999, 1000, 1024 };
	static const uint64_t one = 1, big[2] = { 1000000007ull, 3 };
	zr_dtype d, c;

	ck_assert_int_eq(zr_dtype_parse("<i4", &d), 0);
	ck_assert_int_eq(zr_dtype_parse("<c16", &c), 0);
	for (size_t i = 0; i < sizeof(elems) / sizeof(elems[0]); i++) {
		check_ragged_len(&d, elems[i]);
		check_ragged_len(&c, elems[i]);
	}
	/* A scalar record: 8-byte prefix plus one element. */
	ck_assert_uint_eq(zr_npy_ragged_header_len(&d, 12),
			  zr_npy_header_len(&d, 0, &one));
	check_fixed(&d, 0, &one, zr_npy_ragged_header_len(&d, 12));
	ck_assert_uint_ge(zr_npy_ragged_header_len(&d, 16 + 4 * 1000000007ull),
			  zr_npy_header_len(&d, 1, big));
	check_fixed(&d, 2, big,
		    zr_npy_ragged_header_len(&d, 24 + 4 * 3000000021ull));
	/* Sizes no record can have. */
	ck_assert_uint_eq(zr_npy_ragged_header_len(&d, 0), 0);
	ck_assert_uint_eq(zr_npy_ragged_header_len(&d, 8), 0);
	ck_assert_uint_eq(zr_npy_ragged_header_len(&d, 13), 0);
	ck_assert_uint_eq(zr_npy_ragged_header_len(&c, 20), 0);
}
END_TEST

/* Writes a header (fixed-length when fixed is set) plus zeroed data and
 * lists the file for npy_check_load.py. */
static void write_for_numpy(const char *dir, FILE *list, int k,
			    const char *dtype, uint32_t n,
			    const uint64_t *shape, int fixed)
{
	char path[512], hdr[4096];
	uint64_t elems = 1;
	size_t len = 0;
	zr_dtype d;
	FILE *f;

	ck_assert_int_eq(zr_dtype_parse(dtype, &d), 0);
	for (uint32_t i = 0; i < n; i++)
		elems *= shape[i];
	if (fixed) {
		len = zr_npy_ragged_header_len(&d, 8 + 8 * n +
						       elems * d.itemsize);
		ck_assert_int_eq(zr_npy_write_header_fixed(&d, n, shape, len,
							   hdr, sizeof(hdr)),
				 0);
	} else {
		ck_assert_int_eq(zr_npy_write_header(&d, n, shape, hdr,
						     sizeof(hdr), &len), 0);
	}
	snprintf(path, sizeof(path), "%s/f%d.npy", dir, k);
	f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(hdr, 1, len, f), len);
	for (uint64_t i = 0; i < elems * d.itemsize; i++)
		fputc(0, f);
	fclose(f);
	fprintf(list, "f%d.npy %s %u", k, d.str, (unsigned)n);
	for (uint32_t i = 0; i < n; i++)
		fprintf(list, " %llu", (unsigned long long)shape[i]);
	fprintf(list, "\n");
}

START_TEST(test_numpy_loads_ours)
{
	static const uint64_t shapes[][3] = {
		{ 7, 1, 1 }, { 3, 5, 1 }, { 1, 1, 1 }, { 2, 3, 4 },
		{ 1000, 1, 1 }, { 1, 999, 2 },
	};
	static const char *const dtypes[] = { "<f4", ">i8", "|b1", "<c16" };
	char dir[256], path[300];
	FILE *list;
	int k = 0;

	ck_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/load.txt", dir);
	list = fopen(path, "w");
	ck_assert_ptr_nonnull(list);
	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++)
		for (uint32_t n = 0; n <= 3; n++)
			for (int fixed = 0; fixed < 2; fixed++, k++)
				write_for_numpy(dir, list, k, dtypes[k % 4], n,
						shapes[s], fixed);
	fclose(list);
	run_fixture("npy_check_load.py", dir);
	zr_rmtree(dir);
}
END_TEST

START_TEST(test_fixed_errors)
{
	static const uint64_t shape[3] = { 123456789, 2, 3 };
	char buf[512];
	zr_npy_header h;
	zr_dtype d;

	ck_assert_int_eq(zr_dtype_parse("<f8", &d), 0);
	ck_assert_int_eq(zr_npy_write_header_fixed(&d, 3, shape, 64, buf,
						   sizeof(buf)), ZR_E_SHAPE);
	ck_assert_int_eq(zr_npy_write_header_fixed(&d, 3, shape, 70000, buf,
						   sizeof(buf)), -EINVAL);
	ck_assert_int_eq(zr_npy_write_header_fixed(&d, 3, shape, 256, buf,
						   128), -ENOBUFS);
	check_fixed(&d, 3, shape, 128);
	check_fixed(&d, 3, shape, 448);
	/* A ragged record file's header is H + its prefix: any length that
	 * holds the dict, not only np.save's multiples of 64. */
	ck_assert_int_eq(zr_npy_write_header_fixed(&d, 0, shape, 72, buf,
						   sizeof(buf)), 0);
	parse_ok(buf, 72, &h);
	ck_assert_uint_eq(h.header_len, 72);
	ck_assert_uint_eq(h.ndim, 0);
	ck_assert_int_eq(buf[71], '\n');
	ck_assert_uint_eq(zr_npy_header_len(&d, ZR_MAX_NDIM + 1, shape), 0);
}
END_TEST

Suite *suite_npy(void)
{
	Suite *s = suite_create("npy");
	TCase *tc = tcase_create("npy");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_numpy_headers);
	tcase_add_test(tc, test_bad_dicts);
	tcase_add_test(tc, test_too_many_dims);
	tcase_add_test(tc, test_bad_prefix);
	tcase_add_test(tc, test_lenient_forms);
	tcase_add_test(tc, test_ragged_header_len);
	tcase_add_test(tc, test_fixed_errors);
	tcase_add_test(tc, test_numpy_loads_ours);
	suite_add_tcase(s, tc);
	return s;
}
