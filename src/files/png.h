/*
 * png.h - uint8 image records as PNG files whose size is known before a
 * pixel is read: the image data goes into stored (uncompressed) deflate
 * blocks, so the file's size follows from the shape alone and getattr can
 * report it without encoding anything.  Shared by `zrecord get --png` and
 * zrecordfs's records/I.png.  Pure functions, no I/O.
 */
#ifndef ZRFILE_PNG_H
#define ZRFILE_PNG_H

#include <stdint.h>

#include "zrecord.h"

/* An image array: height x width pixels of channels bytes (1 gray,
 * 3 RGB, 4 RGBA), stored row-major (H, W, C) or planar (C, H, W). */
typedef struct zrfile_png {
	uint32_t height, width, channels;
	int planar;
} zrfile_png;

/* Whether an array of this dtype and shape is an image: dtype uint8 and
 * shape (H, W), (H, W, C) or (C, H, W) with C in {1, 3, 4}; when both
 * readings fit, (H, W, C) wins (NumPy and PIL's layout).  H and W from 1
 * to 2^31 - 1.  0 and *out, else ZR_E_SHAPE (ZR_E_DTYPE for another
 * dtype). */
int zrfile_png_shape(const zr_dtype *dtype, uint32_t ndim,
		     const uint64_t *shape, zrfile_png *out);

/* The PNG file's exact size in bytes. */
uint64_t zrfile_png_size(const zrfile_png *img);

/* Writes the PNG of the image whose array bytes (C order, as the shape
 * says) are pixels into out, which holds zrfile_png_size(img) bytes. */
void zrfile_png_encode(const zrfile_png *img, const void *pixels, void *out);

#endif
