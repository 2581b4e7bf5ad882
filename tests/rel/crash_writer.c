/*
 * crash_writer.c - appends and syncs through the library until killed, for
 * the kill -9 tests (test_crash.py):
 *
 *   crash_writer STORE BATCH
 *
 * Creates STORE (<u4, item_shape (256,), zstd) if it does not exist, then
 * forever: appends BATCH rows (row k holds k*256 + j), syncs, and prints
 * the synced length on its own line.  A printed length is a promise: after
 * a kill, at least that many records must read back exactly.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "zrecord.h"

#define COLS 256

static int open_or_create(const char *path, zr_store **s)
{
	zr_schema sc = { .ndim = 1, .shape = { COLS } };
	int err = zr_store_open(path, 0, s);

	if (err != ZR_E_NOSTORE)
		return err;
	err = zr_dtype_parse("<u4", &sc.dtype);
	if (!err)
		err = zr_store_create(path, &sc, ZR_CODEC_ZSTD, NULL, 0, s);
	return err;
}

int main(int argc, char **argv)
{
	zr_store *s = NULL;
	uint32_t *rows;
	uint64_t batch;
	int err;

	if (argc != 3 || (batch = strtoull(argv[2], NULL, 10)) == 0) {
		fprintf(stderr, "usage: crash_writer STORE BATCH\n");
		return 2;
	}
	rows = malloc(batch * COLS * sizeof(*rows));
	err = rows ? open_or_create(argv[1], &s) : -ENOMEM;
	while (!err) {
		uint64_t n = zr_store_length(s);

		for (uint64_t v = 0; v < batch * COLS; v++)
			rows[v] = (uint32_t)(n * COLS + v);
		err = zr_store_append_dense(s, rows, batch);
		if (!err)
			err = zr_store_sync(s);
		if (!err) {
			printf("%" PRIu64 "\n", zr_store_length(s));
			fflush(stdout);
		}
	}
	fprintf(stderr, "crash_writer: %s: %s\n", zr_strerror(err),
		zr_errmsg());
	zr_store_close(s);
	free(rows);
	return 1;
}
