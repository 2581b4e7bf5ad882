/*
 * layout.h - record and batch files as the daemon serves them: their sizes
 * from the record table and the sampler alone (getattr never decompresses)
 * and their bytes, both from the one encoder `zrecord` uses too
 * (src/common/npyfile.h, where the header policy is), and the bounds a
 * batch name must pass before any of that.
 */
#ifndef ZR_FS_LAYOUT_H
#define ZR_FS_LAYOUT_H

#include "fs.h"
#include "npyfile.h"
#include "recpng.h"

/* Size of record idx's file in form ZR__F_NPY (records/I.npy) or
 * ZR__F_PNG (records/I.png: ZR_E_DTYPE or ZR_E_SHAPE unless the record is
 * a uint8 image).  Caller holds st's read lock. */
int zr__rec_size(struct zr__fstore *st, uint64_t idx, int form,
		 uint64_t *size);
/* Whether record node n (looked up when the store's gen was n->ver[0])
 * still shows its index's bytes: no delete since changed the index (see
 * Contents in fs.h).  Caller holds st's read lock. */
int zr__rec_current(const struct zr__fstore *st, const struct zr__node *n);
/* Fills buf (size bytes, from zr__rec_size) with record idx's file. */
int zr__rec_fill(struct zr__fstore *st, uint64_t idx, int form, char *buf,
		 uint64_t size);

/* A batch file's layout: planned (zr__plan_make), then filled
 * (zr__plan_fill) under the same read locks. */
struct zr__plan {
	const struct zr__node *node;
	uint64_t *idx;		/* this rank's batch indices         */
	uint64_t length;	/* the records it samples from       */
	uint64_t count;
	zr_npyfile_stream *streams; /* the node's stores, for the encoder */
	size_t nst;
	zr_npyfile file;	/* the layout, and what fills it     */
	uint64_t total;		/* bytes of the file                 */
	/* a packed or padded form: what its lookup kept (shapes.h), or what
	 * this plan read for a lookup to keep */
	int kept;		/* planned from what was kept        */
	char *recs;		/* its records gathered, or NULL     */
	uint64_t *roff;		/* their boundaries                  */
};

/* Computes the batch's indices and layout (size_only: only what its size
 * needs), sampling from the first length records (0: all of them).
 * -EFBIG over the mount's max_batch_bytes.  Caller holds the read locks of
 * the node's stores (zr__st_rdlock_all). */
int zr__plan_make(struct zr__fs *fs, const struct zr__node *n,
		  struct zr__plan *p, int size_only, uint64_t length);
/* The sum of the node's stores' delete and compact counts: while it
 * holds, their first N records are what they were. */
uint64_t zr__batch_gen(const struct zr__node *n);
/* At lookup: the size and version tag of batch node n (see Contents in
 * fs.h), after refusing with -EFBIG, before any lock, allocation or table
 * read, a batch that would exceed max_batch_bytes or the .npz member
 * limit whatever records it held. */
int zr__batch_version(struct zr__fs *fs, const struct zr__node *n,
		      uint64_t *size, uint64_t ver[2]);
/* Gathers the batch into buf (p->total bytes). */
int zr__plan_fill(const struct zr__plan *p, char *buf);
void zr__plan_free(struct zr__plan *p);

/* A batch file in pieces, filled as reads reach them so that the gather
 * overlaps the transfer: a dense .npy's piece k holds rows [k*R, (k+1)*R)
 * (piece 0 also the header), R rows making about ZR__PIECE_BYTES; any
 * other form (an .npz's CRCs need every byte) is one piece. */
#define ZR__PIECE_BYTES (1u << 20)
struct zr__pieces {
	uint64_t at;		/* where row 0 starts (0: one piece)     */
	uint64_t bytes;		/* of a piece past piece 0's header      */
	size_t n;		/* how many                              */
};
void zr__plan_pieces(const struct zr__plan *p, struct zr__pieces *pc);
/* The piece holding byte off (< the file's size). */
size_t zr__piece_of(const struct zr__pieces *pc, uint64_t off);
/* Fills piece k of the batch into buf (the whole file's p->total bytes). */
int zr__plan_fill_piece(const struct zr__plan *p,
			const struct zr__pieces *pc, char *buf, size_t k);

/* The stores a batch node reads, in ascending id order. */
size_t zr__batch_stores(const struct zr__node *n,
			struct zr__fstore *const **out);

#endif
