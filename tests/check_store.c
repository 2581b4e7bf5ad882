/*
 * check_store.c - the store engine on real files: round trips of every
 * dtype, rank and codec, reopen, all-or-nothing append sessions, create and
 * open errors, read-only handles, and gathers racing an appender.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check_suites.h"
#include "check_util.h"
#include "zrecord.h"

static const char *const dtypes[] = {
	"|b1", "|i1", "|u1", "<i2", "<i4", "<i8", "<u2", "<u4", "<u8",
	"<f2", "<f4", "<f8", "<c8", "<c16", ">i2", ">i4", ">i8", ">u2",
	">u4", ">u8", ">f2", ">f4", ">f8", ">c8", ">c16",
};
#define NDTYPES (sizeof(dtypes) / sizeof(dtypes[0]))

/* Indices in a scrambled order with repeats. */
static uint64_t *scramble(uint64_t n, size_t count)
{
	uint64_t *idx = malloc(count * sizeof(*idx));

	for (size_t k = 0; k < count; k++)
		idx[k] = (k * 7919 + k / 3) % n;
	return idx;
}

static void check_dense_gather(zr_store *s, const uint8_t *rows, uint64_t n)
{
	size_t row = zr_store_row_bytes(s), count = 2 * n + 3;
	uint64_t *idx = scramble(n, count);
	uint8_t *dst = malloc(count * row);
	int err = zr_store_gather(s, idx, count, dst, count * row, NULL);

	ck_assert_msg(err == 0, "gather: %s", zr_errmsg());
	for (size_t k = 0; k < count; k++)
		ck_assert_mem_eq(dst + k * row, rows + idx[k] * row, row);
	free(dst);
	free(idx);
}

static void dense_roundtrip(const char *dtype, zr_codec codec, int ndim,
			    const uint64_t *shape, const char *name)
{
	zr_schema sc = ck_schema(dtype, ndim, shape);
	zr_store *s = ck_store(ck_dir, name, &sc, codec);
	size_t row = zr_store_row_bytes(s), expect = sc.dtype.itemsize;
	const uint64_t n = 23;
	uint8_t *rows = malloc(n * row);
	zr_append *a;
	char p[4096];

	for (int i = 0; i < ndim; i++)
		expect *= shape[i];
	ck_assert_uint_eq(row, expect);
	ck_assert_int_eq(zr_store_codec(s), codec);
	ck_fill(rows, n * row, (uint64_t)ndim * 131 + codec);
	ck_assert_int_eq(zr_store_append_dense(s, rows, 10), 0);
	ck_assert_int_eq(zr_append_begin(s, &a), 0);
	ck_assert_int_eq(zr_append_dense(a, rows + 10 * row, 13), 0);
	ck_assert_int_eq(zr_append_commit(a), 0);
	ck_assert_uint_eq(zr_store_length(s), n);
	check_dense_gather(s, rows, n);
	ck_assert_int_eq(zr_store_close(s), 0);

	ck_path(p, sizeof(p), ck_dir, name);
	ck_assert_int_eq(zr_store_open(p, ZR_OPEN_RDONLY, &s), 0);
	ck_assert_str_eq(zr_store_schema(s)->dtype.str, sc.dtype.str);
	ck_assert_uint_eq(zr_store_schema(s)->ndim, (uint32_t)ndim);
	ck_assert_uint_eq(zr_store_length(s), n);
	check_dense_gather(s, rows, n);
	ck_assert_int_eq(zr_store_close(s), 0);
	free(rows);
}

/* Record i of a ragged test set: rank and dims derived from i. */
struct rec {
	uint32_t ndim;
	uint64_t shape[ZR_MAX_NDIM];
	uint8_t *data;
	size_t bytes;
};

static void make_rec(struct rec *r, uint64_t i, uint32_t ndim, size_t item)
{
	uint64_t elems = 1;

	r->ndim = ndim;
	for (uint32_t d = 0; d < ndim; d++) {
		r->shape[d] = ndim > 4 ? 1 + (i + d) % 2 : 1 + (i * 7 + d) % 5;
		elems *= r->shape[d];
	}
	r->bytes = elems * item;
	r->data = malloc(r->bytes);
	ck_fill(r->data, r->bytes, i * 3 + ndim);
}

static void check_ragged_gather(zr_store *s, const struct rec *recs,
				uint64_t n)
{
	size_t count = 2 * n + 1, item = zr_store_schema(s)->dtype.itemsize;
	uint64_t *idx = scramble(n, count), *off, total;
	uint8_t *dst;
	int err;

	off = malloc((count + 1) * sizeof(*off));
	ck_assert_int_eq(zr_store_gather_size(s, idx, count, &total), 0);
	dst = malloc(total);
	err = zr_store_gather(s, idx, count, dst, total, off);
	ck_assert_msg(err == 0, "gather: %s", zr_errmsg());
	ck_assert_uint_eq(off[count], total);
	for (size_t k = 0; k < count; k++) {
		const struct rec *r = &recs[idx[k]];
		uint64_t shape[ZR_MAX_NDIM];
		uint32_t ndim;
		size_t po;

		ck_assert_int_eq(zr_ragged_parse(dst + off[k],
						 off[k + 1] - off[k], item,
						 &ndim, shape, &po), 0);
		ck_assert_uint_eq(ndim, r->ndim);
		ck_assert_uint_eq(po, 8 + 8 * ndim);
		ck_assert_mem_eq(shape, r->shape, ndim * sizeof(uint64_t));
		ck_assert_uint_eq(off[k + 1] - off[k] - po, r->bytes);
		ck_assert_mem_eq(dst + off[k] + po, r->data, r->bytes);
		memset(shape, 0xff, sizeof(shape));
		ck_assert_int_eq(zr_ragged_shape(s, idx[k], &ndim, shape), 0);
		ck_assert_uint_eq(ndim, r->ndim);
		ck_assert_mem_eq(shape, r->shape, ndim * sizeof(uint64_t));
	}
	free(dst);
	free(off);
	free(idx);
}

static void ragged_roundtrip(const char *dtype, zr_codec codec,
			     uint32_t max_rank, const char *name)
{
	zr_schema sc = ck_schema(dtype, -1, NULL);
	zr_store *s = ck_store(ck_dir, name, &sc, codec);
	const uint64_t n = 2 * (max_rank + 1) + 3;
	struct rec *recs = calloc(n, sizeof(*recs));
	zr_ragged_in *in = calloc(n, sizeof(*in));
	char p[4096];

	ck_assert_uint_eq(zr_store_row_bytes(s), 0);
	for (uint64_t i = 0; i < n; i++) {
		make_rec(&recs[i], i, (uint32_t)(i % (max_rank + 1)),
			 sc.dtype.itemsize);
		in[i] = (zr_ragged_in){ recs[i].data, recs[i].ndim,
					recs[i].shape };
	}
	ck_assert_int_eq(zr_store_append_ragged(s, in, n), 0);
	check_ragged_gather(s, recs, n);
	ck_assert_int_eq(zr_store_close(s), 0);
	ck_path(p, sizeof(p), ck_dir, name);
	ck_assert_int_eq(zr_store_open(p, ZR_OPEN_RDONLY, &s), 0);
	ck_assert_int_eq(zr_store_schema(s)->ragged, 1);
	check_ragged_gather(s, recs, n);
	ck_assert_int_eq(zr_store_close(s), 0);
	for (uint64_t i = 0; i < n; i++)
		free(recs[i].data);
	free(recs);
	free(in);
}

START_TEST(test_every_dtype)
{
	static const uint64_t shape[] = { 3, 5 };
	zr_codec codec = ck_codecs[_i];
	char name[64];

	for (size_t d = 0; d < NDTYPES; d++) {
		snprintf(name, sizeof(name), "dense%zu", d);
		dense_roundtrip(dtypes[d], codec, 2, shape, name);
		snprintf(name, sizeof(name), "ragged%zu", d);
		ragged_roundtrip(dtypes[d], codec, 3, name);
	}
}
END_TEST

START_TEST(test_ranks)
{
	static const uint64_t twos[] = { 2, 2, 2, 2, 2, 2, 2, 2 };
	zr_codec codec = ck_codecs[_i];
	char name[64];

	for (int r = 0; r <= 8; r++) {
		snprintf(name, sizeof(name), "rank%d", r);
		dense_roundtrip("<f4", codec, r, twos, name);
	}
	ragged_roundtrip("<i2", codec, 8, "ragged");
}
END_TEST

/* The largest rank and a record of several MiB. */
START_TEST(test_rank32_and_big_record)
{
	zr_schema sc = ck_schema("|u1", -1, NULL);
	zr_store *s = ck_store(ck_dir, "big", &sc, ck_codecs[_i]);
	uint64_t ones[ZR_MAX_NDIM], big = 3u << 20, idx[] = { 1, 0 };
	uint64_t shape[ZR_MAX_NDIM], off[3];
	uint8_t *data = malloc(big), *dst = malloc(big + 1024);
	zr_ragged_in in[2];
	uint32_t ndim;

	for (int i = 0; i < ZR_MAX_NDIM; i++)
		ones[i] = 1;
	ck_fill(data, big, 99);
	in[0] = (zr_ragged_in){ data, ZR_MAX_NDIM, ones };
	in[1] = (zr_ragged_in){ data, 1, &big };
	ck_assert_int_eq(zr_store_append_ragged(s, in, 2), 0);
	ck_assert_int_eq(zr_store_gather(s, idx, 2, dst, big + 1024, off), 0);
	ck_assert_uint_eq(off[1], 16 + big);
	ck_assert_uint_eq(off[2], off[1] + 8 + 8 * ZR_MAX_NDIM + 1);
	ck_assert_mem_eq(dst + 16, data, big);
	ck_assert_int_eq(zr_ragged_shape(s, 0, &ndim, shape), 0);
	ck_assert_uint_eq(ndim, ZR_MAX_NDIM);
	ck_assert_int_eq(zr_store_gather(s, idx, 2, dst, big, off), -EINVAL);
	zr_store_close(s);
	free(data);
	free(dst);
}
END_TEST

static void stats_eq(const zr_stats *a, const zr_stats *b)
{
	ck_assert_uint_eq(a->records, b->records);
	ck_assert_uint_eq(a->live_bytes, b->live_bytes);
	ck_assert_uint_eq(a->data_bytes, b->data_bytes);
	ck_assert_uint_eq(a->reclaimable, b->reclaimable);
}

static void expect_records(zr_store *s, const struct rec *recs, uint64_t n)
{
	ck_assert_uint_eq(zr_store_length(s), n);
	check_ragged_gather(s, recs, n);
}

START_TEST(test_append_all_or_nothing)
{
	zr_schema sc = ck_schema("<i4", -1, NULL);
	zr_store *s = ck_store(ck_dir, "s", &sc, ck_codecs[_i]);
	struct rec recs[20];
	zr_ragged_in in[20], bad[2];
	uint64_t empty = 0, huge = 1u << 30, idx = 5, size, offs[2];
	zr_stats st0, st1;
	zr_append *a, *b;
	uint8_t buf[64];

	for (uint64_t i = 0; i < 20; i++) {
		make_rec(&recs[i], i, (uint32_t)(i % 3), 4);
		in[i] = (zr_ragged_in){ recs[i].data, recs[i].ndim,
					recs[i].shape };
	}
	ck_assert_int_eq(zr_store_append_ragged(s, in, 5), 0);
	ck_assert_int_eq(zr_append_begin(s, &a), 0);
	ck_assert_int_eq(zr_append_begin(s, &b), -EBUSY);
	ck_assert_int_eq(zr_store_delete(s, &idx, 0), -EBUSY);
	ck_assert_int_eq(zr_store_compact(s, NULL, NULL), -EBUSY);
	ck_assert_int_eq(zr_append_ragged(a, in + 5, 10), 0);
	ck_assert_uint_eq(zr_append_count(a), 10);
	ck_assert_uint_eq(zr_store_length(s), 5);
	ck_assert_int_eq(zr_store_gather(s, &idx, 1, buf, 64, offs),
			 ZR_E_RANGE);
	ck_assert_int_eq(zr_store_gather_size(s, &idx, 1, &size), ZR_E_RANGE);
	ck_assert_int_eq(zr_append_commit(a), 0);
	expect_records(s, recs, 15);
	ck_assert_int_eq(zr_store_stats(s, &st0), 0);

	/* Abort, then failing appends: nothing changes. */
	ck_assert_int_eq(zr_append_begin(s, &a), 0);
	ck_assert_int_eq(zr_append_ragged(a, in + 15, 3), 0);
	zr_append_abort(a);
	bad[0] = in[15];
	bad[1] = (zr_ragged_in){ buf, 1, &empty };
	ck_assert_int_eq(zr_store_append_ragged(s, bad, 2), ZR_E_EMPTY);
	ck_assert_ptr_nonnull(strstr(zr_errmsg(), "record 1"));
	bad[1] = (zr_ragged_in){ buf, ZR_MAX_NDIM + 1, recs[0].shape };
	ck_assert_int_eq(zr_store_append_ragged(s, bad, 2), ZR_E_SHAPE);
	bad[1] = (zr_ragged_in){ buf, 1, &huge }; /* 4 GiB of int32 */
	ck_assert_int_eq(zr_store_append_ragged(s, bad, 2), ZR_E_TOOBIG);
	ck_assert_int_eq(zr_store_append_dense(s, buf, 1), -EINVAL);
	/* A failure inside a session sticks until commit. */
	ck_assert_int_eq(zr_append_begin(s, &a), 0);
	ck_assert_int_eq(zr_append_ragged(a, in + 15, 2), 0);
	bad[1] = (zr_ragged_in){ buf, 1, &empty };
	ck_assert_int_eq(zr_append_ragged(a, bad, 2), ZR_E_EMPTY);
	ck_assert_int_eq(zr_append_ragged(a, in + 17, 1), ZR_E_EMPTY);
	ck_assert_int_eq(zr_append_commit(a), ZR_E_EMPTY);
	ck_assert_int_eq(zr_store_stats(s, &st1), 0);
	stats_eq(&st0, &st1);
	expect_records(s, recs, 15);

	/* Later appends overwrite the garbage and work. */
	ck_assert_int_eq(zr_store_append_ragged(s, in + 15, 5), 0);
	expect_records(s, recs, 20);
	ck_assert_int_eq(zr_store_close(s), 0);
	for (int i = 0; i < 20; i++)
		free(recs[i].data);
}
END_TEST

START_TEST(test_create_open_errors)
{
	zr_schema sc = ck_schema("<f4", -1, NULL), zero;
	static const uint64_t bad_shape[] = { 3, 0 };
	zr_store *s = NULL;
	char p[4096];
	struct stat st;

	ck_path(p, sizeof(p), ck_dir, "a/b/c/store");
	ck_assert_int_eq(zr_store_create(p, &sc, ZR_CODEC_ZSTD, NULL, 0, &s),
			 0);
	ck_assert_int_eq(zr_store_close(s), 0);
	ck_assert_uint_eq(ck_file_size(ck_dir, "a/b/c/store/meta.zr"), 4096);
	ck_assert_uint_eq(ck_file_size(ck_dir, "a/b/c/store/data.zr"), 0);
	ck_assert_int_eq(zr_store_create(p, &sc, ZR_CODEC_ZSTD, NULL, 0, &s),
			 ZR_E_EXISTS);
	ck_assert_int_eq(zr_store_create(ck_dir, &sc, ZR_CODEC_RAW, NULL, 0, &s),
			 ZR_E_EXISTS);

	ck_path(p, sizeof(p), ck_dir, "x");
	ck_assert_int_eq(zr_store_create(p, &sc, ZR_CODEC_ZSTD_DICT, NULL, 0,
					 &s), ZR_E_NODICT);
	ck_assert_int_eq(zr_store_create(p, &sc, ZR_CODEC_RAW, "d", 1, &s),
			 -EINVAL);
	ck_assert_int_eq(zr_store_create(p, &sc, (zr_codec)3, NULL, 0, &s),
			 -EINVAL);
	zero = ck_schema("<f4", 2, bad_shape);
	ck_assert_int_eq(zr_store_create(p, &zero, ZR_CODEC_RAW, NULL, 0, &s),
			 ZR_E_SCHEMA);
	ck_assert_int_ne(stat(p, &st), 0);
	ck_assert_int_eq(zr_store_open(p, 0, &s), ZR_E_NOSTORE);
	ck_assert_int_eq(zr_store_open(ck_dir, 0, &s), ZR_E_NOSTORE);
	ck_assert_ptr_nonnull(strstr(zr_errmsg(), ck_dir));
	ck_assert_int_eq(zr_store_open(ck_dir, 0x10, &s), -EINVAL);
	ck_assert_int_eq(zr_store_close(NULL), 0);
}
END_TEST

START_TEST(test_codec_names)
{
	zr_codec c;

	ck_assert_int_eq(zr_codec_parse("raw", &c), 0);
	ck_assert_int_eq(c, ZR_CODEC_RAW);
	ck_assert_int_eq(zr_codec_parse("zstd", &c), 0);
	ck_assert_int_eq(c, ZR_CODEC_ZSTD);
	ck_assert_int_eq(zr_codec_parse("zstdict", &c), 0);
	ck_assert_int_eq(c, ZR_CODEC_ZSTD_DICT);
	ck_assert_int_eq(zr_codec_parse("zstd_dict", &c), 0);
	ck_assert_int_eq(zr_codec_parse("lz4", &c), -EINVAL);
	ck_assert_str_eq(zr_codec_name(ZR_CODEC_ZSTD_DICT), "zstd_dict");
	ck_assert_str_eq(zr_codec_name(ZR_CODEC_RAW), "raw");
}
END_TEST

START_TEST(test_readonly_handle)
{
	static const uint64_t shape[] = { 4 };
	zr_schema sc = ck_schema("<u2", 1, shape);
	zr_store *s = ck_store(ck_dir, "s", &sc, ZR_CODEC_RAW), *r, *r2;
	uint8_t rows[8 * 3], out[8];
	uint64_t idx = 2;
	zr_append *a;
	char p[4096];

	ck_fill(rows, sizeof(rows), 1);
	ck_assert_int_eq(zr_store_append_dense(s, rows, 3), 0);
	ck_assert_int_eq(zr_store_close(s), 0);
	ck_path(p, sizeof(p), ck_dir, "s");
	ck_assert_int_eq(zr_store_open(p, ZR_OPEN_RDONLY, &r), 0);
	ck_assert_int_eq(zr_store_open(p, ZR_OPEN_RDONLY, &r2), 0);
	ck_assert_int_eq(zr_store_open(p, 0, &s), ZR_E_BUSY);
	ck_assert_int_eq(zr_store_readonly(r), 1);
	ck_assert_int_eq(zr_append_begin(r, &a), -EROFS);
	ck_assert_int_eq(zr_store_append_dense(r, rows, 1), -EROFS);
	ck_assert_int_eq(zr_store_delete(r, &idx, 1), -EROFS);
	ck_assert_int_eq(zr_store_compact(r, NULL, NULL), -EROFS);
	ck_assert_int_eq(zr_store_sync(r), -EROFS);
	ck_assert_int_eq(zr_store_gather(r2, &idx, 1, out, 8, NULL), 0);
	ck_assert_mem_eq(out, rows + 16, 8);
	ck_assert_int_eq(zr_store_close(r), 0);
	ck_assert_int_eq(zr_store_close(r2), 0);
	ck_assert_int_eq(zr_store_open(p, 0, &s), 0);
	ck_assert_int_eq(zr_store_open(p, 0, &r), ZR_E_BUSY);
	ck_assert_int_eq(zr_store_open(p, ZR_OPEN_RDONLY, &r), ZR_E_BUSY);
	ck_assert_int_eq(zr_store_close(s), 0);
}
END_TEST

/* Gathers racing an appender: every byte a reader sees must be right. */
enum { RACE_ROW = 96, RACE_BATCH = 40, RACE_BATCHES = 30, RACE_READERS = 3 };

struct race {
	zr_store *s;
	atomic_int done;
	atomic_long checked;
};

static void race_expect(uint64_t i, uint8_t *buf)
{
	ck_fill(buf, RACE_ROW, i + 1000);
}

static void race_check(struct race *r, const uint64_t *idx, size_t n,
		       const uint8_t *dst, const uint64_t *off)
{
	uint8_t want[RACE_ROW];

	for (size_t k = 0; k < n; k++) {
		const uint8_t *got = off ? dst + off[k] + 16
					 : dst + k * RACE_ROW;

		race_expect(idx[k], want);
		if (off)
			ck_assert_uint_eq(off[k + 1] - off[k], 16 + RACE_ROW);
		ck_assert_mem_eq(got, want, RACE_ROW);
		atomic_fetch_add(&r->checked, 1);
	}
}

static void *race_reader(void *arg)
{
	struct race *r = arg;
	uint64_t idx[32], off[33], seed = (uint64_t)(uintptr_t)&idx;
	uint8_t dst[32 * (RACE_ROW + 16)];

	while (!atomic_load(&r->done)) {
		uint64_t len = zr_store_length(r->s);
		int err;

		if (len == 0) { /* nothing yet: let the appender run */
			sched_yield();
			continue;
		}
		for (int k = 0; k < 32; k++) {
			seed = seed * 6364136223846793005ull + 1;
			idx[k] = (seed >> 33) % len;
		}
		err = zr_store_gather(r->s, idx, 32, dst, sizeof(dst),
				      zr_store_schema(r->s)->ragged ? off
								    : NULL);
		ck_assert_msg(err == 0, "gather: %s", zr_errmsg());
		race_check(r, idx, 32, dst,
			   zr_store_schema(r->s)->ragged ? off : NULL);
	}
	return NULL;
}

static void race_append(zr_store *s, uint64_t first)
{
	static uint8_t rows[RACE_BATCH][RACE_ROW];
	uint64_t len = RACE_ROW;
	zr_ragged_in in[RACE_BATCH];

	for (uint64_t k = 0; k < RACE_BATCH; k++) {
		race_expect(first + k, rows[k]);
		in[k] = (zr_ragged_in){ rows[k], 1, &len };
	}
	if (zr_store_schema(s)->ragged)
		ck_assert_int_eq(zr_store_append_ragged(s, in, RACE_BATCH), 0);
	else
		ck_assert_int_eq(zr_store_append_dense(s, rows, RACE_BATCH), 0);
}

START_TEST(test_gathers_race_appends)
{
	static const uint64_t shape[] = { RACE_ROW };
	zr_schema sc = _i % 2 ? ck_schema("|u1", -1, NULL)
			      : ck_schema("|u1", 1, shape);
	struct race r = { .s = ck_store(ck_dir, "race", &sc, ck_codecs[_i / 2]) };
	pthread_t t[RACE_READERS];

	for (int i = 0; i < RACE_READERS; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, race_reader, &r),
				 0);
	for (uint64_t b = 0; b < RACE_BATCHES; b++) {
		long seen = atomic_load(&r.checked);

		race_append(r.s, b * RACE_BATCH);
		/* Let readers overlap every batch, however fast appends are. */
		while (atomic_load(&r.checked) < seen + 64)
			sched_yield();
	}
	atomic_store(&r.done, 1);
	for (int i = 0; i < RACE_READERS; i++)
		ck_assert_int_eq(pthread_join(t[i], NULL), 0);
	ck_assert_uint_eq(zr_store_length(r.s), RACE_BATCH * RACE_BATCHES);
	ck_assert_int_gt(atomic_load(&r.checked), 0);
	ck_assert_int_eq(zr_store_close(r.s), 0);
}
END_TEST

Suite *suite_store(void)
{
	Suite *s = suite_create("store");
	TCase *tc = tcase_create("store");

	tcase_add_checked_fixture(tc, ck_dir_setup, ck_dir_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_every_dtype, 0, 3);
	tcase_add_loop_test(tc, test_ranks, 0, 3);
	tcase_add_loop_test(tc, test_rank32_and_big_record, 0, 3);
	tcase_add_loop_test(tc, test_append_all_or_nothing, 0, 3);
	tcase_add_test(tc, test_create_open_errors);
	tcase_add_test(tc, test_codec_names);
	tcase_add_test(tc, test_readonly_handle);
	tcase_add_loop_test(tc, test_gathers_race_appends, 0, 6);
	suite_add_tcase(s, tc);
	return s;
}
