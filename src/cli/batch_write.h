/*
 * batch_write.h - what `zrecord batch`'s two draws share: the parsed
 * command line, the schedule entries it names, and the planner's spec and
 * output of its batch (batch.c reads a store, batchmix.c a mixture file).
 */
#ifndef ZR_CLI_BATCH_WRITE_H
#define ZR_CLI_BATCH_WRITE_H

#include "batch_file.h"
#include "cli.h"
#include "schedule.h"

typedef struct batch_args {
	const zr_cli_cmd *cmd; /* zr_cli_batch, for its usage messages */
	const char *store, *out;
	zr_sampler cfg;
	uint64_t step, start, granule;
	uint64_t at_granule; /* --start P@G's G, 0 without */
	int have_seed, have_step, indices;
	int form; /* --form: an enum zrfile_form, or -1 */
	/* --decode / --augment: the batch decoded (images.c) */
	int images;
	const char *decode, *augment;
	/* --length, --skip, --grow (schedule.h) */
	zrcommon_schedule sched;
} batch_args;

/* The length source k of sources starts with: --length's (one per
 * source), else the store's (n), which it must not pass; reports a
 * failure itself (ZR_CLI_ codes). */
int zr_cli_batch_length(const batch_args *a, size_t k, size_t sources,
			uint64_t n, uint64_t *out);

/* The planner's spec (batch_file.h) of a's batch in form, of a mixture
 * file mix (NULL: a store): no byte cap (a stack is streamed; a file built
 * whole is capped where it is written) and no shape cache. */
void zr_cli_batch_spec(const batch_args *a, int form,
		       const zrcommon_mixfile *mix,
		       struct zrfile_batch_spec *s);
/* Plans the batch of s over b's streams (zrfile_batch_sources, filled):
 * a resumed cyclic or iid run must name its granule first
 * (zrfile_batch_resumed); 0 or the planner's error, msg saying why. */
int zr_cli_batch_plan(const struct zrfile_batch_spec *s,
		      struct zrfile_batch *b, char *msg, size_t cap);
/* zr_cli_batch_plan, then the batch written to a->out; frees b.  Reports a failure itself, in the
 * planner's words where it has them (ZR_CLI_ codes). */
int zr_cli_batch_write(const batch_args *a,
		       const struct zrfile_batch_spec *s,
		       struct zrfile_batch *b);
#endif
