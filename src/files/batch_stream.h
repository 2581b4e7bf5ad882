/*
 * batch_stream.h - the stream a `zrecord batch` or a mount's batch file is
 * drawn from, built and checked one way for both, so that the same
 * sampler and granule give the same batch or fail the same way.
 */
#ifndef ZRFILE_BATCH_STREAM_H
#define ZRFILE_BATCH_STREAM_H

#include "zrecord.h"

/* The stream of cfg (its mode, seed and length) with granule g, 0 for
 * world * batch_size (zrecord.h, "Streams").  cfg is checked as
 * zr_sampler_check checks it, except that with a granule W * B may pass
 * the length (a bigger world resumed), so it is checked as iid's there:
 * the stream then needs only G <= N (cyclic).  Library codes. */
int zrfile_batch_stream(const zr_sampler *cfg, uint64_t g,
			zr_stream **out);

/* Whether a run may start at position start with granule g (0: none
 * given) in mode: a cyclic or iid stream resumed past position 0 needs the
 * granule it was made with (its first run's W * B: a new W * B would move
 * its cycle boundaries, so records repeat within a cycle, and iid's draws
 * change), which nothing else remembers.  0, or -EINVAL with msg saying
 * how to give it. */
int zrfile_batch_resumed(zr_sampler_mode mode, uint64_t start, uint64_t g,
			   char *msg, size_t cap);

#endif
