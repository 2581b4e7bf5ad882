/*
 * recpng.h - a store record as a PNG file: what `zrecord get --png` writes
 * and zrecordfs serves as records/I.png, from one piece of code.
 */
#ifndef ZR_RECPNG_H
#define ZR_RECPNG_H

#include "npyfile.h"
#include "png.h"

/* Record idx's image shape: from the schema (dense) or from the record's
 * shape prefix (ragged; the payload is not decoded).  ZR_E_DTYPE or
 * ZR_E_SHAPE if it is not a uint8 image (see zr_png_shape); ZR_E_RANGE,
 * ZR_E_CORRUPT from the store. */
int zr_recpng_plan(const zr_npyfile_stream *s, uint64_t idx, zr_png *img);

/* Gathers record idx and writes its PNG (zr_png_size(img) bytes) into
 * out.  -ESTALE if the record no longer has img's shape.  Both read the
 * store through the stream's view, if it has one. */
int zr_recpng_fill(const zr_npyfile_stream *s, uint64_t idx,
		   const zr_png *img, void *out);

#endif
