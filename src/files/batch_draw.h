/*
 * batch_draw.h - a store's or a dataset's batch drawn for the planner
 * (batch_file.c), and what a mixture's draw (batch_mix.h) shares with it;
 * not for the planner's users (batch_file.h).
 */
#ifndef ZRFILE_BATCH_DRAW_H
#define ZRFILE_BATCH_DRAW_H

#include "batch_spec.h"

/* b->idx (indices: 0 leaves them undrawn, for a size that does not
 * depend on them) over the first length records (0: the shortest
 * stream's, as a dataset draws), and b->count and b->length.  The sampler
 * is checked either way: a bad one fails the size as it would the file.
 * Library codes, msg as zrfile_batch_plan's. */
int zrfile_batch_plain_draw(struct zrfile_batch *b,
			    const struct zrfile_batch_spec *s, int indices,
			    uint64_t length, char *msg, size_t cap);
/* b->idx for b->count values (0, ZR_E_TOOBIG or -ENOMEM), and the
 * schedule applied to st (with a mixture's weight changes) and the
 * batch's records checked in sources holding have[k]. */
int zrfile_batch_alloc_idx(struct zrfile_batch *b);
int zrfile_batch_schedule(const struct zrfile_batch_spec *s, zr_stream *st,
			  const uint64_t *base, const uint64_t *have,
			  char *msg, size_t cap);

#endif
