/*
 * form_indices.c - the indices form (ZRFILE_INDICES, see encoder.h): a
 * batch's record indices as an int64 (B,) .npy, or a mixture's keys as
 * (B, 2) pairs of source and index; no record is read.
 */
#include <errno.h>

#include "npy_parts.h"

/* A mixture's stream: its batch holds keys, written as pairs. */
static int of_keys(const zrfile_npy *f)
{
	return f->nst && f->st[0].mix;
}

int zrfile_plan_indices(zrfile_npy *f)
{
	uint64_t shape[2] = { f->count, 2 };
	int keys = of_keys(f);

	f->nparts = 1;
	f->total = 0;
	if (zrfile_npy_add_product(&f->one.size,
				   zr_npy_header_len(zrfile_npy_int64(),
				   keys + 1, shape),
				   f->count, 8 << keys))
		return ZR_E_TOOBIG;
	f->total = f->one.size;
	return 0;
}

int zrfile_fill_indices(const zrfile_npy *f, char *buf)
{
	int keys = of_keys(f);
	uint64_t shape[2] = { f->count, 2 };
	size_t h;
	int err = zr_npy_write_header(zrfile_npy_int64(), 1 + keys, shape,
				      buf, f->total, &h);

	for (uint64_t k = 0; !err && k < f->count; k++) {
		if (!keys) {
			zrfile_npy_put_i64(buf + h + 8 * k, f->idx[k]);
			continue;
		}
		zrfile_npy_put_i64(buf + h + 16 * k,
				   ZRFILE_MIX_SRC(f->idx[k]));
		zrfile_npy_put_i64(buf + h + 16 * k + 8,
				   ZRFILE_MIX_IDX(f->idx[k]));
	}
	return err;
}
