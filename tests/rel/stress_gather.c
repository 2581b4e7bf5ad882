/*
 * stress_gather.c - many reader threads gather from one store handle while
 * one writer thread appends to it, for a bounded time; every byte read is
 * checked against what its index must hold.  Run by test_concurrency.py:
 *
 *   stress_gather DIR SECONDS READERS
 *
 * creates DIR/dense (<u4, item_shape (16,), zstd) and DIR/ragged (<u2,
 * raw), stresses both at once, then reopens them read-only and checks every
 * record and zr_store_verify.  Exit 0 and "reads=.. appends=.." on success;
 * exit 1 with the first mismatch otherwise.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "zrecord.h"

#define COLS 16
#define BATCH 64
#define PICK 32

static zr_store *dense, *ragged;
static atomic_int stop, failed;
static atomic_uint_fast64_t reads, appends;

static void fail(const char *what, uint64_t idx, int err)
{
	if (atomic_exchange(&failed, 1) == 0)
		fprintf(stderr, "stress: %s at record %" PRIu64 ": %s (%s)\n",
			what, idx, zr_strerror(err), zr_errmsg());
	atomic_store(&stop, 1);
}

/* Record i of the ragged store: shape (1 + i % 37,), values i + j. */
static uint32_t ragged_len(uint64_t i)
{
	return 1 + (uint32_t)(i % 37);
}

static int check_dense(const uint32_t *row, uint64_t i)
{
	for (uint32_t j = 0; j < COLS; j++)
		if (row[j] != (uint32_t)(i * COLS + j))
			return -1;
	return 0;
}

static int check_ragged(const uint8_t *rec, size_t len, uint64_t i)
{
	uint64_t shape[ZR_MAX_NDIM];
	uint32_t ndim;
	size_t off;
	uint16_t v;

	if (zr_ragged_parse(rec, len, 2, &ndim, shape, &off) != 0 ||
	    ndim != 1 || shape[0] != ragged_len(i))
		return -1;
	for (uint32_t j = 0; j < shape[0]; j++) {
		memcpy(&v, rec + off + 2 * j, 2);
		if (v != (uint16_t)(i + j))
			return -1;
	}
	return 0;
}

static int append_dense(uint64_t first)
{
	uint32_t rows[BATCH * COLS];

	for (uint64_t k = 0; k < BATCH; k++)
		for (uint32_t j = 0; j < COLS; j++)
			rows[k * COLS + j] = (uint32_t)((first + k) * COLS + j);
	return zr_store_append_dense(dense, rows, BATCH);
}

static int append_ragged(uint64_t first)
{
	static uint16_t vals[BATCH][37];
	static uint64_t shapes[BATCH];
	zr_ragged_in in[BATCH];

	for (uint64_t k = 0; k < BATCH; k++) {
		shapes[k] = ragged_len(first + k);
		for (uint32_t j = 0; j < shapes[k]; j++)
			vals[k][j] = (uint16_t)(first + k + j);
		in[k] = (zr_ragged_in){ vals[k], 1, &shapes[k] };
	}
	return zr_store_append_ragged(ragged, in, BATCH);
}

static void *writer(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		uint64_t nd = zr_store_length(dense);
		uint64_t nr = zr_store_length(ragged);
		int err = append_dense(nd);

		if (err) {
			fail("dense append", nd, err);
			break;
		}
		err = append_ragged(nr);
		if (err) {
			fail("ragged append", nr, err);
			break;
		}
		atomic_fetch_add(&appends, 2 * BATCH);
	}
	return NULL;
}

static void read_dense(unsigned *seed)
{
	uint64_t n = zr_store_length(dense), idx[PICK];
	uint32_t rows[PICK * COLS];
	int err;

	for (int k = 0; k < PICK; k++)
		idx[k] = (uint64_t)rand_r(seed) % n;
	err = zr_store_gather(dense, idx, PICK, rows, sizeof(rows), NULL);
	if (err)
		return fail("dense gather", idx[0], err);
	for (int k = 0; k < PICK; k++)
		if (check_dense(rows + k * COLS, idx[k]))
			return fail("dense bytes differ", idx[k], 0);
}

static void read_ragged(unsigned *seed)
{
	uint64_t n = zr_store_length(ragged), idx[PICK], off[PICK + 1], size;
	uint8_t buf[PICK * (8 + 8 + 2 * 37)];
	int err;

	for (int k = 0; k < PICK; k++)
		idx[k] = (uint64_t)rand_r(seed) % n;
	err = zr_store_gather_size(ragged, idx, PICK, &size);
	if (!err)
		err = zr_store_gather(ragged, idx, PICK, buf, sizeof(buf), off);
	if (err)
		return fail("ragged gather", idx[0], err);
	for (int k = 0; k < PICK; k++)
		if (check_ragged(buf + off[k], off[k + 1] - off[k], idx[k]))
			return fail("ragged bytes differ", idx[k], 0);
}

static void *reader(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;
	zr_stats st;

	while (!atomic_load(&stop)) {
		read_dense(&seed);
		read_ragged(&seed);
		if (zr_store_stats(dense, &st) != 0)
			fail("stats", 0, -1);
		atomic_fetch_add(&reads, 2 * PICK);
	}
	return NULL;
}

static int reopen_and_check(const char *dir)
{
	char path[4096];
	uint64_t n;
	int err;

	snprintf(path, sizeof(path), "%s/dense", dir);
	err = zr_store_open(path, ZR_OPEN_RDONLY, &dense);
	snprintf(path, sizeof(path), "%s/ragged", dir);
	if (!err)
		err = zr_store_open(path, ZR_OPEN_RDONLY, &ragged);
	if (err) {
		fail("reopen", 0, err);
		zr_store_close(dense);
		return -1;
	}
	n = zr_store_length(dense);
	for (uint64_t i = 0; i < n && !atomic_load(&failed); i++) {
		uint32_t row[COLS];

		err = zr_store_gather(dense, &i, 1, row, sizeof(row), NULL);
		if (err || check_dense(row, i))
			fail("dense after reopen", i, err);
	}
	if (zr_store_verify(dense, NULL, NULL, NULL, NULL) != 0 ||
	    zr_store_verify(ragged, NULL, NULL, NULL, NULL) != 0)
		fail("verify after reopen", 0, 0);
	zr_store_close(dense);
	zr_store_close(ragged);
	return atomic_load(&failed) ? -1 : 0;
}

static int create_stores(const char *dir)
{
	zr_schema d = { .ndim = 1, .shape = { COLS } }, r = { .ragged = 1 };
	char path[4096];
	int err;

	if (zr_dtype_parse("<u4", &d.dtype) || zr_dtype_parse("<u2", &r.dtype))
		return -1;
	snprintf(path, sizeof(path), "%s/dense", dir);
	err = zr_store_create(path, &d, ZR_CODEC_ZSTD, NULL, 0, &dense);
	snprintf(path, sizeof(path), "%s/ragged", dir);
	if (!err)
		err = zr_store_create(path, &r, ZR_CODEC_RAW, NULL, 0, &ragged);
	/* Readers need something to read from the start. */
	if (!err)
		err = append_dense(0);
	if (!err)
		err = append_ragged(0);
	if (err)
		fail("create", 0, err);
	return err;
}

int main(int argc, char **argv)
{
	pthread_t w, r[64];
	int nreaders, secs;

	if (argc != 4 || (secs = atoi(argv[2])) <= 0 ||
	    (nreaders = atoi(argv[3])) <= 0 || nreaders > 64) {
		fprintf(stderr, "usage: stress_gather DIR SECONDS READERS\n");
		return 2;
	}
	if (create_stores(argv[1]))
		return 1;
	pthread_create(&w, NULL, writer, NULL);
	for (int i = 0; i < nreaders; i++)
		pthread_create(&r[i], NULL, reader, (void *)(uintptr_t)(i + 1));
	for (int t = 0; t < secs * 10 && !atomic_load(&stop); t++)
		nanosleep(&(struct timespec){ 0, 100000000 }, NULL);
	atomic_store(&stop, 1);
	pthread_join(w, NULL);
	for (int i = 0; i < nreaders; i++)
		pthread_join(r[i], NULL);
	if (zr_store_close(dense) | zr_store_close(ragged))
		fail("close", 0, 0);
	if (atomic_load(&failed) || reopen_and_check(argv[1]))
		return 1;
	printf("reads=%" PRIuFAST64 " appends=%" PRIuFAST64 "\n",
	       atomic_load(&reads), atomic_load(&appends));
	return 0;
}
