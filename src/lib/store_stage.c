/*
 * store_stage.c - a batch's stored bytes fetched ahead (store_stage.h):
 * the records' table entries, their places sorted, neighbours merged
 * into ranges, the ranges read at once on the I/O threads into one
 * buffer (made local first where the medium has a host cache, and then
 * only the records read, or pointed at where the cache maps them), and
 * each record's bytes found in it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "error.h"
#include "iopool.h"
#include "store_stage.h"
#include "store_view.h"

struct place {
	uint64_t off;
	uint32_t len;
	size_t k;		/* the record's place in the batch */
	const uint8_t *at;	/* where the medium holds it, or NULL: read */
};

struct range {
	uint64_t off, len;
	size_t at;		/* in the buffer */
};

struct plan {
	const zr_store *s;
	const struct zr__snap *sn;
	const uint64_t *idx;
	size_t count;
	struct place *p;	/* count, sorted by offset */
	struct range *r;	/* nr <= count */
	size_t nr;
	uint64_t bytes;		/* the ranges' sum */
	uint8_t *buf;
};

static int by_offset(const void *a, const void *b)
{
	const struct place *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/* Every record's place, read under one guard (the table may be mapped). */
static int places_load(void *arg)
{
	struct plan *pl = arg;

	for (size_t k = 0; k < pl->count; k++) {
		zr_loc l;
		int err = zr__snap_loc(pl->s, pl->sn, pl->idx[k], &l);

		if (err)
			return err;
		pl->p[k] = (struct place){ l.offset, l.phys_length, k, NULL };
	}
	return 0;
}

/* The sorted places still to read as ranges: a place starts a new one
 * past gap or the range's bound; repeats and overlaps share theirs. */
static void merge(struct plan *pl, uint64_t gap)
{
	struct range *cur = NULL;

	pl->nr = 0;
	pl->bytes = 0;
	for (size_t k = 0; k < pl->count; k++) {
		const struct place *p = &pl->p[k];
		uint64_t end = p->off + p->len;

		if (p->at)
			continue;
		if (!cur || p->off > cur->off + cur->len + gap ||
		    end - cur->off > ZR__STAGE_RANGE_MAX) {
			cur = &pl->r[pl->nr++];
			*cur = (struct range){ p->off, p->len, 0 };
		} else if (end > cur->off + cur->len) {
			cur->len = end - cur->off;
		}
	}
	for (size_t i = 0; i < pl->nr; i++) {
		pl->r[i].at = pl->bytes;
		pl->bytes += pl->r[i].len;
	}
}

static int read_range(void *ctx, size_t i)
{
	const struct plan *pl = ctx;
	const struct range *r = &pl->r[i];

	return zr__pread_all(pl->s, ZR__DATA, pl->buf + r->at, r->len, r->off);
}

static int warm_range(void *ctx, size_t i)
{
	const struct plan *pl = ctx;
	struct zr__file *f = pl->s->file[ZR__DATA];

	return f->io->warm(f, pl->r[i].off, pl->r[i].len);
}

/* Each record the medium holds in memory pointed at, not read. */
static void view(struct plan *pl)
{
	struct zr__file *f = pl->s->file[ZR__DATA];

	for (size_t k = 0; k < pl->count; k++) {
		const void *at;

		if (!f->io->view(f, pl->p[k].off, pl->p[k].len, &at))
			pl->p[k].at = at;
	}
}

/* The ranges made local first where the medium can (the host cache): the
 * blocks fetched at once, and then the records pointed at where the
 * medium can, and only the others' own bytes read, not the gaps a round
 * trip was worth reading. */
static int warm(struct plan *pl)
{
	int err;

	if (!pl->s->file[ZR__DATA]->io->warm)
		return 0;
	err = zr__io_run(warm_range, pl, pl->nr);
	if (err == -EOPNOTSUPP)
		return 0;
	if (err)
		return err;
	if (pl->s->file[ZR__DATA]->io->view)
		view(pl);
	merge(pl, 0);
	return 0;
}

/* Record k's bytes, walking the ranges along the sorted places: a
 * place is in the last range that starts at or before it. */
static void find(const struct plan *pl, const uint8_t **src)
{
	size_t i = 0;

	for (size_t k = 0; k < pl->count; k++) {
		const struct place *p = &pl->p[k];

		if (p->at) {
			src[p->k] = p->at;
			continue;
		}
		while (i + 1 < pl->nr && pl->r[i + 1].off <= p->off)
			i++;
		src[p->k] = pl->buf + pl->r[i].at + (p->off - pl->r[i].off);
	}
}

static int stage(struct plan *pl, struct zr__stage *st)
{
	int err = zr__maps_read(pl->s, pl->sn->meta, NULL, places_load, pl);

	if (err)
		return err;
	qsort(pl->p, pl->count, sizeof(*pl->p), by_offset);
	merge(pl, ZR__STAGE_GAP);
	if (pl->bytes > ZR__STAGE_MAX)
		return 0;
	err = warm(pl);
	if (err)
		return err;
	pl->buf = malloc(pl->bytes ? pl->bytes : 1);
	st->src = malloc(pl->count * sizeof(*st->src));
	if (!pl->buf || !st->src)
		return zr__fail(-ENOMEM, "%s: no memory to stage %zu records "
				"(%" PRIu64 " bytes)", pl->s->path, pl->count,
				pl->bytes);
	err = zr__io_run(read_range, pl, pl->nr);
	if (err)
		return err;
	find(pl, st->src);
	st->buf = pl->buf;
	pl->buf = NULL;
	return 0;
}

int zr__stage_fetch(const zr_store *s, const struct zr__snap *sn,
		    const uint64_t *idx, size_t count, struct zr__stage *st)
{
	struct plan pl = { .s = s, .sn = sn, .idx = idx, .count = count };
	int err;

	*st = (struct zr__stage){ 0 };
	if (sn->data->base || count < 2)
		return 0;
	pl.p = malloc(count * sizeof(*pl.p));
	pl.r = malloc(count * sizeof(*pl.r));
	err = pl.p && pl.r ? stage(&pl, st) :
	      zr__fail(-ENOMEM, "%s: no memory to stage %zu records", s->path,
		       count);
	free(pl.p);
	free(pl.r);
	free(pl.buf);
	if (err || !st->buf)
		zr__stage_free(st);
	return err;
}

void zr__stage_free(struct zr__stage *st)
{
	free(st->buf);
	free((void *)st->src);
	*st = (struct zr__stage){ 0 };
}
