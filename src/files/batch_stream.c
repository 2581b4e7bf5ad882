/*
 * batch_stream.c - one way to build a batch's stream (batch_stream.h).
 */
#include <errno.h>
#include <stdio.h>

#include "batch_stream.h"

int zrfile_batch_stream(const zr_sampler *cfg, uint64_t g,
			zr_stream **out)
{
	zr_sampler c = *cfg;
	int err;

	if (g)
		c.mode = ZR_SAMPLER_IID;
	err = zr_sampler_check(&c);
	if (err)
		return err;
	if (!g)
		g = (cfg->world > 1 ? cfg->world : 1) * cfg->batch_size;
	return zr_stream_new(cfg->mode, cfg->seed, cfg->length, g, out);
}

int zrfile_batch_resumed(zr_sampler_mode mode, uint64_t start, uint64_t g,
			   char *msg, size_t cap)
{
	if (!start || g || mode == ZR_SAMPLER_SEQUENTIAL)
		return 0;
	snprintf(msg, cap, "start %llu has no granule: %s stream resumed "
		 "past 0 needs the W*B of the run that began it (start=P@G, "
		 "--start P@G, or granule=G, --granule G)",
		 (unsigned long long)start,
		 mode == ZR_SAMPLER_CYCLIC ? "a cyclic" : "an iid");
	return -EINVAL;
}
