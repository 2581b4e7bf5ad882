/*
 * form_npy.c - the .npy forms of records (see encoder.h): one record's
 * file (ZRFILE_RECORD: records/I.npy) and a dense batch's (B,
 * *item_shape) stack (ZRFILE_STACK), which fills whole or in pieces of
 * rows, as a decoded image batch does (ZRFILE_IMAGES, form_image.c).
 */
#include <errno.h>

#include "npy_parts.h"

/* Record idx[0]'s .npy; its table entry must exist and be valid. */
static int record_file_size(const zrfile_npy *f, uint64_t *size)
{
	const zrfile_source *s = f->st;
	zr_loc loc;
	int err;

	if (f->count != 1)
		return -EINVAL;
	if (zrfile_npy_ragged(s))
		return zrfile_npy_record_size(s, f->idx[0], size);
	err = zrfile_source_loc(s, f->idx[0], &loc);
	return err ? err : zrfile_npy_dense_size(f, s, size);
}

/* The one part of a .npy file, at offset 0: its total. */
static int one_part(zrfile_npy *f, int err)
{
	f->total = err ? 0 : f->one.size;
	return err;
}

int zrfile_plan_record(zrfile_npy *f)
{
	f->nparts = 1;
	if (f->nst != 1)
		return -EINVAL;
	return one_part(f, record_file_size(f, &f->one.size));
}

int zrfile_plan_stack(zrfile_npy *f)
{
	f->nparts = 1;
	if (f->nst != 1 || zrfile_npy_ragged(f->st))
		return -EINVAL;
	return one_part(f, zrfile_npy_dense_size(f, f->st, &f->one.size));
}

/* Both forms: the one part (a ragged record's or dense rows). */
int zrfile_fill_npy(const zrfile_npy *f, char *buf)
{
	return zrfile_npy_fill_stream(f, f->st, &f->one, buf);
}

uint64_t zrfile_npy_rows_at(const zrfile_npy *f, uint64_t *row)
{
	if (f->form == ZRFILE_IMAGES)
		*row = zrfile_image_row(f);
	else if (f->form == ZRFILE_STACK)
		*row = zr_store_row_bytes(f->st->zs);
	else
		return 0;
	return f->total - f->count * *row;
}

int zrfile_npy_fill_head(const zrfile_npy *f, void *dst)
{
	uint64_t row, h = zrfile_npy_rows_at(f, &row);
	size_t hw;

	if (!h || !dst)
		return -EINVAL;
	if (f->form == ZRFILE_IMAGES)
		return zrfile_image_head(f, dst, h);
	return zrfile_npy_dense_header(f, f->st, dst, h, &hw);
}

int zrfile_npy_fill_piece(const zrfile_npy *f, void *dst, uint64_t first,
			  uint64_t n)
{
	uint64_t row;

	if (!zrfile_npy_rows_at(f, &row) || !f->idx || !dst ||
	    first > f->count || n > f->count - first)
		return -EINVAL;
	if (f->form == ZRFILE_IMAGES)
		return zrfile_image_piece(f, dst, first, n);
	return zrfile_source_gather(f->st, f->idx + first, n, dst, n * row,
				    NULL);
}

int zrfile_npy_fill_rows(const zrfile_npy *f, void *buf, uint64_t first,
			 uint64_t n)
{
	uint64_t row, h = zrfile_npy_rows_at(f, &row);
	int err = 0;

	if (!h || !buf)
		return -EINVAL;
	if (first == 0)
		err = zrfile_npy_fill_head(f, buf);
	return err ? err : zrfile_npy_fill_piece(f, (char *)buf + h +
						 first * row, first, n);
}
