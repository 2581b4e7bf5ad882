/*
 * file_bytes.c - record and batch files as the daemon serves them (see
 * file_bytes.h): which records (the node's index, the sampler's batch) and
 * whether a name may be served at all; sizes and bytes come from the
 * common encoder (npy_file.h).  Everything here reads through library
 * views (ZR_VIEW_TRY: ZR_E_BUSY at once during a delete or compact, which
 * the caller parks), so the record table cannot change between computing
 * a size and filling it, except the bounds check of a batch name, which
 * runs before any view, allocation or table read.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "file_bytes.h"
#include "batch_stream.h"
#include "mix_batch.h"
#include "shape_cache.h"
#include "batch_schedule.h"
#include "errors_log.h"

/* -- views ------------------------------------------------------------- */

int zrfs_busy_to_park(int err)
{
	return err == ZR_E_BUSY ? ZRFS_E_PARK : err;
}

int zrfs_views_begin(struct zrfs_fstore *const *st, size_t n, zr_view **v)
{
	for (size_t i = 0; i < n; i++) {
		int err = zr_view_begin(st[i]->zs, ZR_VIEW_TRY, &v[i]);

		if (err) {
			v[i] = NULL;
			zrfs_views_end(v, i);
			return zrfs_busy_to_park(err);
		}
	}
	return 0;
}

void zrfs_views_end(zr_view **v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		zr_view_end(v[i]);
		v[i] = NULL;
	}
}

int zrfs_st_probe(struct zrfs_fstore *st)
{
	zr_view *v;
	int err = zrfs_views_begin(&st, 1, &v);

	zr_view_end(err ? NULL : v);
	return err;
}

/* -- records ----------------------------------------------------------- */

/* Record idx's file: the encoder's RECORD form over the stream *s. */
static int rec_plan(struct zrfs_fstore *st, zr_view *v, const uint64_t *idx,
		    zrfile_source *s, zrfile_npy *f)
{
	*s = (zrfile_source){ .zs = st->zs, .view = v };
	return zrfile_npy_plan(f, ZRFILE_RECORD, s, 1, idx, 1);
}

int zrfs_rec_size(struct zrfs_fstore *st, zr_view *v, uint64_t idx, int form,
		 uint64_t *size)
{
	zrfile_source s;
	zrfile_npy f;
	zrfile_png img;
	int err;

	if (idx >= zr_view_length(v))
		return -ENOENT;
	if (form == ZRFS_F_PNG) {
		s = (zrfile_source){ .zs = st->zs, .view = v };
		err = zrfile_record_png_plan(&s, idx, &img);
		*size = err ? 0 : zrfile_png_size(&img);
		return zrfs_busy_to_park(err);
	}
	err = rec_plan(st, v, &idx, &s, &f);
	*size = f.total;
	zrfile_npy_free(&f);
	return zrfs_busy_to_park(err);
}

int zrfs_rec_version(struct zrfs_fstore *st, uint64_t idx, int form,
		    uint64_t *size, uint64_t *epoch)
{
	zr_view *v;
	int err = zrfs_views_begin(&st, 1, &v);

	if (err)
		return err;
	err = zrfs_rec_size(st, v, idx, form, size);
	*epoch = zr_view_epoch(v);
	zr_view_end(v);
	return err;
}

int zrfs_rec_same(const struct zrfs_node *n, uint64_t epoch)
{
	return !zr_store_index_changed(n->st->zs, n->ver[0], epoch, n->idx);
}

static int png_fill(struct zrfs_fstore *st, zr_view *v, uint64_t idx,
		    char *buf, uint64_t size)
{
	zrfile_source s = { .zs = st->zs, .view = v };
	zrfile_png img;
	int err = zrfile_record_png_plan(&s, idx, &img);

	if (!err && zrfile_png_size(&img) != size)
		err = -ESTALE;
	return zrfs_busy_to_park(err ? err :
				 zrfile_record_png_fill(&s, idx, &img, buf));
}

int zrfs_rec_fill(struct zrfs_fstore *st, zr_view *v, uint64_t idx, int form,
		 char *buf, uint64_t size)
{
	zrfile_source s;
	zrfile_npy f;
	int err;

	if (form == ZRFS_F_PNG)
		return png_fill(st, v, idx, buf, size);
	err = rec_plan(st, v, &idx, &s, &f);
	if (!err && f.total != size)
		err = -ESTALE; /* a delete or compact since the lookup */
	if (!err)
		err = zrfile_npy_fill(&f, buf);
	zrfile_npy_free(&f);
	return zrfs_busy_to_park(err);
}

/* -- batches ------------------------------------------------------------ */

static int form_of(const struct zrfs_node *n)
{
	switch (n->form) {
	case ZRFS_F_IDX:
		return ZRFILE_INDICES;
	case ZRFS_F_NPY:
		return ZRFILE_STACK;
	case ZRFS_F_NPZ:
		return ZRFILE_NPZ;
	default:
		return n->form - ZRFS_F_FLAT;
	}
}

/* The encoder's streams of the node's stores (a dataset's by name),
 * read through their views. */
static int node_streams(const struct zrfs_node *n, struct zrfs_plan *p,
			zr_view *const *views)
{
	struct zrfs_fstore *const *st;

	p->nst = zrfs_batch_stores(n, &st);
	p->streams = calloc(p->nst, sizeof(*p->streams));
	if (!p->streams)
		return -ENOMEM;
	for (size_t i = 0; i < p->nst; i++) {
		p->streams[i].zs = st[i]->zs;
		p->streams[i].name = n->ds ? n->ds->names[i] : NULL;
		p->streams[i].view = views[i];
	}
	return 0;
}

/* Checks the batch's sampler and, unless only its size is wanted and the
 * size does not depend on them, computes its indices: over the first
 * length records (0: the stores' current length). */
static int batch_indices(struct zrfs_fs *fs, const struct zrfs_node *n,
			 struct zrfs_plan *p, int size_only, uint64_t length)
{
	zr_sampler cfg = {
		.mode = n->mode, .seed = n->seed, .batch_size = n->bsize,
		.rank = fs->opts.rank, .world = fs->opts.world,
		.length = length,
	};
	/* a dataset draws over its shortest stream (see lookup.c) */
	uint64_t have = zr_view_length(p->streams[0].view), base;
	zr_stream *st;
	int err;

	for (size_t i = 1; i < p->nst; i++)
		if (zr_view_length(p->streams[i].view) < have)
			have = zr_view_length(p->streams[i].view);
	err = zrfs_sched_base(fs, n, 1, &have, &base);
	if (err)
		return err;
	cfg.length = length ? length : base;
	p->length = cfg.length;
	if (!cfg.length)
		return -ENOENT; /* nothing to sample from yet */
	/* checked even when only the size is wanted: a bad sampler fails
	 * the lookup as the read would */
	err = zrcommon_batch_stream(&cfg, fs->opts.granule, &st);
	if (err)
		return err;
	err = zrfs_sched_apply(fs, n, st, NULL, NULL, 0, &cfg.length, &have);
	p->count = n->bsize;
	if (!err && (!size_only || zrfile_npy_needs_records(form_of(n),
							     p->streams,
							     p->nst))) {
		p->idx = malloc(p->count * sizeof(*p->idx));
		err = p->idx ? zr_stream_batch(st, fs->opts.start, n->step,
					       cfg.rank, cfg.world,
					       cfg.batch_size, NULL, p->idx)
			     : -ENOMEM;
	}
	zr_stream_free(st);
	return err;
}

/* Whether a packed or padded form holds the records' data. */
static int has_data(int form)
{
	return form == ZRFILE_PACKED || form == ZRFILE_PADDED ||
	       form == ZRFILE_PACKED_DATA ||
	       form == ZRFILE_PADDED_DATA;
}

/* A compressed ragged store's records of a packed or padded batch,
 * gathered for its lookup rather than their shapes read (shape_cache.h): 0,
 * 1 when that does not apply (a raw store, whose shapes cost nothing to
 * read, or more than max_batch_bytes of records), or an error. */
static int gather_flat(struct zrfs_fs *fs, struct zrfs_plan *p)
{
	zr_store *zs = p->streams[0].zs;
	uint64_t need;
	int err;

	if (p->nst != 1 || !zr_store_schema(zs)->ragged ||
	    zr_store_codec(zs) == ZR_CODEC_RAW)
		return 1;
	err = zr_stream_gather_size(&p->streams[0], p->idx, p->count, &need);
	if (err || need > fs->opts.max_batch)
		return err ? err : 1;
	p->roff = malloc((p->count + 1) * sizeof(*p->roff));
	p->recs = malloc(need ? need : 1);
	if (!p->roff || !p->recs)
		return -ENOMEM;
	return zr_stream_gather(&p->streams[0], p->idx, p->count, p->recs,
				need, p->roff);
}

/* Which batch p of node n is, for the shape cache. */
static struct zrfile_shape_key shape_key(const struct zrfs_node *n,
					 const struct zrfs_plan *p)
{
	struct zrfile_shape_key k = {
		.stores = n->mix ? (const void *)n->mix :
			  n->ds ? (const void *)n->ds : (const void *)n->st,
		.seed = n->seed, .step = n->step, .bsize = n->bsize,
		.mode = (int)n->mode, .length = p->length, .epoch = p->epoch,
		.count = p->count,
	};

	return k;
}

/* A packed or padded form, or a part of one: from what an earlier lookup
 * of the same batch kept (the records themselves if kept and the file
 * holds them, to be filled), else from the records gathered now, or their
 * shapes read now. */
static int plan_flat(struct zrfs_fs *fs, const struct zrfs_node *n,
		     struct zrfs_plan *p, int size_only, int form)
{
	struct zrfile_shape_key key = shape_key(n, p);
	struct zrfile_kept k;
	int err;

	if (!zrfile_shapes_get(&key, !size_only && has_data(form), &k)) {
		p->kept = 1;
		p->recs = k.recs;
		p->roff = k.off;
		if (p->recs) {
			free(k.shapes);
			return zrfile_npy_plan_gathered(&p->file, form,
							p->streams, p->idx,
							p->count, p->recs,
							p->roff);
		}
		return zrfile_npy_plan_known(&p->file, form, p->streams,
					     p->idx, p->count, k.shapes,
					     k.rndim);
	}
	err = size_only ? gather_flat(fs, p) : 1;
	if (err < 0)
		return err;
	if (!err)
		return zrfile_npy_plan_gathered(&p->file, form, p->streams,
						p->idx, p->count, p->recs,
						p->roff);
	return zrfile_npy_plan(&p->file, form, p->streams, p->nst, p->idx,
			       p->count);
}

static int plan_file(struct zrfs_fs *fs, const struct zrfs_node *n,
		     struct zrfs_plan *p, int size_only)
{
	int form = form_of(n);

	if (zrfile_npy_flat(form))
		return plan_flat(fs, n, p, size_only, form);
	return zrfile_npy_plan(&p->file, form, p->streams, p->nst, p->idx,
			       p->count);
}

uint64_t zrfs_views_epoch(zr_view *const *views, size_t k)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < k; i++)
		sum += zr_view_epoch(views[i]);
	return sum;
}

int zrfs_plan_make(struct zrfs_fs *fs, const struct zrfs_node *n,
		  struct zrfs_plan *p, int size_only, uint64_t length,
		  zr_view *const *views)
{
	int err;

	memset(p, 0, sizeof(*p));
	p->node = n;
	if (n->mix)
		err = zrfs_mix_draw(fs, n, p, length, views);
	else
		err = node_streams(n, p, views);
	if (!err) {
		struct zrfs_fstore *const *st;

		p->epoch = zrfs_views_epoch(views, zrfs_batch_stores(n, &st));
		if (!n->mix)
			err = batch_indices(fs, n, p, size_only, length);
	}
	if (!err)
		err = plan_file(fs, n, p, size_only);
	p->total = p->file.total;
	if (!err && p->total > fs->opts.max_batch)
		err = -EFBIG;
	if (err)
		zrfs_plan_free(p);
	return zrfs_busy_to_park(err);
}

/* What any batch of n's shape holds at least: its indices, and per record
 * a dense row or a ragged record's 8-byte prefix; and its .npz members.
 * A .packed.npz or .padded.npz holds at least its int64 offsets or
 * lengths, 8 bytes per record, in 2 or 3 members: its exact size needs the
 * records' shapes, so zrfs_plan_make checks max_batch_bytes again (EFBIG)
 * once it has read them. */
static int batch_bound(struct zrfs_fs *fs, const struct zrfs_node *n)
{
	struct zrfs_fstore *const *st;
	size_t k = zrfs_batch_stores(n, &st);
	uint64_t b = n->bsize, cap = fs->opts.max_batch, members = 0;
	uint64_t least = 8;

	if (n->mix)
		return zrfs_mix_bound(fs, n);
	for (size_t i = 0; n->form != ZRFS_F_IDX && i < k; i++) {
		uint64_t row = zr_store_row_bytes(st[i]->zs);

		least += row ? row : 8;
		members += row ? 1 : b;
	}
	if (n->form == ZRFS_F_NPZ && members > ZRFILE_NPZ_MEMBERS_MAX)
		return -EFBIG;
	return b > cap / least ? -EFBIG : 0;
}

static void log_too_big(const struct zrfs_node *n, struct zrfs_fs *fs)
{
	const char *name;
	struct zrfs_elog *log = zrfs_batch_elog(n, &name);

	zrfs_elog_add(log, name, "batch of %llu: over the "
		     "mount's max_batch_bytes=%llu or %u .npz members (EFBIG)",
		     (unsigned long long)n->bsize,
		     (unsigned long long)fs->opts.max_batch,
		     ZRFILE_NPZ_MEMBERS_MAX);
}

/* -EINVAL from a packed or padded plan: the records' shapes cannot take
 * the form (npy_ragged.c, read_shapes). */
static void log_bad_form(const struct zrfs_node *n)
{
	const char *name;
	struct zrfs_elog *log = zrfs_batch_elog(n, &name);
	int padded = form_of(n) == ZRFILE_PADDED;

	zrfs_elog_add(log, name, "batch of %llu: its records "
		      "cannot be %s: they must have one ndim%s (EINVAL); the "
		      ".npz form holds any records, one member each",
		      (unsigned long long)n->bsize,
		      padded ? "padded" : "packed",
		      padded ? ", at least 1, and equal shapes beyond axis 0"
			     : "");
}

/* What a lookup's plan read of a packed or padded batch, kept for its
 * reads (shape_cache.h); nothing if it was planned from what was kept. */
static void keep(const struct zrfs_node *n, struct zrfs_plan *p)
{
	struct zrfile_shape_key key = shape_key(n, p);
	struct zrfile_kept k = { 0 };

	if (p->kept)
		return;
	k.shapes = zrfile_npy_take_shapes(&p->file, &k.rndim);
	if (!k.shapes)
		return; /* not such a form */
	k.recs = p->recs;
	k.off = p->roff;
	p->recs = NULL;
	p->roff = NULL;
	zrfile_shapes_put(&key, &k);
}

/* zrfs_batch_version, and into *lens (unless NULL) a mixture's lengths. */
static int version(struct zrfs_fs *fs, const struct zrfs_node *n,
		   uint64_t *size, uint64_t ver[2], uint64_t **lens)
{
	struct zrfs_fstore *const *st;
	size_t k = zrfs_batch_stores(n, &st);
	struct zrfs_plan p;
	zr_view **v = NULL;
	int err = batch_bound(fs, n);

	if (!err && !(v = calloc(k, sizeof(*v))))
		err = -ENOMEM;
	if (!err)
		err = zrfs_views_begin(st, k, v);
	if (err) {
		if (err == -EFBIG)
			log_too_big(n, fs);
		free(v);
		return err;
	}
	err = zrfs_plan_make(fs, n, &p, 1, 0, v);
	if (!err) {
		*size = p.total;
		ver[0] = p.length;
		ver[1] = p.epoch;
		keep(n, &p);
		if (lens) {
			*lens = p.lens;
			p.lens = NULL;
		}
	}
	zrfs_plan_free(&p);
	zrfs_views_end(v, k);
	free(v);
	if (err == -EFBIG)
		log_too_big(n, fs);
	if (err == -EINVAL && zrfile_npy_flat(form_of(n)))
		log_bad_form(n);
	return err;
}

int zrfs_batch_version(struct zrfs_fs *fs, const struct zrfs_node *n,
		      uint64_t *size, uint64_t ver[2])
{
	return version(fs, n, size, ver, NULL);
}

int zrfs_batch_lookup(struct zrfs_fs *fs, struct zrfs_node *t)
{
	return version(fs, t, &t->size, t->ver, &t->lens);
}

void zrfs_plan_free(struct zrfs_plan *p)
{
	zrfile_npy_free(&p->file);
	free(p->recs);
	free(p->roff);
	free(p->idx);
	free(p->streams);
	free(p->lens);
	memset(p, 0, sizeof(*p));
}

int zrfs_plan_fill(const struct zrfs_plan *p, char *buf)
{
	return zrfile_npy_fill(&p->file, buf);
}

void zrfs_plan_pieces(const struct zrfs_plan *p, struct zrfs_pieces *pc)
{
	uint64_t row, rows;

	pc->at = zrfile_npy_rows_at(&p->file, &row);
	pc->n = 1;
	pc->bytes = p->total;
	if (!pc->at || !row || !p->count)
		return;
	rows = row < ZRFS_PIECE_BYTES ? ZRFS_PIECE_BYTES / row : 1;
	pc->bytes = rows * row;
	pc->n = (size_t)((p->count + rows - 1) / rows);
}

size_t zrfs_piece_of(const struct zrfs_pieces *pc, uint64_t off)
{
	uint64_t k;

	if (pc->n == 1 || off < pc->at)
		return 0;
	k = (off - pc->at) / pc->bytes;
	return k < pc->n ? (size_t)k : pc->n - 1;
}

int zrfs_plan_fill_piece(const struct zrfs_plan *p,
			const struct zrfs_pieces *pc, char *buf, size_t k)
{
	uint64_t row, rows, first;

	if (pc->n == 1)
		return zrfs_plan_fill(p, buf);
	zrfile_npy_rows_at(&p->file, &row);
	rows = pc->bytes / row;
	first = k * rows;
	if (rows > p->count - first)
		rows = p->count - first;
	return zrfile_npy_fill_rows(&p->file, buf, first, rows);
}

int zrfs_node_size(struct zrfs_fs *fs, const struct zrfs_node *n,
		  uint64_t *size)
{
	(void)fs;
	*size = n->size;
	return 0;
}
