/*
 * npy_mix.h - a mixture's batch through the one encoder (encoder.h): a
 * mixture file's K sources, each a store or an aligned dataset folder of
 * the same F fields, become F encoder streams whose records come from
 * the K stores of that field, named by keys (source, index).  So a
 * mixture's .npy, .npz, packed, padded and indices files are laid out and
 * filled by the code that makes a store's, and `zrecord batch MIX` and a
 * mount's NAME.mix/batch/ files are the same bytes.
 */
#ifndef ZRFILE_NPY_MIX_H
#define ZRFILE_NPY_MIX_H

#include "source.h"

/* The F streams of a mixture of k sources (1..1024) of nf fields, in one
 * allocation that free() releases whole.  *grid gets k * nf streams for
 * the caller to fill before zrfile_mix_check: source s's field f at
 * (*grid)[f * k + s] (zs, view, and the field's name: NULL for sources
 * that are single stores).  NULL when out of memory. */
zrfile_source *zrfile_mix_alloc(uint32_t k, uint32_t nf,
				zrfile_source **grid);
/* Source s's records in a grid of k sources and nf fields (laid out as
 * above): its shortest field's, which a dataset draws over, each field
 * as its view shows it (a NULL view: its store now).  `zrecord batch
 * MIX`, `zrecord stats MIX` and a mount's mixture folder (its stats, its
 * batches' lengths) all count a source so.  UINT64_MAX if nf is 0. */
uint64_t zrfile_mix_source_length(const zrfile_source *grid, uint32_t k,
				  uint32_t nf, uint32_t s);
/* Makes streams[0..nf) read the grid's fields and checks that every
 * source has the fields of source 0 (same names, the same dtype and
 * raggedness, a dense field the same item shape), which only files of
 * records need: the INDICES form takes any sources.  -EINVAL
 * (ZR_E_SCHEMA for a schema that differs) with msg saying which source
 * and field; streams[] are made either way. */
int zrfile_mix_check(zrfile_source *streams, uint32_t k, uint32_t nf,
		     char *msg, size_t msg_cap);
/* The keys of a batch: key[i] = ZRFILE_MIX_KEY(src[i], idx[i]).
 * -EINVAL for an index past 2^54. */
int zrfile_mix_keys(const uint32_t *src, const uint64_t *idx, size_t n,
		    uint64_t *key);
/* The keys of the batch of n samples mixture stream st draws
 * (zr_stream_batch's start, step, rank, world) into key: what `zrecord
 * batch MIX` and a mount's NAME.mix/batch/ files both hold.  0,
 * ZR_E_TOOBIG for an index past 2^54, -ENOMEM, or the stream's error. */
int zrfile_mix_batch(const zr_stream *st, uint64_t start, uint64_t step,
		     uint32_t rank, uint32_t world, uint64_t n, uint64_t *key);

#endif
