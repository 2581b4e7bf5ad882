/*
 * image_cmyk.c - CMYK and YCCK JPEGs to RGB, as PIL's open + convert("RGB")
 * gives them: TurboJPEG decodes them to CMYK only ("Unsupported color
 * conversion request" for RGB), so the pixels come as CMYK and are
 * converted with PIL's cmyk2rgb.  PIL reads every CMYK JPEG as
 * inverted CMYK ("CMYK;I", Adobe's convention, which Photoshop and PIL
 * write), with the APP14 marker that says so or without it; so does the
 * library's decoder, which this file hands them to.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import.h"

/* The library decodes CMYK and YCCK JPEGs to RGB exactly as PIL does
 * (zr_image_decode, src/lib/image_jpeg.c), so the import shares it. */
int zr_imp_jpeg_cmyk(void *tj, const void *buf, size_t len, int w, int h,
		     uint8_t *rgb, char *msg, size_t cap)
{
	zr_image_opts whole;
	size_t n = (size_t)w * (size_t)h * 3;
	int rc;

	(void)tj;
	memset(&whole, 0, sizeof(whole));
	rc = zr_image_decode(buf, len, &whole, rgb, n);
	if (rc == -ENOMEM)
		return rc;
	if (rc) {
		snprintf(msg, cap, "%s", zr_errmsg());
		return ZR_IMP_EBAD;
	}
	return 0;
}
