/*
 * npy_parts.h - what the forms of the encoder (form_*.c) share, and each
 * form's plan and fill, which the table of forms (form_table.c) calls;
 * not for the encoder's users (encoder.h).
 */
#ifndef ZRFILE_NPY_PARTS_H
#define ZRFILE_NPY_PARTS_H

#include "encoder.h"

/* -- the parts (npy_parts.c) -------------------------------------------- */

/* Zeroes f and records what it plans. */
void zrfile_npy_init(zrfile_npy *f, int form, const zrfile_source *st,
		     size_t nst, const uint64_t *idx, uint64_t count);
int zrfile_npy_ragged(const zrfile_source *s);
/* The .npy shape of a dense part: (B, *item_shape), or item_shape for a
 * RECORD; ZR_E_SHAPE past ZR_MAX_NDIM axes. */
int zrfile_npy_dense_shape(const zrfile_npy *f, const zrfile_source *s,
			   uint64_t shape[ZR_MAX_NDIM], uint32_t *ndim);
/* A dense part's size: np.save's header and f->count rows (one for a
 * RECORD); and its header at dst (size bytes), *h its length. */
int zrfile_npy_dense_size(const zrfile_npy *f, const zrfile_source *s,
			  uint64_t *size);
int zrfile_npy_dense_header(const zrfile_npy *f, const zrfile_source *s,
			    char *dst, uint64_t size, size_t *h);
/* A ragged record's .npy of stored length logic: its size and H (see the
 * header policy in encoder.h); ZR_E_CORRUPT if no record has that length. */
int zrfile_npy_ragged_size(const zrfile_source *s, uint64_t logic,
			   uint64_t *size, size_t *H);
/* The size of ragged record idx's .npy, from its table entry. */
int zrfile_npy_record_size(const zrfile_source *s, uint64_t idx,
			   uint64_t *size);
/* One stream's parts in f from m on: its dense (B, *item_shape) part, or
 * a ragged record's .npy per record, gathered in one go. */
int zrfile_npy_fill_stream(const zrfile_npy *f, const zrfile_source *s,
			   const zrfile_npz_member *m, char *buf);
const zr_dtype *zrfile_npy_int64(void);
void zrfile_npy_put_i64(char *dst, uint64_t v);
/* size = a + b * c, or ZR_E_TOOBIG on overflow. */
int zrfile_npy_add_product(uint64_t *size, uint64_t a, uint64_t b,
			   uint64_t c);

/* -- the forms: one file each, one row each in form_table.c -------------- */

/* A plan lays f out (f->form, st, idx and count are set; idx is there
 * when the form's size needs the records): its parts and f->total.  A
 * fill writes the planned file into buf (f->total + f->slack bytes). */
int zrfile_plan_record(zrfile_npy *f);	/* form_npy.c     */
int zrfile_plan_stack(zrfile_npy *f);
int zrfile_fill_npy(const zrfile_npy *f, char *buf);
int zrfile_plan_npz(zrfile_npy *f);	/* form_npz.c     */
int zrfile_fill_npz(const zrfile_npy *f, char *buf);
int zrfile_plan_indices(zrfile_npy *f);	/* form_indices.c */
int zrfile_fill_indices(const zrfile_npy *f, char *buf);
int zrfile_plan_flat(zrfile_npy *f);	/* form_ragged.c  */
int zrfile_fill_flat(const zrfile_npy *f, char *buf);
int zrfile_plan_png(zrfile_npy *f);	/* form_png.c     */
int zrfile_fill_png(const zrfile_npy *f, char *buf);
int zrfile_plan_image(zrfile_npy *f);	/* form_image.c   */
int zrfile_fill_image(const zrfile_npy *f, char *buf);
int zrfile_plan_image_png(zrfile_npy *f);
int zrfile_fill_image_png(const zrfile_npy *f, char *buf);
int zrfile_plan_stored(zrfile_npy *f);
int zrfile_fill_stored(const zrfile_npy *f, char *buf);
int zrfile_plan_images(zrfile_npy *f);
/* IMAGES in pieces (zrfile_npy_rows_at and its kin): a record's bytes,
 * the header at dst (h bytes), records [first, first + n) at dst. */
uint64_t zrfile_image_row(const zrfile_npy *f);
int zrfile_image_head(const zrfile_npy *f, char *dst, uint64_t h);
int zrfile_image_piece(const zrfile_npy *f, char *dst, uint64_t first,
		       uint64_t n);

#endif
