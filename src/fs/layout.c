/*
 * layout.c - sizes and bytes of record and batch files (see layout.h).
 * Everything here runs under the read locks of the stores involved, so
 * the record table cannot change between computing a size and filling it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"
#include "ns.h"

static const zr_dtype *dtype_of(const struct zr__fstore *st)
{
	return &zr_store_schema(st->zs)->dtype;
}

static int is_ragged(const struct zr__fstore *st)
{
	return zr_store_schema(st->zs)->ragged;
}

static void put_le(char *p, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		p[i] = (char)(v >> (8 * i));
}

/* Turns the ragged record gathered at dst + H (logic bytes, shape prefix
 * first) into a .npy file at dst: the header is widened by the prefix's
 * length so it ends where the payload starts. */
static int ragged_npy(const zr_dtype *dt, char *dst, size_t H, size_t logic)
{
	uint64_t shape[ZR_MAX_NDIM];
	uint32_t ndim;
	size_t poff;
	int err = zr_ragged_parse(dst + H, logic, dt->itemsize, &ndim, shape,
				  &poff);

	if (err)
		return err;
	return zr_npy_write_header_fixed(dt, ndim, shape, H + poff, dst,
					 H + poff);
}

/* H and logic length of ragged record idx. */
static int ragged_parts(struct zr__fstore *st, uint64_t idx, size_t *H,
			uint32_t *logic)
{
	zr_loc loc;
	int err = zr_store_loc(st->zs, idx, &loc);

	if (err)
		return err;
	*H = zr_npy_ragged_header_len(dtype_of(st), loc.logic_length);
	if (!*H)
		return ZR_E_CORRUPT;
	*logic = loc.logic_length;
	return 0;
}

int zr__rec_size(struct zr__fstore *st, uint64_t idx, uint64_t *size)
{
	size_t H;
	uint32_t logic;
	int err;

	if (idx >= zr_store_length(st->zs))
		return -ENOENT;
	if (!is_ragged(st)) {
		*size = st->dense_hdr + zr_store_row_bytes(st->zs);
		return 0;
	}
	err = ragged_parts(st, idx, &H, &logic);
	if (!err)
		*size = H + logic;
	return err;
}

/* The header of a dense (B, *item_shape) array at dst; *len its size. */
static int dense_header(const struct zr__fstore *st, uint64_t rows,
			char *dst, size_t cap, size_t *len)
{
	const zr_schema *sc = zr_store_schema(st->zs);
	uint64_t shape[ZR_MAX_NDIM + 1];

	if (sc->ndim >= ZR_MAX_NDIM)
		return ZR_E_TOOBIG;
	shape[0] = rows;
	memcpy(shape + 1, sc->shape, sc->ndim * sizeof(*shape));
	if (!dst) {
		*len = zr_npy_header_len(&sc->dtype, sc->ndim + 1, shape);
		return 0;
	}
	return zr_npy_write_header(&sc->dtype, sc->ndim + 1, shape, dst, cap,
				   len);
}

int zr__rec_fill(struct zr__fstore *st, uint64_t idx, char *buf,
		 uint64_t size)
{
	const zr_schema *sc = zr_store_schema(st->zs);
	uint64_t off[2];
	size_t H, len;
	uint32_t logic;
	int err;

	if (!sc->ragged) {
		uint64_t shape[ZR_MAX_NDIM];

		memcpy(shape, sc->shape, sc->ndim * sizeof(*shape));
		err = zr_npy_write_header(&sc->dtype, sc->ndim, shape, buf,
					  size, &len);
		return err ? err : zr_store_gather(st->zs, &idx, 1, buf + len,
						   size - len, NULL);
	}
	err = ragged_parts(st, idx, &H, &logic);
	if (err)
		return err;
	if (H + logic != size)
		return -ESTALE;
	err = zr_store_gather(st->zs, &idx, 1, buf + H, logic, off);
	return err ? err : ragged_npy(&sc->dtype, buf, H, logic);
}

/* -- batches ------------------------------------------------------------ */

size_t zr__batch_stores(const struct zr__node *n,
			struct zr__fstore *const **out)
{
	if (n->ds) {
		*out = n->ds->st;
		return n->ds->n;
	}
	*out = &n->st;
	return 1;
}

void zr__batch_lock(const struct zr__node *n)
{
	struct zr__fstore *const *st;
	size_t k = zr__batch_stores(n, &st);

	for (size_t i = 0; i < k; i++)
		pthread_rwlock_rdlock(&st[i]->rw);
}

void zr__batch_unlock(const struct zr__node *n)
{
	struct zr__fstore *const *st;
	size_t k = zr__batch_stores(n, &st);

	for (size_t i = k; i-- > 0;)
		pthread_rwlock_unlock(&st[i]->rw);
}

static int batch_indices(struct zr__fs *fs, const struct zr__node *n,
			 struct zr__plan *p)
{
	zr_sampler cfg = {
		.mode = n->mode, .seed = n->seed, .batch_size = n->bsize,
		.rank = fs->opts.rank, .world = fs->opts.world,
	};
	int err;

	if (n->ds) {
		if (!zr__ds_equal_locked(n->ds, &cfg.length))
			return -ENOENT;
	} else {
		cfg.length = zr_store_length(n->st->zs);
	}
	if (!cfg.length)
		return -ENOENT; /* nothing to sample from yet */
	err = zr_sampler_check(&cfg);
	if (err)
		return err;
	p->count = n->bsize;
	p->idx = malloc(p->count * sizeof(*p->idx));
	if (!p->idx)
		return -ENOMEM;
	return zr_sampler_batch(&cfg, n->step, p->idx);
}

static int add_size(uint64_t *total, uint64_t a, uint64_t b, uint64_t c)
{
	/* total = a + b * c, overflow-checked */
	if (c && b > (UINT64_MAX - a) / c)
		return ZR_E_TOOBIG;
	*total = a + b * c;
	return 0;
}

static int dense_size(const struct zr__fstore *st, uint64_t rows,
		      uint64_t *size)
{
	size_t h;
	int err = dense_header(st, rows, NULL, 0, &h);

	return err ? err : add_size(size, h, rows, zr_store_row_bytes(st->zs));
}

/* Member count and name bytes a stream adds to an .npz. */
static void stream_members(const struct zr__fstore *st, const char *name,
			   size_t count, size_t *nm, size_t *bytes)
{
	size_t base = name ? strlen(name) : 3;

	if (is_ragged(st)) {
		*nm += count;
		*bytes += count * (base + 2 + 20 + 5);
	} else {
		*nm += 1;
		*bytes += base + 5;
	}
}

/* Names and sizes of one stream's members (name NULL: a single ragged
 * store's "arr_K.npy"). */
static int stream_layout(struct zr__plan *p, struct zr__fstore *st,
			 const char *name, char **names)
{
	int err = 0;

	if (!is_ragged(st)) {
		zr_npz_member *m = &p->m[p->nm++];

		m->name = *names;
		*names += sprintf(*names, "%s.npy", name) + 1;
		return dense_size(st, p->count, &m->size);
	}
	for (size_t k = 0; k < p->count && !err; k++) {
		zr_npz_member *m = &p->m[p->nm++];
		size_t H;
		uint32_t logic;

		m->name = *names;
		if (name)
			*names += sprintf(*names, "%s/%zu.npy", name, k) + 1;
		else
			*names += sprintf(*names, "arr_%zu.npy", k) + 1;
		err = ragged_parts(st, p->idx[k], &H, &logic);
		if (!err)
			m->size = H + logic;
	}
	return err;
}

static int npz_layout(const struct zr__node *n, struct zr__plan *p)
{
	struct zr__fstore *const *st;
	size_t k = zr__batch_stores(n, &st), nm = 0, bytes = 0;
	char *names;
	int err = 0;

	for (size_t i = 0; i < k; i++)
		stream_members(st[i], n->ds ? n->ds->names[i] : NULL,
			       p->count, &nm, &bytes);
	p->m = calloc(nm, sizeof(*p->m));
	p->names = names = malloc(bytes);
	if (!p->m || !names)
		return -ENOMEM;
	for (size_t i = 0; i < k && !err; i++)
		err = stream_layout(p, st[i], n->ds ? n->ds->names[i] : NULL,
				    &names);
	return err ? err : zr_npz_layout(p->m, p->nm, &p->total);
}

static const zr_dtype *int64_dtype(void)
{
	static const zr_dtype i8 = { "<i8", 'i', '<', 8 };

	return &i8;
}

int zr__plan_make(struct zr__fs *fs, const struct zr__node *n,
		  struct zr__plan *p)
{
	int err;

	memset(p, 0, sizeof(*p));
	p->node = n;
	err = batch_indices(fs, n, p);
	if (err)
		goto fail;
	switch (n->form) {
	case ZR__F_IDX:
		err = add_size(&p->total,
			       zr_npy_header_len(int64_dtype(), 1, &p->count),
			       p->count, 8);
		break;
	case ZR__F_NPY:
		err = dense_size(n->st, p->count, &p->total);
		break;
	case ZR__F_NPZ:
		err = npz_layout(n, p);
		break;
	}
	if (!err && p->total > SIZE_MAX / 2)
		err = ZR_E_TOOBIG;
	if (!err)
		return 0;
fail:
	zr__plan_free(p);
	return err;
}

void zr__plan_free(struct zr__plan *p)
{
	free(p->idx);
	free(p->m);
	free(p->names);
	memset(p, 0, sizeof(*p));
}

static int fill_dense(const struct zr__plan *p, struct zr__fstore *st,
		      char *dst, uint64_t cap)
{
	size_t h;
	int err = dense_header(st, p->count, dst, cap, &h);

	return err ? err : zr_store_gather(st->zs, p->idx, p->count, dst + h,
					   cap - h, NULL);
}

/* Gathers a ragged stream's records packed at its first member, then moves
 * them, last first, to their places behind their (widened) headers: every
 * record only moves forward, past records already moved. */
static int fill_ragged(const struct zr__plan *p, struct zr__fstore *st,
		       const zr_npz_member *m, char *buf)
{
	uint64_t *off = malloc((p->count + 1) * sizeof(*off));
	const zr_npz_member *last = &m[p->count - 1];
	char *base = buf + m[0].offset;
	int err;

	if (!off)
		return -ENOMEM;
	err = zr_store_gather(st->zs, p->idx, p->count, base,
			      last->offset + last->size - m[0].offset, off);
	for (size_t k = p->count; !err && k-- > 0;) {
		uint64_t logic = off[k + 1] - off[k];
		size_t H = zr_npy_ragged_header_len(dtype_of(st), logic);

		if (!H || H + logic != m[k].size) {
			err = -ESTALE;
			break;
		}
		memmove(buf + m[k].offset + H, base + off[k], logic);
		err = ragged_npy(dtype_of(st), buf + m[k].offset, H, logic);
	}
	free(off);
	return err;
}

static int fill_npz(const struct zr__plan *p, char *buf)
{
	struct zr__fstore *const *st;
	size_t k = zr__batch_stores(p->node, &st), j = 0;
	int err = 0;

	for (size_t i = 0; i < k && !err; i++) {
		const zr_npz_member *m = &p->m[j];

		if (is_ragged(st[i])) {
			err = fill_ragged(p, st[i], m, buf);
			j += p->count;
		} else {
			err = fill_dense(p, st[i], buf + m->offset, m->size);
			j++;
		}
	}
	return err ? err : zr_npz_finish(buf, p->total, p->m, p->nm);
}

int zr__plan_fill(const struct zr__plan *p, char *buf)
{
	size_t h;
	int err;

	switch (p->node->form) {
	case ZR__F_IDX:
		err = zr_npy_write_header(int64_dtype(), 1, &p->count, buf,
					  p->total, &h);
		for (size_t k = 0; !err && k < p->count; k++)
			put_le(buf + h + 8 * k, p->idx[k], 8);
		return err;
	case ZR__F_NPY:
		return fill_dense(p, p->node->st, buf, p->total);
	case ZR__F_NPZ:
		return fill_npz(p, buf);
	}
	return -EINVAL;
}
