/*
 * batch_stream.c - one way to build a batch's stream (batch_stream.h).
 */
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
