/*
 * fuzz_npystream.c - libFuzzer harness for the append-stream parser
 * (src/files/npy_stream.h) that `zrecord append` and the mount's append
 * file share.
 *
 * Input: byte 0 picks one of a few stores (dense / ragged, raw / zstd),
 * bytes 1..4 seed the chunk sizes, the rest is the stream, fed in chunks
 * of random size as FUSE writes would arrive.  A failing stream must fail
 * sticky (every later call gives the same code) and leave the store exactly
 * as it was; a committed one must add exactly the records it reports, and
 * they must read back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "npy_stream.h"
#include "zrecord.h"

struct config {
	const char *dtype;
	int ragged;
	uint32_t ndim;
	uint64_t shape[2];
	zr_codec codec;
};

static const struct config configs[] = {
	{ "<f4", 0, 1, { 3 }, ZR_CODEC_RAW },
	{ "|u1", 0, 2, { 2, 2 }, ZR_CODEC_ZSTD },
	{ "<f8", 0, 0, { 0 }, ZR_CODEC_RAW },
	{ "<i2", 1, 0, { 0 }, ZR_CODEC_ZSTD },
	{ "|u1", 1, 0, { 0 }, ZR_CODEC_RAW },
	{ ">i4", 1, 0, { 0 }, ZR_CODEC_RAW },
};
#define NCONFIG (sizeof(configs) / sizeof(configs[0]))

static zr_store *stores[NCONFIG];
static unsigned generation[NCONFIG];

/* Stores grow with every accepted stream; start afresh past this. */
#define STORE_BYTES_MAX (8u << 20)

static zr_store *store_get(unsigned k)
{
	const struct config *c = &configs[k];
	zr_schema schema = { 0 };
	char path[512];
	zr_stats st;

	if (stores[k] && zr_store_stats(stores[k], &st) == 0 &&
	    st.data_bytes < STORE_BYTES_MAX)
		return stores[k];
	if (stores[k]) {
		ZR_FUZZ_CHECK(zr_store_close(stores[k]) == 0);
		snprintf(path, sizeof(path), "%s/s%u.%u", zr_fuzz_setup(), k,
			 generation[k]++);
		zr_rmtree(path);
	}
	ZR_FUZZ_CHECK(zr_dtype_parse(c->dtype, &schema.dtype) == 0);
	schema.ragged = c->ragged;
	schema.ndim = c->ndim;
	memcpy(schema.shape, c->shape, sizeof(c->shape));
	snprintf(path, sizeof(path), "%s/s%u.%u", zr_fuzz_setup(), k,
		 generation[k]);
	ZR_FUZZ_CHECK(zr_store_create(path, &schema, c->codec, NULL, 0,
				      &stores[k]) == 0);
	return stores[k];
}

static uint32_t next_rand(uint32_t *state)
{
	*state = *state * 1103515245u + 12345u;
	return *state >> 8;
}

/* Feeds the stream in random chunks; returns the first failure or 0. */
static int feed_all(zrfile_npystream *p, const uint8_t *data, size_t size,
		    uint32_t seed)
{
	while (size > 0) {
		uint32_t r = next_rand(&seed);
		/* Mostly page-sized writes, a quarter of them tiny. */
		size_t n = 1 + (r >> 2) % ((r & 3) == 0 ? 7 : 4096);
		int rc;

		if (n > size)
			n = size;
		rc = zrfile_npystream_feed(p, data, n);
		if (rc != 0)
			return rc;
		data += n;
		size -= n;
	}
	return 0;
}

static void check_unchanged(zr_store *s, const zr_stats *before)
{
	zr_stats after;

	ZR_FUZZ_CHECK(zr_store_stats(s, &after) == 0);
	ZR_FUZZ_CHECK(memcmp(before, &after, sizeof(after)) == 0);
}

/* The new records read back; then they go, so the store stays small. */
static void check_added(zr_store *s, uint64_t first, uint64_t count)
{
	uint64_t *idx, *offsets, size = 0;
	void *buf;

	if (count == 0)
		return;
	idx = malloc((count + 1) * sizeof(*idx));
	offsets = malloc((count + 1) * sizeof(*offsets));
	ZR_FUZZ_CHECK(idx != NULL && offsets != NULL);
	for (uint64_t i = 0; i < count; i++)
		idx[i] = first + i;
	ZR_FUZZ_CHECK(zr_store_gather_size(s, idx, count, &size) == 0);
	buf = malloc(size ? size : 1);
	ZR_FUZZ_CHECK(buf != NULL);
	ZR_FUZZ_CHECK(zr_store_gather(s, idx, count, buf, size, offsets) == 0);
	ZR_FUZZ_CHECK(zr_store_delete(s, idx, count) == 0);
	ZR_FUZZ_CHECK(zr_store_length(s) == first);
	free(buf);
	free(offsets);
	free(idx);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	zrfile_npystream *p = NULL;
	zr_store *s;
	zr_stats before;
	uint64_t records = 0;
	uint32_t seed;
	int rc;

	if (size < 5)
		return 0;
	s = store_get(data[0] % NCONFIG);
	seed = (uint32_t)data[1] | (uint32_t)data[2] << 8 |
	       (uint32_t)data[3] << 16 | (uint32_t)data[4] << 24;
	ZR_FUZZ_CHECK(zr_store_stats(s, &before) == 0);
	ZR_FUZZ_CHECK(zrfile_npystream_new(s, &p) == 0);
	rc = feed_all(p, data + 5, size - 5, seed);
	if (rc != 0) {
		ZR_FUZZ_CHECK(rc < 0);
		ZR_FUZZ_CHECK(zrfile_npystream_message(p)[0] != '\0');
		ZR_FUZZ_CHECK(zrfile_npystream_feed(p, "x", 1) == rc);
		ZR_FUZZ_CHECK(zrfile_npystream_finish(p, &records) == rc);
	} else {
		rc = zrfile_npystream_finish(p, &records);
	}
	zrfile_npystream_free(p);
	if (rc != 0) {
		check_unchanged(s, &before);
		return 0;
	}
	ZR_FUZZ_CHECK(zr_store_length(s) == before.records + records);
	check_added(s, before.records, records);
	return 0;
}
