/*
 * batch.h - what `zrecord batch`'s two halves share: the parsed command
 * line and the schedule entries it names (batch.c reads a store,
 * batchmix.c a mixture file).
 */
#ifndef ZR_CLI_BATCH_H
#define ZR_CLI_BATCH_H

#include "cli.h"
#include "schedule.h"

typedef struct batch_args {
	const char *store, *out;
	zr_sampler cfg;
	uint64_t step, start, granule;
	int have_seed, have_step, indices;
	int form; /* --form: an enum zrfile_npy_form, or -1 */
	/* --length, --skip, --grow (schedule.h) */
	zrcommon_schedule sched;
} batch_args;

/* The length source k of sources starts with: --length's (one per
 * source), else the store's (n), which it must not pass; reports a
 * failure itself (ZR_CLI_ codes). */
int zr_cli_batch_length(const batch_args *a, size_t k, size_t sources,
			uint64_t n, uint64_t *out);

/* Applies a's schedule to st, merged with a mixture file's weight
 * changes from[0..n) (weights[i * k ...]), as a mount does
 * (schedule.h); reports a failure itself (ZR_CLI_ codes). */
int zr_cli_batch_schedule(const batch_args *a, const uint64_t *from,
			  const uint64_t *weights, size_t n, uint32_t k,
			  zr_stream *st);
/* Whether the batch finds its records in sources holding have[k] (k
 * values) when the stream began at base (schedule.h); reports a failure
 * itself (ZR_CLI_ codes). */
int zr_cli_batch_check(const batch_args *a, const zr_stream *st,
		       const uint64_t *base, const uint64_t *have);
/* `zrecord batch MIX.mix.json ...` */
int zr_cli_batch_mix(const batch_args *a);

#endif
