/*
 * fuzz_decode.c - libFuzzer harness for the library's image decoder
 * (zr_image_decode: JPEG through libjpeg's partial, DCT-scaled decode,
 * PNG through libspng, WebP through libwebp, then the box resampler).
 *
 * The first byte picks the transform: bits 0-1 whole / decode=SIZE /
 * rrc / rrc,flip, the rest the size and the position.  An accepted image
 * must have the shape zr_image_shape promised, and every byte of it is
 * read (ASan); a refused one must say ZR_E_IMAGE or -EINVAL.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "zrecord.h"

static void options(uint8_t b, zr_image_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->position = b >> 2;
	switch (b & 3) {
	case 1:
		o->size = 1 + (b >> 2) % 48;
		break;
	case 2:
		o->size = 1 + (b >> 3) % 32;
		o->flags = ZR_IMAGE_RRC;
		break;
	case 3:
		o->size = 8;
		o->flags = ZR_IMAGE_RRC | ZR_IMAGE_FLIP;
		o->scale_min = 0.5;
		o->scale_max = 1.0;
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	zr_image_opts o;
	uint32_t h, w;
	uint8_t *dst;
	size_t n;
	int err;

	if (size < 1)
		return 0;
	options(data[0], &o);
	err = zr_image_shape(data + 1, size - 1, &o, &h, &w);
	if (err) {
		ZR_FUZZ_CHECK(err == ZR_E_IMAGE);
		return 0;
	}
	ZR_FUZZ_CHECK(!o.size || (h == o.size && w == o.size));
	n = (size_t)h * w * 3;
	/* a header may claim up to 2^28 pixels; decode big ones rarely */
	if (n > (64u << 20))
		return 0;
	dst = malloc(n);
	if (!dst)
		return 0;
	err = zr_image_decode(data + 1, size - 1, &o, dst, n);
	ZR_FUZZ_CHECK(err == 0 || err == ZR_E_IMAGE || err == -ENOMEM);
	if (!err) {
		volatile uint8_t sum = 0;

		for (size_t i = 0; i < n; i++)
			sum ^= dst[i];
		(void)sum;
	}
	free(dst);
	return 0;
}
