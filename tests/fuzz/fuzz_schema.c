/*
 * fuzz_schema.c - libFuzzer harness for the MsgPack schema parser
 * (zr_schema_decode).
 *
 * An accepted schema must be one the library itself can describe: its row
 * size computes, it renders as JSON, and encoding it gives back exactly the
 * canonical bytes, which decode to the same schema.
 */
#include <errno.h>
#include <string.h>

#include "fuzz_util.h"
#include "zrecord.h"

static void check_same(const zr_schema *a, const zr_schema *b)
{
	ZR_FUZZ_CHECK(strcmp(a->dtype.str, b->dtype.str) == 0);
	ZR_FUZZ_CHECK(a->ragged == b->ragged);
	if (a->ragged)
		return;
	ZR_FUZZ_CHECK(a->ndim == b->ndim);
	ZR_FUZZ_CHECK(memcmp(a->shape, b->shape, a->ndim * 8) == 0);
}

static void check_accepted(const zr_schema *s)
{
	unsigned char enc[ZR_SCHEMA_MAX];
	char json[16384];
	zr_schema back;
	size_t len = 0, row = 0;

	ZR_FUZZ_CHECK(s->ndim <= ZR_MAX_NDIM);
	ZR_FUZZ_CHECK(zr_dtype_parse(s->dtype.str, &(zr_dtype){0}) == 0);
	if (s->ragged) {
		ZR_FUZZ_CHECK(zr_schema_row_bytes(s, &row) == -EINVAL);
	} else {
		ZR_FUZZ_CHECK(zr_schema_row_bytes(s, &row) == 0);
		ZR_FUZZ_CHECK(row > 0 && row <= ZR_RECORD_MAX);
	}
	ZR_FUZZ_CHECK(zr_schema_json(s, json, sizeof(json)) == 0);
	ZR_FUZZ_CHECK(memchr(json, '\0', sizeof(json)) != NULL);
	ZR_FUZZ_CHECK(zr_schema_encode(s, enc, sizeof(enc), &len) == 0);
	ZR_FUZZ_CHECK(len > 0 && len <= ZR_SCHEMA_MAX);
	ZR_FUZZ_CHECK(zr_schema_decode(enc, len, &back) == 0);
	check_same(s, &back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	zr_schema s;
	int rc = zr_schema_decode(data, size, &s);

	if (rc != 0) {
		ZR_FUZZ_CHECK(rc == ZR_E_SCHEMA || rc == ZR_E_DTYPE ||
			      rc == ZR_E_TOOBIG);
		return 0;
	}
	ZR_FUZZ_CHECK(size <= ZR_SCHEMA_MAX);
	check_accepted(&s);
	return 0;
}
