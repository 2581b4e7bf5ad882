/*
 * npy_plan.c - plans a NumPy file of records (see npy_file.h): every part's
 * size from the schema and the record table, the .npz layout around them.
 * Filling is in npy_fill.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "npy_file_impl.h"

#define INDEX_NAME_MAX 20 /* digits of the largest k */

int zrfile_nf_ragged(const zrfile_source *s)
{
	return zr_store_schema(s->zs)->ragged;
}

int zrfile_nf_dense_shape(const zrfile_npy *f, const zrfile_source *s,
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

int zrfile_nf_add_product(uint64_t *size, uint64_t a, uint64_t b, uint64_t c)
{
	if (c && b > (UINT64_MAX - a) / c)
		return ZR_E_TOOBIG;
	*size = a + b * c;
	return 0;
}

static int dense_size(const zrfile_npy *f, const zrfile_source *s,
		      uint64_t *size)
{
	uint64_t shape[ZR_MAX_NDIM];
	uint32_t ndim;
	const zr_schema *sc = zr_store_schema(s->zs);
	int err = zrfile_nf_dense_shape(f, s, shape, &ndim);

	if (err)
		return err;
	return zrfile_nf_add_product(size,
				     zr_npy_header_len(&sc->dtype, ndim, shape),
				     f->count, zr_store_row_bytes(s->zs));
}

int zrfile_nf_ragged_size(const zrfile_source *s, uint64_t logic,
		       uint64_t *size, size_t *H)
{
	*H = zr_npy_ragged_header_len(&zr_store_schema(s->zs)->dtype, logic);
	if (!*H)
		return ZR_E_CORRUPT;
	*size = *H + logic;
	return 0;
}

/* The size of ragged record idx's .npy, from its table entry. */
static int record_size(const zrfile_source *s, uint64_t idx,
		       uint64_t *size)
{
	zr_loc loc;
	size_t H;
	int err = zr_stream_loc(s, idx, &loc);

	return err ? err : zrfile_nf_ragged_size(s, loc.logic_length, size, &H);
}

int zrfile_npy_needs_records(int form, const zrfile_source *st,
			     size_t nst)
{
	if (form == ZRFILE_RECORD || zrfile_npy_flat(form))
		return 1;
	for (size_t i = 0; form == ZRFILE_NPZ && i < nst; i++)
		if (zrfile_nf_ragged(&st[i]))
			return 1;
	return 0;
}

size_t zrfile_nf_stream_parts(const zrfile_npy *f, const zrfile_source *s)
{
	return zrfile_nf_ragged(s) ? f->count : 1;
}

/* Member count and an upper bound of the name bytes of an .npz. */
static int count_members(const zrfile_npy *f, size_t *n, size_t *bytes)
{
	*n = *bytes = 0;
	for (size_t i = 0; i < f->nst; i++) {
		const char *name = f->st[i].name;
		size_t parts = zrfile_nf_stream_parts(f, &f->st[i]);
		size_t len = (name ? strlen(name) + 1 : 4) + INDEX_NAME_MAX +
			     sizeof(".npy");

		if (parts > ZRFILE_NPZ_MEMBERS_MAX - *n)
			return ZR_E_TOOBIG; /* before allocating for them */
		*n += parts;
		*bytes += parts * len;
	}
	return 0;
}

/* Names and sizes of one stream's members, from f->part[f->nparts]. */
static int stream_members(zrfile_npy *f, const zrfile_source *s,
			  char **names)
{
	const char *name = s->name;
	int err = 0;

	if (!zrfile_nf_ragged(s)) {
		zrfile_npz_member *m = &f->part[f->nparts++];

		m->name = *names;
		*names += sprintf(*names, "%s.npy", name ? name : "arr_0") + 1;
		return dense_size(f, s, &m->size);
	}
	for (uint64_t k = 0; k < f->count && !err; k++) {
		zrfile_npz_member *m = &f->part[f->nparts++];

		m->name = *names;
		if (name)
			*names += sprintf(*names, "%s/%llu.npy", name,
					  (unsigned long long)k) + 1;
		else
			*names += sprintf(*names, "arr_%llu.npy",
					  (unsigned long long)k) + 1;
		err = record_size(s, f->idx[k], &m->size);
	}
	return err;
}

static int plan_npz(zrfile_npy *f)
{
	size_t n, bytes;
	char *names;
	int err = count_members(f, &n, &bytes);

	if (err)
		return err;
	f->part = calloc(n ? n : 1, sizeof(*f->part));
	f->names = names = malloc(bytes ? bytes : 1);
	if (!f->part || !names)
		return -ENOMEM;
	for (size_t i = 0; i < f->nst && !err; i++)
		err = stream_members(f, &f->st[i], &names);
	return err ? err : zrfile_npz_layout(f->part, f->nparts, &f->total);
}

int zrfile_nf_pairs(const zrfile_npy *f)
{
	return f->nst && f->st[0].mix;
}

const zr_dtype *zrfile_nf_int64(void)
{
	static const zr_dtype i8 = { "<i8", 'i', '<', 8 };

	return &i8;
}

/* Record idx[0]'s .npy; its table entry must exist and be valid. */
static int record_file_size(const zrfile_npy *f, uint64_t *size)
{
	const zrfile_source *s = f->st;
	zr_loc loc;
	int err;

	if (f->count != 1)
		return -EINVAL;
	if (zrfile_nf_ragged(s))
		return record_size(s, f->idx[0], size);
	err = zr_stream_loc(s, f->idx[0], &loc);
	return err ? err : dense_size(f, s, size);
}

/* The one part of a .npy file, at offset 0. */
static int plan_npy(zrfile_npy *f)
{
	uint64_t pairs[2] = { f->count, 2 };

	f->nparts = 1;
	if (f->form == ZRFILE_INDICES) /* a mixture's: (source, index) */
		return zrfile_nf_add_product(&f->one.size,
				   zr_npy_header_len(zrfile_nf_int64(),
						     zrfile_nf_pairs(f) + 1,
						     pairs), f->count,
				   8 << zrfile_nf_pairs(f));
	if (f->nst != 1)
		return -EINVAL;
	if (f->form == ZRFILE_RECORD)
		return record_file_size(f, &f->one.size);
	if (f->form != ZRFILE_STACK || zrfile_nf_ragged(f->st))
		return -EINVAL;
	return dense_size(f, f->st, &f->one.size);
}

static void plan_init(zrfile_npy *f, int form, const zrfile_source *st,
		      size_t nst, const uint64_t *idx, uint64_t count)
{
	memset(f, 0, sizeof(*f));
	f->form = form;
	f->st = st;
	f->nst = nst;
	f->idx = idx;
	f->count = count;
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
	plan_init(f, form, st, 1, idx, count);
	f->shapes = shapes;
	f->rndim = rndim;
	if (!idx || !shapes || !zrfile_npy_flat(form))
		return -EINVAL;
	return zrfile_nf_plan_flat(f, 1);
}

int zrfile_npy_plan_gathered(zrfile_npy *f, int form,
			     const zrfile_source *st, const uint64_t *idx,
			     uint64_t count, const char *recs,
			     const uint64_t *off)
{
	plan_init(f, form, st, 1, idx, count);
	if (!idx || !recs || !off || !count || !zrfile_npy_flat(form) ||
	    !zrfile_nf_ragged(st))
		return -EINVAL;
	f->recs = recs;
	f->roff = off;
	/* shapes from the records' prefixes */
	return zrfile_nf_plan_flat(f, 0);
}

int zrfile_npy_plan(zrfile_npy *f, int form, const zrfile_source *st,
		    size_t nst, const uint64_t *idx, uint64_t count)
{
	int err;

	plan_init(f, form, st, nst, idx, count);
	if (!idx && zrfile_npy_needs_records(form, st, nst))
		return -EINVAL;
	if (form == ZRFILE_NPZ)
		return plan_npz(f);
	if (zrfile_npy_flat(form))
		return zrfile_nf_plan_flat(f, 0);
	err = plan_npy(f);
	if (!err)
		f->total = f->one.size;
	return err;
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
