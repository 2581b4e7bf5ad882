/*
 * mixture.h - mixture files served as folders: SRC's NAME.mix.json shows
 * as NAME.mix/ (a folder named *.json would confuse tools that go by the
 * suffix), holding batch/ (the mixture's batches, named and laid out as a
 * store's or a dataset's: src/files/npy_mix.h), stats (per-source counts)
 * and errors.  The file is read at mount; its sources (relative to its
 * folder) must be stores or dataset folders this mount serves.  A file
 * that cannot be served gets a folder with only errors, saying why, and
 * the line on stderr at mount start; the rest of the mount comes up.
 *
 * Its batch files are batch nodes of the batch kind (batch.c) whose node
 * has mix set: file_bytes.c plans them with the planner `zrecord batch
 * MIX` uses (src/files/batch_file.h), over the grid zrtree_mix_grid gives.
 */
#ifndef ZRTREE_MIXTURE_H
#define ZRTREE_MIXTURE_H

#include "tree.h"
#include "encoder.h"

/* The mixture of the file at abs (rel: relative to SRC, for messages),
 * read and parsed now (a failure is kept for its errors file); NULL when
 * out of memory. */
struct zrtree_mix *zrtree_mix_new(const char *abs, const char *rel);
/* After the whole tree is built: finds the sources among its nodes.
 * Returns whether the mixture serves batch/ and stats; if not, its
 * errors say why (also logged). */
int zrtree_mix_resolve(struct zrtree *t, struct zrtree_mix *m);
void zrtree_mix_free(struct zrtree_mix *m);

/* The stats file: JSON, one object. */
int zrtree_mix_stats(struct zrtree_mix *m, char **out, size_t *len);
struct zrtree_elog *zrtree_mix_elog(struct zrtree_mix *m);
/* The encoder's grid of m (source s's field f at grid[f * k + s], k * nf
 * streams, npy_mix.h), read through views (zrtree_batch_stores order; NULL:
 * the stores as each read finds them). */
void zrtree_mix_grid(const struct zrtree_mix *m, zr_view *const *views,
		   zrfile_source *grid);
/* Which batch forms its folder serves (form_table.h): those of the kind a
 * store or a dataset of its fields is, or ZRFILE_ON_MIXED when only
 * .indices.npy (sources of different fields or schemas). */
unsigned zrtree_mix_on(const struct zrtree_mix *m);

#endif
