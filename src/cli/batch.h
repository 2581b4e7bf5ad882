/*
 * batch.h - what `zrecord batch`'s two halves share: the parsed command
 * line and the schedule entries it names (batch.c reads a store,
 * batchmix.c a mixture file).
 */
#ifndef ZR_CLI_BATCH_H
#define ZR_CLI_BATCH_H

#include "cli.h"

#define ZR_CLI_MAX_ENTRIES 256
#define ZR_CLI_MAX_LENGTHS 1024

enum { ZR_CLI_SKIP, ZR_CLI_GROW, ZR_CLI_WEIGHTS };

/* One schedule entry at position at: SKIP [at, until), GROW source to
 * length, WEIGHTS (the w of a mixture file's change). */
typedef struct zr_cli_entry {
	int kind;
	uint64_t at, until, source, length;
	const uint64_t *w;
} zr_cli_entry;

typedef struct batch_args {
	const char *store, *out;
	zr_sampler cfg;
	uint64_t step, start, granule;
	int have_seed, have_step, indices;
	int form; /* --form: an enum zrfile_npy_form, or -1 */
	size_t nent;
	zr_cli_entry ent[ZR_CLI_MAX_ENTRIES];
	size_t nlen; /* --length: each source's length at position 0 */
	uint64_t len[ZR_CLI_MAX_LENGTHS];
} batch_args;

/* The length source k of sources starts with: --length's (one per
 * source), else the store's (n), which it must not pass; reports a
 * failure itself (ZR_CLI_ codes). */
int zr_cli_batch_length(const batch_args *a, size_t k, size_t sources,
			uint64_t n, uint64_t *out);

/* Applies a's entries and extra[0..nextra) to st in position order;
 * reports a failure itself (ZR_CLI_ codes). */
int zr_cli_batch_schedule(const batch_args *a, const zr_cli_entry *extra,
			  size_t nextra, zr_stream *st);
/* `zrecord batch MIX.mix.json ...` */
int zr_cli_batch_mix(const batch_args *a);

#endif
