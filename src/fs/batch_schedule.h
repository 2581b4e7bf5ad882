/*
 * batch_schedule.h - the mount's -o length=, skip= and grow= (schedule.h),
 * applied to every batch stream (a store's, a dataset's, a mixture's)
 * exactly as `zrecord batch --length --skip --grow` applies them.  A batch
 * whose records a source does not hold yet (the length the schedule gives
 * it by the batch's last position is above the source's) does not exist:
 * ENOENT at lookup, and the errors file says why.
 */
#ifndef ZRFS_BATCH_SCHEDULE_H
#define ZRFS_BATCH_SCHEDULE_H

#include "fs.h"

/* -o skip= (which ZRCOMMON_SKIP), grow= (ZRCOMMON_GROW) or length= (2)
 * into o; 0, or -1 for a bad value. */
int zrfs_sched_option(struct zrfs_opts *o, int which, const char *val);
/* The k sources' lengths at position 0 for n: -o length's, else have
 * (their lengths at lookup).  -ENOENT, logged, for a count other than k. */
int zrfs_sched_base(struct zrfs_fs *fs, const struct zrfs_node *n,
		    uint32_t k, const uint64_t *have, uint64_t *base);
/* Applies the schedule to n's stream st, merged with a mixture file's
 * weight changes (from, weights, nw; see zrcommon_schedule_apply), and
 * checks that n's batch finds its records in sources holding have[k];
 * -ENOENT, logged, if not. */
int zrfs_sched_apply(struct zrfs_fs *fs, const struct zrfs_node *n,
		     zr_stream *st, const uint64_t *from,
		     const uint64_t *weights, size_t nw,
		     const uint64_t *base, const uint64_t *have);

#endif
