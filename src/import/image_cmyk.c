/*
 * image_cmyk.c - CMYK and YCCK JPEGs to RGB, as PIL's open + convert("RGB")
 * gives them: TurboJPEG decodes them to CMYK only ("Unsupported color
 * conversion request" for RGB), so the pixels come as CMYK and are
 * converted here with PIL's cmyk2rgb.  PIL reads every CMYK JPEG as
 * inverted CMYK ("CMYK;I", Adobe's convention, which Photoshop and PIL
 * write), with the APP14 marker that says so or without it; so does
 * this file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <turbojpeg.h>

#include "import.h"

/* PIL's cmyk2rgb: each of R, G, B is (255 - K) * (1 - C/255), rounded as
 * its MULDIV255 does. */
static uint8_t muldiv255(unsigned a, unsigned b)
{
	unsigned t = a * b + 128;

	return (uint8_t)(((t >> 8) + t) >> 8);
}

/* src holds inverted CMYK: 255 - K is src[3] as it is. */
static void cmyk_to_rgb(const uint8_t *src, uint8_t *dst, size_t px)
{
	for (size_t i = 0; i < px; i++) {
		unsigned nk = src[4 * i + 3];

		for (int k = 0; k < 3; k++)
			dst[3 * i + k] = (uint8_t)(nk - muldiv255(
				255u - src[4 * i + k], nk));
	}
}

int zr_imp_jpeg_cmyk(void *tj, const void *buf, size_t len, int w, int h,
		     uint8_t *rgb, char *msg, size_t cap)
{
	size_t px = (size_t)w * (size_t)h;
	uint8_t *cmyk = malloc(px * 4);

	if (!cmyk)
		return -ENOMEM;
	if (tjDecompress2(tj, buf, (unsigned long)len, cmyk, w, 0, h,
			  TJPF_CMYK, TJFLAG_STOPONWARNING |
			  TJFLAG_LIMITSCANS) < 0) {
		snprintf(msg, cap, "JPEG: %s", tjGetErrorStr2(tj));
		free(cmyk);
		return ZR_IMP_EBAD;
	}
	cmyk_to_rgb(cmyk, rgb, px);
	free(cmyk);
	return 0;
}
