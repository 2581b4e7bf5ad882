/*
 * mixopen.h - a mixture file read and its sources opened read-only, for
 * `zrecord batch MIX.mix.json` and `zrecord stats MIX.mix.json`: the
 * stores the one resolver (src/common/mixsource.h) names, as a mount
 * takes them, laid out in the grid a mount's mixture folder has.
 */
#ifndef ZR_CLI_MIXOPEN_H
#define ZR_CLI_MIXOPEN_H

#include "cli.h"
#include "mixfile.h"
#include "encoder.h"

/* One source: a store (one field, no name) or a dataset folder (its
 * stores, by folder name in sorted order). */
typedef struct zr_cli_mixsrc {
	size_t nf;
	zr_store **zs;
	char **name; /* nf names; NULL entries for a store source */
} zr_cli_mixsrc;

/* Reads and parses the mixture file at path into *f; reports a failure
 * itself as command cmd (ZR_CLI_ codes). */
int zr_cli_mix_read(const char *path, const char *cmd, zrcommon_mixfile *f);
/* Opens the sources of mixture file f (read from path) into a calloc'ed
 * *out of f->k, with each one's records (its shortest field's in the grid
 * zr_cli_mix_grid lays out of source 0's fields, as a mount draws:
 * zrfile_mix_source_length) in have[f->k].  fields gets "" if the sources have the
 * same fields (zrcommon_mix_same_fields), else why not.  Reports a
 * failure itself as command cmd (ZR_CLI_ codes); close *out either way. */
int zr_cli_mix_open(const char *path, const zrcommon_mixfile *f,
		    const char *cmd,
		    zr_cli_mixsrc **out, uint64_t *have, char *fields,
		    size_t cap);
/* The encoder's grid of the k sources src opened, in nf fields (source
 * s's field f at grid[f * k + s], src/files/npy_mix.h), as a mount's
 * mixture folder lays it out (src/tree/mixture.c): a source of fewer
 * fields repeats its last, one of more is cut to the first nf.  No views:
 * the stores as each read finds them. */
void zr_cli_mix_grid(const zr_cli_mixsrc *src, uint32_t k, uint32_t nf,
		     zrfile_source *grid);
/* Closes what zr_cli_mix_open opened (NULL too): rc, or the first
 * closing failure if rc is ZR_CLI_OK. */
int zr_cli_mix_close(zr_cli_mixsrc *src, const zrcommon_mixfile *f,
		     const char *cmd, int rc);

/* `zrecord stats MIX.mix.json` (mixstats.c). */
int zr_cli_mix_stats(const char *path);

#endif
