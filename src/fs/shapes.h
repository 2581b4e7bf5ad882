/*
 * shapes.h - the record shapes a lookup of a packed or padded batch name
 * (.packed.npz, .padded.npz or one of their .npy parts) read to know its
 * size, kept for the plans of that batch's reads and of the lookups of its
 * other parts: np.load opens the name right after looking it up, a
 * trainer loads the parts one after another, and on a zstd store reading
 * the shapes again costs about as much as gathering the records.  A few
 * entries, bounded in bytes; a miss only reads them again, and the fill
 * checks every record's shape, so an entry can never put a wrong byte in
 * a file.
 */
#ifndef ZR_FS_SHAPES_H
#define ZR_FS_SHAPES_H

#include "fs.h"

/* Keeps shapes (count * rndim values, malloc'd; the cache frees them) of
 * batch n's records as drawn from the first length records while the
 * stores' generation was gen, in place of any kept for the same batch.
 * Any thread. */
void zr__shapes_put(const struct zr__node *n, uint64_t length, uint64_t gen,
		    uint64_t count, uint64_t *shapes, uint32_t rndim);
/* A copy (free() it) of the shapes kept for the same batch in any of its
 * packed or padded forms, or NULL.  Any thread. */
uint64_t *zr__shapes_get(const struct zr__node *n, uint64_t length,
			 uint64_t gen, uint64_t count, uint32_t *rndim);
/* Frees every entry (at unmount). */
void zr__shapes_clear(void);

#endif
