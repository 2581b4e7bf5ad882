/*
 * npyfile.h - the one encoder of NumPy files made of store records: what
 * `zrecord get` and `zrecord batch` write and what zrecordfs serves as
 * records/I.npy and batch files.  Both use it, so the same records give
 * the same bytes.
 *
 * A file is planned, then filled.  zr_npyfile_plan() computes the size and
 * the place of every part from the store's schema and record table alone:
 * no record is read or decoded, so the daemon can answer getattr with the
 * exact size.  zr_npyfile_fill() then gathers the records straight into
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
 */
#ifndef ZR_NPYFILE_H
#define ZR_NPYFILE_H

#include <stddef.h>
#include <stdint.h>

#include "npz.h"
#include "zrecord.h"

enum zr_npyfile_form {
	ZR_NPYFILE_RECORD,  /* the one record idx[0] of streams[0]: its .npy */
	ZR_NPYFILE_STACK,   /* dense streams[0]: (B, *item_shape) .npy       */
	ZR_NPYFILE_NPZ,     /* every stream's members, in stream order        */
	ZR_NPYFILE_INDICES, /* idx itself as an int64 (B,) .npy; no stream    */
	/* One ragged stream's records as an .npz of a few members (npyflat.c):
	 * PACKED: data.npy (1-d, every record flattened, concatenated),
	 * offsets.npy (int64 (B+1,) element boundaries) and shapes.npy (int64
	 * (B, ndim)); the records must share their ndim.  PADDED: data.npy
	 * ((B, max_len, *rest), records padded along axis 0 with zero bytes)
	 * and lengths.npy (int64 (B,)); the records must have ndim >= 1 and
	 * equal shapes beyond axis 0.  Else plan gives -EINVAL.  The size
	 * depends on the records' shapes: plan reads them (zr_ragged_shape). */
	ZR_NPYFILE_PACKED,
	ZR_NPYFILE_PADDED,
	/* One member of those .npz files as a .npy file of its own, byte for
	 * byte the member's bytes, on the same conditions (-EINVAL), so that
	 * np.load reads each part in a read or two and without zipfile. */
	ZR_NPYFILE_PACKED_DATA,	/* PACKED's data.npy    */
	ZR_NPYFILE_OFFSETS,	/* PACKED's offsets.npy */
	ZR_NPYFILE_SHAPES,	/* PACKED's shapes.npy  */
	ZR_NPYFILE_PADDED_DATA,	/* PADDED's data.npy    */
	ZR_NPYFILE_LENGTHS,	/* PADDED's lengths.npy */
};

/* Whether form is PACKED, PADDED or one of their parts. */
int zr_npyfile_flat(int form);
/* The forms of a ragged batch by the suffix of their files in a mount
 * (packed.npz, padded.npz, packed.npy, offsets.npy, shapes.npy,
 * padded.npy, lengths.npy), which is also the name `zrecord batch --form`
 * takes: a form, or -1 for a name that is none of them. */
int zr_npyfile_ragged_form(const char *name, size_t len);

/* A store and its name in an .npz: a dense stream NAME is one member
 * NAME.npy of shape (B, *item_shape), a ragged one is members NAME/k.npy,
 * k = 0 ... B-1.  With name NULL (a file of one stream) they are named as
 * np.savez names its arguments: arr_0.npy, or arr_k.npy per record. */
typedef struct zr_npyfile_stream {
	zr_store *zs;
	const char *name;
	/* A view of zs (zrecord.h) every read of the file goes through, so
	 * its size and its bytes come from one state of the store; NULL: the
	 * store as each read finds it. */
	zr_view *view;
} zr_npyfile_stream;

/* The encoder's reads of a stream: through its view, if it has one. */
static inline int zr_stream_gather(const zr_npyfile_stream *s,
				   const uint64_t *idx, size_t n, void *dst,
				   size_t cap, uint64_t *off)
{
	if (s->view)
		return zr_view_gather(s->view, idx, n, dst, cap, off);
	return zr_store_gather(s->zs, idx, n, dst, cap, off);
}

static inline int zr_stream_gather_size(const zr_npyfile_stream *s,
					const uint64_t *idx, size_t n,
					uint64_t *out)
{
	if (s->view)
		return zr_view_gather_size(s->view, idx, n, out);
	return zr_store_gather_size(s->zs, idx, n, out);
}

static inline int zr_stream_loc(const zr_npyfile_stream *s, uint64_t idx,
				zr_loc *out)
{
	if (s->view)
		return zr_view_loc(s->view, idx, out);
	return zr_store_loc(s->zs, idx, out);
}

static inline int zr_stream_shape(const zr_npyfile_stream *s, uint64_t idx,
				  uint32_t *ndim, uint64_t *shape)
{
	if (s->view)
		return zr_view_ragged_shape(s->view, idx, ndim, shape);
	return zr_ragged_shape(s->zs, idx, ndim, shape);
}

typedef struct zr_npyfile {
	int form;
	const zr_npyfile_stream *st;	/* the caller's, as planned         */
	size_t nst;
	const uint64_t *idx;		/* the caller's; NULL: size only    */
	uint64_t count;			/* B                                */
	zr_npz_member *part;		/* NPZ: the members                 */
	size_t nparts;
	zr_npz_member one;		/* the part of a .npy, at offset 0  */
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
} zr_npyfile;

/* Whether the size of such a file depends on which records it holds
 * (an .npz with a ragged stream, a ragged record); if not, plan may be
 * given idx NULL to compute only the size. */
int zr_npyfile_needs_records(int form, const zr_npyfile_stream *st,
			     size_t nst);

/* Lays out the file of records idx[0..count) of the streams st[0..nst).
 * st and idx must stay valid until zr_npyfile_free.  -EINVAL for a form
 * the streams cannot take (a ragged STACK, a RECORD of count != 1);
 * ZR_E_TOOBIG past what the format holds; ZR_E_RANGE, ZR_E_CORRUPT from
 * the record table.  Free the plan even when this fails. */
int zr_npyfile_plan(zr_npyfile *f, int form, const zr_npyfile_stream *st,
		    size_t nst, const uint64_t *idx, uint64_t count);

/* PACKED, PADDED and their parts: the records' shapes a plan read (count
 * * *rndim values), handed to the caller (free()), so that a later plan of
 * the same records, in any of these forms, need not read them again
 * (zr_npyfile_plan_known takes them, and
 * frees them with the plan, even when it fails) instead of reading them.
 * A stale shape cannot reach a file: fill checks each record's shape
 * against the record it gathers, or, for a part without data (offsets,
 * shapes, lengths), against the record's stored length (-ESTALE). */
uint64_t *zr_npyfile_take_shapes(zr_npyfile *f, uint32_t *rndim);
int zr_npyfile_plan_known(zr_npyfile *f, int form,
			  const zr_npyfile_stream *st, const uint64_t *idx,
			  uint64_t count, uint64_t *shapes, uint32_t rndim);

/* PACKED, PADDED and their parts, from records idx[0..count) gathered
 * already (zr_store_gather, boundaries off): their shapes are parsed from
 * their prefixes (ZR_E_CORRUPT for a bad one) and fill places them
 * rather than gathering again, so that a compressed record is decoded
 * once for both.  recs and off stay the caller's and must stay valid
 * until zr_npyfile_free. */
int zr_npyfile_plan_gathered(zr_npyfile *f, int form,
			     const zr_npyfile_stream *st, const uint64_t *idx,
			     uint64_t count, const char *recs,
			     const uint64_t *off);

/* Writes the whole file into buf (f->total + f->slack bytes).  -ESTALE if
 * a record's stored length is no longer the planned one. */
int zr_npyfile_fill(const zr_npyfile *f, void *buf);

/* A dense STACK file in pieces, so that a reader's first bytes need not
 * wait for the whole gather: zr_npyfile_rows_at gives where row 0 starts
 * (the header's length; 0 for any other form, which fills only whole)
 * and each row's bytes (*row); zr_npyfile_fill_rows writes rows
 * [first, first + n) into buf (the whole file's buffer, f->total bytes),
 * and the header with row 0.  A row depends on its record alone: rows may
 * be filled in any order, by any thread, each once. */
uint64_t zr_npyfile_rows_at(const zr_npyfile *f, uint64_t *row);
int zr_npyfile_fill_rows(const zr_npyfile *f, void *buf, uint64_t first,
			 uint64_t n);

void zr_npyfile_free(zr_npyfile *f);

#endif
