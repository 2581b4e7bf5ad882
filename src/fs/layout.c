/*
 * layout.c - sizes and bytes of record and batch files (see layout.h).
 * Everything here runs under the read locks of the stores involved, so
 * the record table cannot change between computing a size and filling it,
 * except the bounds check of a batch name, which runs before any lock,
 * allocation or table read.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"
#include "ns.h"
#include "stlock.h"

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
	zr_loc loc;
	size_t H;
	int err;

	if (idx >= zr_store_length(st->zs))
		return -ENOENT;
	err = zr_store_loc(st->zs, idx, &loc);
	if (err)
		return err;
	if (is_ragged(st)) {
		H = zr_npy_ragged_header_len(dtype_of(st), loc.logic_length);
		if (!H)
			return ZR_E_CORRUPT;
		*size = H + loc.logic_length;
	} else {
		*size = st->dense_hdr + zr_store_row_bytes(st->zs);
	}
	return 0;
}

int zr__rec_current(const struct zr__fstore *st, const struct zr__node *n)
{
	return zr__dlog_unchanged(&st->dlog, n->idx, n->ver[0]) &&
	       n->idx < zr_store_length(st->zs);
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

/* Whether a batch's layout depends on which records it holds. */
static int needs_records(const struct zr__node *n)
{
	struct zr__fstore *const *st;
	size_t k = zr__batch_stores(n, &st);

	for (size_t i = 0; n->form == ZR__F_NPZ && i < k; i++)
		if (is_ragged(st[i]))
			return 1;
	return 0;
}

/* Checks the batch's sampler and, unless only its size is wanted and the
 * size does not depend on them, computes its indices: over the first
 * length records (0: the stores' current length). */
static int batch_indices(struct zr__fs *fs, const struct zr__node *n,
			 struct zr__plan *p, int size_only, uint64_t length)
{
	zr_sampler cfg = {
		.mode = n->mode, .seed = n->seed, .batch_size = n->bsize,
		.rank = fs->opts.rank, .world = fs->opts.world,
		.length = length,
	};
	int err;

	if (!length && n->ds && !zr__ds_equal(n->ds, &cfg.length))
		return -ENOENT;
	if (!length && !n->ds)
		cfg.length = zr_store_length(n->st->zs);
	p->length = cfg.length;
	if (!cfg.length)
		return -ENOENT; /* nothing to sample from yet */
	err = zr_sampler_check(&cfg);
	if (err)
		return err;
	p->count = n->bsize;
	if (size_only && !needs_records(n))
		return 0;
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
		  struct zr__plan *p, int size_only, uint64_t length)
{
	int err;

	memset(p, 0, sizeof(*p));
	p->node = n;
	err = batch_indices(fs, n, p, size_only, length);
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
	if (!err && p->total > fs->opts.max_batch)
		err = -EFBIG;
	if (!err)
		return 0;
fail:
	zr__plan_free(p);
	return err;
}

/* What any batch of n's shape holds at least: its indices, and per record
 * a dense row or a ragged record's 8-byte prefix; and its .npz members. */
static int batch_bound(struct zr__fs *fs, const struct zr__node *n)
{
	struct zr__fstore *const *st;
	size_t k = zr__batch_stores(n, &st);
	uint64_t b = n->bsize, cap = fs->opts.max_batch, members = 0;
	uint64_t least = 8;

	for (size_t i = 0; n->form != ZR__F_IDX && i < k; i++) {
		uint64_t row = zr_store_row_bytes(st[i]->zs);

		least += row ? row : 8;
		members += row ? 1 : b;
	}
	if (n->form == ZR__F_NPZ && members > ZR_NPZ_MEMBERS_MAX)
		return -EFBIG;
	return b > cap / least ? -EFBIG : 0;
}

uint64_t zr__batch_gen(const struct zr__node *n)
{
	struct zr__fstore *const *st;
	size_t k = zr__batch_stores(n, &st);
	uint64_t gen = 0;

	for (size_t i = 0; i < k; i++)
		gen += st[i]->gen;
	return gen;
}

static void log_too_big(const struct zr__node *n, struct zr__fs *fs)
{
	struct zr__fstore *const *st;

	zr__batch_stores(n, &st);
	zr__elog_add(&st[0]->log, st[0]->path, "batch of %llu: over the "
		     "mount's max_batch_bytes=%llu or %u .npz members (EFBIG)",
		     (unsigned long long)n->bsize,
		     (unsigned long long)fs->opts.max_batch,
		     ZR_NPZ_MEMBERS_MAX);
}

int zr__batch_version(struct zr__fs *fs, const struct zr__node *n,
		      uint64_t *size, uint64_t ver[2])
{
	struct zr__fstore *const *st;
	size_t k = zr__batch_stores(n, &st);
	struct zr__plan p;
	int err = batch_bound(fs, n);

	if (!err)
		err = zr__st_rdlock_all(st, k);
	if (err) {
		if (err == -EFBIG)
			log_too_big(n, fs);
		return err;
	}
	err = zr__plan_make(fs, n, &p, 1, 0);
	if (!err) {
		*size = p.total;
		ver[0] = p.length;
		ver[1] = zr__batch_gen(n);
	}
	zr__plan_free(&p);
	zr__st_unlock_all(st, k);
	if (err == -EFBIG)
		log_too_big(n, fs);
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
