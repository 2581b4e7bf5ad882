/*
 * index_set.h - the indices an index list (index_list.h) has read, in
 * memory bounded by the store's length rather than by the input: a list
 * in input order while it is small, and two bitmaps of `limit` bits once
 * the list would cost more than they do.  A 256 MiB .npy of int8 indices
 * is 256 Mi indices, 2 GiB as a list of uint64; for a store of n records
 * the bitmaps hold any number of them in n / 4 bytes.
 *
 * The bitmaps are the indices seen and the "peaks": each index larger
 * than every one before it in input order.  The first index in input
 * order at or past a bound is always a peak (every index before it is
 * below the bound, so below it), and the smallest peak at or past the
 * bound is that first one: peaks only grow.  So the set still names the
 * index a shrunk limit refuses as the list would.
 *
 * Not thread-safe: its parser's caller owns it.
 */
#ifndef ZRFILE_INDEX_SET_H
#define ZRFILE_INDEX_SET_H

#include <stddef.h>
#include <stdint.h>

/* Zeroed is empty.  The fields are index_set.c's. */
struct zrfile_idxset {
	uint64_t *list;		/* input order, duplicates kept (small) */
	size_t n, cap;		/* list entries; with bitmaps, distinct */
	uint64_t *seen, *peaks; /* bitmaps of `bits` bits ...           */
	uint64_t bits;		/* ... or 0: the indices are the list   */
	uint64_t peak;		/* the largest index so far             */
};

/* Adds x, which the caller checked to be < limit (the store's length,
 * which may grow between calls).  -ENOMEM. */
int zrfile_idxset_add(struct zrfile_idxset *s, uint64_t x, uint64_t limit);

/* The first index in input order that is >= bound into *x: 1, or 0 when
 * every index is below it. */
int zrfile_idxset_first_at(const struct zrfile_idxset *s, uint64_t bound,
			   uint64_t *x);

/* Hands the indices over in a malloc'd array (NULL when none): the list
 * in input order with its duplicates, or, once bitmaps, each index once
 * in ascending order.  The set is empty after it.  -ENOMEM. */
int zrfile_idxset_take(struct zrfile_idxset *s, uint64_t **idx, size_t *n);

/* The heap bytes the set holds now. */
size_t zrfile_idxset_bytes(const struct zrfile_idxset *s);

void zrfile_idxset_clear(struct zrfile_idxset *s);

#endif
