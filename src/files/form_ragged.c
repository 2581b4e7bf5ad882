/*
 * form_ragged.c - the PACKED and PADDED forms of a ragged batch (see
 * encoder.h): an .npz of a few np.save members, or one of those members
 * as a .npy of its own, laid out from the records' shapes (read without
 * decoding their payloads), filled from one gather.  Their content is that
 * of loaderx's RaggedStore.gather(form="packed" | "padded", pad=0).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "npy_parts.h"

/* Each flat form: the .npz it is, or is a member of (only: 1 + the
 * member's index). */
static const struct {
	int form, family, only;
} flat[] = {
	{ ZRFILE_PACKED, ZRFILE_PACKED, 0 },
	{ ZRFILE_PADDED, ZRFILE_PADDED, 0 },
	{ ZRFILE_PACKED_DATA, ZRFILE_PACKED, 1 },
	{ ZRFILE_OFFSETS, ZRFILE_PACKED, 2 },
	{ ZRFILE_SHAPES, ZRFILE_PACKED, 3 },
	{ ZRFILE_PADDED_DATA, ZRFILE_PADDED, 1 },
	{ ZRFILE_LENGTHS, ZRFILE_PADDED, 2 },
};

static int flat_entry(int form)
{
	for (size_t i = 0; i < sizeof(flat) / sizeof(flat[0]); i++)
		if (flat[i].form == form)
			return (int)i;
	return -1;
}

/* elems = product(shape[0..n)), or ZR_E_TOOBIG. */
static int product(const uint64_t *shape, uint32_t n, uint64_t *elems)
{
	*elems = 1;
	for (uint32_t i = 0; i < n; i++) {
		if (shape[i] && *elems > UINT64_MAX / shape[i])
			return ZR_E_TOOBIG;
		*elems *= shape[i];
	}
	return 0;
}

/* Record k's shape into shape[] and *ndim: the one a plan of the same
 * records already read (zrfile_npy_plan_known), the prefix of the record
 * gathered already (zrfile_npy_plan_gathered), or read now. */
static int shape_of(const zrfile_npy *f, uint64_t k, int known,
		    uint32_t *ndim, uint64_t *shape)
{
	size_t isz = zr_store_schema(f->st->zs)->dtype.itemsize;

	if (!known && f->recs)
		return zr_ragged_parse(f->recs + f->roff[k],
				       f->roff[k + 1] - f->roff[k], isz, ndim,
				       shape, NULL);
	if (!known)
		return zrfile_source_shape(f->st, f->idx[k], ndim, shape);
	*ndim = f->rndim;
	memcpy(shape, f->shapes + k * f->rndim, f->rndim * sizeof(*shape));
	return 0;
}

/* Reads every record's shape into f->shapes (rndim values each: B * ndim,
 * not B * ZR_MAX_NDIM), unless known; -EINVAL if they cannot take the
 * form. */
static int read_shapes(zrfile_npy *f, int known)
{
	uint64_t shape[ZR_MAX_NDIM];
	uint32_t ndim;
	int padded = f->form == ZRFILE_PADDED;

	if (f->count > SIZE_MAX / sizeof(*f->shapes) / ZR_MAX_NDIM)
		return ZR_E_TOOBIG;
	for (uint64_t k = 0; k < f->count; k++) {
		int err = shape_of(f, k, known, &ndim, shape);

		if (err)
			return err;
		if (k == 0 && !known) {
			f->rndim = ndim;
			f->shapes = malloc(f->count * (ndim ? ndim : 1) *
					   sizeof(*f->shapes));
			if (!f->shapes)
				return -ENOMEM;
		}
		if (ndim != f->rndim)
			return -EINVAL;
		if (!known)
			memcpy(f->shapes + k * ndim, shape,
			       ndim * sizeof(*shape));
	}
	if (padded && f->count) {
		/* the library's rule, which loaderx's padded form follows */
		if (zr_ragged_pad_shape(f->shapes, f->count, f->rndim, shape))
			return -EINVAL;
		f->longest = shape[0];
	}
	return 0;
}

/* The shape of data.npy. */
static uint32_t data_shape(const zrfile_npy *f, uint64_t *shape)
{
	if (f->form == ZRFILE_PACKED) {
		shape[0] = f->elems;
		return 1;
	}
	shape[0] = f->count;
	shape[1] = f->longest;
	if (f->count)
		memcpy(shape + 2, f->shapes + 1,
		       (f->rndim - 1) * sizeof(*shape));
	return f->count ? f->rndim + 1 : 2;
}

/* The shape of the second and third members. */
static uint32_t meta_shape(const zrfile_npy *f, size_t i, uint64_t *shape)
{
	if (f->form == ZRFILE_PADDED) {
		shape[0] = f->count; /* lengths */
		return 1;
	}
	if (i == 1) {
		shape[0] = f->count + 1; /* offsets */
		return 1;
	}
	shape[0] = f->count; /* shapes */
	shape[1] = f->rndim;
	return 2;
}

static int member_sizes(zrfile_npy *f)
{
	const zr_dtype *dt = &zr_store_schema(f->st->zs)->dtype;
	uint64_t shape[ZR_MAX_NDIM + 1], n;
	uint32_t ndim = data_shape(f, shape);
	int err;

	if (ndim > ZR_MAX_NDIM)
		return ZR_E_SHAPE;
	err = zrfile_npy_add_product(&f->part[0].size,
				     zr_npy_header_len(dt, ndim, shape),
				     f->elems, dt->itemsize);
	for (size_t i = 1; !err && i < f->nparts; i++) {
		ndim = meta_shape(f, i, shape);
		err = product(shape, ndim, &n);
		if (!err)
			err = zrfile_npy_add_product(&f->part[i].size,
						     zr_npy_header_len(
						     zrfile_npy_int64(), ndim,
						     shape), n, 8);
	}
	return err;
}

/* The file: the whole .npz, or the one member at offset 0. */
static int layout(zrfile_npy *f)
{
	if (!f->only)
		return zrfile_npz_layout(f->part, f->nparts, &f->total);
	f->part[f->only - 1].offset = 0;
	f->total = f->part[f->only - 1].size;
	return 0;
}

/* The scratch the fill of data.npy needs past the file (gather_space):
 * packed, what the records' shape prefixes add to the bytes from its data
 * to the end of the file, which is nothing for a whole .npz (offsets and
 * shapes hold more than the prefixes) and a few bytes per record for a
 * data.npy alone; padded, all the records, gathered behind the file. */
static int plan_slack(zrfile_npy *f)
{
	const zrfile_npz_member *m = &f->part[0];
	size_t isz = zr_store_schema(f->st->zs)->dtype.itemsize;
	uint64_t need, room;
	int err;

	if (f->only > 1 || f->recs)
		return 0; /* no data, or its records gathered already */
	err = zrfile_source_gather_size(f->st, f->idx, f->count, &need);
	if (err)
		return err;
	room = f->total - (m->offset + m->size) + f->elems * isz;
	if (f->form == ZRFILE_PADDED)
		f->slack = need;
	else
		f->slack = need > room ? need - room : 0;
	return f->slack > UINT64_MAX - f->total ? ZR_E_TOOBIG : 0;
}

/* Plans f->form, a flat one; known: f->shapes and f->rndim hold the
 * records' shapes already. */
static int plan_flat(zrfile_npy *f, int known)
{
	static const char *packed[] = { "data.npy", "offsets.npy",
					"shapes.npy" };
	static const char *padded[] = { "data.npy", "lengths.npy" };
	int which = flat_entry(f->form), is_packed;
	uint64_t e, rest;
	int err;

	if (which < 0 || f->nst != 1 || !zrfile_npy_ragged(f->st))
		return -EINVAL;
	f->form = flat[which].family;
	f->only = flat[which].only;
	is_packed = f->form == ZRFILE_PACKED;
	err = read_shapes(f, known);
	for (uint64_t k = 0; !err && k < f->count; k++) {
		const uint64_t *sh = f->shapes + k * f->rndim;

		err = is_packed ? product(sh, f->rndim, &e) : 0;
		if (!err && (is_packed ? e > UINT64_MAX - f->elems : 0))
			err = ZR_E_TOOBIG;
		if (!err && is_packed)
			f->elems += e;
	}
	if (!err && !is_packed && f->count) {
		err = product(f->shapes + 1, f->rndim - 1, &rest);
		if (!err)
			err = zrfile_npy_add_product(&e, 0, f->count,
						     f->longest);
		if (!err)
			err = zrfile_npy_add_product(&f->elems, 0, e, rest);
	}
	if (err)
		return err;
	f->nparts = is_packed ? 3 : 2;
	f->part = calloc(f->nparts, sizeof(*f->part));
	if (!f->part)
		return -ENOMEM;
	for (size_t i = 0; i < f->nparts; i++)
		f->part[i].name = is_packed ? packed[i] : padded[i];
	err = member_sizes(f);
	if (!err)
		err = layout(f);
	return err ? err : plan_slack(f);
}

int zrfile_plan_flat(zrfile_npy *f)
{
	return plan_flat(f, 0);
}

uint64_t *zrfile_npy_take_shapes(zrfile_npy *f, uint32_t *rndim)
{
	uint64_t *shapes = f->shapes;

	*rndim = f->rndim;
	f->shapes = NULL;
	return shapes;
}

int zrfile_npy_plan_known(zrfile_npy *f, int form,
			  const zrfile_source *st, const uint64_t *idx,
			  uint64_t count, uint64_t *shapes, uint32_t rndim)
{
	zrfile_npy_init(f, form, st, 1, idx, count);
	f->shapes = shapes;
	f->rndim = rndim;
	if (!idx || !shapes || flat_entry(form) < 0)
		return -EINVAL;
	return plan_flat(f, 1);
}

int zrfile_npy_plan_gathered(zrfile_npy *f, int form,
			     const zrfile_source *st, const uint64_t *idx,
			     uint64_t count, const char *recs,
			     const uint64_t *off)
{
	zrfile_npy_init(f, form, st, 1, idx, count);
	if (!idx || !recs || !off || !count || flat_entry(form) < 0 ||
	    !zrfile_npy_ragged(st))
		return -EINVAL;
	f->recs = recs;
	f->roff = off;
	/* shapes from the records' prefixes */
	return plan_flat(f, 0);
}

/* -- filling ------------------------------------------------------------ */

/* An int64 member: np.save's header, then the values from val(f, j). */
static int fill_meta(const zrfile_npy *f, size_t i, char *buf)
{
	const zrfile_npz_member *m = &f->part[i];
	uint64_t shape[2], pos = 0;
	uint32_t ndim = meta_shape(f, i, shape);
	char *dst = buf + m->offset;
	size_t h;
	int err = zr_npy_write_header(zrfile_npy_int64(), ndim, shape, dst,
				      m->size, &h);

	for (uint64_t k = 0; !err && k < f->count; k++) {
		const uint64_t *sh = f->shapes + k * f->rndim;
		uint64_t e;

		if (f->form == ZRFILE_PADDED) {
			zrfile_npy_put_i64(dst + h + 8 * k, sh[0]);
		} else if (i == 1) {
			zrfile_npy_put_i64(dst + h + 8 * k, pos);
			product(sh, f->rndim, &e);
			pos += e;
		} else {
			for (uint32_t d = 0; d < f->rndim; d++)
				zrfile_npy_put_i64(dst + h + 8 *
						   (k * f->rndim + d), sh[d]);
		}
	}
	if (!err && f->form == ZRFILE_PACKED && i == 1)
		zrfile_npy_put_i64(dst + h + 8 * f->count, pos);
	return err;
}

/* Places the gathered records (off[] in tmp) in data.npy's array at dst
 * through the library's packed and padded forms (ragged_forms.c), the
 * ones loaderx's gather(form=) returns: packed one after the other, or
 * padded with zeros to row k of a (B, longest, ...) array.  -ESTALE if a
 * record's shape is no longer the planned one.  Packed, tmp may be dst
 * itself (records move down over their prefixes); padded, they are packed
 * at dst, then padded there in place. */
static int place(const zrfile_npy *f, const char *tmp, const uint64_t *off,
		 char *dst)
{
	size_t isz = zr_store_schema(f->st->zs)->dtype.itemsize;
	size_t cap = (size_t)(f->elems * isz), n = f->count * f->rndim;
	uint64_t *shapes = malloc((n ? n : 1) * sizeof(*shapes));
	uint64_t *packed = malloc((f->count + 1) * sizeof(*packed));
	uint64_t padded[ZR_MAX_NDIM];
	int err = shapes && packed ? 0 : -ENOMEM;

	if (!err)
		err = zr_ragged_pack_into(tmp, off, f->count, isz, f->rndim,
					  dst, cap, shapes, packed);
	if (err == ZR_E_SHAPE || err == -EINVAL ||
	    (!err && memcmp(shapes, f->shapes, n * sizeof(*shapes))))
		err = -ESTALE; /* another ndim, another shape, grown */
	if (!err && f->form == ZRFILE_PADDED && f->count) {
		padded[0] = f->longest;
		memcpy(padded + 1, f->shapes + 1,
		       (f->rndim - 1) * sizeof(*padded));
		err = zr_ragged_pad(dst, packed, f->count, isz, f->rndim,
				    f->shapes, padded, NULL, dst, cap);
	}
	free(shapes);
	free(packed);
	return err;
}

/* Where fill_data gathers the records (the plan's slack makes room): a
 * packed file in place, at its data, since a buffer of the batch's size
 * costs more in page faults than the gather; padded, behind the file. */
static char *gather_space(const zrfile_npy *f, char *buf, char *data)
{
	return f->form == ZRFILE_PACKED ? data : buf + f->total;
}

/* data.npy: its header, then the records gathered and placed. */
static int fill_data(const zrfile_npy *f, char *buf)
{
	const zr_dtype *dt = &zr_store_schema(f->st->zs)->dtype;
	const zrfile_npz_member *m = &f->part[0];
	uint64_t shape[ZR_MAX_NDIM + 1], *off;
	uint32_t ndim = data_shape(f, shape);
	char *data, *tmp;
	size_t h;
	int err = zr_npy_write_header(dt, ndim, shape, buf + m->offset,
				      m->size, &h);

	data = buf + m->offset + h;
	if (!err && f->recs)
		return place(f, f->recs, f->roff, data);
	if (err)
		return err;
	tmp = gather_space(f, buf, data);
	off = malloc((f->count + 1) * sizeof(*off));
	if (!off)
		return -ENOMEM;
	/* bounded by the room the plan made: records grown since fail the
	 * gather, and place() refuses any other change (-ESTALE) */
	err = zrfile_source_gather(f->st, f->idx, f->count, tmp,
				   (size_t)(buf + f->total + f->slack - tmp),
				   off);
	if (!err)
		err = place(f, tmp, off, data);
	free(off);
	return err;
}

/* A part without data (offsets, shapes, lengths) gathers no record to
 * check its shape against: each planned shape must give the record's
 * stored length (its prefix and payload), read from the table, or the
 * plan is stale (-ESTALE). */
static int check_lengths(const zrfile_npy *f)
{
	size_t isz = zr_store_schema(f->st->zs)->dtype.itemsize;

	for (uint64_t k = 0; k < f->count; k++) {
		uint64_t e, len;
		int err = zrfile_source_gather_size(f->st, f->idx + k, 1, &len);

		if (err)
			return err;
		if (product(f->shapes + k * f->rndim, f->rndim, &e) ||
		    e > (UINT64_MAX - 8 - 8 * f->rndim) / isz ||
		    len != 8 + 8 * f->rndim + e * isz)
			return -ESTALE;
	}
	return 0;
}

int zrfile_fill_flat(const zrfile_npy *f, char *buf)
{
	int err = f->only > 1 ? check_lengths(f) : 0;

	/* data first: a packed one is gathered over the members after it */
	for (size_t i = 0; !err && i < f->nparts; i++)
		if (!f->only || (size_t)f->only == i + 1)
			err = i ? fill_meta(f, i, buf) : fill_data(f, buf);
	if (err || f->only)
		return err;
	return zrfile_npz_finish(buf, f->total, f->part, f->nparts);
}
