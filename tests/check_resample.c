/*
 * check_resample.c - the image resampler's passes (src/lib/image_resample.c)
 * against a reference: PIL's loops as Resample.c writes them, a tap count
 * per output and int32 sums, over the same weights.  Random axes, boxes
 * (at the DCT scales a JPEG box takes too), output sizes and pixels, both
 * directions; every byte must agree, as zrecord.h promises PIL's result.
 * Sources are exactly as long as the taps say, so a sanitizer build
 * catches a read past the last input.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check_suites.h"
#include "image.h"

#define BITS 22

static uint8_t ref_clip(int32_t v)
{
	v >>= BITS;
	return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
}

/* PIL's ImagingResampleHorizontal_8bpc for one row. */
static void ref_row(const struct zr__taps *t, const uint8_t *src,
		    uint32_t col0, int flip, uint8_t *dst)
{
	for (uint32_t xx = 0; xx < t->out; xx++) {
		const int32_t *k = t->k + (size_t)xx * t->ksize;
		const uint8_t *p = src + (size_t)(t->first[xx] - col0) * 3;
		uint8_t *o = dst + (size_t)(flip ? t->out - 1 - xx : xx) * 3;

		for (int c = 0; c < 3; c++) {
			int32_t s = 1 << (BITS - 1);

			for (uint32_t x = 0; x < t->n[xx]; x++)
				s += p[3 * x + c] * k[x];
			o[c] = ref_clip(s);
		}
	}
}

/* PIL's ImagingResampleVertical_8bpc. */
static void ref_cols(const struct zr__taps *t, const uint8_t *rows,
		     uint32_t width, uint8_t *dst)
{
	size_t stride = (size_t)width * 3;

	for (uint32_t yy = 0; yy < t->out; yy++)
		for (size_t c = 0; c < stride; c++) {
			const int32_t *k = t->k + (size_t)yy * t->ksize;
			int32_t s = 1 << (BITS - 1);

			for (uint32_t y = 0; y < t->n[yy]; y++)
				s += rows[(t->first[yy] - t->lo + y) * stride +
					  c] * k[y];
			dst[yy * stride + c] = ref_clip(s);
		}
}

static uint64_t rng = 0x9E3779B97F4A7C15u;

static uint32_t rnd(uint32_t n) /* [0, n) */
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

/* A random axis of insize, a box on it (whole pixels, or at a DCT scale
 * n/8 as the JPEG decoder takes one) and an output size. */
static void axis(uint32_t *insize, double *in0, double *in1, uint32_t *out)
{
	uint32_t full = 1 + rnd(700), w = 1 + rnd(full), x0 = rnd(full - w + 1);
	unsigned n = 1 + rnd(8);

	*out = 1 + rnd(rnd(4) ? 300 : 40);
	*insize = (full * n + 7) / 8;
	*in0 = x0 * n / 8.0;
	*in1 = (x0 + w) * n / 8.0;
	if (*in1 > *insize)
		*in1 = *insize;
	if (*in0 >= *in1)
		*in0 = 0;
}

static uint8_t *noise(size_t len)
{
	uint8_t *p = malloc(len ? len : 1);

	ck_assert_ptr_nonnull(p);
	/* Mostly extremes and runs: the clip and the sums' ends. */
	for (size_t i = 0; i < len; i++)
		p[i] = rnd(4) ? (uint8_t)rnd(256) : rnd(2) ? 255 : 0;
	return p;
}

/* A random count of rows, each its own allocation of exactly the
 * columns [col0, hi) the taps read. */
static void one_rows(void)
{
	struct zr__taps t;
	uint32_t insize, out, col0, nrows = 1 + rnd(rnd(2) ? 40 : 16);
	double in0, in1;
	uint8_t *src[40], *a, *b;
	int flip = (int)rnd(2);
	size_t stride;

	axis(&insize, &in0, &in1, &out);
	ck_assert_int_eq(zr__taps_make(&t, in0, in1, insize, out), 0);
	col0 = t.lo - rnd(t.lo + 1);
	stride = (size_t)out * 3 + rnd(5);
	a = malloc(nrows * stride);
	b = calloc(nrows, stride);
	ck_assert(a && b);
	memcpy(a, b, nrows * stride);
	for (uint32_t r = 0; r < nrows; r++) {
		src[r] = noise((size_t)(t.hi - col0) * 3);
		ref_row(&t, src[r], col0, flip, b + r * stride);
	}
	ck_assert_int_eq(zr__resample_rows(&t, (const uint8_t *const *)src,
					   nrows, col0, flip, a, stride),
			 0);
	ck_assert_msg(!memcmp(a, b, nrows * stride),
		      "rows: %u of [%g, %g) of %u, %u rows", out, in0, in1,
		      insize, nrows);
	for (uint32_t r = 0; r < nrows; r++)
		free(src[r]);
	free(a);
	free(b);
	zr__taps_free(&t);
}

static void one_cols(void)
{
	struct zr__taps t;
	uint32_t insize, out, width = 1 + rnd(rnd(4) ? 300 : 12);
	double in0, in1;
	uint8_t *rows, *a, *b;
	size_t stride = (size_t)width * 3;

	axis(&insize, &in0, &in1, &out);
	ck_assert_int_eq(zr__taps_make(&t, in0, in1, insize, out), 0);
	rows = noise((t.hi - t.lo) * stride);
	a = malloc(out * stride);
	b = malloc(out * stride);
	ck_assert(a && b);
	ck_assert_int_eq(zr__resample_cols(&t, rows, width, a), 0);
	ref_cols(&t, rows, width, b);
	ck_assert_msg(!memcmp(a, b, out * stride),
		      "cols: %u of [%g, %g) of %u, width %u", out, in0, in1,
		      insize, width);
	free(rows);
	free(a);
	free(b);
	zr__taps_free(&t);
}

START_TEST(test_rows_match_pil)
{
	for (int i = 0; i < 2000; i++)
		one_rows();
}
END_TEST

START_TEST(test_cols_match_pil)
{
	for (int i = 0; i < 1500; i++)
		one_cols();
}
END_TEST

Suite *suite_resample(void)
{
	Suite *s = suite_create("resample");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_rows_match_pil);
	tcase_add_test(tc, test_cols_match_pil);
	suite_add_tcase(s, tc);
	return s;
}
