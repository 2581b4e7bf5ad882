/*
 * npy_parts.c - the parts every form of the encoder is made of (see
 * npy_parts.h): a dense part's or a ragged record's .npy, sized from the
 * schema and the record table and filled by one gather, and the plan's
 * start and end.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "npy_parts.h"

int zrfile_npy_ragged(const zrfile_source *s)
{
	return zr_store_schema(s->zs)->ragged;
}

int zrfile_npy_dense_shape(const zrfile_npy *f, const zrfile_source *s,
			   uint64_t shape[ZR_MAX_NDIM], uint32_t *ndim)
{
	const zr_schema *sc = zr_store_schema(s->zs);
	int lead = f->form != ZRFILE_RECORD;

	if (sc->ndim + lead > ZR_MAX_NDIM)
		return ZR_E_SHAPE; /* a batch of rank-32 records has rank 33 */
	shape[0] = f->count;
	memcpy(shape + lead, sc->shape, sc->ndim * sizeof(*shape));
	*ndim = sc->ndim + lead;
	return 0;
}

int zrfile_npy_add_product(uint64_t *size, uint64_t a, uint64_t b, uint64_t c)
{
	if (c && b > (UINT64_MAX - a) / c)
		return ZR_E_TOOBIG;
	*size = a + b * c;
	return 0;
}

int zrfile_npy_dense_size(const zrfile_npy *f, const zrfile_source *s,
		      uint64_t *size)
{
	uint64_t shape[ZR_MAX_NDIM];
	uint32_t ndim;
	const zr_schema *sc = zr_store_schema(s->zs);
	int err = zrfile_npy_dense_shape(f, s, shape, &ndim);

	if (err)
		return err;
	return zrfile_npy_add_product(size, zr_npy_header_len(&sc->dtype,
								ndim, shape),
				      f->count, zr_store_row_bytes(s->zs));
}

int zrfile_npy_ragged_size(const zrfile_source *s, uint64_t logic,
			   uint64_t *size, size_t *H)
{
	*H = zr_npy_ragged_header_len(&zr_store_schema(s->zs)->dtype, logic);
	if (!*H)
		return ZR_E_CORRUPT;
	*size = *H + logic;
	return 0;
}

/* The size of ragged record idx's .npy, from its table entry. */
int zrfile_npy_record_size(const zrfile_source *s, uint64_t idx,
		       uint64_t *size)
{
	zr_loc loc;
	size_t H;
	int err = zrfile_source_loc(s, idx, &loc);

	return err ? err : zrfile_npy_ragged_size(s, loc.logic_length, size,
						  &H);
}

const zr_dtype *zrfile_npy_int64(void)
{
	static const zr_dtype i8 = { "<i8", 'i', '<', 8 };

	return &i8;
}

void zrfile_npy_init(zrfile_npy *f, int form, const zrfile_source *st,
		      size_t nst, const uint64_t *idx, uint64_t count)
{
	memset(f, 0, sizeof(*f));
	f->form = form;
	f->st = st;
	f->nst = nst;
	f->idx = idx;
	f->count = count;
}

void zrfile_npy_free(zrfile_npy *f)
{
	free(f->part);
	free(f->names);
	free(f->shapes);
	memset(f, 0, sizeof(*f));
}

uint64_t zrfile_npy_default_max(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	uint64_t eighth = pages > 0 && psize > 0 ?
			  (uint64_t)pages * (uint64_t)psize / 8 : 0;

	return eighth && eighth < (1ull << 30) ? eighth : 1ull << 30;
}

/* np.save's header of a dense part at dst (size bytes); *h its length. */
int zrfile_npy_dense_header(const zrfile_npy *f, const zrfile_source *s,
			char *dst, uint64_t size, size_t *h)
{
	const zr_dtype *dt = &zr_store_schema(s->zs)->dtype;
	uint64_t shape[ZR_MAX_NDIM];
	uint32_t ndim;
	int err = zrfile_npy_dense_shape(f, s, shape, &ndim);

	return err ? err : zr_npy_write_header(dt, ndim, shape, dst, size, h);
}

/* A dense part at dst (size bytes): np.save's header, then the rows. */
static int fill_dense(const zrfile_npy *f, const zrfile_source *s,
		      char *dst, uint64_t size)
{
	size_t h;
	int err = zrfile_npy_dense_header(f, s, dst, size, &h);

	return err ? err : zrfile_source_gather(s, f->idx, f->count, dst + h,
						size - h, NULL);
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

		err = zrfile_npy_ragged_size(s, logic, &size, &H);
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
	err = zrfile_source_gather(s, idx, n, base, m[n - 1].offset +
				   m[n - 1].size - m[0].offset, off);
	if (!err)
		err = place_ragged(s, m, n, off, buf, base);
	free(off);
	return err;
}

/* One stream's parts, from m on. */
int zrfile_npy_fill_stream(const zrfile_npy *f, const zrfile_source *s,
		       const zrfile_npz_member *m, char *buf)
{
	if (zrfile_npy_ragged(s))
		return fill_ragged(s, f->idx, f->count, m, buf);
	return fill_dense(f, s, buf + m->offset, m->size);
}

void zrfile_npy_put_i64(char *dst, uint64_t v)
{
	for (int b = 0; b < 8; b++)
		dst[b] = (char)(v >> (8 * b));
}
