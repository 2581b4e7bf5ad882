/*
 * image_resample.c - the resampler from a box of an RGB image to S x S:
 * PIL's BILINEAR (Resample.c) step for step, its coefficients, their
 * 22-bit fixed point, the uint8 horizontal pass over only the rows the
 * vertical pass needs, then the vertical pass.  Following PIL exactly is
 * what makes an undecimated resize equal PIL's own byte for byte, so the
 * tolerance a user reads in zrecord.h is the DCT scaling's alone.
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

/* t->pk and t->pfirst (image.h); 0 with them NULL when the window does
 * not fit, or -ENOMEM. */
static int taps_pad(struct zr__taps *t)
{
	uint32_t K = 0;

	for (uint32_t xx = 0; xx < t->out; xx++)
		K = t->n[xx] > K ? t->n[xx] : K;
	t->pn = K;
	if (t->hi - t->lo < K)
		return 0;
	t->pfirst = calloc(t->out, sizeof(*t->pfirst));
	t->pk = calloc((size_t)t->out * K, sizeof(*t->pk));
	if (!t->pfirst || !t->pk) {
		zr__taps_free(t);
		return -ENOMEM;
	}
	for (uint32_t xx = 0; xx < t->out; xx++) {
		uint32_t s = t->first[xx] + K > t->hi ? t->hi - K
						      : t->first[xx];

		if (s < t->lo || s > t->first[xx] ||
		    t->first[xx] + t->n[xx] > t->hi) {
			free(t->pk);
			free(t->pfirst);
			t->pk = NULL;
			t->pfirst = NULL;
			return 0;
		}
		t->pfirst[xx] = s;
		memcpy(t->pk + (size_t)xx * K + (t->first[xx] - s),
		       t->k + (size_t)xx * t->ksize,
		       t->n[xx] * sizeof(*t->pk));
	}
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
	return taps_pad(t);
}

void zr__taps_free(struct zr__taps *t)
{
	free(t->first);
	free(t->n);
	free(t->k);
	free(t->pfirst);
	free(t->pk);
	memset(t, 0, sizeof(*t));
}

static uint8_t clip8(int32_t v)
{
	v >>= PRECISION_BITS;
	return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
}

/* One output of the horizontal pass, PIL's sums over kn taps from p. */
static inline void row_px(const int32_t *k, const uint8_t *p, uint32_t kn,
			  uint8_t *o)
{
	int32_t s0 = 1 << (PRECISION_BITS - 1), s1 = s0, s2 = s0;

	for (uint32_t x = 0; x < kn; x++) {
		s0 += p[3 * x] * k[x];
		s1 += p[3 * x + 1] * k[x];
		s2 += p[3 * x + 2] * k[x];
	}
	o[0] = clip8(s0);
	o[1] = clip8(s1);
	o[2] = clip8(s2);
}

/* The horizontal pass over the padded kernels with a constant tap count
 * K: the compiler unrolls the sums, and the zero taps add nothing. */
#define ROW_K(K)                                                            \
	static void row_k##K(const struct zr__taps *t, const uint8_t *src,  \
			     uint32_t col0, int flip, uint8_t *dst)         \
	{                                                                   \
		for (uint32_t xx = 0; xx < t->out; xx++)                    \
			row_px(t->pk + (size_t)xx * K,                      \
			       src + (size_t)(t->pfirst[xx] - col0) * 3, K, \
			       dst + (size_t)(flip ? t->out - 1 - xx : xx) * 3); \
	}
ROW_K(2)
ROW_K(3)
ROW_K(4)
ROW_K(5)
ROW_K(6)
ROW_K(7)

void zr__resample_row(const struct zr__taps *t, const uint8_t *src,
		      uint32_t col0, int flip, uint8_t *dst)
{
	switch (t->pk ? t->pn : 0) {
	case 2: row_k2(t, src, col0, flip, dst); return;
	case 3: row_k3(t, src, col0, flip, dst); return;
	case 4: row_k4(t, src, col0, flip, dst); return;
	case 5: row_k5(t, src, col0, flip, dst); return;
	case 6: row_k6(t, src, col0, flip, dst); return;
	case 7: row_k7(t, src, col0, flip, dst); return;
	}
	for (uint32_t xx = 0; xx < t->out; xx++)
		row_px(t->k + (size_t)xx * t->ksize,
		       src + (size_t)(t->first[xx] - col0) * 3, t->n[xx],
		       dst + (size_t)(flip ? t->out - 1 - xx : xx) * 3);
}

/* The vertical pass over CHUNK bytes of a row (columns c .. c + CHUNK of
 * rows base, base + stride, ...): a constant trip count and no aliasing,
 * so the compiler vectorizes it at -O2; PIL's sums, in the same ints. */
#define CHUNK 32
static void cols_chunk(const int32_t *k, uint32_t n,
		       const uint8_t *restrict base, size_t stride,
		       uint8_t *restrict o)
{
	int32_t acc[CHUNK];

	for (int j = 0; j < CHUNK; j++)
		acc[j] = 1 << (PRECISION_BITS - 1);
	for (uint32_t y = 0; y < n; y++) {
		const uint8_t *restrict r = base + y * stride;
		int32_t ky = k[y];

		for (int j = 0; j < CHUNK; j++)
			acc[j] += r[j] * ky;
	}
	for (int j = 0; j < CHUNK; j++)
		o[j] = clip8(acc[j]);
}

/* The same, any count of bytes (a row under CHUNK). */
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
		const int32_t *k = t->k + (size_t)yy * t->ksize;
		const uint8_t *base = rows + (t->first[yy] - t->lo) * stride;
		uint8_t *o = dst + yy * stride;
		size_t c = 0;

		if (stride < CHUNK) {
			cols_any(k, t->n[yy], base, stride, stride, o);
			continue;
		}
		/* The last chunk overlaps the one before: the same bytes
		 * twice rather than a scalar tail. */
		for (;; c += CHUNK) {
			if (c + CHUNK > stride)
				c = stride - CHUNK;
			cols_chunk(k, t->n[yy], base + c, stride, o + c);
			if (c + CHUNK == stride)
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
	for (uint32_t y = ty.lo; y < ty.hi; y++)
		zr__resample_row(&tx, img + (size_t)y * w * 3, 0, b->flip,
				 mid + (size_t)(y - ty.lo) * b->out * 3);
	err = zr__resample_cols(&ty, mid, b->out, dst);
out:
	free(mid);
	zr__taps_free(&tx);
	zr__taps_free(&ty);
	return err;
}
