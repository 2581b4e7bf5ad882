/*
 * encoder.h - the one encoder of files made of store records, in every
 * form (NumPy's .npy and .npz, PNG; the table of forms, form_table.h,
 * lists them): what `zrecord get` and `zrecord batch` write and what
 * zrecordfs serves as records/I.npy, I.png and batch files.  Both use it,
 * so the same records give the same bytes.
 *
 * A file is planned, then filled.  zrfile_npy_plan() computes the size and
 * the place of every part from the store's schema and record table alone:
 * no record is read or decoded, so the daemon can answer getattr with the
 * exact size.  zrfile_npy_fill() then gathers the records straight into
 * their places (each part's bytes depend only on its own records, so a
 * later caller can fill parts separately).
 *
 * Header policy:
 * - a dense array (one record, or records stacked as (B, *item_shape)) and
 *   the indices (int64 (B,)) get np.save's header, byte for byte;
 * - a ragged record's .npy (a file, or an .npz member) is H + L bytes, L
 *   being the record's stored length (its 8 + 8*ndim byte shape prefix and
 *   its payload) and H = zr_npy_ragged_header_len(dtype, L), a multiple of
 *   64 that holds the header of any shape L bytes could carry.  Its header
 *   is H + 8 + 8*ndim bytes, padded with spaces, so the size follows from
 *   the table without decoding; the data start at a multiple of 8 (of 64
 *   in np.save's files).  np.load and np.load(mmap_mode='r') read it.
 * - an .npz is stored (not compressed), laid out by npz.h.
 *
 * Where this lives (src/files, prefix zrfile_, not libzrecord's API): its
 * plans are structs the command and the daemon keep by value and fill in
 * pieces, which an ABI would freeze, and the file framing needs zlib,
 * which the library does not.  What a binding needs of it, the arrays of
 * the packed and padded forms, is in the library instead
 * (zr_ragged_pack_into, zr_ragged_pad_shape, zr_ragged_pad in zrecord.h):
 * form_ragged.c places data.npy's elements with those very functions and
 * loaderx's RaggedStore.gather(form=) calls them through cffi, so the
 * arrays and the files' members are the same bytes
 * (tests/fs/test_ragged_forms.py).  docs/architecture.md has the choice.
 */
#ifndef ZRFILE_ENCODER_H
#define ZRFILE_ENCODER_H

#include <stddef.h>
#include <stdint.h>

#include "npz.h"
#include "png.h"
#include "source.h"
#include "zrecord.h"

/* The forms, by the table's rows (form_table.h). */
enum zrfile_form {
	ZRFILE_RECORD,  /* the one record idx[0] of streams[0]: its .npy */
	ZRFILE_STACK,   /* dense streams[0]: (B, *item_shape) .npy       */
	ZRFILE_NPZ,     /* every stream's members, in stream order        */
	ZRFILE_INDICES, /* idx itself as an int64 (B,) .npy; no stream
			 * (of a mixture's stream, st[0].mix: int64 (B, 2),
			 * each record's source and index)             */
	/* One ragged stream's records as an .npz of a few members
	 * (form_ragged.c): PACKED: data.npy (1-d, every record flattened,
	 * concatenated),
	 * offsets.npy (int64 (B+1,) element boundaries) and shapes.npy (int64
	 * (B, ndim)); the records must share their ndim.  PADDED: data.npy
	 * ((B, max_len, *rest), records padded along axis 0 with zero bytes)
	 * and lengths.npy (int64 (B,)); the records must have ndim >= 1 and
	 * equal shapes beyond axis 0.  Else plan gives -EINVAL.  The size
	 * depends on the records' shapes: plan reads them (zr_ragged_shape). */
	ZRFILE_PACKED,
	ZRFILE_PADDED,
	/* One member of those .npz files as a .npy file of its own, byte for
	 * byte the member's bytes, on the same conditions (-EINVAL), so that
	 * np.load reads each part in a read or two and without zipfile. */
	ZRFILE_PACKED_DATA,	/* PACKED's data.npy    */
	ZRFILE_OFFSETS,	/* PACKED's offsets.npy */
	ZRFILE_SHAPES,	/* PACKED's shapes.npy  */
	ZRFILE_PADDED_DATA,	/* PADDED's data.npy    */
	ZRFILE_LENGTHS,	/* PADDED's lengths.npy */
	ZRFILE_PNG,	/* the one record idx[0], a uint8 image, as a PNG */
	/* An encoded-image store's (zr_store_images; form_image.c), read
	 * through a view: record idx[0] decoded whole, as (H, W, 3) uint8
	 * .npy and as PNG; its stored bytes, if they are of the form's
	 * format (else ZR_E_DTYPE); and records idx[0..count) decoded under
	 * f->img as one (B, S, S, 3) uint8 .npy (-EINVAL unless f->img has
	 * an output size: a size or RRC). */
	ZRFILE_IMAGE,
	ZRFILE_IMAGE_PNG,
	ZRFILE_STORED_JPEG,
	ZRFILE_STORED_PNG,
	ZRFILE_STORED_WEBP,
	ZRFILE_IMAGES,
	ZRFILE_NFORMS
};

/* Whether form is PACKED, PADDED or one of their parts: its plan reads
 * the records' shapes (form_table.h, ZRFILE_HOW_SHAPES). */
int zrfile_npy_flat(int form);

typedef struct zrfile_npy {
	int form;
	const zrfile_source *st;	/* the caller's, as planned         */
	size_t nst;
	const uint64_t *idx;		/* the caller's; NULL: size only    */
	uint64_t count;			/* B                                */
	zrfile_npz_member *part;	/* NPZ: the members                 */
	size_t nparts;
	zrfile_npz_member one;		/* the part of a .npy, at offset 0  */
	char *names;			/* storage of the member names      */
	uint64_t total;			/* bytes of the file                */
	/* Bytes past total that fill uses as scratch: it takes a buffer of
	 * total + slack bytes (all forms but the PACKED and PADDED ones: 0) */
	uint64_t slack;
	/* PACKED, PADDED and their parts (form is then PACKED or PADDED and
	 * only 1 + the member's index): the records' shapes, as planned */
	int only;			/* 0: the whole .npz                */
	const char *recs;		/* gathered already (plan_gathered) */
	const uint64_t *roff;		/* their boundaries                 */
	uint32_t rndim;			/* ndim of every record             */
	uint64_t *shapes;		/* count * rndim                    */
	uint64_t longest;		/* PADDED: max_len                  */
	uint64_t elems;			/* elements of data.npy             */
	zrfile_png png;			/* PNG: the image's shape           */
	/* IMAGES: the transform, seed and position of record 0 (set by
	 * zrfile_npy_plan_images); the other image forms: zero, the
	 * whole image */
	zr_image_opts img;
	uint32_t img_h, img_w;		/* IMAGE, IMAGES: each record's */
} zrfile_npy;

/* Whether the size of such a file depends on which records it holds
 * (an .npz with a ragged stream, a ragged record); if not, plan may be
 * given idx NULL to compute only the size. */
int zrfile_npy_needs_records(int form, const zrfile_source *st,
			     size_t nst);

/* Lays out the file of records idx[0..count) of the streams st[0..nst)
 * in form, by the form's own plan (its row in form_table.c).
 * st and idx must stay valid until zrfile_npy_free.  -EINVAL for a form
 * the streams cannot take (a ragged STACK, a RECORD of count != 1);
 * ZR_E_TOOBIG past what the format holds; ZR_E_RANGE, ZR_E_CORRUPT from
 * the record table.  Free the plan even when this fails. */
int zrfile_npy_plan(zrfile_npy *f, int form, const zrfile_source *st,
		    size_t nst, const uint64_t *idx, uint64_t count);

/* PACKED, PADDED and their parts: the records' shapes a plan read (count
 * * *rndim values), handed to the caller (free()), so that a later plan of
 * the same records, in any of these forms, need not read them again
 * (zrfile_npy_plan_known takes them, and
 * frees them with the plan, even when it fails) instead of reading them.
 * A stale shape cannot reach a file: fill checks each record's shape
 * against the record it gathers, or, for a part without data (offsets,
 * shapes, lengths), against the record's stored length (-ESTALE). */
uint64_t *zrfile_npy_take_shapes(zrfile_npy *f, uint32_t *rndim);
int zrfile_npy_plan_known(zrfile_npy *f, int form,
			  const zrfile_source *st, const uint64_t *idx,
			  uint64_t count, uint64_t *shapes, uint32_t rndim);

/* PACKED, PADDED and their parts, from records idx[0..count) gathered
 * already (zr_store_gather, boundaries off): their shapes are parsed from
 * their prefixes (ZR_E_CORRUPT for a bad one) and fill places them
 * rather than gathering again, so that a compressed record is decoded
 * once for both.  recs and off stay the caller's and must stay valid
 * until zrfile_npy_free. */
int zrfile_npy_plan_gathered(zrfile_npy *f, int form,
			     const zrfile_source *st, const uint64_t *idx,
			     uint64_t count, const char *recs,
			     const uint64_t *off);

/* ZRFILE_IMAGES under the transform o (its seed and the position of
 * record 0 included). */
int zrfile_npy_plan_images(zrfile_npy *f, int form,
			   const zrfile_source *st, const uint64_t *idx,
			   uint64_t count, const zr_image_opts *o);

/* Writes the whole file into buf (f->total + f->slack bytes).  -ESTALE if
 * a record's stored length is no longer the planned one. */
int zrfile_npy_fill(const zrfile_npy *f, void *buf);

/* A dense STACK file (or a decoded IMAGES batch, each record a row) in
 * pieces, so that a reader's first bytes need not wait for the whole
 * gather: zrfile_npy_rows_at gives where row 0 starts
 * (the header's length; 0 for any other form, which fills only whole)
 * and each row's bytes (*row); zrfile_npy_fill_rows writes rows
 * [first, first + n) into buf (the whole file's buffer, f->total bytes),
 * and the header with row 0.  A row depends on its record alone: rows may
 * be filled in any order, by any thread, each once. */
uint64_t zrfile_npy_rows_at(const zrfile_npy *f, uint64_t *row);
int zrfile_npy_fill_rows(const zrfile_npy *f, void *buf, uint64_t first,
			 uint64_t n);
/* The same pieces into buffers of their own, for a writer that streams
 * the file (zrecord batch): the header (zrfile_npy_rows_at bytes) at dst,
 * or rows [first, first + n) at dst (n * row bytes). */
int zrfile_npy_fill_head(const zrfile_npy *f, void *dst);
int zrfile_npy_fill_piece(const zrfile_npy *f, void *dst, uint64_t first,
			  uint64_t n);

void zrfile_npy_free(zrfile_npy *f);

/* The largest file a caller builds whole in memory unless told otherwise:
 * 1 GiB or an eighth of the RAM, whichever is smaller (zrecordfs's
 * max_batch_bytes default, and zrecord batch's bound for the forms it
 * cannot stream). */
uint64_t zrfile_npy_default_max(void);

#endif
