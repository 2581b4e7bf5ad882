/*
 * batch_mix.c - a mixture's batch for the planner (batch_file.h): the
 * library's mixture stream (zr_stream_new_mixture, the file's weight
 * changes, the schedule, the run's start, rank and world) picks (source,
 * record) for each sample, and the encoder reads them through the
 * mixture's streams (npy_mix.h).  The batch is drawn at given source
 * lengths (a mount's lookup's, which its reads keep) or at those the
 * views show now (zrfile_mix_source_length).
 */
#include <errno.h>
#include <stdlib.h>

#include "batch_draw.h"
#include "batch_mix.h"
#include "npy_mix.h"

/* The lengths to draw at into *len: the spec's (their sum is length), or
 * now's (kept in b->lens; -ESTALE if length, 0 for any, is not their
 * sum: lengths only grow between deletes, so sums tell them apart under
 * the same epochs). */
static int lengths_of(struct zrfile_batch *b,
		      const struct zrfile_batch_spec *s, size_t nf,
		      uint64_t length, const uint64_t **len)
{
	uint64_t sum = 0;

	if (length && s->lens) {
		*len = s->lens;
		b->length = length;
		return 0;
	}
	if (!(b->lens = calloc(b->k, sizeof(*b->lens))))
		return -ENOMEM;
	for (uint32_t i = 0; i < b->k; i++) {
		b->lens[i] = zrfile_mix_source_length(b->grid, b->k,
						      (uint32_t)nf, i);
		sum += b->lens[i];
	}
	*len = b->lens;
	b->length = sum;
	return length && length != sum ? -ESTALE : 0;
}

/* The batch's keys from the mixture stream at lengths len. */
static int draw(struct zrfile_batch *b, const struct zrfile_batch_spec *s,
		const uint64_t *len, char *msg, size_t cap)
{
	uint64_t *base = malloc(b->k * sizeof(*base));
	zr_stream *st = NULL;
	int err = base ? 0 : -ENOMEM;

	if (!err && zrcommon_schedule_base(s->sched, b->k, len, base, msg,
					   cap))
		err = -ENOENT;
	if (!err)
		err = zr_stream_new_mixture(s->cfg.seed, b->k, base,
					    s->mix->weight, &st);
	if (!err)
		err = zrfile_batch_schedule(s, st, base, len, msg, cap);
	if (!err)
		err = zrfile_mix_batch(st, s->start, s->step, s->cfg.rank,
				       s->cfg.world, b->count, b->idx);
	zr_stream_free(st);
	free(base);
	return err;
}

/* The streams of every field of the grid checked (INDICES reads only
 * field 0 and takes any sources), then the keys drawn. */
int zrfile_batch_mix_draw(struct zrfile_batch *b,
			  const struct zrfile_batch_spec *s, uint64_t length,
			  char *msg, size_t cap)
{
	size_t nf = b->nst;
	const uint64_t *len;
	int err = zrfile_mix_check(b->streams, b->k, (uint32_t)nf, msg, cap);

	if (s->form == ZRFILE_INDICES) {
		err = 0;
		msg[0] = 0;
		b->nst = 1;
	}
	if (!err)
		err = lengths_of(b, s, nf, length, &len);
	b->count = s->cfg.batch_size;
	if (!err)
		err = zrfile_batch_alloc_idx(b);
	if (!err)
		err = draw(b, s, len, msg, cap);
	return err;
}
