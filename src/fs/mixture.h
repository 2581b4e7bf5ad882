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
 * has mix set: file_bytes.c asks here for their stores and their records.
 */
#ifndef ZRFS_MIXTURE_H
#define ZRFS_MIXTURE_H

#include "file_bytes.h"
#include "mixfile.h"

#define ZRFS_MIX_SUFFIX ".mix.json"

/* What a mixture serves; fixed once resolved (the mount's stores are). */
struct zrfs_mix {
	char *path;		/* the file, relative to SRC (messages) */
	struct zrfs_elog log;
	zr_mixfile file;
	int parsed, ok;		/* file read; its sources served */
	int records;		/* files of records (else indices only) */
	uint32_t k, nf;		/* sources; fields (1 but datasets)  */
	/* source s's field f is grid[f * k + s], its view's place in the
	 * handle's views st[slot[f * k + s]] */
	struct zrfs_fstore **grid;
	uint32_t *slot;
	const char **names;	/* nf field names (NULL: store sources) */
	struct zrfs_fstore **st; /* each store once, ascending id      */
	size_t nst;
};

/* Whether a SRC entry's name is a mixture file's. */
int zrfs_mix_named(const char *name);
/* The mixture of the file at abs (rel: relative to SRC, for messages),
 * read and parsed now (a failure is kept for its errors file); NULL when
 * out of memory. */
struct zrfs_mix *zrfs_mix_new(const char *abs, const char *rel);
/* After the whole tree is built: finds the sources among its nodes.
 * Returns whether the mixture serves batch/ and stats; if not, its
 * errors say why (also logged). */
int zrfs_mix_resolve(struct zrfs_fs *fs, struct zrfs_mix *m);
void zrfs_mix_free(struct zrfs_mix *m);

/* The encoder's streams of m's first nf fields into *out (free() it;
 * NULL: -ENOMEM), read through views (zrfs_mix_stores order; NULL: none):
 * zrfile_mix_check's verdict, msg saying why not. */
int zrfs_mix_streams(const struct zrfs_mix *m, uint32_t nf,
		     zr_view *const *views, zrfile_source **out, char *msg,
		     size_t cap);
/* Source s's records, as views show them (zrfs_mix_stores order; NULL:
 * the stores now): its shortest store's, which a dataset draws over. */
uint64_t zrfs_mix_length(const struct zrfs_mix *m, uint32_t s,
			 zr_view *const *views);
/* The stores a mixture reads, in ascending id order, each once. */
size_t zrfs_mix_stores(const struct zrfs_mix *m,
		      struct zrfs_fstore *const **out);
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
/* The stats file: JSON, one object. */
int zrfs_mix_stats(struct zrfs_mix *m, char **out, size_t *len);
/* Where batch node n's failures go: its mixture's errors, else its first
 * store's; *name gets the name they start with. */
struct zrfs_elog *zrfs_batch_elog(const struct zrfs_node *n,
				  const char **name);
struct zrfs_elog *zrfs_mix_elog(struct zrfs_mix *m);

#endif
