/*
 * form_image.c - the files of an encoded-image store (zr_store_images):
 * a record decoded whole as (H, W, 3) uint8 .npy and as PNG, its stored
 * bytes under the suffix of their format, and a batch decoded under a
 * transform as one (B, S, S, 3) uint8 .npy.  The decoding is the
 * library's (zr_view_gather_images), so these are the bytes `zrecord get
 * --decode` and `zrecord batch --decode/--augment` write.  A decoded
 * file's size needs only the image's header (zr_view_image_shape) or,
 * for a batch, the transform's output size: nothing is decoded to size
 * one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "npy_parts.h"

/* The .npy header of a uint8 array of shape[0..ndim) at dst (cap bytes;
 * NULL: only its length into *hl). */
static int u1_header(uint32_t ndim, const uint64_t *shape, char *dst,
		     size_t cap, size_t *hl)
{
	zr_dtype u1;
	int err = zr_dtype_parse("|u1", &u1);

	if (err)
		return err;
	if (!dst) {
		*hl = zr_npy_header_len(&u1, ndim, shape);
		return 0;
	}
	return zr_npy_write_header(&u1, ndim, shape, dst, cap, hl);
}

/* The decoded file's shape: one record's (H, W, 3), a batch's (B, S, S,
 * 3). */
static uint32_t image_shape(const zrfile_npy *f, uint64_t *shape)
{
	uint32_t n = 0;

	if (f->form == ZRFILE_IMAGES)
		shape[n++] = f->count;
	shape[n++] = f->img_h;
	shape[n++] = f->img_w;
	shape[n++] = 3;
	return n;
}

/* f->total: the header and the pixels of f->count records (one for a
 * record's file) of img_h x img_w. */
static int size_decoded(zrfile_npy *f)
{
	uint64_t shape[4], px = (uint64_t)f->img_h * f->img_w * 3;
	uint32_t ndim = image_shape(f, shape);
	size_t hl;
	int err = u1_header(ndim, shape, NULL, 0, &hl);

	return err ? err : zrfile_npy_add_product(&f->total, hl, px,
						  ndim == 4 ? f->count : 1);
}

/* A record's file (IMAGE, IMAGE_PNG): its image's H and W, read from
 * the record's header. */
static int record_shape(zrfile_npy *f)
{
	if (f->nst != 1 || f->count != 1)
		return -EINVAL;
	return zrfile_source_image_shape(f->st, f->idx[0], &f->img,
					 &f->img_h, &f->img_w);
}

int zrfile_plan_image(zrfile_npy *f)
{
	int err = record_shape(f);

	return err ? err : size_decoded(f);
}

/* IMAGES: S x S from the transform alone (RRC without a size is the
 * library's 224); a batch of whole images of their own sizes is no
 * array. */
int zrfile_plan_images(zrfile_npy *f)
{
	uint32_t s = f->img.size;

	if (f->nst != 1 || (!s && !(f->img.flags & ZR_IMAGE_RRC)))
		return -EINVAL;
	f->img_h = f->img_w = s ? s : 224;
	return size_decoded(f);
}

/* IMAGE and IMAGES: the header, then the records decoded in place (a
 * record at its own shape, which the gather checks: ZR_E_SHAPE). */
int zrfile_fill_image(const zrfile_npy *f, char *buf)
{
	uint64_t shape[4], px[2] = { 0, (uint64_t)f->img_h * f->img_w * 3 };
	uint32_t ndim = image_shape(f, shape);
	size_t hl;
	int err = u1_header(ndim, shape, buf, f->total, &hl);

	if (err)
		return err;
	return zrfile_source_gather_images(f->st, f->idx, f->count, &f->img,
					   buf + hl, f->total - hl,
					   ndim == 4 ? NULL : px);
}

/* A batch in pieces: record first's crop is drawn at the batch's
 * position + first, as in the whole file. */
uint64_t zrfile_image_row(const zrfile_npy *f)
{
	return (uint64_t)f->img_h * f->img_w * 3;
}

int zrfile_image_head(const zrfile_npy *f, char *dst, uint64_t h)
{
	uint64_t shape[4];
	uint32_t ndim = image_shape(f, shape);
	size_t hl;

	return u1_header(ndim, shape, dst, h, &hl);
}

int zrfile_image_piece(const zrfile_npy *f, char *dst, uint64_t first,
		       uint64_t n)
{
	zr_image_opts o = f->img;

	o.position += first;
	return zrfile_source_gather_images(f->st, f->idx + first, n, &o, dst,
					   n * zrfile_image_row(f), NULL);
}

int zrfile_plan_image_png(zrfile_npy *f)
{
	int err = record_shape(f);

	if (err)
		return err;
	f->png = (zrfile_png){ .height = f->img_h, .width = f->img_w,
			       .channels = 3 };
	f->total = zrfile_png_size(&f->png);
	return 0;
}

int zrfile_fill_image_png(const zrfile_npy *f, char *buf)
{
	uint64_t px[2] = { 0, (uint64_t)f->img_h * f->img_w * 3 };
	void *rgb = px[1] <= SIZE_MAX ? malloc(px[1]) : NULL;
	int err;

	if (!rgb)
		return -ENOMEM;
	err = zrfile_source_gather_images(f->st, f->idx, 1, &f->img, rgb,
					  px[1], px);
	if (!err)
		zrfile_png_encode(&f->png, rgb, buf);
	free(rgb);
	return err;
}

/* -- the stored bytes --------------------------------------------------- */

static int format_of(int form)
{
	switch (form) {
	case ZRFILE_STORED_JPEG:
		return ZR_IMAGE_FORMAT_JPEG;
	case ZRFILE_STORED_PNG:
		return ZR_IMAGE_FORMAT_PNG;
	default:
		return ZR_IMAGE_FORMAT_WEBP;
	}
}

/* Record idx[0] gathered into *rec (the caller frees it), its file's
 * bytes at *rec + *at, *n of them; ZR_E_DTYPE unless they are of the
 * form's format (that record has no file of this suffix). */
static int stored(const zrfile_npy *f, char **rec, size_t *at, uint64_t *n)
{
	uint64_t size, off[2], shape[ZR_MAX_NDIM];
	uint32_t ndim;
	int err;

	*rec = NULL;
	if (f->nst != 1 || f->count != 1)
		return -EINVAL;
	err = zrfile_source_gather_size(f->st, f->idx, 1, &size);
	if (err)
		return err;
	*rec = size < SIZE_MAX ? malloc(size ? size : 1) : NULL;
	if (!*rec)
		return -ENOMEM;
	err = zrfile_source_gather(f->st, f->idx, 1, *rec, size, off);
	if (!err)
		err = zr_ragged_parse(*rec, size, 1, &ndim, shape, at);
	if (err)
		return err;
	*n = size - *at;
	if (zr_image_format(*rec + *at, *n) != format_of(f->form))
		return ZR_E_DTYPE;
	return 0;
}

int zrfile_plan_stored(zrfile_npy *f)
{
	char *rec;
	size_t at;
	int err = stored(f, &rec, &at, &f->total);

	free(rec);
	return err;
}

int zrfile_fill_stored(const zrfile_npy *f, char *buf)
{
	char *rec;
	size_t at;
	uint64_t n;
	int err = stored(f, &rec, &at, &n);

	if (!err && n != f->total)
		err = -ESTALE;
	if (!err)
		memcpy(buf, rec + at, n);
	free(rec);
	return err;
}

int zrfile_npy_plan_images(zrfile_npy *f, int form,
			   const zrfile_source *st, const uint64_t *idx,
			   uint64_t count, const zr_image_opts *o)
{
	zrfile_npy_init(f, form, st, 1, idx, count);
	f->img = *o;
	return form == ZRFILE_IMAGES ? zrfile_plan_images(f) : -EINVAL;
}
