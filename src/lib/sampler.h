/*
 * sampler.h - the sampler's building blocks shared inside the library: the
 * word streams, Lemire draws and the cycle permutations that both the
 * step-based zr_sampler_batch (sampler.c) and the position streams
 * (stream.c, stream_map.c) are made of, so the two can only agree.
 */
#ifndef ZR_SAMPLER_H
#define ZR_SAMPLER_H

#include <stdint.h>

#define ZR__GOLDEN 0x9E3779B97F4A7C15ull
#define ZR__FEISTEL_ROUNDS 6

uint64_t zr__fmix(uint64_t z);

/* The word stream of (key, x). */
typedef struct zr__words {
	uint64_t s0, c;
} zr__words;

void zr__words_init(zr__words *w, uint64_t key, uint64_t x);
uint64_t zr__words_next(zr__words *w);
/* Fills out[0..count) with the next count draws from [0, n). */
void zr__draw_many(zr__words *w, uint64_t n, uint64_t *out, uint64_t count);

/* perm_c of zrecord.h: the permutation of [0, n) for (seed, cycle). */
typedef struct zr__feistel {
	unsigned h;
	uint64_t mask, n;
	uint64_t key[ZR__FEISTEL_ROUNDS];
} zr__feistel;

void zr__feistel_init(zr__feistel *f, uint64_t seed, uint64_t cycle,
		      uint64_t n);
/* out[i] = perm(x + i) for i < count. */
void zr__feistel_run(const zr__feistel *f, uint64_t x, uint64_t count,
		     uint64_t *out);

#endif
