/*
 * npy_file_impl.h - what the planning (npy_plan.c) and the filling
 * (npy_fill.c) halves of the record encoder share; not for its users.
 */
#ifndef ZRFILE_NPY_FILE_IMPL_H
#define ZRFILE_NPY_FILE_IMPL_H

#include "npy_file.h"

int zrfile_nf_ragged(const zrfile_source *s);
/* The .npy shape of a dense part: (B, *item_shape), or item_shape for a
 * RECORD; ZR_E_SHAPE past ZR_MAX_NDIM axes. */
int zrfile_nf_dense_shape(const zrfile_npy *f, const zrfile_source *s,
		       uint64_t shape[ZR_MAX_NDIM], uint32_t *ndim);
/* A ragged record's .npy of stored length logic: its size and H (see the
 * header policy in npy_file.h); ZR_E_CORRUPT if no record has that length. */
int zrfile_nf_ragged_size(const zrfile_source *s, uint64_t logic,
		       uint64_t *size, size_t *H);
/* How many parts a stream has in f: one per record if ragged, else one. */
size_t zrfile_nf_stream_parts(const zrfile_npy *f, const zrfile_source *s);
const zr_dtype *zrfile_nf_int64(void);
/* An INDICES file of a mixture's stream: (B, 2) pairs, not (B,). */
int zrfile_nf_pairs(const zrfile_npy *f);
/* The PACKED and PADDED forms and their parts (npy_ragged.c). */
/* Plans f->form, a zrfile_npy_flat one; known: f->shapes and f->rndim hold
 * the records' shapes already. */
int zrfile_nf_plan_flat(zrfile_npy *f, int known);
int zrfile_nf_fill_flat(const zrfile_npy *f, char *buf);
/* size = a + b * c, or ZR_E_TOOBIG on overflow. */
int zrfile_nf_add_product(uint64_t *size, uint64_t a, uint64_t b, uint64_t c);

#endif
