/*
 * image.h - the library's image decoding, shared by its files: a record's
 * format, the box a transform takes from the image (image_box.c), the
 * resampler from a box to S x S (image_resample.c), and the decoders
 * (image_jpeg.c through libjpeg-turbo's libjpeg API for its DCT scaling
 * and partial decode; image_png.c for libspng and libwebp).  Every
 * function works on buffers, so the fuzz harness calls them directly.
 */
#ifndef ZR_IMAGE_H
#define ZR_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "zrecord.h"

/* Largest image decoded (pixels): a 30-byte header can claim gigapixels. */
#define ZR__IMAGE_MAX_PIXELS (1u << 28)
#define ZR__IMAGE_MSG 200

enum {
	ZR__IMG_JPEG = ZR_IMAGE_FORMAT_JPEG,
	ZR__IMG_PNG = ZR_IMAGE_FORMAT_PNG,
	ZR__IMG_WEBP = ZR_IMAGE_FORMAT_WEBP
};

/* The format of buf's bytes, 0 if none of the three. */
int zr__image_format(const void *buf, size_t len);

/* The part of the image a transform takes, in its pixels, and the output
 * size (out 0: the whole image as it is). */
struct zr__box {
	uint32_t x0, y0, w, h;
	uint32_t out;
	int flip;
};

/* The box opts gives an image of w x h for position pos (zrecord.h). */
void zr__image_box(const zr_image_opts *o, uint64_t pos, uint32_t w,
		   uint32_t h, struct zr__box *out);

/* One axis of a resample: for each of the out outputs, the first input
 * and the count of inputs it weighs, with weights k[i * ksize ..]. */
struct zr__taps {
	uint32_t out, ksize;
	uint32_t *first, *n;
	int32_t *k;
	uint32_t lo, hi; /* inputs touched: [lo, hi) */
	/* The same weights split, k = kl + kh * 2^16, for the 16-bit
	 * vector passes; split is 0 when they do not fit (taps_split). */
	uint16_t *kl, *kh;
	int split;
};

/* PIL's BILINEAR coefficients mapping [in0, in1) of an axis of insize
 * samples onto out samples; -ENOMEM. */
int zr__taps_make(struct zr__taps *t, double in0, double in1,
		  uint32_t insize, uint32_t out);
void zr__taps_free(struct zr__taps *t);
/* One horizontal pass of an RGB row (src[0] is input column col0) into
 * out x 3 bytes, mirrored when flip. */
void zr__resample_row(const struct zr__taps *t, const uint8_t *src,
		      uint32_t col0, int flip, uint8_t *dst);
/* The horizontal pass of nrows rows at once (src[r] as src above), row
 * r into dst + r * dst_stride; -ENOMEM.  Vectorized across rows, so best
 * given ZR__ROWS at a time. */
#define ZR__ROWS 16
int zr__resample_rows(const struct zr__taps *t, const uint8_t *const *src,
		      uint32_t nrows, uint32_t col0, int flip, uint8_t *dst,
		      size_t dst_stride);
/* The vertical pass: rows is the horizontal pass of input rows t->lo ..
 * t->hi - 1 (stride width * 3), into out rows of dst; -ENOMEM. */
int zr__resample_cols(const struct zr__taps *t, const uint8_t *rows,
		      uint32_t width, uint8_t *dst);
/* n RGB pixels from src to dst, mirrored when flip: the resample of a box
 * the output's own size. */
void zr__copy_row(const uint8_t *src, uint32_t n, int flip, uint8_t *dst);
/* The whole resample of the box of an RGB image (w x h, all in memory)
 * into b->out x b->out x 3 at dst; -ENOMEM. */
int zr__resample(const uint8_t *img, uint32_t w, uint32_t h,
		 const struct zr__box *b, uint8_t *dst);

/* The image's size (w, h) from its header. */
int zr__jpeg_size(const void *buf, size_t len, uint32_t *w, uint32_t *h,
		  char *msg, size_t cap);
int zr__png_size(const void *buf, size_t len, uint32_t *w, uint32_t *h,
		 char *msg, size_t cap);
int zr__webp_size(const void *buf, size_t len, uint32_t *w, uint32_t *h,
		  char *msg, size_t cap);
/* Decodes the box b of the image into dst (b->out 0: the whole w x h x 3
 * image; else out x out x 3).  ZR__IMG_BAD with msg filled, -ENOMEM. */
int zr__jpeg_decode(const void *buf, size_t len, const struct zr__box *b,
		    uint8_t *dst, char *msg, size_t cap);
/* The whole image as RGB (w x h x 3) into dst. */
int zr__png_rgb(const void *buf, size_t len, uint8_t *dst, size_t dst_len,
		char *msg, size_t cap);
int zr__webp_rgb(const void *buf, size_t len, uint8_t *dst, size_t dst_len,
		 char *msg, size_t cap);

/* The decoders' verdicts besides 0 and -errno: the file does not decode
 * (msg says why), or not to the size planned. */
#define ZR__IMG_BAD 1
#define ZR__IMG_SHAPE 2

/* The output's H and W under o (image_decode.c). */
int zr__image_shape(const void *buf, size_t len, const zr_image_opts *o,
		    uint32_t *oh, uint32_t *ow, char *msg, size_t cap);
/* Decodes under o for position pos into dst, which must be exactly the
 * output's H * W * 3 bytes (ZR__IMG_SHAPE otherwise). */
int zr__image_decode(const void *buf, size_t len, const zr_image_opts *o,
		     uint64_t pos, uint8_t *dst, size_t dst_len, char *msg,
		     size_t cap);
/* zr__fail of a verdict: ZR_E_IMAGE / ZR_E_SHAPE "what: msg", or -errno. */
int zr__image_fail(int rc, const char *what, const char *msg);
/* -EINVAL with a message for options zr_image_opts_parse cannot give. */
int zr__image_opts_check(const zr_image_opts *o);

#endif
