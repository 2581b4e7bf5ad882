/*
 * batch_file.h - the one planner of a batch file: which records the
 * sampler's batch (seed, step) holds, drawn from a store's, a dataset's or
 * a mixture's stream under the schedule (-o length/skip/grow, --length
 * --skip --grow), and the encoder's layout of them (encoder.h).
 * `zrecord batch` (plain and MIX) and a zrecordfs mount's batch files both
 * plan here, so the same parameters give the same bytes and fail with the
 * same words by construction.
 *
 * A batch is a spec (what to draw, from which streams, in which form) and
 * a plan made from it: zrfile_batch_sources() gives the streams for the
 * caller to fill (each store through its view), zrfile_batch_plan() draws
 * the indices and lays the file out, zrfile_batch_fill() (or piece by
 * piece) writes it, zrfile_batch_free() releases it.  Messages a user must
 * read (a batch past the store's records, over max_batch, a form the
 * records cannot take) come back as text in msg: the command prints it,
 * the mount writes it to its errors file.
 */
#ifndef ZRFILE_BATCH_FILE_H
#define ZRFILE_BATCH_FILE_H

#include "batch_spec.h"

/* Zeroes b and gives the streams for the caller to fill before planning:
 * nf streams (the fields of a store or dataset; k 0), or a mixture's k *
 * nf grid (source s's field f at [f * k + s], npy_mix.h).  Each stream's
 * zs, name (a dataset's field, else NULL) and view.  NULL when out of
 * memory (free b all the same). */
zrfile_source *zrfile_batch_sources(struct zrfile_batch *b, uint32_t k,
				    size_t nf);

/* Before any view, allocation or table read: what any batch of the
 * spec's size and form holds at least, summed over its fields (one store
 * per field: a mixture's first source's), then -EFBIG (msg saying why)
 * when that would pass max_batch or the .npz member limit whatever
 * records it held. */
struct zrfile_batch_least {
	uint64_t bytes;		/* per record                           */
	uint64_t members;	/* of an .npz                           */
};
void zrfile_batch_least_init(struct zrfile_batch_least *l, int mixture);
void zrfile_batch_least_add(const struct zrfile_batch_spec *s,
			    struct zrfile_batch_least *l, zr_store *field);
int zrfile_batch_bound(const struct zrfile_batch_spec *s,
		       const struct zrfile_batch_least *l, char *msg,
		       size_t cap);

/* Draws the batch and lays out its file (size_only: only what its size
 * needs; the indices are drawn anyway when the size depends on them),
 * from the first length records (0: the views' shortest; a mixture:
 * length is the sum its lengths must have, -ESTALE if not).  -ENOENT
 * when there is nothing to draw from yet, or with msg when the schedule
 * leaves a source short of the batch's records; -EFBIG (msg) over
 * max_batch; -EINVAL (msg, for a packed or padded form) for records the
 * form cannot take; else library codes.  msg is "" when it says nothing.
 * Free b even when this fails. */
int zrfile_batch_plan(struct zrfile_batch *b,
		      const struct zrfile_batch_spec *s, int size_only,
		      uint64_t length, char *msg, size_t cap);

/* What a size-only plan of a packed or padded form read, kept for the
 * next plans of the same batch (shape_cache.h); nothing if it was planned
 * from what was kept or spec->cache is NULL. */
void zrfile_batch_keep(const struct zrfile_batch_spec *s,
		       struct zrfile_batch *b);

/* Writes the whole file into buf (b->total + b->file.slack bytes). */
int zrfile_batch_fill(const struct zrfile_batch *b, char *buf);
void zrfile_batch_free(struct zrfile_batch *b);

/* A batch file in pieces, filled as reads reach them so that the gather
 * overlaps the transfer: a dense .npy's (or a decoded image batch's: an
 * image a row) piece k holds rows [k*R, (k+1)*R)
 * (piece 0 also the header), R rows making about ZRFILE_BATCH_PIECE_BYTES;
 * any other form (an .npz's CRCs need every byte) is one piece. */
#define ZRFILE_BATCH_PIECE_BYTES (1u << 20)
struct zrfile_batch_pieces {
	uint64_t at;		/* where row 0 starts (0: one piece)     */
	uint64_t bytes;		/* of a piece past piece 0's header      */
	size_t n;		/* how many                              */
};
void zrfile_batch_pieces(const struct zrfile_batch *b,
			 struct zrfile_batch_pieces *pc);
/* The piece holding byte off (< the file's size). */
size_t zrfile_batch_piece_of(const struct zrfile_batch_pieces *pc,
			     uint64_t off);
/* Fills piece k into buf (the whole file's b->total bytes).  Pieces may
 * be filled in any order, by any thread, each once. */
int zrfile_batch_fill_piece(const struct zrfile_batch *b,
			    const struct zrfile_batch_pieces *pc, char *buf,
			    size_t k);

#endif
