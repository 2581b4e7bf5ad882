/*
 * ragged_pack.c - zr_ragged_pack: a gathered ragged batch turned, in
 * place, into the packed form trainers use (every record's elements back
 * to back, their boundaries, and the shapes aside).  One forward pass of
 * memmove: each record's elements move to the front, never over bytes not
 * read yet, so the batch is neither copied to a second buffer nor walked
 * record by record from Python.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "error.h"
#include "store.h"

static int bad_offsets(size_t k)
{
	return zr__fail(-EINVAL, "zr_ragged_pack: offsets[%zu] > "
			"offsets[%zu]", k, k + 1);
}

int zr_ragged_pack(void *buf, const uint64_t *offsets, size_t count,
		   size_t itemsize, uint32_t ndim, uint64_t *shapes,
		   uint64_t *packed)
{
	uint8_t *b = buf;
	uint64_t out = 0, dims[ZR_MAX_NDIM];

	zr__clear();
	if (!packed || ndim > ZR_MAX_NDIM ||
	    (count && (!buf || !offsets || (ndim && !shapes))))
		return zr__fail(-EINVAL, "zr_ragged_pack: bad arguments");
	packed[0] = 0;
	for (size_t k = 0; k < count; k++) {
		uint64_t lo = offsets[k], hi = offsets[k + 1];
		uint32_t n;
		size_t at;
		int err;

		if (hi < lo)
			return bad_offsets(k);
		err = zr__ragged_head(b + lo, hi - lo, hi - lo, itemsize, &n,
				      dims, &at);
		if (err)
			return err;
		if (n != ndim)
			return zr__fail(ZR_E_SHAPE, "packed form: record %zu has "
					"%" PRIu32 " dimensions, record 0 %"
					PRIu32, k, n, ndim);
		if (ndim)
			memcpy(shapes + k * ndim, dims, ndim * sizeof(*dims));
		memmove(b + out, b + lo + at, hi - lo - at);
		out += hi - lo - at;
		packed[k + 1] = out;
	}
	return 0;
}
