/*
 * batch_file.c - a batch file planned once for `zrecord batch` and the
 * mount (batch_file.h): a store's or dataset's indices from the sampler's
 * stream under the schedule, the encoder's layout of them (a packed or
 * padded form from what the shape cache kept, or from records gathered
 * once), the byte cap, and the file filled whole or in pieces.  A
 * mixture's draw is in batch_mix.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch_file_impl.h"
#include "batch_stream.h"
#include "npy_mix.h"
#include "shape_cache.h"

zrfile_source *zrfile_batch_sources(struct zrfile_batch *b, uint32_t k,
				    size_t nf)
{
	memset(b, 0, sizeof(*b));
	b->nst = nf;
	b->k = k;
	if (k)
		b->streams = zrfile_mix_alloc(k, (uint32_t)nf, &b->grid);
	else
		b->streams = nf ? calloc(nf, sizeof(*b->streams)) : NULL;
	return k ? b->grid : b->streams;
}

static void too_big(const struct zrfile_batch_spec *s, char *msg,
		    size_t cap)
{
	snprintf(msg, cap, "over max_batch_bytes=%llu or %u .npz members",
		 (unsigned long long)s->max_batch, ZRFILE_NPZ_MEMBERS_MAX);
}

/* What any batch holds at least: its indices (a mixture's: index
 * pairs), and per record a dense row or a ragged record's 8-byte prefix
 * in each field; and its .npz members.  A packed or padded .npz holds at
 * least its int64 offsets or lengths, 8 bytes per record: its exact size
 * needs the records' shapes, so the plan checks max_batch again once it
 * has read them. */
void zrfile_batch_least_init(struct zrfile_batch_least *l, int mixture)
{
	l->bytes = mixture ? 16 : 8;
	l->members = 0;
}

void zrfile_batch_least_add(const struct zrfile_batch_spec *s,
			    struct zrfile_batch_least *l, zr_store *field)
{
	uint64_t row = zr_store_row_bytes(field);

	if (s->form == ZRFILE_INDICES)
		return;
	l->bytes += row ? row : 8;
	l->members += row ? 1 : s->cfg.batch_size;
}

int zrfile_batch_bound(const struct zrfile_batch_spec *s,
		       const struct zrfile_batch_least *l, char *msg,
		       size_t cap)
{
	if (!s->max_batch)
		return 0;
	if ((s->form == ZRFILE_NPZ && l->members > ZRFILE_NPZ_MEMBERS_MAX) ||
	    s->cfg.batch_size > s->max_batch / l->bytes) {
		too_big(s, msg, cap);
		return -EFBIG;
	}
	return 0;
}

int zrfile_bf_schedule(const struct zrfile_batch_spec *s, zr_stream *st,
		       const uint64_t *base, const uint64_t *have, char *msg,
		       size_t cap)
{
	const zr_mixfile *m = s->mix;
	int err = zrcommon_schedule_apply(s->sched, st, m ? m->from : NULL,
					  m ? m->weights : NULL,
					  m ? m->nsched : 0,
					  zr_stream_sources(st));

	if (!err)
		err = zrcommon_schedule_check(s->sched, st, s->start, s->step,
					      s->cfg.rank, s->cfg.world,
					      s->cfg.batch_size, base, have,
					      msg, cap);
	return err;
}

int zrfile_bf_alloc_idx(struct zrfile_batch *b)
{
	if (b->count > SIZE_MAX / sizeof(*b->idx))
		return ZR_E_TOOBIG;
	b->idx = malloc(b->count ? b->count * sizeof(*b->idx) : 1);
	return b->idx ? 0 : -ENOMEM;
}

static uint64_t stream_length(const zrfile_source *s)
{
	return s->view ? zr_view_length(s->view) : zr_store_length(s->zs);
}

/* A store's or dataset's indices, over the first length records (0: the
 * shortest stream's, as a dataset draws), unless only the size is wanted
 * and it does not depend on them.  The sampler is checked either way: a
 * bad one fails the size as it would the file. */
static int plain_draw(struct zrfile_batch *b,
		      const struct zrfile_batch_spec *s, int size_only,
		      uint64_t length, char *msg, size_t cap)
{
	zr_sampler cfg = s->cfg;
	uint64_t have = stream_length(&b->streams[0]), base;
	zr_stream *st;
	int err;

	for (size_t i = 1; i < b->nst; i++)
		if (stream_length(&b->streams[i]) < have)
			have = stream_length(&b->streams[i]);
	if (zrcommon_schedule_base(s->sched, 1, &have, &base, msg, cap))
		return -ENOENT;
	cfg.length = length ? length : base;
	b->length = cfg.length;
	if (!cfg.length)
		return -ENOENT; /* nothing to sample from yet */
	err = zrcommon_batch_stream(&cfg, s->granule, &st);
	if (err)
		return err;
	err = zrfile_bf_schedule(s, st, &cfg.length, &have, msg, cap);
	b->count = cfg.batch_size;
	if (!err && (!size_only || zrfile_npy_needs_records(s->form,
							     b->streams,
							     b->nst))) {
		err = zrfile_bf_alloc_idx(b);
		if (!err)
			err = zr_stream_batch(st, s->start, s->step, cfg.rank,
					      cfg.world, b->count, NULL,
					      b->idx);
	}
	zr_stream_free(st);
	return err;
}

/* A compressed ragged store's records of a packed or padded batch,
 * gathered for its size rather than their shapes read (shape_cache.h): 0,
 * 1 when that does not apply (a raw store, whose shapes cost nothing to
 * read, or more than max_batch bytes of records), or an error. */
static int gather_flat(struct zrfile_batch *b,
		       const struct zrfile_batch_spec *s)
{
	zr_store *zs = b->streams[0].zs;
	uint64_t need;
	int err;

	if (b->nst != 1 || !zr_store_schema(zs)->ragged ||
	    zr_store_codec(zs) == ZR_CODEC_RAW)
		return 1;
	err = zr_stream_gather_size(&b->streams[0], b->idx, b->count, &need);
	if (err || (s->max_batch && need > s->max_batch))
		return err ? err : 1;
	b->roff = malloc((b->count + 1) * sizeof(*b->roff));
	b->recs = malloc(need ? need : 1);
	if (!b->roff || !b->recs)
		return -ENOMEM;
	return zr_stream_gather(&b->streams[0], b->idx, b->count, b->recs,
				need, b->roff);
}

/* Which batch b is, for the shape cache. */
static struct zrfile_shape_key shape_key(const struct zrfile_batch_spec *s,
					 const struct zrfile_batch *b)
{
	struct zrfile_shape_key k = {
		.stores = s->cache, .seed = s->cfg.seed, .step = s->step,
		.bsize = s->cfg.batch_size, .mode = (int)s->cfg.mode,
		.length = b->length, .epoch = s->epoch, .count = b->count,
	};

	return k;
}

/* A packed or padded form, or a part of one: from what an earlier plan
 * of the same batch kept (the records themselves if kept and the file
 * holds them, to be filled), else from the records gathered now, or their
 * shapes read now. */
static int plan_flat(struct zrfile_batch *b,
		     const struct zrfile_batch_spec *s, int size_only)
{
	struct zrfile_shape_key key = shape_key(s, b);
	struct zrfile_kept k;
	int err, form = s->form;

	if (s->cache &&
	    !zrfile_shapes_get(&key, !size_only &&
			      (zrfile_form(form)->how & ZRFILE_HOW_DATA), &k)) {
		b->kept = 1;
		b->recs = k.recs;
		b->roff = k.off;
		if (b->recs) {
			free(k.shapes);
			return zrfile_npy_plan_gathered(&b->file, form,
							b->streams, b->idx,
							b->count, b->recs,
							b->roff);
		}
		return zrfile_npy_plan_known(&b->file, form, b->streams,
					     b->idx, b->count, k.shapes,
					     k.rndim);
	}
	err = size_only && s->cache ? gather_flat(b, s) : 1;
	if (err < 0)
		return err;
	if (!err)
		return zrfile_npy_plan_gathered(&b->file, form, b->streams,
						b->idx, b->count, b->recs,
						b->roff);
	return zrfile_npy_plan(&b->file, form, b->streams, b->nst, b->idx,
			       b->count);
}

static int plan_file(struct zrfile_batch *b,
		     const struct zrfile_batch_spec *s, int size_only,
		     char *msg, size_t cap)
{
	int err;

	if (!zrfile_npy_flat(s->form))
		return zrfile_npy_plan(&b->file, s->form, b->streams, b->nst,
				       b->idx, b->count);
	err = plan_flat(b, s, size_only);
	if (err == -EINVAL) /* npy_ragged.c, read_shapes */
		snprintf(msg, cap, "its records cannot be %s",
			 zrfile_form(s->form)->why);
	return err;
}

int zrfile_batch_plan(struct zrfile_batch *b,
		      const struct zrfile_batch_spec *s, int size_only,
		      uint64_t length, char *msg, size_t cap)
{
	int err;

	msg[0] = 0;
	if (!b->streams)
		return -ENOMEM;
	if (b->k)
		err = zrfile_bf_mix_draw(b, s, length, msg, cap);
	else
		err = plain_draw(b, s, size_only, length, msg, cap);
	if (!err)
		err = plan_file(b, s, size_only, msg, cap);
	b->total = b->file.total;
	if (!err && s->max_batch && b->total > s->max_batch) {
		too_big(s, msg, cap);
		err = -EFBIG;
	}
	return err;
}

void zrfile_batch_keep(const struct zrfile_batch_spec *s,
		       struct zrfile_batch *b)
{
	struct zrfile_shape_key key = shape_key(s, b);
	struct zrfile_kept k = { 0 };

	if (b->kept || !s->cache)
		return;
	k.shapes = zrfile_npy_take_shapes(&b->file, &k.rndim);
	if (!k.shapes)
		return; /* not such a form */
	k.recs = b->recs;
	k.off = b->roff;
	b->recs = NULL;
	b->roff = NULL;
	zrfile_shapes_put(&key, &k);
}

int zrfile_batch_fill(const struct zrfile_batch *b, char *buf)
{
	return zrfile_npy_fill(&b->file, buf);
}

void zrfile_batch_free(struct zrfile_batch *b)
{
	zrfile_npy_free(&b->file);
	free(b->recs);
	free(b->roff);
	free(b->idx);
	free(b->streams);
	free(b->lens);
	memset(b, 0, sizeof(*b));
}

void zrfile_batch_pieces(const struct zrfile_batch *b,
			 struct zrfile_batch_pieces *pc)
{
	uint64_t row, rows;

	pc->at = zrfile_npy_rows_at(&b->file, &row);
	pc->n = 1;
	pc->bytes = b->total;
	if (!pc->at || !row || !b->count)
		return;
	rows = row < ZRFILE_BATCH_PIECE_BYTES ? ZRFILE_BATCH_PIECE_BYTES / row
					      : 1;
	pc->bytes = rows * row;
	pc->n = (size_t)((b->count + rows - 1) / rows);
}

size_t zrfile_batch_piece_of(const struct zrfile_batch_pieces *pc,
			     uint64_t off)
{
	uint64_t k;

	if (pc->n == 1 || off < pc->at)
		return 0;
	k = (off - pc->at) / pc->bytes;
	return k < pc->n ? (size_t)k : pc->n - 1;
}

int zrfile_batch_fill_piece(const struct zrfile_batch *b,
			    const struct zrfile_batch_pieces *pc, char *buf,
			    size_t k)
{
	uint64_t row, rows, first;

	if (pc->n == 1)
		return zrfile_batch_fill(b, buf);
	zrfile_npy_rows_at(&b->file, &row);
	rows = pc->bytes / row;
	first = k * rows;
	if (rows > b->count - first)
		rows = b->count - first;
	return zrfile_npy_fill_rows(&b->file, buf, first, rows);
}
