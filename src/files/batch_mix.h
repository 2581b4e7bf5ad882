/*
 * batch_mix.h - a mixture's batch drawn for the planner (batch_file.c);
 * not for the planner's users (batch_file.h).
 */
#ifndef ZRFILE_BATCH_MIX_H
#define ZRFILE_BATCH_MIX_H

#include "batch_spec.h"

/* A mixture's streams checked, its lengths and its keys drawn into b.
 * Library codes, msg as zrfile_batch_plan's. */
int zrfile_batch_mix_draw(struct zrfile_batch *b,
			  const struct zrfile_batch_spec *s, uint64_t length,
			  char *msg, size_t cap);

#endif
