/*
 * batch_file.c - a batch file planned once for `zrecord batch` and the
 * mount (batch_file.h): a store's or dataset's indices from the sampler's
 * stream under the schedule, the encoder's layout of them (a packed or
 * padded form from what the shape cache kept, or from records gathered
 * once), the byte cap, and the file filled whole or in pieces.  The
 * draws are in batch_draw.c (a store's or a dataset's) and batch_mix.c (a
 * mixture's).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch_draw.h"
#include "batch_file.h"
#include "batch_mix.h"
#include "form_table.h"
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
	err = zrfile_source_gather_size(&b->streams[0], b->idx, b->count,
					&need);
	if (err || (s->max_batch && need > s->max_batch))
		return err ? err : 1;
	b->roff = malloc((b->count + 1) * sizeof(*b->roff));
	b->recs = malloc(need ? need : 1);
	if (!b->roff || !b->recs)
		return -ENOMEM;
	return zrfile_source_gather(&b->streams[0], b->idx, b->count, b->recs,
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

/* The position of the batch's record 0 in the run's stream, start + (step
 * * world + rank) * batch_size (zrecord.h, "Encoded images"): record k
 * of a decoded batch draws its crop from (seed, this + k), in `zrecord
 * batch --augment` and a mount's batch files alike, since both plan here
 * (loaderx's DataLoader computes the same). */
static uint64_t batch_position(const struct zrfile_batch_spec *s)
{
	uint64_t world = s->cfg.world ? s->cfg.world : 1;

	return s->start + (s->step * world + s->cfg.rank) * s->cfg.batch_size;
}

/* A decoded batch: the spec's transform at the batch's seed and
 * position; without an output size its images are of their own sizes,
 * which no array holds. */
static int plan_images(struct zrfile_batch *b,
		       const struct zrfile_batch_spec *s, char *msg,
		       size_t cap)
{
	zr_image_opts o;

	if (!s->images || (!s->images->size &&
			   !(s->images->flags & ZR_IMAGE_RRC))) {
		snprintf(msg, cap, "a decoded batch of an encoded-image store "
			 "needs an output size: decode=SIZE or augment=rrc "
			 "(the .npz and packed forms hold the stored bytes)");
		return -EINVAL;
	}
	o = *s->images;
	o.seed = s->cfg.seed;
	o.position = batch_position(s);
	return zrfile_npy_plan_images(&b->file, s->form, b->streams, b->idx,
				      b->count, &o);
}

static int plan_file(struct zrfile_batch *b,
		     const struct zrfile_batch_spec *s, int size_only,
		     char *msg, size_t cap)
{
	int err;

	if (s->form == ZRFILE_IMAGES)
		return plan_images(b, s, msg, cap);
	if (!zrfile_npy_flat(s->form))
		return zrfile_npy_plan(&b->file, s->form, b->streams, b->nst,
				       b->idx, b->count);
	err = plan_flat(b, s, size_only);
	if (err == -EINVAL) /* form_ragged.c, read_shapes */
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
		err = zrfile_batch_mix_draw(b, s, length, msg, cap);
	else
		err = zrfile_batch_plain_draw(b, s, !size_only ||
					      zrfile_npy_needs_records(
						      s->form, b->streams,
						      b->nst),
					      length, msg, cap);
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
