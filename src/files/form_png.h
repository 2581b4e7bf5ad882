/*
 * form_png.h - a store record as a PNG file: what `zrecord get --png`
 * writes and zrecordfs serves as records/I.png, from one piece of code.
 */
#ifndef ZRFILE_RECORD_PNG_H
#define ZRFILE_RECORD_PNG_H

#include "png.h"
#include "source.h"

/* Record idx's image shape: from the schema (dense) or from the record's
 * shape prefix (ragged; the payload is not decoded).  ZR_E_DTYPE or
 * ZR_E_SHAPE if it is not a uint8 image (see zrfile_png_shape); ZR_E_RANGE,
 * ZR_E_CORRUPT from the store. */
int zrfile_record_png_plan(const zrfile_source *s, uint64_t idx,
			   zrfile_png *img);

/* Gathers record idx and writes its PNG (zrfile_png_size(img) bytes) into
 * out.  -ESTALE if the record no longer has img's shape.  Both read the
 * store through the stream's view, if it has one. */
int zrfile_record_png_fill(const zrfile_source *s, uint64_t idx,
			   const zrfile_png *img, void *out);

#endif
