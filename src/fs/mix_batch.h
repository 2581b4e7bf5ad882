/*
 * mix_batch.h - a mixture's batch files (mixture.h): which names its
 * folder serves, the encoder's streams of its fields and the records of a
 * batch, for file_bytes.c.
 */
#ifndef ZRFS_MIX_BATCH_H
#define ZRFS_MIX_BATCH_H

#include "batch_plan.h"

/* The encoder's streams of m's first nf fields into *out (free() it;
 * NULL: -ENOMEM), read through views (zrfs_batch_stores order; NULL: none):
 * zrfile_mix_check's verdict, msg saying why not. */
int zrfs_mix_streams(const struct zrfs_mix *m, uint32_t nf,
		     zr_view *const *views, zrfile_source **out, char *msg,
		     size_t cap);
/* Source s's records, as views show them (zrfs_batch_stores order; NULL:
 * the stores now): its shortest store's, which a dataset draws over. */
uint64_t zrfs_mix_length(const struct zrfs_mix *m, uint32_t s,
			 zr_view *const *views);
/* Which batch names its folder serves: 0 with *npz (0: .npy) and *flat
 * (the packed and padded forms), or -1 when only .indices.npy (sources of
 * different fields or schemas). */
int zrfs_mix_forms(const struct zrfs_mix *m, int *npz, int *flat);
/* zrfs_batch_version's early refusal of batch node n (see batch_bound in
 * file_bytes.c): -EFBIG past max_batch_bytes whatever records it held. */
int zrfs_mix_bound(struct zrfs_fs *fs, const struct zrfs_node *n);
/* The streams and records of mixture batch node n into p (p->streams,
 * p->nst, p->idx as keys, p->count, p->length: the lengths' sum): with
 * length, at n->lens, its lookup's source lengths; else at the lengths
 * now (as views show them, or the stores without views), kept in
 * p->lens, and -ESTALE if length (0: any) is not their sum.  Sums tell
 * lengths apart under the same epochs: lengths only grow between
 * deletes. */
int zrfs_mix_draw(struct zrfs_fs *fs, const struct zrfs_node *n,
		  struct zrfs_plan *p, uint64_t length,
		  zr_view *const *views);

#endif
