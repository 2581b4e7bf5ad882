/*
 * sampler.c - Zsampler: every batch is a pure function of the config and
 * the step (the algorithm is specified word for word in zrecord.h; the
 * daemon, the command and the binding must agree with it exactly).
 */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "error.h"
#include "sampler.h"

typedef unsigned __int128 u128;

#define GOLDEN ZR__GOLDEN
#define FEISTEL_ROUNDS ZR__FEISTEL_ROUNDS

static const char *const mode_names[] = { "sequential", "iid", "cyclic" };

int zr_sampler_mode_parse(const char *s, zr_sampler_mode *out)
{
	zr__clear();
	for (int m = 0; s && out && m < 3; m++)
		if (!strcmp(s, mode_names[m])) {
			*out = (zr_sampler_mode)m;
			return 0;
		}
	return zr__fail(-EINVAL, "sampler: unknown mode '%.32s' (sequential, "
			"iid, cyclic)", s ? s : "(null)");
}

const char *zr_sampler_mode_name(zr_sampler_mode mode)
{
	return (unsigned)mode < 3 ? mode_names[mode] : "unknown";
}

/* The SplitMix64 finalizer. */
uint64_t zr__fmix(uint64_t z)
{
	z ^= z >> 30;
	z *= 0xBF58476D1CE4E5B9ull;
	z ^= z >> 27;
	z *= 0x94D049BB133111EBull;
	z ^= z >> 31;
	return z;
}


void zr__words_init(zr__words *w, uint64_t key, uint64_t x)
{
	w->s0 = zr__fmix(zr__fmix(key) ^ x);
	w->c = 0;
}

uint64_t zr__words_next(zr__words *w)
{
	return zr__fmix(w->s0 + ++w->c * GOLDEN);
}

static uint64_t world_of(const zr_sampler *cfg)
{
	return cfg->world > 1 ? cfg->world : 1;
}

int zr_sampler_check(const zr_sampler *cfg)
{
	uint64_t w;

	zr__clear();
	if (!cfg)
		return -EINVAL;
	w = world_of(cfg);
	if ((unsigned)cfg->mode > ZR_SAMPLER_CYCLIC)
		return zr__fail(-EINVAL, "sampler: unknown mode %d",
				(int)cfg->mode);
	if (!cfg->length)
		return zr__fail(-EINVAL, "sampler: length is 0 (empty store)");
	if (!cfg->batch_size)
		return zr__fail(-EINVAL, "sampler: batch size is 0");
	if (cfg->rank >= w)
		return zr__fail(-EINVAL, "sampler: rank %u is not below world "
				"%llu", (unsigned)cfg->rank,
				(unsigned long long)w);
	if (cfg->batch_size > UINT64_MAX / w)
		return zr__fail(-EINVAL, "sampler: world * batch size "
				"overflows");
	if (cfg->mode == ZR_SAMPLER_CYCLIC && w * cfg->batch_size > cfg->length)
		return zr__fail(-EINVAL, "sampler: cyclic needs world * batch "
				"size (%llu) <= length (%llu)",
				(unsigned long long)(w * cfg->batch_size),
				(unsigned long long)cfg->length);
	return 0;
}

static void batch_sequential(const zr_sampler *cfg, uint64_t step,
			     uint64_t first, uint64_t *out)
{
	uint64_t n = cfg->length, wb = world_of(cfg) * cfg->batch_size;
	uint64_t base = (uint64_t)(((u128)step * wb) % n);

	for (uint64_t i = 0; i < cfg->batch_size; i++)
		out[i] = (uint64_t)(((u128)base + first + i) % n);
}

/* Lemire's nearly divisionless draw from [0, n), with rejection. */
static uint64_t draw(zr__words *w, uint64_t n)
{
	u128 m = (u128)zr__words_next(w) * n;
	uint64_t l = (uint64_t)m;

	if (l < n) {
		uint64_t th = (0 - n) % n;

		while (l < th) {
			m = (u128)zr__words_next(w) * n;
			l = (uint64_t)m;
		}
	}
	return (uint64_t)(m >> 64);
}

/* Draws ZR__DRAW_BLOCK values at once when none of them needs the
 * rejection test (l >= n for all: with n far below 2^64 nearly always),
 * which makes the words independent so their multiplies overlap.
 * Returns 0 (nothing consumed) when one of them does; the caller then
 * draws them one by one, so the output is exactly draw()'s. */
#define ZR__DRAW_BLOCK 8

static int draw_block(zr__words *w, uint64_t n, uint64_t *out)
{
	uint64_t lo_min = UINT64_MAX, v[ZR__DRAW_BLOCK];

	for (int j = 0; j < ZR__DRAW_BLOCK; j++) {
		u128 m = (u128)zr__fmix(w->s0 + (w->c + 1 + (uint64_t)j) *
				    GOLDEN) * n;
		uint64_t l = (uint64_t)m;

		lo_min = l < lo_min ? l : lo_min;
		v[j] = (uint64_t)(m >> 64);
	}
	if (lo_min < n)
		return 0;
	memcpy(out, v, sizeof(v));
	w->c += ZR__DRAW_BLOCK;
	return 1;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define ZR__AVX512 __attribute__((target("avx512f,avx512dq")))

ZR__AVX512 static __m512i fmix8(__m512i z)
{
	z = _mm512_xor_si512(z, _mm512_srli_epi64(z, 30));
	z = _mm512_mullo_epi64(z, _mm512_set1_epi64(0xBF58476D1CE4E5B9ll));
	z = _mm512_xor_si512(z, _mm512_srli_epi64(z, 27));
	z = _mm512_mullo_epi64(z, _mm512_set1_epi64(0x94D049BB133111EBll));
	return _mm512_xor_si512(z, _mm512_srli_epi64(z, 31));
}

/* draw_block eight lanes wide, for n < 2^32: the high half of w * n is
 * then two 32 x 32-bit products.  Returns how many of the first count
 * draws it made (a multiple of 8); it stops before a block that needs
 * the rejection test. */
ZR__AVX512 static uint64_t draw_wide(zr__words *w, uint64_t n,
				     uint64_t *out,
				     uint64_t count)
{
	const __m512i nv = _mm512_set1_epi64((long long)n);
	const __m512i golden = _mm512_set1_epi64((long long)GOLDEN);
	__m512i ctr = _mm512_set_epi64(8, 7, 6, 5, 4, 3, 2, 1);
	uint64_t i;

	ctr = _mm512_add_epi64(ctr, _mm512_set1_epi64((long long)w->c));
	for (i = 0; count - i >= ZR__DRAW_BLOCK; i += ZR__DRAW_BLOCK) {
		__m512i z = fmix8(_mm512_add_epi64(
			_mm512_set1_epi64((long long)w->s0),
			_mm512_mullo_epi64(ctr, golden)));
		__m512i a = _mm512_mul_epu32(z, nv);
		__m512i b = _mm512_mul_epu32(_mm512_srli_epi64(z, 32), nv);
		__m512i hi = _mm512_srli_epi64(
			_mm512_add_epi64(b, _mm512_srli_epi64(a, 32)), 32);

		if (_mm512_cmplt_epu64_mask(_mm512_mullo_epi64(z, nv), nv))
			break;
		_mm512_storeu_si512(out + i, hi);
		ctr = _mm512_add_epi64(ctr, _mm512_set1_epi64(8));
	}
	w->c += i;
	return i;
}

static int have_wide(void)
{
	static atomic_int have = -1; /* racing first calls agree */
	int h = atomic_load_explicit(&have, memory_order_relaxed);

	if (h < 0) {
		__builtin_cpu_init();
		h = __builtin_cpu_supports("avx512f") &&
		    __builtin_cpu_supports("avx512dq");
		atomic_store_explicit(&have, h, memory_order_relaxed);
	}
	return h;
}
#else
static uint64_t draw_wide(zr__words *w, uint64_t n,
			  uint64_t *out,
			  uint64_t count)
{
	(void)w, (void)n, (void)out, (void)count;
	return 0;
}

static int have_wide(void)
{
	return 0;
}
#endif

void zr__draw_many(zr__words *w, uint64_t n, uint64_t *out, uint64_t count)
{
	int wide = n <= UINT32_MAX && have_wide();
	uint64_t i = 0;

	while (count - i >= ZR__DRAW_BLOCK) {
		if (wide) {
			i += draw_wide(w, n, out + i, count - i);
			if (count - i < ZR__DRAW_BLOCK)
				break;
		}
		if (!draw_block(w, n, out + i))
			for (int j = 0; j < ZR__DRAW_BLOCK; j++)
				out[i + j] = draw(w, n);
		i += ZR__DRAW_BLOCK;
	}
	for (; i < count; i++)
		out[i] = draw(w, n);
}

static void batch_iid(const zr_sampler *cfg, uint64_t step, uint64_t first,
		      uint64_t *out)
{
	zr__words w;

	zr__words_init(&w, cfg->seed, step);
	/* The ranks before this one consume their draws first; out holds
	 * at least batch_size of them at a time. */
	while (first) {
		uint64_t n = first < cfg->batch_size ? first : cfg->batch_size;

		zr__draw_many(&w, cfg->length, out, n);
		first -= n;
	}
	zr__draw_many(&w, cfg->length, out, cfg->batch_size);
}

void zr__feistel_init(zr__feistel *f, uint64_t seed, uint64_t cycle,
			 uint64_t n)
{
	zr__words w;

	f->h = 1;
	while (f->h < 32 && (1ull << (2 * f->h)) < n)
		f->h++;
	f->mask = (1ull << f->h) - 1;
	f->n = n;
	zr__words_init(&w, seed, cycle);
	for (int r = 0; r < FEISTEL_ROUNDS; r++)
		f->key[r] = zr__words_next(&w);
}

static uint64_t feistel_pass(const zr__feistel *f, uint64_t x)
{
	uint64_t l = x >> f->h, r = x & f->mask;

	for (int i = 0; i < FEISTEL_ROUNDS; i++) {
		uint64_t t = r;

		r = l ^ (zr__fmix(r ^ f->key[i]) & f->mask);
		l = t;
	}
	return (l << f->h) | r;
}

/* Cycle-walking: a permutation of [0, 4^h) restricted to [0, n) visits
 * only values below n along each of its cycles, so this terminates. */
static uint64_t feistel_perm(const zr__feistel *f, uint64_t x)
{
	do
		x = feistel_pass(f, x);
	while (x >= f->n);
	return x;
}

void zr__feistel_run(const zr__feistel *f, uint64_t x, uint64_t count,
		     uint64_t *out)
{
	for (uint64_t i = 0; i < count; i++)
		out[i] = feistel_perm(f, x + i);
}

static void batch_cyclic(const zr_sampler *cfg, uint64_t step,
			 uint64_t first, uint64_t *out)
{
	uint64_t wb = world_of(cfg) * cfg->batch_size;
	uint64_t p = cfg->length / wb;
	uint64_t base = (step % p) * wb + first;
	zr__feistel f;

	zr__feistel_init(&f, cfg->seed, step / p, cfg->length);
	zr__feistel_run(&f, base, cfg->batch_size, out);
}

int zr_sampler_batch(const zr_sampler *cfg, uint64_t step, uint64_t *out)
{
	uint64_t first;
	int rc = zr_sampler_check(cfg);

	if (rc)
		return rc;
	if (!out)
		return -EINVAL;
	first = (uint64_t)cfg->rank * cfg->batch_size;
	if (cfg->mode == ZR_SAMPLER_SEQUENTIAL)
		batch_sequential(cfg, step, first, out);
	else if (cfg->mode == ZR_SAMPLER_IID)
		batch_iid(cfg, step, first, out);
	else
		batch_cyclic(cfg, step, first, out);
	return 0;
}
