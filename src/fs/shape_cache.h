/*
 * shape_cache.h - what a lookup of a packed or padded batch name (.packed.npz,
 * .padded.npz or one of their .npy parts) read to know its size, kept for
 * the plans of that batch's reads and of the lookups of its other parts:
 * np.load opens the name right after looking it up, and a trainer loads
 * the parts one after another.  That is the records' shapes, and on a
 * compressed store the records themselves: reading a shape there decodes
 * the frame's first block, about as much as the whole record for short
 * ones, so the lookup gathers them once and the first fill places them.
 * A few entries, bounded in bytes; a miss only reads them again, and the
 * fill checks every record's shape, so an entry can never put a wrong
 * byte in a file.
 */
#ifndef ZRFS_SHAPE_CACHE_H
#define ZRFS_SHAPE_CACHE_H

#include "fs.h"

/* One batch's: all malloc'd, owned by whoever holds the struct. */
struct zrfs_kept {
	uint64_t *shapes;	/* count * rndim values                   */
	uint32_t rndim;
	char *recs;		/* the records gathered, or NULL          */
	uint64_t *off;		/* their boundaries (count + 1), or NULL  */
};

/* Keeps k (taking it over: k is zeroed) for batch n's records as drawn
 * from the first length records while the stores' delete epochs summed to epoch (zrfs_views_epoch), in
 * place of any kept for the same batch.  Any thread. */
void zrfs_shapes_put(const struct zrfs_node *n, uint64_t length, uint64_t epoch,
		    uint64_t count, struct zrfs_kept *k);
/* What is kept for the same batch in any of its packed or padded forms:
 * a copy of the shapes, and with recs the records (taken: the next
 * caller gathers its own).  0, or -1 when nothing is kept (*out zeroed).
 * Any thread. */
int zrfs_shapes_get(const struct zrfs_node *n, uint64_t length, uint64_t epoch,
		   uint64_t count, int recs, struct zrfs_kept *out);
void zrfs_kept_free(struct zrfs_kept *k);
/* Frees every entry (at unmount). */
void zrfs_shapes_clear(void);

#endif
