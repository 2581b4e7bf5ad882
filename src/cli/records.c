/*
 * records.c - turns gathered records into the NumPy files `get` and `batch`
 * print: a dense batch is gathered straight behind its .npy header; ragged
 * records are gathered packed, then each becomes an exact np.save-style
 * .npy (alone, or as a member of an np.savez-style stored .npz).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "npz.h"

#define NPZ_NAME_MAX 32

/* An .npy whose header and data are one malloc'ed block of hlen + body. */
static int npy_alloc(const zr_dtype *dt, uint32_t ndim, const uint64_t *shape,
		     size_t body, unsigned char **buf, size_t *hlen)
{
	size_t h = zr_npy_header_len(dt, ndim, shape), got;
	unsigned char *b;
	int rc;

	if (h == 0)
		return ZR_E_SHAPE;
	if (body > SIZE_MAX - h)
		return ZR_E_TOOBIG;
	b = malloc(h + body ? h + body : 1);
	if (!b)
		return -ENOMEM;
	rc = zr_npy_write_header(dt, ndim, shape, b, h, &got);
	if (rc < 0) {
		free(b);
		return rc;
	}
	*buf = b;
	*hlen = h;
	return 0;
}

static int encode_dense(zr_store *s, const uint64_t *idx, size_t n,
			int single, void **buf, size_t *len)
{
	const zr_schema *sc = zr_store_schema(s);
	size_t row = zr_store_row_bytes(s), hlen;
	uint64_t shape[ZR_MAX_NDIM + 1];
	uint32_t ndim = sc->ndim + !single;
	unsigned char *b;
	int rc;

	if (ndim > ZR_MAX_NDIM)
		return ZR_E_SHAPE; /* a batch of rank-32 records has rank 33 */
	if (row == 0 || n > SIZE_MAX / row)
		return ZR_E_TOOBIG;
	shape[0] = n;
	memcpy(shape + !single, sc->shape, sc->ndim * sizeof(uint64_t));
	rc = npy_alloc(&sc->dtype, ndim, shape, n * row, &b, &hlen);
	if (rc < 0)
		return rc;
	rc = zr_store_gather(s, idx, n, b + hlen, n * row, NULL);
	if (rc < 0) {
		free(b);
		return rc;
	}
	*buf = b;
	*len = hlen + n * row;
	return 0;
}

/* One gathered ragged record as a .npy: its size, and its bytes at dst
 * unless dst is NULL. */
static int ragged_npy(const zr_dtype *dt, const unsigned char *rec,
		      size_t rec_len, unsigned char *dst, uint64_t *size)
{
	uint64_t shape[ZR_MAX_NDIM];
	size_t off, hlen, got;
	uint32_t ndim;
	int rc;

	rc = zr_ragged_parse(rec, rec_len, dt->itemsize, &ndim, shape, &off);
	if (rc < 0)
		return rc;
	hlen = zr_npy_header_len(dt, ndim, shape);
	if (hlen == 0)
		return ZR_E_CORRUPT;
	*size = hlen + (rec_len - off);
	if (!dst)
		return 0;
	rc = zr_npy_write_header(dt, ndim, shape, dst, hlen, &got);
	if (rc < 0)
		return rc;
	memcpy(dst + hlen, rec + off, rec_len - off);
	return 0;
}

static int ragged_single(const zr_dtype *dt, const unsigned char *rec,
			 size_t rec_len, void **buf, size_t *len)
{
	unsigned char *b;
	uint64_t size;
	int rc;

	rc = ragged_npy(dt, rec, rec_len, NULL, &size);
	if (rc < 0)
		return rc;
	b = malloc(size);
	if (!b)
		return -ENOMEM;
	rc = ragged_npy(dt, rec, rec_len, b, &size);
	if (rc < 0) {
		free(b);
		return rc;
	}
	*buf = b;
	*len = size;
	return 0;
}

/* Lays the records out as np.savez would name them, then fills them in. */
static int ragged_npz(const zr_dtype *dt, const unsigned char *recs,
		      const uint64_t *offsets, size_t n, void **buf,
		      size_t *len)
{
	zr_npz_member *m = calloc(n, sizeof(*m));
	char *names = calloc(n, NPZ_NAME_MAX);
	unsigned char *b = NULL;
	uint64_t total;
	size_t i;
	int rc = -ENOMEM;

	if (!m || !names)
		goto out;
	for (i = 0; i < n; i++) {
		snprintf(names + i * NPZ_NAME_MAX, NPZ_NAME_MAX, "arr_%zu.npy",
			 i);
		m[i].name = names + i * NPZ_NAME_MAX;
		rc = ragged_npy(dt, recs + offsets[i], offsets[i + 1] -
				offsets[i], NULL, &m[i].size);
		if (rc < 0)
			goto out;
	}
	rc = zr_npz_layout(m, n, &total);
	if (rc < 0)
		goto out;
	rc = -ENOMEM;
	b = malloc(total);
	if (!b)
		goto out;
	for (i = 0; i < n; i++) {
		rc = ragged_npy(dt, recs + offsets[i], offsets[i + 1] -
				offsets[i], b + m[i].offset, &m[i].size);
		if (rc < 0)
			goto out;
	}
	rc = zr_npz_finish(b, total, m, n);
	if (rc < 0)
		goto out;
	*buf = b;
	*len = total;
	b = NULL;
out:
	free(b);
	free(names);
	free(m);
	return rc;
}

static int encode_ragged(zr_store *s, const uint64_t *idx, size_t n,
			 int single, void **buf, size_t *len)
{
	const zr_dtype *dt = &zr_store_schema(s)->dtype;
	uint64_t *offsets = calloc(n + 1, sizeof(*offsets));
	unsigned char *recs = NULL;
	uint64_t total;
	int rc = -ENOMEM;

	if (!offsets)
		goto out;
	rc = zr_store_gather_size(s, idx, n, &total);
	if (rc < 0)
		goto out;
	rc = ZR_E_TOOBIG;
	if (total > SIZE_MAX)
		goto out;
	rc = -ENOMEM;
	recs = malloc(total ? total : 1);
	if (!recs)
		goto out;
	rc = zr_store_gather(s, idx, n, recs, total, offsets);
	if (rc < 0)
		goto out;
	if (single)
		rc = ragged_single(dt, recs, offsets[1] - offsets[0], buf,
				   len);
	else
		rc = ragged_npz(dt, recs, offsets, n, buf, len);
out:
	free(recs);
	free(offsets);
	return rc;
}

int zr_cli_encode_records(zr_store *s, const uint64_t *idx, size_t n,
			  int single, void **buf, size_t *len)
{
	if (n == 0 || (single && n != 1))
		return -EINVAL;
	if (zr_store_schema(s)->ragged)
		return encode_ragged(s, idx, n, single, buf, len);
	return encode_dense(s, idx, n, single, buf, len);
}

int zr_cli_encode_indices(const uint64_t *idx, size_t n, void **buf,
			  size_t *len)
{
	uint64_t shape[1] = { n };
	unsigned char *b, *p;
	zr_dtype dt;
	size_t hlen, i;
	int rc, k;

	rc = zr_dtype_parse("<i8", &dt);
	if (rc < 0)
		return rc;
	if (n > SIZE_MAX / 8)
		return ZR_E_TOOBIG;
	rc = npy_alloc(&dt, 1, shape, n * 8, &b, &hlen);
	if (rc < 0)
		return rc;
	for (i = 0, p = b + hlen; i < n; i++)
		for (k = 0; k < 8; k++)
			*p++ = (unsigned char)(idx[i] >> (8 * k));
	*buf = b;
	*len = hlen + n * 8;
	return 0;
}
