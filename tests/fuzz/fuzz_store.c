/*
 * fuzz_store.c - libFuzzer harness for opening and reading a store whose
 * files are hostile: mutated meta.zr / data.zr / dict.zr.
 *
 * Input: [u8 flags][u32 meta_len][u32 data_len][meta][data][dict...];
 * flags bit 0: dict.zr exists; bit 1: open read-write and also delete and
 * compact.  Every record must either fail with a library code or read back
 * as a well-formed record (a ragged one's shape prefix parses and agrees
 * with zr_ragged_shape).  Nothing may crash, hang or read out of bounds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz_util.h"
#include "zrecord.h"

#define MAX_RECORDS 256           /* records read per input            */
#define MAX_GATHER (4u << 20)     /* bytes gathered per record, at most */

/* A code from the library's table, not a stray value. */
static int known_code(int rc)
{
	return rc < 0 && strcmp(zr_errname(rc), "E?") != 0;
}

static void check_ragged(zr_store *s, uint64_t idx, const void *rec,
			 size_t len)
{
	uint64_t shape[ZR_MAX_NDIM], shape2[ZR_MAX_NDIM];
	uint32_t ndim = 0, ndim2 = 0;
	size_t off = 0, itemsize = zr_store_schema(s)->dtype.itemsize;

	ZR_FUZZ_CHECK(zr_ragged_parse(rec, len, itemsize, &ndim, shape,
				      &off) == 0);
	ZR_FUZZ_CHECK(off == 8 + 8 * (size_t)ndim && off < len);
	ZR_FUZZ_CHECK(zr_ragged_shape(s, idx, &ndim2, shape2) == 0);
	ZR_FUZZ_CHECK(ndim == ndim2);
	ZR_FUZZ_CHECK(memcmp(shape, shape2, ndim * sizeof(*shape)) == 0);
}

static void read_one(zr_store *s, uint64_t idx)
{
	uint64_t size = 0, offsets[2];
	zr_loc loc;
	void *buf;
	int rc;

	rc = zr_store_loc(s, idx, &loc);
	if (rc != 0) {
		ZR_FUZZ_CHECK(rc == ZR_E_CORRUPT);
		return;
	}
	ZR_FUZZ_CHECK(zr_store_gather_size(s, &idx, 1, &size) == 0);
	ZR_FUZZ_CHECK(size == loc.logic_length);
	if (size > MAX_GATHER)
		return;
	buf = malloc(size);
	ZR_FUZZ_CHECK(buf != NULL);
	rc = zr_store_gather(s, &idx, 1, buf, size, offsets);
	if (rc == 0 && zr_store_schema(s)->ragged)
		check_ragged(s, idx, buf, size);
	if (rc == 0 && !zr_store_schema(s)->ragged)
		ZR_FUZZ_CHECK(size == zr_store_row_bytes(s));
	if (rc != 0)
		ZR_FUZZ_CHECK(rc == ZR_E_CORRUPT || rc == ZR_E_CODEC);
	free(buf);
}

static void exercise(zr_store *s, int writable)
{
	uint64_t n = zr_store_length(s);
	zr_stats st;
	int64_t bad;

	for (uint64_t i = 0; i < n && i < MAX_RECORDS; i++)
		read_one(s, i);
	ZR_FUZZ_CHECK(zr_store_loc(s, n, &(zr_loc){ 0 }) == ZR_E_RANGE);
	(void)zr_store_stats(s, &st);
	bad = zr_store_verify(s, NULL, NULL, NULL, NULL);
	ZR_FUZZ_CHECK(bad >= 0 || known_code((int)bad));
	if (!writable || n == 0)
		return;
	(void)zr_store_delete(s, &(uint64_t){ 0 }, 1);
	(void)zr_store_compact(s, NULL, NULL);
	for (uint64_t i = 0; i < zr_store_length(s) && i < MAX_RECORDS; i++)
		read_one(s, i);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char dir[600];
	uint32_t meta_len, data_len;
	uint8_t flags;
	zr_store *s = NULL;
	char path[700];
	int rc;

	if (!dir[0])
		snprintf(dir, sizeof(dir), "%s/store", zr_fuzz_setup());
	if (size < 1)
		return 0;
	flags = data[0];
	data++;
	size--;
	meta_len = zr_fuzz_take_u32(&data, &size);
	data_len = zr_fuzz_take_u32(&data, &size);
	if (meta_len > size)
		meta_len = (uint32_t)size;
	if (data_len > size - meta_len)
		data_len = (uint32_t)(size - meta_len);
	zr_rmtree(dir);
	ZR_FUZZ_CHECK(mkdir(dir, 0755) == 0);
	zr_fuzz_write(dir, "meta.zr", data, meta_len);
	zr_fuzz_write(dir, "data.zr", data + meta_len, data_len);
	if (flags & 1)
		zr_fuzz_write(dir, "dict.zr", data + meta_len + data_len,
			      size - meta_len - data_len);
	rc = zr_store_open(dir, (flags & 2) ? 0 : ZR_OPEN_RDONLY, &s);
	if (rc != 0) {
		ZR_FUZZ_CHECK(known_code(rc));
		return 0;
	}
	exercise(s, (flags & 2) != 0);
	(void)zr_store_close(s);
	snprintf(path, sizeof(path), "%s/meta.zr", dir);
	ZR_FUZZ_CHECK(access(path, F_OK) == 0);
	return 0;
}
