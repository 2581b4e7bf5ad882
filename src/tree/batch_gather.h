/*
 * batch_gather.h - a batch file gathered piece by piece into one buffer:
 * the tree's one gather path.  An open batch file runs it on a thread of
 * its own from the open on (open_file.h), so that the lanes decode piece
 * k+1 while the kernel copies piece k; the mount's prefetcher runs it for
 * a step ahead (zrtree_gather_ahead); and an open of a step still being
 * gathered ahead takes the gather over part-way instead of starting
 * again.
 *
 * The pieces (zrfile_batch_pieces: about 1 MiB of a dense .npy's rows,
 * any other form whole) are filled one at a time, by whichever thread
 * runs the gather or needs a piece no one is filling: a runner in file
 * order, a reader the piece it reads (zrtree_gather_fill), so a read
 * ahead of the runner never waits for it.  A read of bytes already in
 * takes no lock (zrtree_gather_have).
 *
 * Each piece is filled through the views its filler gives, so a gather
 * may change hands between pieces: a plan holds what its records are
 * (sizes, shapes), never where their bytes lie, so any views of the same
 * stores whose delete epochs sum to the plan's serve it (tree.h,
 * Contents).  A mixture's pieces are filled through the views it was
 * planned with (its streams are not in the views' order): only an open
 * file gathers one.
 *
 * Threads: every call may come from any thread; g lives until its last
 * reference is put.
 */
#ifndef ZRTREE_BATCH_GATHER_H
#define ZRTREE_BATCH_GATHER_H

#include "tree.h"

struct zrtree_gather;

/* Plans batch node n's file from the first length records (0: all the
 * views show) through views (one per store, zrtree_batch_stores order)
 * and gets its buffer (a big buffer, bounded by max_batch_bytes at
 * lookup): g with one reference.  -ESTALE when the plan is not of n's
 * size or has nothing to draw from; else zrtree_plan_make's failures. */
int zrtree_gather_new(struct zrtree *t, const struct zrtree_node *n,
		      uint64_t length, zr_view *const *views,
		      struct zrtree_gather **out);
void zrtree_gather_ref(struct zrtree_gather *g);
/* Drops a reference; the last frees g and its buffer. */
void zrtree_gather_put(struct zrtree_gather *g);

/* What a runner does around each piece: go gives the views to fill it
 * through (0), or a nonzero code that ends the run with it; after (if
 * set) follows each successful go. */
struct zrtree_gather_hooks {
	int (*go)(void *ctx, zr_view *const **views);
	void (*after)(void *ctx);
	void *ctx;
};
/* Fills the pieces nobody has, in file order, until every piece is in
 * (0), go ends it or a fill fails (that code; the piece stays for the
 * next filler).  Any number of runners and readers at once. */
int zrtree_gather_run(struct zrtree_gather *g,
		      const struct zrtree_gather_hooks *h);
/* Returns once bytes [off, end) (off < end <= the size) are in: waits
 * for a piece being filled, fills one nobody is filling itself, through
 * views. */
int zrtree_gather_fill(struct zrtree_gather *g, uint64_t off, uint64_t end,
		       zr_view *const *views);
/* Whether bytes [off, end) are in, without a lock. */
int zrtree_gather_have(const struct zrtree_gather *g, uint64_t off,
		       uint64_t end);
/* How many pieces the file is in. */
size_t zrtree_gather_pieces(const struct zrtree_gather *g);
/* Whether every piece is in. */
int zrtree_gather_complete(struct zrtree_gather *g);
/* The buffer: the file's bytes where zrtree_gather_have says so. */
char *zrtree_gather_bytes(const struct zrtree_gather *g);
/* Of a complete gather the caller holds the only reference to: frees g
 * but its buffer, which the caller then owns (zrcommon_bigbuf_put, cap
 * bytes). */
char *zrtree_gather_unwrap(struct zrtree_gather *g, size_t *cap);

/* The prefetcher's gather of batch node n ahead of its lookup (n as a
 * lookup would make it but for size and ver, which this sets as that
 * lookup would: zrtree_batch_version).  It never waits and never parks:
 * its views are begun without waiting for each piece of work and ended
 * after it, so that a compact never finds an old view of it open for
 * long, and each must be at n's version's epoch (else -ESTALE: a delete
 * since, no open could take the step).  go(ctx) comes before each piece
 * of work and ends the gather with its code when nonzero; once planned,
 * publish(ctx, g) lets an open take g over (it may take a reference)
 * while this goes on filling.  0 and *out (one reference) when every
 * piece is in. */
int zrtree_gather_ahead(struct zrtree *t, struct zrtree_node *n,
			int (*go)(void *ctx),
			void (*publish)(void *ctx, struct zrtree_gather *g),
			void *ctx, struct zrtree_gather **out);

#endif
