/*
 * npy_mix.c - a mixture's fields as encoder streams (npy_mix.h): the grid
 * of its sources, a source's length in it, the check that the sources
 * have the same fields, and a batch's keys.  The streams' reads by key
 * are in source.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npy_mix.h"

zrfile_source *zrfile_mix_alloc(uint32_t k, uint32_t nf,
				zrfile_source **grid)
{
	size_t head = nf * (sizeof(zrfile_source) + sizeof(struct zrfile_mix));
	char *b;

	if (!k || !nf || k > 1024)
		return NULL;
	b = calloc(1, head + (size_t)k * nf * sizeof(zrfile_source));
	if (b)
		*grid = (zrfile_source *)(b + head);
	return (zrfile_source *)b;
}

uint64_t zrfile_mix_source_length(const zrfile_source *grid, uint32_t k,
				  uint32_t nf, uint32_t s)
{
	uint64_t n = UINT64_MAX;

	for (uint32_t f = 0; f < nf; f++) {
		const zrfile_source *c = &grid[(size_t)f * k + s];
		uint64_t l = c->view ? zr_view_length(c->view)
				     : zr_store_length(c->zs);

		n = l < n ? l : n;
	}
	return n;
}

static int same_schema(const zr_schema *a, const zr_schema *b)
{
	return a->ragged == b->ragged && !strcmp(a->dtype.str, b->dtype.str) &&
	       (a->ragged || (a->ndim == b->ndim &&
			      !memcmp(a->shape, b->shape,
				      a->ndim * sizeof(*a->shape))));
}

static int same_name(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

int zrfile_mix_check(zrfile_source *streams, uint32_t k, uint32_t nf,
		     char *msg, size_t msg_cap)
{
	struct zrfile_mix *mix = (struct zrfile_mix *)(streams + nf);
	zrfile_source *grid = (zrfile_source *)(mix + nf);

	for (uint32_t f = 0; f < nf; f++) {
		mix[f] = (struct zrfile_mix){ .k = k, .src = grid + f * k };
		streams[f] = (zrfile_source){ .zs = grid[f * k].zs,
					      .name = grid[f * k].name,
					      .mix = &mix[f] };
	}
	for (uint32_t f = 0; f < nf; f++) {
		const zrfile_source *col = grid + (size_t)f * k;
		const char *name = col[0].name ? col[0].name : "its records";

		for (uint32_t s = 1; s < k; s++) {
			if (!same_name(col[s].name, col[0].name)) {
				snprintf(msg, msg_cap, "source %u has a field "
					 "%s where source 0 has %s (sources "
					 "need the same fields)", s,
					 col[s].name ? col[s].name : "(none: a "
					 "store)", name);
				return -EINVAL;
			}
			if (!same_schema(zr_store_schema(col[s].zs),
					 zr_store_schema(col[0].zs))) {
				snprintf(msg, msg_cap, "source %u: %s differ "
					 "from source 0's in dtype, shape or "
					 "raggedness (sources need one schema "
					 "per field; --indices and "
					 ".indices.npy name the records)", s,
					 name);
				return ZR_E_SCHEMA;
			}
		}
	}
	return 0;
}

int zrfile_mix_keys(const uint32_t *src, const uint64_t *idx, size_t n,
		    uint64_t *key)
{
	for (size_t i = 0; i < n; i++) {
		if (idx[i] >> ZRFILE_MIX_SHIFT)
			return -EINVAL;
		key[i] = ZRFILE_MIX_KEY(src[i], idx[i]);
	}
	return 0;
}

int zrfile_mix_batch(const zr_stream *st, uint64_t start, uint64_t step,
		     uint32_t rank, uint32_t world, uint64_t n, uint64_t *key)
{
	uint32_t *src = malloc((n ? n : 1) * sizeof(*src));
	int err = src ? zr_stream_batch(st, start, step, rank, world, n, src,
					key) : -ENOMEM;

	/* the indices drawn into key become keys in place */
	if (err >= 0)
		err = zrfile_mix_keys(src, key, n, key) ? ZR_E_TOOBIG : 0;
	free(src);
	return err;
}
