/*
 * batch_file_impl.h - what the two halves of the batch planner share:
 * batch_file.c (plans, a store's or dataset's draw) and batch_mix.c (a
 * mixture's draw); not for its users (batch_file.h).
 */
#ifndef ZRFILE_BATCH_FILE_IMPL_H
#define ZRFILE_BATCH_FILE_IMPL_H

#include "batch_file.h"

/* batch_mix.c: a mixture's streams checked, its lengths and its keys
 * drawn into b.  Library codes, msg as zrfile_batch_plan's. */
int zrfile_bf_mix_draw(struct zrfile_batch *b,
		       const struct zrfile_batch_spec *s, uint64_t length,
		       char *msg, size_t cap);
/* batch_file.c: b->idx for b->count values (0, ZR_E_TOOBIG or -ENOMEM),
 * and the schedule applied to st (with a mixture's weight changes) and
 * the batch's records checked in sources holding have[k]. */
int zrfile_bf_alloc_idx(struct zrfile_batch *b);
int zrfile_bf_schedule(const struct zrfile_batch_spec *s, zr_stream *st,
		       const uint64_t *base, const uint64_t *have, char *msg,
		       size_t cap);

#endif
