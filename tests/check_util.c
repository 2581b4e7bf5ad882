/*
 * check_util.c - helpers shared by the Check suites.
 */
#define _XOPEN_SOURCE 700
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_util.h"

void ck_tmpdir(char *dst, size_t cap)
{
	const char *base = getenv("TMPDIR");

	snprintf(dst, cap, "%s/zrck.XXXXXX", base && *base ? base : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dst));
}

char ck_dir[4096];

void ck_dir_setup(void)
{
	ck_tmpdir(ck_dir, sizeof(ck_dir));
}

void ck_dir_teardown(void)
{
	zr_rmtree(ck_dir);
}

const zr_codec ck_codecs[3] = { ZR_CODEC_RAW, ZR_CODEC_ZSTD,
				ZR_CODEC_ZSTD_DICT };

/* -- store engine helpers ----------------------------------------------- */

void ck_fill(void *buf, size_t len, uint64_t seed)
{
	uint8_t *b = buf;
	uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;

	for (size_t i = 0; i < len; i++) {
		/* Mostly a slow ramp (compressible), some noise. */
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		b[i] = (x & 7) == 0 ? (uint8_t)(x >> 32)
				    : (uint8_t)(seed + i / 16);
	}
}

zr_schema ck_schema(const char *dtype, int ndim, const uint64_t *shape)
{
	zr_schema sc;

	memset(&sc, 0, sizeof(sc));
	ck_assert_int_eq(zr_dtype_parse(dtype, &sc.dtype), 0);
	sc.ragged = ndim < 0;
	sc.ndim = ndim < 0 ? 0 : (uint32_t)ndim;
	for (int i = 0; i < ndim; i++)
		sc.shape[i] = shape[i];
	return sc;
}

void *ck_dict(size_t *len)
{
	enum { N = 300, LEN = 700 };
	size_t cap = zr_dict_tier_dict_size(ZR_DICT_FAST);
	uint8_t *data = malloc((size_t)N * LEN);
	const void *ptrs[N];
	size_t sizes[N];
	void *dict = malloc(cap);

	ck_assert_ptr_nonnull(data);
	ck_assert_ptr_nonnull(dict);
	for (size_t i = 0; i < N; i++) {
		ck_fill(data + i * LEN, LEN, i % 7);
		ptrs[i] = data + i * LEN;
		sizes[i] = LEN;
	}
	ck_assert_int_eq(zr_dict_train(ptrs, sizes, N, ZR_DICT_FAST, dict,
				       cap, len), 0);
	free(data);
	return dict;
}

void ck_path(char *dst, size_t cap, const char *dir, const char *name)
{
	ck_assert_int_lt(snprintf(dst, cap, "%s/%s", dir, name), (int)cap);
}

zr_store *ck_store(const char *dir, const char *name, const zr_schema *sc,
		   zr_codec codec)
{
	char p[4096];
	zr_store *s = NULL;
	/* Training takes a while: one dictionary per test process. */
	static void *dict;
	static size_t dlen;
	int d = codec == ZR_CODEC_ZSTD_DICT, err;

	if (d && !dict)
		dict = ck_dict(&dlen);
	ck_path(p, sizeof(p), dir, name);
	err = zr_store_create(p, sc, codec, d ? dict : NULL, d ? dlen : 0,
			      &s);
	ck_assert_msg(err == 0, "create %s: %s", p, zr_errmsg());
	return s;
}

uint64_t ck_file_size(const char *dir, const char *name)
{
	char p[4096];
	struct stat st;

	ck_path(p, sizeof(p), dir, name);
	ck_assert_int_eq(stat(p, &st), 0);
	return (uint64_t)st.st_size;
}

void ck_file_write(const char *dir, const char *name, uint64_t off,
		   const void *buf, size_t len)
{
	char p[4096];
	int fd;

	ck_path(p, sizeof(p), dir, name);
	fd = open(p, O_WRONLY | O_CREAT, 0666);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, buf, len, (off_t)off), (ssize_t)len);
	close(fd);
}

void ck_file_read(const char *dir, const char *name, uint64_t off, void *buf,
		  size_t len)
{
	char p[4096];
	int fd;

	ck_path(p, sizeof(p), dir, name);
	fd = open(p, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, buf, len, (off_t)off), (ssize_t)len);
	close(fd);
}

void ck_file_truncate(const char *dir, const char *name, uint64_t len)
{
	char p[4096];

	ck_path(p, sizeof(p), dir, name);
	ck_assert_int_eq(truncate(p, (off_t)len), 0);
}
