/*
 * skips.h - -o skip=A:B: position ranges no batch of the mount serves,
 * applied to every batch stream (a store's, a dataset's, a mixture's)
 * exactly as `zrecord batch --skip A:B` applies them: the positions still
 * count, so every other position keeps its record (zrecord.h, "Streams").
 */
#ifndef ZRFS_SKIPS_H
#define ZRFS_SKIPS_H

#include "opts.h"

/* Adds "A:B" (A < B, decimal) to o's ranges, kept in order of A (ranges
 * of equal A as given).  0, or -1 for a bad value or past 65536 ranges. */
int zrfs_skip_add(struct zrfs_opts *o, const char *val);
/* Applies o's ranges to st, merged in position order with a mixture's
 * weight changes at from[0..n) (weights[i * k ...]; n 0 for a plain
 * stream), the changes first on a tie, as the command orders them. */
int zrfs_skip_apply(const struct zrfs_opts *o, zr_stream *st,
		    const uint64_t *from, const uint64_t *weights, size_t n,
		    uint32_t k);

#endif
