/*
 * batch_draw.c - which records a store's or a dataset's batch holds
 * (batch_draw.h): the indices from the sampler's stream under the
 * schedule; and what a mixture's draw (batch_mix.c) shares with it, the
 * schedule applied and the indices allocated.
 */
#include <errno.h>
#include <stdlib.h>

#include "batch_draw.h"
#include "batch_stream.h"

int zrfile_batch_schedule(const struct zrfile_batch_spec *s, zr_stream *st,
			  const uint64_t *base, const uint64_t *have, char *msg,
			  size_t cap)
{
	const zrcommon_mixfile *m = s->mix;
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

int zrfile_batch_alloc_idx(struct zrfile_batch *b)
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
int zrfile_batch_plain_draw(struct zrfile_batch *b,
			    const struct zrfile_batch_spec *s, int indices,
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
	err = zrfile_batch_stream(&cfg, s->granule, &st);
	if (err)
		return err;
	err = zrfile_batch_schedule(s, st, &cfg.length, &have, msg, cap);
	b->count = cfg.batch_size;
	if (!err && indices) {
		err = zrfile_batch_alloc_idx(b);
		if (!err)
			err = zr_stream_batch(st, s->start, s->step, cfg.rank,
					      cfg.world, b->count, NULL,
					      b->idx);
	}
	zr_stream_free(st);
	return err;
}
