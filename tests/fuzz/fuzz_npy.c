/*
 * fuzz_npy.c - libFuzzer harness for the .npy header parser (zr_npy_parse).
 *
 * Besides "never crash", it checks the parser's promises on every accepted
 * header: the size it reports is consistent, a shorter prefix is reported
 * as truncated (never as a different verdict), and the header the library
 * writes for the same array -- NumPy's layout and the fixed-length ragged
 * layout -- parses back to the same array.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "zrecord.h"

static void check_same(const zr_npy_header *a, const zr_npy_header *b)
{
	ZR_FUZZ_CHECK(strcmp(a->dtype.str, b->dtype.str) == 0);
	ZR_FUZZ_CHECK(a->ndim == b->ndim);
	ZR_FUZZ_CHECK(memcmp(a->shape, b->shape, a->ndim * 8) == 0);
	ZR_FUZZ_CHECK(a->data_len == b->data_len);
}

static void check_sizes(const zr_npy_header *h, size_t len)
{
	unsigned __int128 n = h->dtype.itemsize;

	ZR_FUZZ_CHECK(h->header_len >= 10 && h->header_len <= len);
	ZR_FUZZ_CHECK(h->ndim <= ZR_MAX_NDIM);
	for (uint32_t i = 0; i < h->ndim; i++) {
		n *= h->shape[i];
		if (n > UINT64_MAX)
			n = (unsigned __int128)UINT64_MAX + 1;
	}
	ZR_FUZZ_CHECK(n == h->data_len);
}

static void check_prefix(const uint8_t *data, const zr_npy_header *h)
{
	zr_npy_header p;
	size_t need = 0;
	int rc = zr_npy_parse(data, h->header_len, &p, NULL);

	ZR_FUZZ_CHECK(rc == 0);
	check_same(h, &p);
	rc = zr_npy_parse(data, h->header_len - 1, &p, &need);
	ZR_FUZZ_CHECK(rc == ZR_E_TRUNCATED);
	ZR_FUZZ_CHECK(need > h->header_len - 1 && need <= h->header_len);
}

static void check_rewrite(const zr_npy_header *h)
{
	size_t hl = zr_npy_header_len(&h->dtype, h->ndim, h->shape), len = 0;
	char *buf = malloc(hl + 1);
	zr_npy_header p;

	ZR_FUZZ_CHECK(buf != NULL && hl >= 64 && hl % 64 == 0);
	ZR_FUZZ_CHECK(zr_npy_write_header(&h->dtype, h->ndim, h->shape, buf,
					  hl, &len) == 0);
	ZR_FUZZ_CHECK(len == hl);
	ZR_FUZZ_CHECK(zr_npy_parse(buf, len, &p, NULL) == 0);
	ZR_FUZZ_CHECK(p.header_len == hl);
	check_same(h, &p);
	free(buf);
}

static void check_ragged(const zr_npy_header *h)
{
	uint64_t logic = 8 + 8 * (uint64_t)h->ndim + h->data_len;
	size_t hl;
	char *buf;
	zr_npy_header p;

	if (h->data_len == 0 || h->data_len > ZR_RECORD_MAX)
		return;
	hl = zr_npy_ragged_header_len(&h->dtype, logic);
	if (hl == 0)
		return;
	ZR_FUZZ_CHECK(hl % 64 == 0);
	buf = malloc(hl);
	ZR_FUZZ_CHECK(buf != NULL);
	ZR_FUZZ_CHECK(zr_npy_write_header_fixed(&h->dtype, h->ndim, h->shape,
						hl, buf, hl) == 0);
	ZR_FUZZ_CHECK(zr_npy_parse(buf, hl, &p, NULL) == 0);
	ZR_FUZZ_CHECK(p.header_len == hl);
	check_same(h, &p);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	zr_npy_header h;
	size_t need = 0;
	int rc = zr_npy_parse(data, size, &h, &need);

	if (rc == ZR_E_TRUNCATED) {
		ZR_FUZZ_CHECK(need > size);
		return 0;
	}
	if (rc != 0) {
		ZR_FUZZ_CHECK(rc == ZR_E_NPY || rc == ZR_E_DTYPE ||
			      rc == ZR_E_TOOBIG || rc == ZR_E_SHAPE);
		return 0;
	}
	check_sizes(&h, size);
	ZR_FUZZ_CHECK(zr_dtype_parse(h.dtype.str, &(zr_dtype){0}) == 0);
	check_prefix(data, &h);
	check_rewrite(&h);
	check_ragged(&h);
	return 0;
}
