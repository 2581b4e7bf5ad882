/*
 * bench_data.c - the benchmark's synthetic corpora.  Both are cheap to
 * generate yet compress like their real counterparts: images are smooth
 * low-frequency fields with sparse sensor-like noise (plain zstd level 3
 * reaches about 12x on them, in the range of the seed's structured-vision
 * set, 14.69x), tokens follow a Zipf-like law.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "bench.h"

#define IMG_C 3
#define IMG_H 224
#define IMG_W 224
#define IMG_WAVES 3
/* Highest spatial frequency (radians per pixel: periods of 300+ pixels)
 * and the amplitude range of each wave: gentle gradients, long runs. */
#define IMG_FREQ 0.02
#define IMG_AMP_MIN 4.0
#define IMG_AMP_SPAN 8.0
/* One pixel in IMG_NOISE_EVERY (a power of two) is off by one. */
#define IMG_NOISE_EVERY 256u
#define TOKENS 512
#define VOCAB 50257

static uint64_t mix(uint64_t z)
{
	z += 0x9E3779B97F4A7C15ull;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* A uniform double in [0, 1) from the state, advancing it. */
static double unit(uint64_t *state)
{
	*state = mix(*state);
	return (double)(*state >> 11) * (1.0 / 9007199254740992.0);
}

/* sin(fx*x + fy*y + p) = sin(fx*x + p) cos(fy*y) + cos(fx*x + p) sin(fy*y):
 * a separable wave costs two products per pixel with per-axis tables. */
typedef struct wave {
	float sx[IMG_W], cx[IMG_W], sy[IMG_H], cy[IMG_H];
	float amp;
} wave;

static void wave_init(wave *w, uint64_t *state)
{
	double fx = unit(state) * IMG_FREQ, fy = unit(state) * IMG_FREQ;
	double p = unit(state) * 6.283185307179586;

	w->amp = (float)(IMG_AMP_MIN + unit(state) * IMG_AMP_SPAN);
	for (int x = 0; x < IMG_W; x++) {
		w->sx[x] = (float)sin(fx * x + p);
		w->cx[x] = (float)cos(fx * x + p);
	}
	for (int y = 0; y < IMG_H; y++) {
		w->sy[y] = (float)sin(fy * y);
		w->cy[y] = (float)cos(fy * y);
	}
}

static uint8_t clamp_u8(float v)
{
	return v < 0 ? 0 : v > 255 ? 255 : (uint8_t)v;
}

static void fill_channel(uint8_t *dst, uint64_t *state)
{
	wave w[IMG_WAVES];
	float base = (float)(64 + unit(state) * 128);
	uint64_t noise = mix(*state);

	for (int k = 0; k < IMG_WAVES; k++)
		wave_init(&w[k], state);
	for (int y = 0; y < IMG_H; y++)
		for (int x = 0; x < IMG_W; x++) {
			float v = base;

			for (int k = 0; k < IMG_WAVES; k++)
				v += w[k].amp * (w[k].sx[x] * w[k].cy[y] +
						 w[k].cx[x] * w[k].sy[y]);
			/* sparse sensor-like noise */
			noise ^= noise << 13;
			noise ^= noise >> 7;
			noise ^= noise << 17;
			if (!(noise & (IMG_NOISE_EVERY - 1)))
				v += noise & IMG_NOISE_EVERY ? 1.0f : -1.0f;
			dst[y * IMG_W + x] = clamp_u8(v);
		}
}

void bench_fill_images(uint64_t first, uint64_t n, void *rows)
{
	uint8_t *p = rows;

	for (uint64_t i = 0; i < n; i++) {
		uint64_t state = mix(first + i);

		for (int c = 0; c < IMG_C; c++, p += IMG_H * IMG_W)
			fill_channel(p, &state);
	}
}

/* Zipf with exponent ~1 over the vocabulary: log-uniform ranks, mapped to
 * ids through a fixed scramble so frequent ids are spread out. */
static int32_t zipf_token(uint64_t *state)
{
	double r = exp(unit(state) * log((double)VOCAB + 1)) - 1;
	uint64_t rank = (uint64_t)r;

	return (int32_t)((rank * 7919u + 13u) % VOCAB);
}

void bench_fill_tokens(uint64_t first, uint64_t n, void *rows)
{
	int32_t *p = rows;

	for (uint64_t i = 0; i < n; i++) {
		uint64_t state = mix(~(first + i));

		for (int t = 0; t < TOKENS; t++)
			*p++ = zipf_token(&state);
	}
}
