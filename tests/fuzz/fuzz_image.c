/*
 * fuzz_image.c - libFuzzer harness for `zrecord import`'s image decoder
 * (zr_imp_image_decode: JPEG through TurboJPEG, PNG through libspng, WebP
 * through libwebp, then the --rgb/--resize/--center-crop/--chw steps).
 *
 * The first byte picks the options.  An accepted image must be what the
 * options promise: three dimensions of uint8 whose product is the buffer's
 * length, 1 to 4 channels (3 with --rgb), the asked size after --resize
 * H,W or --center-crop, channels first with --chw.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "import.h"

static void options(uint8_t b, zr_imp_image_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->rgb = b & 1;
	o->chw = (b >> 1) & 1;
	if (b & 4) {
		o->resize_h = 1 + (b >> 4) % 7;
		o->resize_w = b & 8 ? 0 : 1 + (b >> 5) % 5;
	}
	if (b & 8 && !(b & 4)) {
		o->crop_h = 1;
		o->crop_w = 2;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	zr_imp_image_opts o;
	zr_imp_array a;
	char msg[160];
	uint64_t h, w, c;

	if (size < 1)
		return 0;
	options(data[0], &o);
	if (zr_imp_image_decode(data + 1, size - 1, &o, &a, msg,
				sizeof(msg)) < 0)
		return 0;
	ZR_FUZZ_CHECK(a.ndim == 3 && strcmp(a.dtype.str, "|u1") == 0);
	ZR_FUZZ_CHECK(a.shape[0] * a.shape[1] * a.shape[2] == a.len);
	c = o.chw ? a.shape[0] : a.shape[2];
	h = o.chw ? a.shape[1] : a.shape[0];
	w = o.chw ? a.shape[2] : a.shape[1];
	ZR_FUZZ_CHECK(c >= 1 && c <= 4 && (!o.rgb || c == 3));
	if (o.resize_w)
		ZR_FUZZ_CHECK(h == o.resize_h && w == o.resize_w);
	if (o.resize_h && !o.resize_w)
		ZR_FUZZ_CHECK(h == o.resize_h || w == o.resize_h);
	if (o.crop_h)
		ZR_FUZZ_CHECK(h == o.crop_h && w == o.crop_w);
	/* every byte is readable (ASan) */
	volatile uint8_t sum = 0;
	for (size_t i = 0; i < a.len; i++)
		sum ^= ((uint8_t *)a.data)[i];
	(void)sum;
	free(a.data);
	return 0;
}
