/*
 * shape_cache.h - what planning a packed or padded batch file read to know
 * its size (zrecordfs: a lookup of .packed.npz, .padded.npz or one of
 * their .npy parts), kept beside the encoder for
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
#ifndef ZRFILE_SHAPE_CACHE_H
#define ZRFILE_SHAPE_CACHE_H

#include <stdint.h>

/* Which batch: the same key means the same records in the same order.
 * epoch: the sum of the delete epochs (zr_view_epoch) of the views the
 * batch is drawn through, which only grows, so a delete since makes
 * another key; compacts change no record. */
struct zrfile_shape_key {
	const void *stores;	/* the caller's name for its stores       */
	uint64_t seed, step, bsize;
	int mode;		/* not the form: every form has the same records */
	uint64_t length;	/* drawn from the first length records    */
	uint64_t epoch;
	uint64_t count;		/* this rank's records                    */
};

/* One batch's: all malloc'd, owned by whoever holds the struct. */
struct zrfile_kept {
	uint64_t *shapes;	/* count * rndim values                   */
	uint32_t rndim;
	char *recs;		/* the records gathered, or NULL          */
	uint64_t *off;		/* their boundaries (count + 1), or NULL  */
};

/* Keeps k (taking it over: k is zeroed) for key's batch, in place of any
 * kept for it.  Any thread. */
void zrfile_shapes_put(const struct zrfile_shape_key *key,
		       struct zrfile_kept *k);
/* What is kept for the same batch in any of its packed or padded forms:
 * a copy of the shapes, and with recs the records (taken: the next
 * caller gathers its own).  0, or -1 when nothing is kept (*out zeroed).
 * Any thread. */
int zrfile_shapes_get(const struct zrfile_shape_key *key, int recs,
		      struct zrfile_kept *out);
void zrfile_kept_free(struct zrfile_kept *k);
/* Frees every entry (at unmount). */
void zrfile_shapes_clear(void);

#endif
