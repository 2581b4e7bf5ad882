/*
 * layout.h - the exact bytes of record and batch files: their sizes from
 * the record table and the sampler alone (getattr never decompresses), and
 * filling a buffer with them (records gathered straight into place).
 *
 * A ragged record file is H + logic_length bytes, H =
 * zr_npy_ragged_header_len(): the record is gathered at offset H with its
 * shape prefix, then the .npy header is written over [0, H + prefix),
 * padded with spaces, so the header absorbs the prefix and the size needs
 * no decoding.
 */
#ifndef ZR_FS_LAYOUT_H
#define ZR_FS_LAYOUT_H

#include "fs.h"
#include "npz.h"

/* Size of record idx's file.  Caller holds st's read lock. */
int zr__rec_size(struct zr__fstore *st, uint64_t idx, uint64_t *size);
/* Fills buf (size bytes, from zr__rec_size) with record idx's file. */
int zr__rec_fill(struct zr__fstore *st, uint64_t idx, char *buf,
		 uint64_t size);

/* A batch file's layout. */
struct zr__plan {
	const struct zr__node *node;
	uint64_t *idx;		/* this rank's batch indices         */
	uint64_t count;
	zr_npz_member *m;	/* NPZ form: the members             */
	size_t nm;
	char *names;		/* storage of the member names       */
	uint64_t total;		/* bytes of the file                 */
};

/* Computes the batch's indices and layout.  Caller holds the read locks of
 * the node's stores (zr__batch_lock). */
int zr__plan_make(struct zr__fs *fs, const struct zr__node *n,
		  struct zr__plan *p);
/* Gathers the batch into buf (p->total bytes). */
int zr__plan_fill(const struct zr__plan *p, char *buf);
void zr__plan_free(struct zr__plan *p);

/* The stores a batch node reads, and taking/releasing their read locks in
 * ascending id order. */
size_t zr__batch_stores(const struct zr__node *n,
			struct zr__fstore *const **out);
void zr__batch_lock(const struct zr__node *n);
void zr__batch_unlock(const struct zr__node *n);

#endif
