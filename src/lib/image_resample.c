/*
 * image_resample.c - the resampler from a box of an RGB image to S x S:
 * PIL's BILINEAR (Resample.c) step for step, its coefficients, their
 * 22-bit fixed point, the uint8 horizontal pass over only the rows the
 * vertical pass needs, then the vertical pass.  Following PIL exactly is
 * what makes an undecimated resize equal PIL's own byte for byte, so the
 * tolerance a user reads in zrecord.h is the DCT scaling's alone.
 *
 * Speed without leaving PIL's integers: each weight splits into 16-bit
 * halves and the sums are recombined exactly (taps_split), so both passes
 * run as 16-lane loops of 16-bit multiplies that GCC vectorizes at -O2
 * on plain SSE2 (dot16); the vertical pass runs along a row, the
 * horizontal one across 16 rows at once, transposed in and out in 8 x 8
 * byte blocks.  tests/check_resample.c holds both to PIL's loops.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"

#define PRECISION_BITS (32 - 8 - 2)

static double triangle(double x)
{
	if (x < 0)
		x = -x;
	return x < 1.0 ? 1.0 - x : 0.0;
}

static int32_t fixed(double k)
{
	return (int32_t)(k < 0 ? -0.5 + k * (1 << PRECISION_BITS)
			       : 0.5 + k * (1 << PRECISION_BITS));
}

/* PIL's precompute_coeffs and normalize_coeffs_8bpc for one output. */
static void taps_one(struct zr__taps *t, uint32_t xx, double in0,
		     double scale, double support, double ss,
		     uint32_t insize, double *tmp)
{
	double center = in0 + (xx + 0.5) * scale, ww = 0.0;
	int xmin = (int)(center - support + 0.5);
	int xmax = (int)(center + support + 0.5);
	int32_t *k = t->k + (size_t)xx * t->ksize;

	if (xmin < 0)
		xmin = 0;
	if (xmax > (int)insize)
		xmax = (int)insize;
	xmax -= xmin;
	for (int x = 0; x < xmax; x++) {
		tmp[x] = triangle((x + xmin - center + 0.5) * ss);
		ww += tmp[x];
	}
	for (int x = 0; x < xmax; x++)
		k[x] = fixed(ww != 0.0 ? tmp[x] / ww : tmp[x]);
	t->first[xx] = (uint32_t)xmin;
	t->n[xx] = (uint32_t)(xmax > 0 ? xmax : 0);
}

/* t->kl and t->kh (image.h), or none when a weight or a sum would not
 * fit them: a weight in [0, 2^22] splits into 16-bit halves, a sum of
 * n <= 256 byte-by-low-half products fits 32 bits, and a sum of
 * byte-by-high-half products fits 16 if the high halves sum to <= 257.
 * Then lo + (hi << 16) is PIL's int32 sum exactly. */
static int taps_split(struct zr__taps *t)
{
	size_t len = (size_t)t->out * t->ksize;

	t->kl = malloc(len * sizeof(*t->kl));
	t->kh = malloc(len * sizeof(*t->kh));
	if (!t->kl || !t->kh) {
		zr__taps_free(t);
		return -ENOMEM;
	}
	for (uint32_t xx = 0; xx < t->out; xx++) {
		uint32_t hsum = 0;

		for (uint32_t i = 0; i < t->ksize; i++) {
			size_t at = (size_t)xx * t->ksize + i;
			int32_t k = t->k[at];

			if (k < 0 || k > 1 << PRECISION_BITS)
				return 0;
			t->kl[at] = (uint16_t)(k & 0xffff);
			t->kh[at] = (uint16_t)(k >> 16);
			hsum += t->kh[at];
		}
		if (t->n[xx] > 64 || hsum > 128)
			return 0;
	}
	t->split = 1;
	return 0;
}

int zr__taps_make(struct zr__taps *t, double in0, double in1,
		  uint32_t insize, uint32_t out)
{
	/* PIL's box is float: the difference is taken in float. */
	double scale = (double)((float)in1 - (float)in0) / out;
	double fs = scale < 1.0 ? 1.0 : scale, support = fs;
	double *tmp;

	memset(t, 0, sizeof(*t));
	t->out = out;
	t->ksize = (uint32_t)ceil(support) * 2 + 1;
	t->first = calloc(out, sizeof(*t->first));
	t->n = calloc(out, sizeof(*t->n));
	t->k = calloc((size_t)out * t->ksize, sizeof(*t->k));
	tmp = calloc(t->ksize, sizeof(*tmp));
	if (!t->first || !t->n || !t->k || !tmp) {
		free(tmp);
		zr__taps_free(t);
		return -ENOMEM;
	}
	for (uint32_t xx = 0; xx < out; xx++)
		taps_one(t, xx, (float)in0, scale, support, 1.0 / fs, insize,
			 tmp);
	free(tmp);
	t->lo = t->first[0];
	t->hi = t->first[out - 1] + t->n[out - 1];
	if (t->hi < t->lo)
		t->hi = t->lo;
	return taps_split(t);
}

void zr__taps_free(struct zr__taps *t)
{
	free(t->first);
	free(t->n);
	free(t->k);
	free(t->kl);
	free(t->kh);
	memset(t, 0, sizeof(*t));
}

static uint8_t clip8(int32_t v)
{
	v >>= PRECISION_BITS;
	return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
}

void zr__resample_row(const struct zr__taps *t, const uint8_t *src,
		      uint32_t col0, int flip, uint8_t *dst)
{
	for (uint32_t xx = 0; xx < t->out; xx++) {
		const int32_t *k = t->k + (size_t)xx * t->ksize;
		const uint8_t *p = src + (size_t)(t->first[xx] - col0) * 3;
		int32_t s0 = 1 << (PRECISION_BITS - 1), s1 = s0, s2 = s0;
		uint8_t *o = dst + (size_t)(flip ? t->out - 1 - xx : xx) * 3;

		for (uint32_t x = 0; x < t->n[xx]; x++) {
			s0 += p[3 * x] * k[x];
			s1 += p[3 * x + 1] * k[x];
			s2 += p[3 * x + 2] * k[x];
		}
		o[0] = clip8(s0);
		o[1] = clip8(s1);
		o[2] = clip8(s2);
	}
}

/* LANES sums of n taps at once: lane j of tap y is base[y * stride + j],
 * its weight kl[y] + kh[y] * 2^16 (taps_split).  Constant lane loops of
 * 16-bit multiplies and no aliasing: GCC vectorizes them at -O2 with
 * SSE2's pmullw and pmulhuw, where a 32-bit multiply is emulated. */
#define LANES ZR__ROWS
static void dot16(const uint16_t *kl, const uint16_t *kh, uint32_t n,
		  const uint8_t *restrict base, size_t stride,
		  uint8_t *restrict o)
{
	uint32_t lo[LANES];
	uint16_t hi[LANES];

	for (int j = 0; j < LANES; j++) {
		lo[j] = 1u << (PRECISION_BITS - 1);
		hi[j] = 0;
	}
	for (uint32_t y = 0; y < n; y++) {
		const uint8_t *restrict r = base + y * stride;
		uint16_t l = kl[y], h = kh[y];

		for (int j = 0; j < LANES; j++) {
			uint16_t p = r[j];

			lo[j] += (uint32_t)p * l;
			hi[j] += (uint16_t)(p * h);
		}
	}
	/* (2^21 + hi * 2^16 + lo) >> 22 as (hi + (lo + 2^21) >> 16) >> 6,
	 * in 16 bits after the first shift (lo >> 16 < 256 * n), so the
	 * clip is SSE2's pminsw and packuswb. */
	for (int j = 0; j < LANES; j++) {
		uint16_t v = (uint16_t)(hi[j] + (uint16_t)(lo[j] >> 16)) >> 6;

		o[j] = (uint8_t)(v > 255 ? 255 : v);
	}
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* An 8 x 8 byte transpose in words, x[r] byte j <-> x[j] byte r (little
 * endian: byte j of a word is bits 8j..8j+7): swap 4 x 4 blocks, then
 * 2 x 2, then single bytes.  A byte loop is a store a byte. */
#define SWAP(a, b, d, m)                                      \
	do {                                                  \
		uint64_t t_ = ((x[a] >> (8 * d)) ^ x[b]) & (m); \
		x[a] ^= t_ << (8 * d);                        \
		x[b] ^= t_;                                   \
	} while (0)
static inline void t8x8(uint64_t x[8])
{
	const uint64_t m4 = 0x00000000ffffffffu, m2 = 0x0000ffff0000ffffu,
		       m1 = 0x00ff00ff00ff00ffu;

	/* Written out: as loops GCC -O2 keeps them, shifts by variables. */
	SWAP(0, 4, 4, m4);
	SWAP(1, 5, 4, m4);
	SWAP(2, 6, 4, m4);
	SWAP(3, 7, 4, m4);
	SWAP(0, 2, 2, m2);
	SWAP(1, 3, 2, m2);
	SWAP(4, 6, 2, m2);
	SWAP(5, 7, 2, m2);
	SWAP(0, 1, 1, m1);
	SWAP(2, 3, 1, m1);
	SWAP(4, 5, 1, m1);
	SWAP(6, 7, 1, m1);
}
#undef SWAP
#define WORDS 1
#else
#define WORDS 0
#endif

/* Bytes [c0, len) of rows [r0, r1) between the rows (row r at row[r])
 * and the lane form (lane r of byte c at tr[c * LANES + r]): to_lanes
 * copies rows to lanes and only reads the rows, else lanes to rows. */
static inline void bytes(uint8_t *const *row, uint32_t r0, uint32_t r1,
			 size_t c0, size_t len, uint8_t *tr, int to_lanes)
{
	for (uint32_t r = r0; r < r1; r++)
		for (size_t c = c0; c < len; c++) {
			uint8_t *a = &row[r][c], *b = &tr[c * LANES + r];

			if (to_lanes)
				*b = *a;
			else
				*a = *b;
		}
}

#if WORDS
/* One 8 x 8 block the same way: eight rows' bytes c..c+7 and the eight
 * lane words at lane (tr + c * LANES + r0) trade places. */
static inline void block8(uint8_t *const row[8], size_t c, uint8_t *lane,
			  int to_lanes)
{
	uint64_t x[8];

	for (int k = 0; k < 8; k++)
		memcpy(&x[k], to_lanes ? row[k] + c : lane + k * LANES, 8);
	t8x8(x);
	for (int k = 0; k < 8; k++)
		memcpy(to_lanes ? lane + k * LANES : row[k] + c, &x[k], 8);
}
#endif

/* Bytes [0, len) of nrows rows to or from the lane form, so that a
 * horizontal tap is a dot16 row; eight rows and eight bytes at a time
 * where they are there. */
static inline void transpose(uint8_t *const *row, uint32_t nrows,
			     size_t len, uint8_t *tr, int to_lanes)
{
	uint32_t r0 = 0;

#if WORDS
	for (; r0 + 8 <= nrows; r0 += 8) {
		size_t c = 0;

		for (; c + 8 <= len; c += 8)
			block8(row + r0, c, tr + c * LANES + r0, to_lanes);
		bytes(row, r0, r0 + 8, c, len, tr, to_lanes);
	}
#endif
	bytes(row, r0, nrows, 0, len, tr, to_lanes);
}

/* Up to LANES rows of the horizontal pass through tr, the rows
 * transposed, and otr, the outputs transposed. */
static void rows_block(const struct zr__taps *t, const uint8_t *const *src,
		       uint32_t nrows, uint32_t col0, int flip, uint8_t *tr,
		       uint8_t *otr, uint8_t *dst, size_t dst_stride)
{
	size_t len = (size_t)(t->hi - t->lo) * 3;

	uint8_t *row[LANES];

	if (nrows < LANES) /* lanes past the last row zero, not undefined */
		memset(tr, 0, len * LANES);
	/* read only (to_lanes): the const goes for the one shared walk */
	for (uint32_t r = 0; r < nrows; r++)
		row[r] = (uint8_t *)src[r] + (size_t)(t->lo - col0) * 3;
	transpose(row, nrows, len, tr, 1);
	for (uint32_t xx = 0; xx < t->out; xx++) {
		size_t at = (size_t)xx * t->ksize;
		size_t ox = (size_t)(flip ? t->out - 1 - xx : xx) * 3;

		for (int c = 0; c < 3; c++)
			dot16(t->kl + at, t->kh + at, t->n[xx],
			      tr + ((t->first[xx] - t->lo) * 3 + c) * LANES,
			      3 * LANES, otr + (ox + c) * LANES);
	}
	for (uint32_t r = 0; r < nrows; r++)
		row[r] = dst + r * dst_stride;
	transpose(row, nrows, (size_t)t->out * 3, otr, 0);
}

int zr__resample_rows(const struct zr__taps *t, const uint8_t *const *src,
		      uint32_t nrows, uint32_t col0, int flip, uint8_t *dst,
		      size_t dst_stride)
{
	size_t len = (size_t)(t->hi - t->lo) * 3;
	uint8_t *tr;

	if (!t->split) {
		for (uint32_t r = 0; r < nrows; r++)
			zr__resample_row(t, src[r], col0, flip,
					 dst + r * dst_stride);
		return 0;
	}
	tr = malloc((len + (size_t)t->out * 3 + 1) * LANES);
	if (!tr)
		return -ENOMEM;
	for (uint32_t r = 0; r < nrows; r += LANES)
		rows_block(t, src + r, nrows - r < LANES ? nrows - r : LANES,
			   col0, flip, tr, tr + len * LANES,
			   dst + r * dst_stride, dst_stride);
	free(tr);
	return 0;
}

/* The vertical pass of bytes [0, len) of a row, scalar (a row under
 * LANES bytes, or weights that do not split). */
static void cols_any(const int32_t *k, uint32_t n, const uint8_t *base,
		     size_t stride, size_t len, uint8_t *o)
{
	for (size_t c = 0; c < len; c++) {
		int32_t acc = 1 << (PRECISION_BITS - 1);

		for (uint32_t y = 0; y < n; y++)
			acc += base[y * stride + c] * k[y];
		o[c] = clip8(acc);
	}
}

int zr__resample_cols(const struct zr__taps *t, const uint8_t *rows,
		      uint32_t width, uint8_t *dst)
{
	size_t stride = (size_t)width * 3;

	for (uint32_t yy = 0; yy < t->out; yy++) {
		size_t at = (size_t)yy * t->ksize;
		const uint8_t *base = rows + (t->first[yy] - t->lo) * stride;
		uint8_t *o = dst + yy * stride;

		if (stride < LANES || !t->split) {
			cols_any(t->k + at, t->n[yy], base, stride, stride, o);
			continue;
		}
		/* The last chunk overlaps the one before: the same bytes
		 * twice rather than a scalar tail. */
		for (size_t c = 0;; c += LANES) {
			if (c + LANES > stride)
				c = stride - LANES;
			dot16(t->kl + at, t->kh + at, t->n[yy], base + c,
			      stride, o + c);
			if (c + LANES == stride)
				break;
		}
	}
	return 0;
}

void zr__copy_row(const uint8_t *src, uint32_t n, int flip, uint8_t *dst)
{
	if (!flip) {
		memcpy(dst, src, (size_t)n * 3);
		return;
	}
	for (uint32_t x = 0; x < n; x++)
		memcpy(dst + (size_t)(n - 1 - x) * 3, src + (size_t)x * 3, 3);
}

/* The horizontal pass of an image's rows [y0, y1) into mid. */
static int horizontal(const struct zr__taps *tx, const uint8_t *img,
		      uint32_t w, uint32_t y0, uint32_t y1, int flip,
		      uint8_t *mid)
{
	const uint8_t *src[LANES];
	int err = 0;

	for (uint32_t y = y0; y < y1 && !err; y += LANES) {
		uint32_t n = y1 - y < LANES ? y1 - y : LANES;

		for (uint32_t r = 0; r < n; r++)
			src[r] = img + (size_t)(y + r) * w * 3;
		err = zr__resample_rows(tx, src, n, 0, flip,
					mid + (size_t)(y - y0) * tx->out * 3,
					(size_t)tx->out * 3);
	}
	return err;
}

int zr__resample(const uint8_t *img, uint32_t w, uint32_t h,
		 const struct zr__box *b, uint8_t *dst)
{
	struct zr__taps tx, ty;
	uint8_t *mid = NULL;
	int err;

	if (b->w == b->out && b->h == b->out) { /* PIL's weights are 1, 0 */
		for (uint32_t y = 0; y < b->h; y++)
			zr__copy_row(img + ((size_t)(b->y0 + y) * w + b->x0) *
					   3, b->w, b->flip,
				     dst + (size_t)y * b->w * 3);
		return 0;
	}

	err = zr__taps_make(&tx, b->x0, (double)b->x0 + b->w, w, b->out);
	if (err)
		return err;
	err = zr__taps_make(&ty, b->y0, (double)b->y0 + b->h, h, b->out);
	if (err) {
		zr__taps_free(&tx);
		return err;
	}
	mid = malloc((size_t)(ty.hi - ty.lo) * b->out * 3 + 1);
	if (!mid) {
		err = -ENOMEM;
		goto out;
	}
	err = horizontal(&tx, img, w, ty.lo, ty.hi, b->flip, mid);
	if (!err)
		err = zr__resample_cols(&ty, mid, b->out, dst);
out:
	free(mid);
	zr__taps_free(&tx);
	zr__taps_free(&ty);
	return err;
}
