/*
 * npyfile_impl.h - what the planning (npyfile.c) and the filling
 * (npyfill.c) halves of the record encoder share; not for its users.
 */
#ifndef ZR_NPYFILE_IMPL_H
#define ZR_NPYFILE_IMPL_H

#include "npyfile.h"

int zr__nf_ragged(const zr_npyfile_stream *s);
/* The .npy shape of a dense part: (B, *item_shape), or item_shape for a
 * RECORD; ZR_E_SHAPE past ZR_MAX_NDIM axes. */
int zr__nf_dense_shape(const zr_npyfile *f, const zr_npyfile_stream *s,
		       uint64_t shape[ZR_MAX_NDIM], uint32_t *ndim);
/* A ragged record's .npy of stored length logic: its size and H (see the
 * header policy in npyfile.h); ZR_E_CORRUPT if no record has that length. */
int zr__nf_ragged_size(const zr_npyfile_stream *s, uint64_t logic,
		       uint64_t *size, size_t *H);
/* How many parts a stream has in f: one per record if ragged, else one. */
size_t zr__nf_stream_parts(const zr_npyfile *f, const zr_npyfile_stream *s);
const zr_dtype *zr__nf_int64(void);
/* The PACKED and PADDED forms and their parts (npyflat.c). */
/* Plans f->form, a zr_npyfile_flat one; known: f->shapes and f->rndim hold
 * the records' shapes already. */
int zr__nf_plan_flat(zr_npyfile *f, int known);
int zr__nf_fill_flat(const zr_npyfile *f, char *buf);
/* size = a + b * c, or ZR_E_TOOBIG on overflow. */
int zr__nf_add_product(uint64_t *size, uint64_t a, uint64_t b, uint64_t c);

#endif
