/*
 * batch_spec.h - a batch file's spec and plan (batch_file.h): what the
 * planner's halves, its draws (batch_draw.h, batch_mix.h) and its layout
 * (batch_file.c), hand each other, and what its users keep.
 */
#ifndef ZRFILE_BATCH_SPEC_H
#define ZRFILE_BATCH_SPEC_H

#include "encoder.h"
#include "mixfile.h"
#include "schedule.h"

/* What to draw and how to lay it out.  All pointers stay the caller's and
 * must outlive the plans made from the spec. */
struct zrfile_batch_spec {
	zr_sampler cfg;		/* mode, seed, batch_size, rank, world  */
	uint64_t start;		/* the run's first position             */
	uint64_t granule;	/* 0: world * batch_size                */
	uint64_t step;
	const zrcommon_schedule *sched;
	int form;		/* an enum zrfile_form                  */
	uint64_t max_batch;	/* the file's byte cap (EFBIG); 0: none */
	/* A mixture (NULL: a store or dataset): its weights and their
	 * changes, and the source lengths to draw at (NULL: the views'). */
	const zrcommon_mixfile *mix;
	const uint64_t *lens;
	/* The shape cache's name for the stores (shape_cache.h) and the sum
	 * of their views' delete epochs; cache NULL: nothing kept. */
	const void *cache;
	uint64_t epoch;
	/* An encoded-image store's decoded batch (ZRFILE_IMAGES): the
	 * transform (its seed and position are the batch's,
	 * the planner's); NULL or no output size: refused. */
	const zr_image_opts *images;
};

/* A batch file's plan: made by zrfile_batch_plan, then filled through the
 * same views. */
struct zrfile_batch {
	zrfile_source *streams; /* the encoder's streams (owned)        */
	size_t nst;
	uint32_t k;		/* a mixture's sources (0: none)        */
	zrfile_source *grid;	/* a mixture's k * nst (in streams' block) */
	uint64_t *idx;		/* this rank's indices (a mixture: keys)*/
	uint64_t count;
	uint64_t length;	/* the records it samples from (a
				 * mixture: the lengths' sum)          */
	zrfile_npy file;	/* the layout, and what fills it        */
	uint64_t total;		/* bytes of the file                    */
	uint64_t *lens;		/* a mixture's lengths drawn at, when
				 * spec->lens was NULL (the caller may
				 * take them)                           */
	/* a packed or padded form: what was kept (shape_cache.h), or what
	 * this plan read, for zrfile_batch_keep */
	int kept;
	char *recs;
	uint64_t *roff;
};

#endif
