/*
 * image_jpeg.c - JPEG records through libjpeg-turbo's libjpeg API, which
 * (unlike TurboJPEG 2.1's) can decode part of an image: DCT-domain
 * scaling by n/8, only the iMCU columns a box needs (jpeg_crop_scanline)
 * and only its rows (jpeg_skip_scanlines, then stop).  Scanlines are
 * resampled horizontally as they come, ZR__ROWS at a time, so memory is
 * the box's rows at the output width, never the image.  Defaults are
 * PIL's (ISLOW IDCT, fancy upsampling), so a whole image is PIL's decode
 * byte for byte; CMYK and YCCK become RGB as PIL's cmyk2rgb does.  Every
 * warning (a truncated scan, bad Huffman data) is an error: that is a
 * corrupt file.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <jerror.h>

#include "image.h"

struct jerr {
	struct jpeg_error_mgr pub;
	jmp_buf jb;
	char *msg;
	size_t cap;
};

static void jerr_exit(j_common_ptr c)
{
	struct jerr *e = (struct jerr *)c->err;
	char m[JMSG_LENGTH_MAX];

	c->err->format_message(c, m);
	snprintf(e->msg, e->cap, "JPEG: %s", m);
	longjmp(e->jb, 1);
}

static void jerr_emit(j_common_ptr c, int level)
{
	if (level < 0) /* a warning: corrupt data */
		jerr_exit(c);
}

/* One decode: the libjpeg state and what must be freed on a longjmp. */
struct jdec {
	struct jpeg_decompress_struct ci;
	struct jerr err;
	uint8_t *line;  /* one CMYK scanline, then the RGB rows */
	uint8_t *rows;  /* RGB scanlines read back, stride apart (in line) */
	size_t stride;
	uint8_t *mid;   /* horizontally resampled rows */
	struct zr__taps tx, ty;
};

static void jdec_free(struct jdec *d)
{
	jpeg_destroy_decompress(&d->ci);
	free(d->line);
	free(d->mid);
	zr__taps_free(&d->tx);
	zr__taps_free(&d->ty);
}

/* Called inside the setjmp frame only. */
static void jdec_header(struct jdec *d, const void *buf, size_t len)
{
	jpeg_create_decompress(&d->ci);
	jpeg_mem_src(&d->ci, buf, (unsigned long)len);
	jpeg_read_header(&d->ci, TRUE);
	d->ci.out_color_space =
		d->ci.jpeg_color_space == JCS_CMYK ||
		d->ci.jpeg_color_space == JCS_YCCK ? JCS_CMYK : JCS_RGB;
}

static void jdec_init(struct jdec *d, char *msg, size_t cap)
{
	memset(d, 0, sizeof(*d));
	d->ci.err = jpeg_std_error(&d->err.pub);
	d->err.pub.error_exit = jerr_exit;
	d->err.pub.emit_message = jerr_emit;
	d->err.msg = msg;
	d->err.cap = cap;
}

int zr__jpeg_size(const void *buf, size_t len, uint32_t *w, uint32_t *h,
		  char *msg, size_t cap)
{
	struct jdec d;

	jdec_init(&d, msg, cap);
	if (setjmp(d.err.jb)) {
		jdec_free(&d);
		return ZR__IMG_BAD;
	}
	jdec_header(&d, buf, len);
	*w = d.ci.image_width;
	*h = d.ci.image_height;
	jdec_free(&d);
	return 0;
}

/* PIL's cmyk2rgb on inverted CMYK: (255 - K) * (1 - C / 255) as its
 * MULDIV255 rounds it. */
static uint8_t muldiv255(unsigned a, unsigned b)
{
	unsigned t = a * b + 128;

	return (uint8_t)(((t >> 8) + t) >> 8);
}

static void cmyk_row(const uint8_t *src, uint8_t *dst, size_t px)
{
	for (size_t i = 0; i < px; i++) {
		unsigned nk = src[4 * i + 3];

		for (int k = 0; k < 3; k++)
			dst[3 * i + k] = (uint8_t)(nk - muldiv255(
				255u - src[4 * i + k], nk));
	}
}

/* Reads the next scanline as RGB into rgb (CMYK through d->line). */
static void read_rgb(struct jdec *d, uint8_t *rgb)
{
	JSAMPROW row = d->ci.out_color_space == JCS_CMYK ? d->line : rgb;

	while (jpeg_read_scanlines(&d->ci, &row, 1) != 1)
		;
	if (row != rgb)
		cmyk_row(d->line, rgb, d->ci.output_width);
}

/* The n of the n/8 scaling: the smallest that keeps the box at least
 * out on both sides (8, none, for the whole image). */
static unsigned scale_for(const struct zr__box *b)
{
	uint32_t side = b->w < b->h ? b->w : b->h;

	if (!b->out)
		return 8;
	for (unsigned n = 1; n < 8; n++)
		if ((uint64_t)side * n >= (uint64_t)b->out * 8)
			return n;
	return 8;
}

static int too_big(uint32_t w, uint32_t h, char *msg, size_t cap)
{
	if ((uint64_t)w * h <= ZR__IMAGE_MAX_PIXELS)
		return 0;
	snprintf(msg, cap, "JPEG: %ux%u is over %u pixels", w, h,
		 ZR__IMAGE_MAX_PIXELS);
	return ZR__IMG_BAD;
}

/* Room in d->line for one CMYK scanline and n RGB rows that are read
 * back at once: libjpeg-turbo's AVX2 colour conversion streams a row
 * that starts 32-byte aligned past the cache (vmovntdq), so reading it
 * back came from memory (the rows' copy and the resampler's transpose
 * were a third of a decode).  Rows start at 16 mod 32: ordinary stores. */
#define ROW_ALIGN 32
static void scratch_rows(struct jdec *d, uint32_t n)
{
	size_t w = d->ci.output_width;
	uint8_t *p;

	d->stride = (w * 3 + ROW_ALIGN - 1) / ROW_ALIGN * ROW_ALIGN;
	d->line = malloc(w * 4 + 2 * ROW_ALIGN + n * d->stride);
	if (!d->line)
		ERREXIT(&d->ci, JERR_OUT_OF_MEMORY);
	p = d->line + w * 4;
	p += (ROW_ALIGN - (uintptr_t)p % ROW_ALIGN) % ROW_ALIGN;
	d->rows = p + ROW_ALIGN / 2;
}

/* The whole image, straight into dst. */
static void whole(struct jdec *d, uint8_t *dst)
{
	size_t stride = (size_t)d->ci.output_width * 3;

	for (JDIMENSION y = 0; y < d->ci.output_height; y++)
		read_rgb(d, dst + y * stride);
}

/* Decodes only the iMCU columns that columns [lo, hi) need; returns the
 * first column decoded, where each scanline then starts.  libjpeg-turbo
 * (2.1.5) upsamples a crop's edge columns as if they were the image's:
 * the edge pixel differs from a whole decode's, and on the right, fancy
 * upsampling can read a chroma sample it never wrote (valgrind's
 * uninitialised rows).  A column of margin each side keeps [lo, hi) off
 * the crop's edges, so its pixels are the whole decode's. */
static JDIMENSION crop_cols(struct jdec *d, uint32_t lo, uint32_t hi)
{
	JDIMENSION w = d->ci.output_width;
	JDIMENSION xoff = lo > 0 ? lo - 1 : 0;
	JDIMENSION width = (hi < w ? hi + 1 : w) - xoff;

	if (width >= w)
		return 0;
	jpeg_crop_scanline(&d->ci, &xoff, &width);
	return xoff;
}

/* A box the output's own size: its rows copied as they come (what the
 * resampler would compute, at no cost), or decoded straight into dst
 * when a scanline is the box's row (the whole width, unflipped): the
 * copy into a batch's cold pages was a tenth of a mount's decoded
 * batch. */
static void copied(struct jdec *d, const struct zr__box *b, uint8_t *dst)
{
	JDIMENSION xoff = crop_cols(d, b->x0, b->x0 + b->w);
	int direct = !b->flip && xoff == b->x0 && d->ci.output_width == b->w;
	uint8_t *rgb;

	scratch_rows(d, 1);
	rgb = d->rows;
	if (b->y0)
		jpeg_skip_scanlines(&d->ci, b->y0);
	for (uint32_t y = 0; y < b->h; y++) {
		uint8_t *row = dst + (size_t)y * b->w * 3;

		if (direct) {
			read_rgb(d, row);
			continue;
		}
		read_rgb(d, rgb);
		zr__copy_row(rgb + (size_t)(b->x0 - xoff) * 3, b->w, b->flip,
			     row);
	}
}

/* Rows y .. y + ZR__ROWS - 1 of the box (fewer at its end) read and
 * resampled horizontally into mid: the resampler's vectors run across
 * rows. */
static void block(struct jdec *d, JDIMENSION xoff, int flip, uint32_t y,
		  uint8_t *mid)
{
	uint32_t n = d->ty.hi - y < ZR__ROWS ? d->ty.hi - y : ZR__ROWS;
	const uint8_t *src[ZR__ROWS];
	for (uint32_t r = 0; r < n; r++) {
		uint8_t *rgb = d->rows + r * d->stride;

		read_rgb(d, rgb);
		src[r] = rgb;
	}
	if (zr__resample_rows(&d->tx, src, n, xoff, flip, mid,
			      (size_t)d->tx.out * 3))
		ERREXIT(&d->ci, JERR_OUT_OF_MEMORY);
}

/* The box at scale n/8: crop, skip, resample rows as they come, stop at
 * the box's last row. */
static void boxed(struct jdec *d, const struct zr__box *b, unsigned n,
		  uint8_t *dst)
{
	JDIMENSION xoff;
	uint32_t out = b->out;

	if (n == 8 && b->w == out && b->h == out) {
		copied(d, b, dst);
		return;
	}

	if (zr__taps_make(&d->tx, b->x0 * n / 8.0, (b->x0 + b->w) * n / 8.0,
			  d->ci.output_width, out) ||
	    zr__taps_make(&d->ty, b->y0 * n / 8.0, (b->y0 + b->h) * n / 8.0,
			  d->ci.output_height, out))
		ERREXIT(&d->ci, JERR_OUT_OF_MEMORY);
	xoff = crop_cols(d, d->tx.lo, d->tx.hi);
	scratch_rows(d, ZR__ROWS);
	d->mid = malloc((size_t)(d->ty.hi - d->ty.lo) * out * 3 + 1);
	if (!d->mid)
		ERREXIT(&d->ci, JERR_OUT_OF_MEMORY);
	if (d->ty.lo)
		jpeg_skip_scanlines(&d->ci, d->ty.lo);
	for (uint32_t y = d->ty.lo; y < d->ty.hi; y += ZR__ROWS)
		block(d, xoff, b->flip, y, d->mid + (size_t)(y - d->ty.lo) *
						   out * 3);
	if (zr__resample_cols(&d->ty, d->mid, out, dst))
		ERREXIT(&d->ci, JERR_OUT_OF_MEMORY);
}

/* The decode proper, inside zr__jpeg_decode's setjmp frame. */
static int run(struct jdec *d, const void *buf, size_t len,
	       const struct zr__box *b, uint8_t *dst, char *msg, size_t cap)
{
	unsigned n = scale_for(b);
	int rc;

	jdec_header(d, buf, len);
	rc = too_big(d->ci.image_width, d->ci.image_height, msg, cap);
	if (rc)
		return rc;
	d->ci.scale_num = n;
	d->ci.scale_denom = 8;
	jpeg_start_decompress(&d->ci);
	if (b->out) {
		boxed(d, b, n, dst);
		jpeg_abort_decompress(&d->ci);
		return 0;
	}
	if (d->ci.out_color_space == JCS_CMYK &&
	    !(d->line = malloc((size_t)d->ci.output_width * 4)))
		ERREXIT(&d->ci, JERR_OUT_OF_MEMORY);
	whole(d, dst);
	jpeg_finish_decompress(&d->ci);
	return 0;
}

int zr__jpeg_decode(const void *buf, size_t len, const struct zr__box *b,
		    uint8_t *dst, char *msg, size_t cap)
{
	struct jdec d;
	int rc;

	jdec_init(&d, msg, cap);
	if (setjmp(d.err.jb)) {
		jdec_free(&d);
		return ZR__IMG_BAD;
	}
	rc = run(&d, buf, len, b, dst, msg, cap);
	jdec_free(&d);
	return rc;
}
