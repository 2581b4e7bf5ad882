/*
 * image_png.c - PNG (libspng) and WebP (libwebp) records decoded whole
 * to RGB, as PIL's open + convert("RGB") gives them (zrecord.h): alpha
 * and transparency dropped, palettes looked up, 16-bit samples' high
 * byte, except 16-bit grey, which PIL opens as mode I and clips to 255.
 * Neither format decodes part of an image, so a box is cut from the
 * whole decode (image_decode.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <spng.h>
#include <webp/decode.h>

#include "image.h"

static int bad(char *msg, size_t cap, const char *what, const char *why)
{
	snprintf(msg, cap, "%s: %s", what, why);
	return ZR__IMG_BAD;
}

static int png_open(spng_ctx **out, const void *buf, size_t len,
		    struct spng_ihdr *ih, char *msg, size_t cap)
{
	spng_ctx *ctx = spng_ctx_new(0);
	int rc;

	if (!ctx)
		return -ENOMEM;
	spng_set_image_limits(ctx, 1u << 20, 1u << 20);
	spng_set_chunk_limits(ctx, 64u << 20, 64u << 20);
	rc = spng_set_png_buffer(ctx, buf, len);
	if (!rc)
		rc = spng_get_ihdr(ctx, ih);
	if (!rc && (uint64_t)ih->width * ih->height > ZR__IMAGE_MAX_PIXELS)
		rc = SPNG_EOVERFLOW;
	if (rc) {
		spng_ctx_free(ctx);
		return bad(msg, cap, "PNG", spng_strerror(rc));
	}
	*out = ctx;
	return 0;
}

int zr__png_size(const void *buf, size_t len, uint32_t *w, uint32_t *h,
		 char *msg, size_t cap)
{
	struct spng_ihdr ih;
	spng_ctx *ctx;
	int rc = png_open(&ctx, buf, len, &ih, msg, cap);

	if (rc)
		return rc;
	*w = ih.width;
	*h = ih.height;
	spng_ctx_free(ctx);
	return 0;
}

/* 16-bit grey: GA16 (spng has no G16), each grey clipped to 255. */
static int grey16(spng_ctx *ctx, uint8_t *dst, size_t px)
{
	size_t need;
	uint16_t *tmp;
	int rc = spng_decoded_image_size(ctx, SPNG_FMT_GA16, &need);

	if (rc)
		return rc;
	tmp = malloc(need);
	if (!tmp)
		return -ENOMEM;
	rc = spng_decode_image(ctx, tmp, need, SPNG_FMT_GA16, 0);
	for (size_t i = 0; !rc && i < px; i++) {
		uint16_t v = tmp[2 * i];
		uint8_t g = v > 255 ? 255 : (uint8_t)v;

		dst[3 * i] = dst[3 * i + 1] = dst[3 * i + 2] = g;
	}
	free(tmp);
	return rc;
}

int zr__png_rgb(const void *buf, size_t len, uint8_t *dst, size_t dst_len,
		char *msg, size_t cap)
{
	struct spng_ihdr ih;
	spng_ctx *ctx;
	int rc = png_open(&ctx, buf, len, &ih, msg, cap);

	if (rc)
		return rc;
	if (dst_len != (size_t)ih.width * ih.height * 3)
		rc = SPNG_EBUFSIZ;
	else if (ih.color_type == SPNG_COLOR_TYPE_GRAYSCALE &&
		 ih.bit_depth == 16)
		rc = grey16(ctx, dst, (size_t)ih.width * ih.height);
	else
		rc = spng_decode_image(ctx, dst, dst_len, SPNG_FMT_RGB8, 0);
	spng_ctx_free(ctx);
	if (rc == -ENOMEM)
		return rc;
	return rc ? bad(msg, cap, "PNG", spng_strerror(rc)) : 0;
}

static int webp_features(const void *buf, size_t len,
			 WebPBitstreamFeatures *f, char *msg, size_t cap)
{
	if (WebPGetFeatures(buf, len, f) != VP8_STATUS_OK)
		return bad(msg, cap, "WebP", "not a WebP image it can read");
	if (f->has_animation)
		return bad(msg, cap, "WebP", "animated WebP is not an image");
	if ((uint64_t)f->width * f->height > ZR__IMAGE_MAX_PIXELS)
		return bad(msg, cap, "WebP", "image over 2^28 pixels");
	return 0;
}

int zr__webp_size(const void *buf, size_t len, uint32_t *w, uint32_t *h,
		  char *msg, size_t cap)
{
	WebPBitstreamFeatures f;
	int rc = webp_features(buf, len, &f, msg, cap);

	if (rc)
		return rc;
	*w = (uint32_t)f.width;
	*h = (uint32_t)f.height;
	return 0;
}

int zr__webp_rgb(const void *buf, size_t len, uint8_t *dst, size_t dst_len,
		 char *msg, size_t cap)
{
	WebPBitstreamFeatures f;
	int rc = webp_features(buf, len, &f, msg, cap);

	if (rc)
		return rc;
	if (dst_len != (size_t)f.width * f.height * 3)
		return bad(msg, cap, "WebP", "size changed while decoding");
	if (!WebPDecodeRGBInto(buf, len, dst, dst_len, f.width * 3))
		return bad(msg, cap, "WebP", "corrupt or truncated data");
	return 0;
}
