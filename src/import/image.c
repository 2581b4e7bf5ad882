/*
 * image.c - decodes one JPEG (libjpeg-turbo's TurboJPEG API), PNG (libspng)
 * or WebP (libwebp) held in memory into a uint8 HWC array with the
 * channels the file holds, then hands it to image_xform.c.  Works on a
 * buffer only, so the fuzz harness calls it directly.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <spng.h>
#include <turbojpeg.h>
#include <webp/decode.h>

#include "import.h"

/* A decoded image larger than this is refused before it is allocated:
 * a 30-byte header can claim gigapixels. */
#define IMG_MAX_BYTES (1u << 30)

static int bad(char *msg, size_t cap, const char *fmt, const char *what)
{
	snprintf(msg, cap, fmt, what);
	return ZR_IMP_EBAD;
}

/* Where a decoder may put its pixels: the record's final place (dst of
 * len bytes, NULL if none) when opts will not change them. */
typedef struct place {
	void *dst;
	size_t len;
	const zr_imp_image_opts *opts;
} place;

/* Sets up out as an h x w x c uint8 array and allocates its pixels, or
 * puts them where pl says. */
static int alloc_hwc(zr_imp_array *out, uint32_t h, uint32_t w, uint32_t c,
		     const place *pl, char *msg, size_t cap)
{
	uint64_t n = (uint64_t)h * w * c;

	if (h == 0 || w == 0)
		return bad(msg, cap, "%s", "image has no pixels");
	if (n > IMG_MAX_BYTES)
		return bad(msg, cap, "%s", "image over 1 GiB decoded");
	memset(out, 0, sizeof(*out));
	zr_dtype_parse("|u1", &out->dtype);
	out->ndim = 3;
	out->shape[0] = h;
	out->shape[1] = w;
	out->shape[2] = c;
	out->len = (size_t)n;
	if (pl->dst && pl->len == out->len &&
	    zr_imp_image_xform_keeps(h, w, c, pl->opts)) {
		out->data = pl->dst;
		out->borrowed = 1;
		return 0;
	}
	out->data = malloc(out->len);
	return out->data ? 0 : -ENOMEM;
}

static void drop(zr_imp_array *a)
{
	if (!a->borrowed)
		free(a->data);
	a->data = NULL;
	a->borrowed = 0;
}

static int jpeg_decode(const void *buf, size_t len, const place *pl,
		       zr_imp_array *out,
		       char *msg, size_t cap)
{
	int w, h, sub, cs, pf, c, rc, cmyk;
	tjhandle tj = tjInitDecompress();

	if (!tj)
		return -ENOMEM;
	if (tjDecompressHeader3(tj, buf, (unsigned long)len, &w, &h, &sub,
				&cs) < 0) {
		rc = bad(msg, cap, "JPEG: %s", tjGetErrorStr2(tj));
		goto out;
	}
	cmyk = cs == TJCS_CMYK || cs == TJCS_YCCK; /* decoded to RGB */
	pf = cs == TJCS_GRAY ? TJPF_GRAY : TJPF_RGB;
	c = cs == TJCS_GRAY ? 1 : 3;
	rc = alloc_hwc(out, (uint32_t)h, (uint32_t)w, (uint32_t)c, pl, msg,
		       cap);
	if (rc < 0)
		goto out;
	/* A warning (a truncated scan, bad Huffman data) fills the rest
	 * with grey: that is a corrupt file, not an image. */
	if (cmyk)
		rc = zr_imp_jpeg_cmyk(tj, buf, len, w, h, out->data, msg, cap);
	else if (tjDecompress2(tj, buf, (unsigned long)len, out->data, w, 0, h,
			       pf, TJFLAG_STOPONWARNING |
			       TJFLAG_LIMITSCANS) < 0)
		rc = bad(msg, cap, "JPEG: %s", tjGetErrorStr2(tj));
	if (rc < 0)
		drop(out);
out:
	tjDestroy(tj);
	return rc;
}

/* The 8-bit form spng gives for the file's colour type. */
static int png_format(spng_ctx *ctx, const struct spng_ihdr *ih,
		      uint32_t *c)
{
	struct spng_trns trns;

	switch (ih->color_type) {
	case SPNG_COLOR_TYPE_GRAYSCALE:
		*c = 1;
		return ih->bit_depth == 16 ? SPNG_FMT_GA16 : SPNG_FMT_G8;
	case SPNG_COLOR_TYPE_GRAYSCALE_ALPHA:
		/* spng's GA formats add alpha to grey; the file's own
		 * grey+alpha comes as it is stored (16-bit: host order). */
		*c = 2;
		return SPNG_FMT_PNG;
	case SPNG_COLOR_TYPE_INDEXED:
		if (spng_get_trns(ctx, &trns) == 0) {
			*c = 4;
			return SPNG_FMT_RGBA8;
		}
		*c = 3;
		return SPNG_FMT_RGB8;
	case SPNG_COLOR_TYPE_TRUECOLOR:
		*c = 3;
		return SPNG_FMT_RGB8;
	default:
		*c = 4;
		return SPNG_FMT_RGBA8;
	}
}

/* 16-bit grey comes as GA16 (spng has no G16 output), 16-bit grey+alpha
 * as stored: two 16-bit samples a pixel either way.  Keep the high byte
 * of G (and of A when the file has alpha). */
static void ga16_to_8(const uint16_t *src, uint8_t *dst, size_t px,
		      uint32_t c)
{
	size_t i;

	for (i = 0; i < px; i++) {
		dst[i * c] = (uint8_t)(src[2 * i] >> 8);
		if (c == 2)
			dst[i * c + 1] = (uint8_t)(src[2 * i + 1] >> 8);
	}
}

static int png_pixels(spng_ctx *ctx, int fmt, int depth16,
		      zr_imp_array *out, char *msg, size_t cap)
{
	size_t need, px = out->shape[0] * out->shape[1];
	void *tmp;
	int rc;

	int wide = fmt == SPNG_FMT_GA16 ||
		   (fmt == SPNG_FMT_PNG && out->shape[2] == 2 && depth16);

	if (!wide) {
		/* a palette's tRNS becomes the alpha of RGBA8 */
		rc = spng_decode_image(ctx, out->data, out->len, fmt,
				       fmt == SPNG_FMT_RGBA8 ?
				       SPNG_DECODE_TRNS : 0);
		return rc ? bad(msg, cap, "PNG: %s", spng_strerror(rc)) : 0;
	}
	if (spng_decoded_image_size(ctx, fmt, &need) ||
	    need > (size_t)IMG_MAX_BYTES * 2)
		return bad(msg, cap, "%s", "PNG: image too large");
	tmp = malloc(need);
	if (!tmp)
		return -ENOMEM;
	rc = spng_decode_image(ctx, tmp, need, fmt, 0);
	if (rc == 0)
		ga16_to_8(tmp, out->data, px, (uint32_t)out->shape[2]);
	free(tmp);
	return rc ? bad(msg, cap, "PNG: %s", spng_strerror(rc)) : 0;
}

static int png_decode(const void *buf, size_t len, const place *pl,
		       zr_imp_array *out,
		      char *msg, size_t cap)
{
	struct spng_ihdr ih;
	spng_ctx *ctx = spng_ctx_new(0);
	uint32_t c;
	int rc, fmt;

	if (!ctx)
		return -ENOMEM;
	spng_set_image_limits(ctx, 1u << 20, 1u << 20);
	spng_set_chunk_limits(ctx, 64u << 20, 64u << 20);
	rc = spng_set_png_buffer(ctx, buf, len);
	if (rc == 0)
		rc = spng_get_ihdr(ctx, &ih);
	if (rc) {
		rc = bad(msg, cap, "PNG: %s", spng_strerror(rc));
		goto out;
	}
	fmt = png_format(ctx, &ih, &c);
	rc = alloc_hwc(out, ih.height, ih.width, c, pl, msg, cap);
	if (rc < 0)
		goto out;
	rc = png_pixels(ctx, fmt, ih.bit_depth == 16, out, msg, cap);
	if (rc < 0)
		drop(out);
out:
	spng_ctx_free(ctx);
	return rc;
}

static int webp_decode(const void *buf, size_t len, const place *pl,
		       zr_imp_array *out,
		       char *msg, size_t cap)
{
	WebPBitstreamFeatures ft;
	uint32_t c;
	uint8_t *ok;
	int rc;

	if (WebPGetFeatures(buf, len, &ft) != VP8_STATUS_OK)
		return bad(msg, cap, "%s", "WebP: bad header");
	if (ft.has_animation)
		return bad(msg, cap, "%s", "WebP: animated images are not "
			   "supported");
	c = ft.has_alpha ? 4 : 3;
	rc = alloc_hwc(out, (uint32_t)ft.height, (uint32_t)ft.width, c, pl,
		       msg, cap);
	if (rc < 0)
		return rc;
	ok = c == 4 ? WebPDecodeRGBAInto(buf, len, out->data, out->len,
					 (int)(out->shape[1] * c)) :
		      WebPDecodeRGBInto(buf, len, out->data, out->len,
					(int)(out->shape[1] * c));
	if (!ok) {
		drop(out);
		return bad(msg, cap, "%s", "WebP: undecodable data");
	}
	return 0;
}

int zr_imp_image_decode_into(const void *buf, size_t len,
			     const zr_imp_image_opts *opts, void *dst,
			     size_t dst_len, zr_imp_array *out, char *msg,
			     size_t msg_cap)
{
	static const unsigned char png_sig[8] = { 0x89, 'P', 'N', 'G',
						  '\r', '\n', 0x1a, '\n' };
	const unsigned char *p = buf;
	const place pl = { dst, dst_len, opts };
	zr_imp_array img;
	int rc;

	if (len >= 3 && p[0] == 0xff && p[1] == 0xd8 && p[2] == 0xff)
		rc = jpeg_decode(buf, len, &pl, &img, msg, msg_cap);
	else if (len >= 8 && !memcmp(p, png_sig, 8))
		rc = png_decode(buf, len, &pl, &img, msg, msg_cap);
	else if (len >= 12 && !memcmp(p, "RIFF", 4) &&
		 !memcmp(p + 8, "WEBP", 4))
		rc = webp_decode(buf, len, &pl, &img, msg, msg_cap);
	else
		rc = bad(msg, msg_cap, "%s", "not a JPEG, PNG or WebP file");
	if (rc < 0)
		return rc;
	/* alloc_hwc borrowed dst only if opts keep the image as it is */
	rc = img.borrowed ? 0 : zr_imp_image_xform(&img, opts, msg, msg_cap);
	if (rc < 0) {
		drop(&img);
		return rc;
	}
	*out = img;
	return 0;
}

int zr_imp_image_decode(const void *buf, size_t len,
			const zr_imp_image_opts *opts, zr_imp_array *out,
			char *msg, size_t msg_cap)
{
	return zr_imp_image_decode_into(buf, len, opts, NULL, 0, out, msg,
					msg_cap);
}
