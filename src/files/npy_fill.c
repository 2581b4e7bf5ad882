/*
 * npy_fill.c - fills a planned NumPy file (see npy_file.h): records are
 * gathered straight into their planned places, then the headers and the
 * .npz structure are written around them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "npy_file_impl.h"
#include "npy_mix.h"

/* np.save's header of a dense part at dst (size bytes); *h its length. */
static int dense_header(const zrfile_npy *f, const zrfile_source *s,
			char *dst, uint64_t size, size_t *h)
{
	const zr_dtype *dt = &zr_store_schema(s->zs)->dtype;
	uint64_t shape[ZR_MAX_NDIM];
	uint32_t ndim;
	int err = zrfile_nf_dense_shape(f, s, shape, &ndim);

	return err ? err : zr_npy_write_header(dt, ndim, shape, dst, size, h);
}

/* A dense part at dst (size bytes): np.save's header, then the rows. */
static int fill_dense(const zrfile_npy *f, const zrfile_source *s,
		      char *dst, uint64_t size)
{
	size_t h;
	int err = dense_header(f, s, dst, size, &h);

	return err ? err : zr_stream_gather(s, f->idx, f->count, dst + h,
					    size - h, NULL);
}

uint64_t zrfile_npy_rows_at(const zrfile_npy *f, uint64_t *row)
{
	if (f->form != ZRFILE_STACK)
		return 0;
	*row = zr_store_row_bytes(f->st->zs);
	return f->total - f->count * *row;
}

int zrfile_npy_fill_head(const zrfile_npy *f, void *dst)
{
	uint64_t row, h = zrfile_npy_rows_at(f, &row);
	size_t hw;

	if (!h || !dst)
		return -EINVAL;
	return dense_header(f, f->st, dst, h, &hw);
}

int zrfile_npy_fill_piece(const zrfile_npy *f, void *dst, uint64_t first,
			  uint64_t n)
{
	uint64_t row;

	if (!zrfile_npy_rows_at(f, &row) || !f->idx || !dst ||
	    first > f->count || n > f->count - first)
		return -EINVAL;
	return zr_stream_gather(f->st, f->idx + first, n, dst, n * row, NULL);
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

/* Turns the ragged record at dst + H (logic bytes, shape prefix first)
 * into a .npy at dst: the header is widened by the prefix's length so it
 * ends where the payload starts. */
static int ragged_header(const zr_dtype *dt, char *dst, size_t H,
			 size_t logic)
{
	uint64_t shape[ZR_MAX_NDIM];
	uint32_t ndim;
	size_t poff;
	int err = zr_ragged_parse(dst + H, logic, dt->itemsize, &ndim, shape,
				  &poff);

	return err ? err : zr_npy_write_header_fixed(dt, ndim, shape, H + poff,
						     dst, H + poff);
}

/* Moves the records gathered packed at off[] from base to their parts m[]
 * behind their headers, last first: each only moves forward, past the
 * records still packed before it. */
static int place_ragged(const zrfile_source *s, const zrfile_npz_member *m,
			size_t n, const uint64_t *off, char *buf, char *base)
{
	const zr_dtype *dt = &zr_store_schema(s->zs)->dtype;
	int err = 0;

	for (size_t k = n; !err && k-- > 0;) {
		uint64_t logic = off[k + 1] - off[k], size;
		size_t H;

		err = zrfile_nf_ragged_size(s, logic, &size, &H);
		if (!err && size != m[k].size)
			err = -ESTALE; /* the record changed since the plan */
		if (err)
			break;
		memmove(buf + m[k].offset + H, base + off[k], logic);
		err = ragged_header(dt, buf + m[k].offset, H, logic);
	}
	return err;
}

/* Ragged records idx[0..n) into their parts m[0..n), which follow each
 * other in buf: gathered packed at the first part, then placed. */
static int fill_ragged(const zrfile_source *s, const uint64_t *idx,
		       size_t n, const zrfile_npz_member *m, char *buf)
{
	uint64_t *off = malloc((n + 1) * sizeof(*off));
	char *base = buf + m[0].offset;
	int err;

	if (!off)
		return -ENOMEM;
	err = zr_stream_gather(s, idx, n, base, m[n - 1].offset +
			       m[n - 1].size - m[0].offset, off);
	if (!err)
		err = place_ragged(s, m, n, off, buf, base);
	free(off);
	return err;
}

/* One stream's parts, from m on. */
static int fill_stream(const zrfile_npy *f, const zrfile_source *s,
		       const zrfile_npz_member *m, char *buf)
{
	if (zrfile_nf_ragged(s))
		return fill_ragged(s, f->idx, f->count, m, buf);
	return fill_dense(f, s, buf + m->offset, m->size);
}

static void put_i64(char *dst, uint64_t v)
{
	for (int b = 0; b < 8; b++)
		dst[b] = (char)(v >> (8 * b));
}

/* A store's indices, or a mixture's keys as (source, index) pairs. */
static int fill_indices(const zrfile_npy *f, char *buf)
{
	int pairs = zrfile_nf_pairs(f);
	uint64_t shape[2] = { f->count, 2 };
	size_t h;
	int err = zr_npy_write_header(zrfile_nf_int64(), 1 + pairs, shape, buf,
				      f->total, &h);

	for (uint64_t k = 0; !err && k < f->count; k++) {
		if (!pairs) {
			put_i64(buf + h + 8 * k, f->idx[k]);
			continue;
		}
		put_i64(buf + h + 16 * k, ZRFILE_MIX_SRC(f->idx[k]));
		put_i64(buf + h + 16 * k + 8, ZRFILE_MIX_IDX(f->idx[k]));
	}
	return err;
}

static int fill_npz(const zrfile_npy *f, char *buf)
{
	const zrfile_npz_member *m = f->part;
	int err = 0;

	for (size_t i = 0; i < f->nst && !err; i++) {
		err = fill_stream(f, &f->st[i], m, buf);
		m += zrfile_nf_stream_parts(f, &f->st[i]);
	}
	return err ? err : zrfile_npz_finish(buf, f->total, f->part, f->nparts);
}

int zrfile_npy_fill(const zrfile_npy *f, void *buf)
{
	if (!f->idx || !buf)
		return -EINVAL; /* planned for its size only */
	switch (f->form) {
	case ZRFILE_INDICES:
		return fill_indices(f, buf);
	case ZRFILE_NPZ:
		return fill_npz(f, buf);
	case ZRFILE_PACKED:
	case ZRFILE_PADDED: /* or one of their parts (f->only) */
		return zrfile_nf_fill_flat(f, buf);
	default:
		return fill_stream(f, f->st, &f->one, buf);
	}
}
