/*
 * ragged_forms.c - the packed and padded forms of a gathered ragged batch,
 * the forms trainers use: every record's elements back to back with their
 * boundaries and the shapes aside (zr_ragged_pack, zr_ragged_pack_into),
 * or one array with each record padded along axis 0 (zr_ragged_pad_shape,
 * zr_ragged_pad).  The one implementation of both: loaderx's
 * RaggedStore.gather(form=) calls them, and so does the encoder of the
 * mount's .packed.npz and .padded.npz files (src/files/form_ragged.c), so
 * the arrays and the files' members are the same bytes.  Each is one pass
 * of memmove over the batch, never a record-by-record walk from Python.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "error.h"
#include "store_io.h"

static int bad_offsets(size_t k)
{
	return zr__fail(-EINVAL, "zr_ragged_pack: offsets[%zu] > "
			"offsets[%zu]", k, k + 1);
}

int zr_ragged_pack_into(const void *buf, const uint64_t *offsets,
			size_t count, size_t itemsize, uint32_t ndim,
			void *dst, size_t dst_cap, uint64_t *shapes,
			uint64_t *packed)
{
	const uint8_t *b = buf;
	uint8_t *d = dst;
	uint64_t out = 0, dims[ZR_MAX_NDIM];

	zr__clear();
	if (!packed || ndim > ZR_MAX_NDIM ||
	    (count && (!buf || !dst || !offsets || (ndim && !shapes))))
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
			return zr__fail(ZR_E_SHAPE, "packed form: record %zu "
					"has %" PRIu32 " dimensions, record 0 "
					"%" PRIu32, k, n, ndim);
		if (hi - lo - at > dst_cap - out)
			return zr__fail(-EINVAL, "zr_ragged_pack: record %zu "
					"ends past dst_cap %zu", k, dst_cap);
		if (ndim)
			memcpy(shapes + k * ndim, dims, ndim * sizeof(*dims));
		/* in place, record k moves down over the prefixes before
		 * it, never past bytes not read yet */
		memmove(d + out, b + lo + at, hi - lo - at);
		out += hi - lo - at;
		packed[k + 1] = out;
	}
	return 0;
}

int zr_ragged_pack(void *buf, const uint64_t *offsets, size_t count,
		   size_t itemsize, uint32_t ndim, uint64_t *shapes,
		   uint64_t *packed)
{
	return zr_ragged_pack_into(buf, offsets, count, itemsize, ndim, buf,
				   count && offsets ? offsets[count] : 0,
				   shapes, packed);
}

int zr_ragged_pad_shape(const uint64_t *shapes, size_t count, uint32_t ndim,
			uint64_t padded[ZR_MAX_NDIM])
{
	zr__clear();
	if (ndim > ZR_MAX_NDIM || !padded || (count && !shapes))
		return zr__fail(-EINVAL, "zr_ragged_pad_shape: bad arguments");
	if (!ndim)
		return zr__fail(ZR_E_SHAPE, "padded form: a 0-d record has "
				"no axis 0");
	memset(padded, 0, ndim * sizeof(*padded));
	if (count)
		memcpy(padded + 1, shapes + 1, (ndim - 1) * sizeof(*padded));
	for (size_t k = 0; k < count; k++) {
		const uint64_t *sh = shapes + k * ndim;

		if (memcmp(sh + 1, padded + 1, (ndim - 1) * sizeof(*sh)))
			return zr__fail(ZR_E_SHAPE, "padded form: the records' "
					"shapes differ beyond axis 0 (record "
					"%zu against record 0)", k);
		if (sh[0] > padded[0])
			padded[0] = sh[0];
	}
	return 0;
}

/* Bytes of one padded row, product(padded) * itemsize, or -EINVAL. */
static int row_bytes(const uint64_t *padded, uint32_t ndim, size_t itemsize,
		     uint64_t *row)
{
	*row = itemsize;
	for (uint32_t d = 0; d < ndim; d++) {
		if (padded[d] && *row > UINT64_MAX / padded[d])
			return zr__fail(-EINVAL, "zr_ragged_pad: the padded "
					"shape overflows");
		*row *= padded[d];
	}
	return 0;
}

/* Whether pad is NULL or as good as: every byte the same, *byte. */
static int one_byte(const void *pad, size_t itemsize, uint8_t *byte)
{
	const uint8_t *p = pad;

	*byte = p ? p[0] : 0;
	for (size_t i = 1; p && i < itemsize; i++)
		if (p[i] != p[0])
			return 0;
	return 1;
}

/* Fills n elements at dst with pad (NULL: zero bytes): memset when one
 * byte value does, else one element and copies that double. */
static void fill(uint8_t *dst, uint64_t n, const void *pad, size_t itemsize)
{
	uint64_t bytes = n * itemsize;
	uint8_t byte;

	if (!bytes)
		return;
	if (one_byte(pad, itemsize, &byte)) {
		memset(dst, byte, bytes);
		return;
	}
	memcpy(dst, pad, itemsize);
	for (uint64_t done = itemsize; done < bytes; done *= 2)
		memcpy(dst + done, dst,
		       done < bytes - done ? done : bytes - done);
}

int zr_ragged_pad(const void *src, const uint64_t *packed, size_t count,
		  size_t itemsize, uint32_t ndim, const uint64_t *shapes,
		  const uint64_t *padded, const void *pad, void *dst,
		  size_t dst_cap)
{
	const uint8_t *s = src;
	uint8_t *d = dst;
	uint64_t row, rest;
	int err;

	zr__clear();
	if (!ndim || ndim > ZR_MAX_NDIM || !padded || !itemsize ||
	    (count && (!src || !packed || !shapes || !dst)))
		return zr__fail(-EINVAL, "zr_ragged_pad: bad arguments");
	err = row_bytes(padded, ndim, itemsize, &row);
	if (err)
		return err;
	rest = padded[0] ? row / padded[0] : 0; /* bytes per step of axis 0 */
	if (count && (row > SIZE_MAX / count || count * row > dst_cap))
		return zr__fail(-EINVAL, "zr_ragged_pad: %zu rows of %" PRIu64
				" bytes need more than dst_cap %zu", count,
				row, dst_cap);
	/* the last record first: in place (dst == src) record k moves up,
	 * from packed[k] <= k * row, over no record not moved yet */
	for (size_t k = count; k-- > 0;) {
		const uint64_t *sh = shapes + k * ndim;
		uint64_t len = packed[k + 1] - packed[k];

		if (packed[k + 1] < packed[k] || sh[0] > padded[0] ||
		    memcmp(sh + 1, padded + 1, (ndim - 1) * sizeof(*sh)) ||
		    len != sh[0] * rest)
			return zr__fail(ZR_E_SHAPE, "padded form: record %zu "
					"does not fit the padded shape or its "
					"bytes are not its shape's", k);
		memmove(d + k * row, s + packed[k], len);
		fill(d + k * row + len, (row - len) / itemsize, pad, itemsize);
	}
	return 0;
}
