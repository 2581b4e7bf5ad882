/*
 * form_png.c - a store record as a PNG file (see form_png.h): the
 * image shape comes from the schema or the record's shape prefix, so
 * sizing a file decodes nothing; filling gathers the record and encodes
 * it (png.c).
 */
#include <errno.h>
#include <stdlib.h>

#include "form_png.h"
#include "npy_parts.h"

int zrfile_record_png_plan(const zrfile_source *s, uint64_t idx,
			   zrfile_png *img)
{
	const zr_schema *sc = zr_store_schema(s->zs);
	uint64_t shape[ZR_MAX_NDIM];
	uint32_t ndim;
	int err;

	if (!sc->ragged)
		return zrfile_png_shape(&sc->dtype, sc->ndim, sc->shape, img);
	err = zrfile_source_shape(s, idx, &ndim, shape);
	return err ? err : zrfile_png_shape(&sc->dtype, ndim, shape, img);
}

static int same_image(const zrfile_png *a, const zrfile_png *b)
{
	return a->height == b->height && a->width == b->width &&
	       a->channels == b->channels && a->planar == b->planar;
}

int zrfile_record_png_fill(const zrfile_source *s, uint64_t idx,
			   const zrfile_png *img, void *out)
{
	const zr_schema *sc = zr_store_schema(s->zs);
	uint64_t size, off[2], shape[ZR_MAX_NDIM];
	size_t payload = 0;
	uint32_t ndim;
	zrfile_png now;
	void *rec;
	int err;

	size = zr_store_row_bytes(s->zs);
	err = sc->ragged ? zrfile_source_gather_size(s, &idx, 1, &size) : 0;
	if (err)
		return err;
	rec = malloc(size ? size : 1);
	if (!rec)
		return -ENOMEM;
	err = zrfile_source_gather(s, &idx, 1, rec, size, off);
	if (!err && sc->ragged)
		err = zr_ragged_parse(rec, size, 1, &ndim, shape, &payload);
	if (!err && sc->ragged)
		err = zrfile_png_shape(&sc->dtype, ndim, shape, &now);
	else if (!err)
		now = *img;
	if (!err && !same_image(&now, img))
		err = -ESTALE;
	if (!err)
		zrfile_png_encode(img, (const char *)rec + payload, out);
	free(rec);
	return err;
}

/* The PNG form in the table of forms (npy_parts.h): record idx[0]. */
int zrfile_plan_png(zrfile_npy *f)
{
	int err;

	f->total = 0;
	if (f->nst != 1 || f->count != 1)
		return -EINVAL;
	err = zrfile_record_png_plan(f->st, f->idx[0], &f->png);
	if (!err)
		f->total = zrfile_png_size(&f->png);
	return err;
}

int zrfile_fill_png(const zrfile_npy *f, char *buf)
{
	return zrfile_record_png_fill(f->st, f->idx[0], &f->png, buf);
}
