/*
 * image_box.c - which part of an image a transform takes: the centred
 * square of the evaluation transform, RandomResizedCrop's box and the
 * flip, drawn from the word stream of (seed, position) exactly as
 * zrecord.h spells it out, with IEEE double +, -, *, / and sqrt only
 * (libm's exp and log differ between hosts); and the parser of the
 * decode and augment options every front end shares.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "image.h"
#include "sampler.h"

#define LOG_3_4 (-0.28768207245178090) /* ln(3/4) */
#define LOG_4_3 0.28768207245178090    /* ln(4/3) */
#define RRC_TRIES 10
#define DEFAULT_SIZE 224u
#define MAX_SIZE 4096u

int zr__image_format(const void *buf, size_t len)
{
	const uint8_t *p = buf;

	if (len >= 3 && p[0] == 0xFF && p[1] == 0xD8 && p[2] == 0xFF)
		return ZR__IMG_JPEG;
	if (len >= 8 && !memcmp(p, "\x89PNG\r\n\x1a\n", 8))
		return ZR__IMG_PNG;
	if (len >= 12 && !memcmp(p, "RIFF", 4) && !memcmp(p + 8, "WEBP", 4))
		return ZR__IMG_WEBP;
	return 0;
}

/* exp(x) for |x| <= ln(4/3): its Taylor series, Horner's form, 24 terms
 * (the remainder is below 1e-30). */
static double exp_small(double x)
{
	double r = 1.0;

	for (int k = 24; k >= 1; k--)
		r = 1.0 + x * r / k;
	return r;
}

static double unit(uint64_t w)
{
	return (double)(w >> 11) * (1.0 / 9007199254740992.0);
}

static uint32_t round_half_up(double x)
{
	return (uint32_t)floor(x + 0.5);
}

static void centre(uint32_t w, uint32_t h, uint32_t bw, uint32_t bh,
		   struct zr__box *b)
{
	b->w = bw;
	b->h = bh;
	b->x0 = (w - bw) / 2;
	b->y0 = (h - bh) / 2;
}

/* torchvision's RandomResizedCrop.get_params with draws w[1..22]. */
static void rrc(const zr_image_opts *o, const uint64_t *wd, uint32_t w,
		uint32_t h, struct zr__box *b)
{
	double smin = o->scale_min, smax = o->scale_max;
	double area = (double)w * h, ratio = (double)w / h;

	if (smin <= 0 && smax <= 0) {
		smin = 0.08;
		smax = 1.0;
	}
	for (int a = 0; a < RRC_TRIES; a++) {
		double t = area * (smin + (smax - smin) * unit(wd[1 + 2 * a]));
		double r = exp_small(LOG_3_4 + (LOG_4_3 - LOG_3_4) *
				     unit(wd[2 + 2 * a]));
		uint32_t bw = round_half_up(sqrt(t * r));
		uint32_t bh = round_half_up(sqrt(t / r));

		if (bw > 0 && bw <= w && bh > 0 && bh <= h) {
			b->w = bw;
			b->h = bh;
			b->y0 = (uint32_t)floor(unit(wd[21]) * (h - bh + 1));
			b->x0 = (uint32_t)floor(unit(wd[22]) * (w - bw + 1));
			return;
		}
	}
	if (ratio < 0.75) {
		uint32_t bh = round_half_up((double)w * 4.0 / 3.0);

		centre(w, h, w, bh < h ? bh : h, b);
	} else if (ratio > 4.0 / 3.0) {
		uint32_t bw = round_half_up((double)h * 4.0 / 3.0);

		centre(w, h, bw < w ? bw : w, h, b);
	} else {
		centre(w, h, w, h, b);
	}
}

void zr__image_box(const zr_image_opts *o, uint64_t pos, uint32_t w,
		   uint32_t h, struct zr__box *b)
{
	uint64_t wd[23];
	zr__words ws;
	uint32_t m = w < h ? w : h;

	zr__words_init(&ws, o->seed, pos);
	for (int i = 0; i < 23; i++)
		wd[i] = zr__words_next(&ws);
	b->out = o->size ? o->size
			 : (o->flags & ZR_IMAGE_RRC) ? DEFAULT_SIZE : 0;
	b->flip = (o->flags & ZR_IMAGE_FLIP) && (wd[0] >> 63);
	if (o->flags & ZR_IMAGE_RRC)
		rrc(o, wd, w, h, b);
	else if (b->out)
		centre(w, h, m, m, b);
	else
		centre(w, h, w, h, b);
}

static int parse_size(const char *s, uint32_t *out)
{
	char *end;
	unsigned long v;

	if (!s || !*s) {
		*out = 0;
		return 0;
	}
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || s[0] < '0' || s[0] > '9' || v < 1 ||
	    v > MAX_SIZE)
		return zr__fail(-EINVAL, "decode=%s: the output size is a "
				"number of pixels from 1 to %u", s, MAX_SIZE);
	*out = (uint32_t)v;
	return 0;
}

/* "rrc:SMIN:SMAX" after "rrc". */
static int parse_scale(const char *s, zr_image_opts *o)
{
	char *end;
	double a, b;

	if (*s != ':')
		return -1;
	a = strtod(s + 1, &end);
	if (*end != ':')
		return -1;
	b = strtod(end + 1, &end);
	if (*end || !(a > 0) || !(a <= b) || !(b <= 1))
		return -1;
	o->scale_min = a;
	o->scale_max = b;
	return 0;
}

static int parse_item(const char *it, zr_image_opts *o)
{
	if (!strcmp(it, "flip")) {
		o->flags |= ZR_IMAGE_FLIP;
		return 0;
	}
	if (strncmp(it, "rrc", 3))
		return -1;
	o->flags |= ZR_IMAGE_RRC;
	return it[3] ? parse_scale(it + 3, o) : 0;
}

static int parse_augment(const char *s, zr_image_opts *o)
{
	char buf[128], *save = NULL;

	if (!s || !*s)
		return 0;
	if (strlen(s) >= sizeof(buf))
		return zr__fail(-EINVAL, "augment=: too long");
	snprintf(buf, sizeof(buf), "%s", s);
	/* '+' too: in a mount's -o list a comma ends the option */
	for (char *it = strtok_r(buf, ",+", &save); it;
	     it = strtok_r(NULL, ",+", &save))
		if (parse_item(it, o))
			return zr__fail(-EINVAL, "augment=%s: \"%s\" is not "
					"rrc, rrc:SMIN:SMAX (0 < SMIN <= SMAX "
					"<= 1) or flip", s, it);
	return 0;
}

int zr_image_opts_parse(const char *decode, const char *augment,
			zr_image_opts *out)
{
	zr_image_opts o;
	int err;

	zr__clear();
	memset(&o, 0, sizeof(o));
	err = parse_size(decode, &o.size);
	if (!err)
		err = parse_augment(augment, &o);
	if (!err && (o.flags & ZR_IMAGE_FLIP) && !(o.flags & ZR_IMAGE_RRC) &&
	    !o.size)
		err = zr__fail(-EINVAL, "augment=flip needs an output size "
			       "(decode=SIZE)");
	if (!err)
		*out = o;
	return err;
}
