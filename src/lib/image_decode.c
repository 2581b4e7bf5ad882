/*
 * image_decode.c - one encoded image to the pixels a transform asks for:
 * its format from its bytes, its size from its header, the box
 * (image_box.c), then the decoder: a JPEG decodes the box itself at the
 * DCT scale that fits (image_jpeg.c), a PNG or WebP decodes whole and the
 * box is resampled from that.  The public zr_image_format,
 * zr_image_shape and zr_image_decode, and zr__image_decode for the
 * gather's lanes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "image.h"

static int image_size(int fmt, const void *buf, size_t len, uint32_t *w,
		      uint32_t *h, char *msg, size_t cap)
{
	switch (fmt) {
	case ZR__IMG_JPEG:
		return zr__jpeg_size(buf, len, w, h, msg, cap);
	case ZR__IMG_PNG:
		return zr__png_size(buf, len, w, h, msg, cap);
	case ZR__IMG_WEBP:
		return zr__webp_size(buf, len, w, h, msg, cap);
	}
	snprintf(msg, cap, "not a JPEG, PNG or WebP file (it starts %02x %02x "
		 "%02x %02x)", len > 0 ? ((const uint8_t *)buf)[0] : 0,
		 len > 1 ? ((const uint8_t *)buf)[1] : 0,
		 len > 2 ? ((const uint8_t *)buf)[2] : 0,
		 len > 3 ? ((const uint8_t *)buf)[3] : 0);
	return ZR__IMG_BAD;
}

/* The whole RGB image of a PNG or WebP. */
static int rgb_whole(int fmt, const void *buf, size_t len, uint8_t *dst,
		     size_t dst_len, char *msg, size_t cap)
{
	if (fmt == ZR__IMG_PNG)
		return zr__png_rgb(buf, len, dst, dst_len, msg, cap);
	return zr__webp_rgb(buf, len, dst, dst_len, msg, cap);
}

static int boxed_other(int fmt, const void *buf, size_t len, uint32_t w,
		       uint32_t h, const struct zr__box *b, uint8_t *dst,
		       char *msg, size_t cap)
{
	size_t n = (size_t)w * h * 3;
	uint8_t *img = malloc(n);
	int rc;

	if (!img)
		return -ENOMEM;
	rc = rgb_whole(fmt, buf, len, img, n, msg, cap);
	if (!rc)
		rc = zr__resample(img, w, h, b, dst);
	free(img);
	return rc;
}

/* 0, ZR__IMG_BAD (msg says why) or -errno; *oh, *ow the output's size. */
static int plan(const void *buf, size_t len, const zr_image_opts *o,
		uint64_t pos, int *fmt, uint32_t *w, uint32_t *h,
		struct zr__box *b, char *msg, size_t cap)
{
	int rc;

	*fmt = zr__image_format(buf, len);
	rc = image_size(*fmt, buf, len, w, h, msg, cap);
	if (rc)
		return rc;
	if (*w == 0 || *h == 0) {
		snprintf(msg, cap, "image has no pixels");
		return ZR__IMG_BAD;
	}
	zr__image_box(o, pos, *w, *h, b);
	return 0;
}

int zr__image_decode(const void *buf, size_t len, const zr_image_opts *o,
		     uint64_t pos, uint8_t *dst, size_t dst_len, char *msg,
		     size_t cap)
{
	struct zr__box b;
	uint32_t w, h;
	int fmt, rc = plan(buf, len, o, pos, &fmt, &w, &h, &b, msg, cap);
	size_t want;

	if (rc)
		return rc;
	want = b.out ? (size_t)b.out * b.out * 3 : (size_t)w * h * 3;
	if (dst_len != want) {
		snprintf(msg, cap, "decodes to %zu bytes, %zu were planned",
			 want, dst_len);
		return ZR__IMG_SHAPE;
	}
	if (fmt == ZR__IMG_JPEG)
		return zr__jpeg_decode(buf, len, &b, dst, msg, cap);
	if (!b.out)
		return rgb_whole(fmt, buf, len, dst, dst_len, msg, cap);
	return boxed_other(fmt, buf, len, w, h, &b, dst, msg, cap);
}

int zr__image_shape(const void *buf, size_t len, const zr_image_opts *o,
		    uint32_t *oh, uint32_t *ow, char *msg, size_t cap)
{
	struct zr__box b;
	uint32_t w, h;
	int fmt, rc = plan(buf, len, o, 0, &fmt, &w, &h, &b, msg, cap);

	if (rc)
		return rc;
	*oh = b.out ? b.out : h;
	*ow = b.out ? b.out : w;
	return 0;
}

/* A decoder's verdict as the library's error. */
int zr__image_fail(int rc, const char *what, const char *msg)
{
	if (rc == ZR__IMG_BAD)
		return zr__fail(ZR_E_IMAGE, "%s: %s", what, msg);
	if (rc == ZR__IMG_SHAPE)
		return zr__fail(ZR_E_SHAPE, "%s: %s", what, msg);
	return zr__fail(rc, "%s: %s", what, strerror(-rc));
}

static int check_opts(const zr_image_opts *o)
{
	if (!o || o->size > 4096 || (o->flags & ~3u) ||
	    ((o->flags & ZR_IMAGE_FLIP) && !o->size &&
	     !(o->flags & ZR_IMAGE_RRC)) ||
	    o->scale_min < 0 || o->scale_max > 1 ||
	    o->scale_min > o->scale_max)
		return zr__fail(-EINVAL, "image options: bad size, flags or "
				"scale (zr_image_opts_parse makes good ones)");
	return 0;
}

int zr__image_opts_check(const zr_image_opts *o)
{
	return check_opts(o);
}

int zr_image_format(const void *buf, size_t len)
{
	return buf ? zr__image_format(buf, len) : 0;
}

int zr_image_shape(const void *buf, size_t len, const zr_image_opts *o,
		   uint32_t *h, uint32_t *w)
{
	char msg[ZR__IMAGE_MSG];
	uint32_t oh, ow;
	int rc;

	zr__clear();
	if (!buf || !h || !w)
		return zr__fail(-EINVAL, "zr_image_shape: NULL argument");
	rc = check_opts(o);
	if (rc)
		return rc;
	rc = zr__image_shape(buf, len, o, &oh, &ow, msg, sizeof(msg));
	if (rc)
		return zr__image_fail(rc, "image", msg);
	*h = oh;
	*w = ow;
	return 0;
}

int zr_image_decode(const void *buf, size_t len, const zr_image_opts *o,
		    void *dst, size_t dst_cap)
{
	char msg[ZR__IMAGE_MSG];
	uint32_t h, w;
	int rc;

	zr__clear();
	if (!buf || !dst)
		return zr__fail(-EINVAL, "zr_image_decode: NULL argument");
	rc = check_opts(o);
	if (!rc)
		rc = zr__image_shape(buf, len, o, &h, &w, msg, sizeof(msg));
	if (rc > 0)
		return zr__image_fail(rc, "image", msg);
	if (rc)
		return rc;
	if ((size_t)h * w * 3 > dst_cap)
		return zr__fail(-EINVAL, "zr_image_decode: the image needs "
				"%zu bytes, dst_cap is %zu", (size_t)h * w * 3,
				dst_cap);
	rc = zr__image_decode(buf, len, o, o->position, dst,
			      (size_t)h * w * 3, msg, sizeof(msg));
	return rc ? zr__image_fail(rc, "image", msg) : 0;
}
