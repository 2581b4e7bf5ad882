/*
 * image_xform.c - the trainer's image options on a decoded uint8 HWC
 * array: --rgb (PIL's convert("RGB"): grey replicated, alpha dropped),
 * --resize (PIL's antialiased bilinear filter, in floating point),
 * --center-crop and --chw, applied in that order.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import.h"

static int to_rgb(zr_imp_array *a)
{
	size_t px = a->shape[0] * a->shape[1], i;
	uint32_t c = (uint32_t)a->shape[2];
	const uint8_t *s = a->data;
	uint8_t *d;

	if (c == 3)
		return 0;
	d = malloc(px * 3);
	if (!d)
		return -ENOMEM;
	for (i = 0; i < px; i++) {
		if (c <= 2) {
			d[3 * i] = d[3 * i + 1] = d[3 * i + 2] = s[c * i];
		} else {
			memcpy(d + 3 * i, s + c * i, 3);
		}
	}
	free(a->data);
	a->data = d;
	a->shape[2] = 3;
	a->len = px * 3;
	return 0;
}

/* One output position's taps: PIL's precompute_coeffs for the bilinear
 * (triangle) filter, whose support widens by the scale when shrinking. */
typedef struct taps {
	uint32_t first, n;
	float *w;
} taps;

static int make_taps(uint32_t in, uint32_t out, taps **res, uint32_t *maxn)
{
	double scale = (double)in / out, fs = scale < 1 ? 1 : scale;
	double support = fs, center, ww, sum;
	uint32_t k = (uint32_t)ceil(support) * 2 + 1, x, i;
	taps *t = calloc(out, sizeof(*t));
	float *w = calloc((size_t)out * k, sizeof(*w));
	int64_t lo, hi;

	if (!t || !w) {
		free(t);
		free(w);
		return -ENOMEM;
	}
	for (x = 0; x < out; x++) {
		center = (x + 0.5) * scale;
		lo = (int64_t)(center - support + 0.5);
		hi = (int64_t)(center + support + 0.5);
		if (lo < 0)
			lo = 0;
		if (hi > in)
			hi = in;
		t[x].first = (uint32_t)lo;
		t[x].n = (uint32_t)(hi - lo);
		t[x].w = w + (size_t)x * k;
		sum = 0;
		for (i = 0; i < t[x].n; i++) {
			ww = 1 - fabs((i + lo - center + 0.5) / fs);
			t[x].w[i] = (float)(ww > 0 ? ww : 0);
			sum += t[x].w[i];
		}
		for (i = 0; i < t[x].n && sum > 0; i++)
			t[x].w[i] = (float)(t[x].w[i] / sum);
	}
	*res = t;
	*maxn = k;
	return 0;
}

static void free_taps(taps *t)
{
	if (t)
		free(t[0].w);
	free(t);
}

static uint8_t clamp8(float v)
{
	return v <= 0 ? 0 : v >= 255 ? 255 : (uint8_t)lrintf(v);
}

/* Resamples the middle axis of src[outer][nin][inner] into
 * dst[outer][nout][inner] with one tap list per output position. */
static void resample(const float *src, float *dst, const taps *t,
		     size_t outer, size_t nin, size_t nout, size_t inner)
{
	size_t o, x, j, i;
	float acc;

	for (o = 0; o < outer; o++)
		for (x = 0; x < nout; x++)
			for (j = 0; j < inner; j++) {
				acc = 0;
				for (i = 0; i < t[x].n; i++)
					acc += t[x].w[i] *
					       src[(o * nin + t[x].first + i) *
						   inner + j];
				dst[(o * nout + x) * inner + j] = acc;
			}
}

/* Rows, then columns, in floats; rounded to bytes at the end. */
static int resize(zr_imp_array *a, uint32_t oh, uint32_t ow)
{
	size_t ih = a->shape[0], iw = a->shape[1], c = a->shape[2], i;
	size_t n_in = ih * iw * c, n_mid = ih * ow * c, n_out = oh * ow * c;
	const uint8_t *s = a->data;
	taps *tx = NULL, *ty = NULL;
	float *in = NULL, *mid = NULL, *out = NULL;
	uint8_t *d = NULL;
	uint32_t kx, ky;
	int rc;

	if ((rc = make_taps((uint32_t)iw, ow, &tx, &kx)) < 0 ||
	    (rc = make_taps((uint32_t)ih, oh, &ty, &ky)) < 0)
		goto out;
	rc = -ENOMEM;
	in = malloc(n_in * sizeof(*in));
	mid = malloc(n_mid * sizeof(*mid));
	out = malloc(n_out * sizeof(*out));
	d = malloc(n_out);
	if (!in || !mid || !out || !d)
		goto out;
	for (i = 0; i < n_in; i++)
		in[i] = s[i];
	resample(in, mid, tx, ih, iw, ow, c);
	resample(mid, out, ty, 1, ih, oh, (size_t)ow * c);
	for (i = 0; i < n_out; i++)
		d[i] = clamp8(out[i]);
	free(a->data);
	a->data = d;
	d = NULL;
	a->shape[0] = oh;
	a->shape[1] = ow;
	a->len = n_out;
	rc = 0;
out:
	free(d);
	free(in);
	free(mid);
	free(out);
	free_taps(tx);
	free_taps(ty);
	return rc;
}

/* --resize S: the shorter side becomes S, the longer keeps the aspect
 * (truncated, as torchvision's Resize(S)); --resize H,W: exactly. */
static void resize_target(const zr_imp_array *a, const zr_imp_image_opts *o,
			  uint32_t *oh, uint32_t *ow)
{
	uint64_t h = a->shape[0], w = a->shape[1], s = o->resize_h;

	if (o->resize_w) {
		*oh = o->resize_h;
		*ow = o->resize_w;
	} else if (h <= w) {
		*oh = (uint32_t)s;
		*ow = (uint32_t)(s * w / h);
	} else {
		*ow = (uint32_t)s;
		*oh = (uint32_t)(s * h / w);
	}
}

static int crop(zr_imp_array *a, uint32_t chh, uint32_t cw, char *msg,
		size_t cap)
{
	uint64_t h = a->shape[0], w = a->shape[1], c = a->shape[2], y;
	uint64_t top = (h - chh) / 2, left = (w - cw) / 2;
	uint8_t *d, *s = a->data;

	if (h < chh || w < cw) {
		snprintf(msg, cap, "image is %llux%llu, smaller than "
			 "--center-crop %ux%u (add --resize)",
			 (unsigned long long)h, (unsigned long long)w, chh, cw);
		return ZR_E_SHAPE;
	}
	d = malloc((size_t)chh * cw * c);
	if (!d)
		return -ENOMEM;
	for (y = 0; y < chh; y++)
		memcpy(d + y * cw * c, s + ((top + y) * w + left) * c,
		       (size_t)(cw * c));
	free(a->data);
	a->data = d;
	a->shape[0] = chh;
	a->shape[1] = cw;
	a->len = (size_t)chh * cw * c;
	return 0;
}

static int to_chw(zr_imp_array *a)
{
	uint64_t h = a->shape[0], w = a->shape[1], c = a->shape[2], p, k;
	const uint8_t *s = a->data;
	uint8_t *d = malloc(a->len);

	if (!d)
		return -ENOMEM;
	for (p = 0; p < h * w; p++)
		for (k = 0; k < c; k++)
			d[k * h * w + p] = s[p * c + k];
	free(a->data);
	a->data = d;
	a->shape[0] = c;
	a->shape[1] = h;
	a->shape[2] = w;
	return 0;
}

int zr_imp_image_xform(zr_imp_array *img, const zr_imp_image_opts *opts,
		       char *msg, size_t msg_cap)
{
	uint32_t oh, ow;
	int rc = 0;

	if (opts->rgb)
		rc = to_rgb(img);
	if (rc == 0 && opts->resize_h) {
		resize_target(img, opts, &oh, &ow);
		if (oh == 0 || ow == 0) {
			snprintf(msg, msg_cap, "%s", "--resize leaves no pixels");
			return ZR_E_SHAPE;
		}
		if (oh != img->shape[0] || ow != img->shape[1])
			rc = resize(img, oh, ow);
	}
	if (rc == 0 && opts->crop_h &&
	    (opts->crop_h != img->shape[0] || opts->crop_w != img->shape[1]))
		rc = crop(img, opts->crop_h, opts->crop_w, msg, msg_cap);
	if (rc == 0 && opts->chw)
		rc = to_chw(img);
	return rc;
}

/* The conditions under which zr_imp_image_xform above changes nothing,
 * so that a decoder may write straight into the record's final place. */
int zr_imp_image_xform_keeps(uint32_t h, uint32_t w, uint32_t c,
			     const zr_imp_image_opts *opts)
{
	zr_imp_array a = { .shape = { h, w, c } };
	uint32_t oh, ow;

	if (opts->chw || (opts->rgb && c != 3))
		return 0;
	if (opts->resize_h) {
		resize_target(&a, opts, &oh, &ow);
		if (oh != h || ow != w)
			return 0;
	}
	return !opts->crop_h || (opts->crop_h == h && opts->crop_w == w);
}
