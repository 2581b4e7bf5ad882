/*
 * stream_map.c - positions to (source, record index): the weighted
 * interleave of a mixture's period, each source's counter through its
 * length history to its own cycle, and a run's steps past skipped ranges
 * (the algorithm is specified in zrecord.h, "Streams").  Nothing here is
 * a table: a call simulates at most one period of its interleave and then
 * spends O(sources) per position.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "sampler.h"
#include "stream.h"

typedef unsigned __int128 u128;

/* The last of n elements (n >= 1, each stride bytes, a uint64_t key at
 * offset off, keys ascending, the first <= x) whose key is <= x. */
static const void *last_at_or_before(const void *base, uint32_t n,
				     size_t stride, size_t off, uint64_t x)
{
	const char *b = base;
	uint32_t lo = 0, hi = n;

	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;
		uint64_t key;

		memcpy(&key, b + mid * stride + off, sizeof(key));
		if (key <= x)
			lo = mid;
		else
			hi = mid;
	}
	return b + lo * stride;
}

/* The last length segment of s at or before counter c. */
static const zr__lenseg *seg_of(const zr__source *s, uint64_t c)
{
	return last_at_or_before(s->seg, s->nseg, sizeof(*s->seg),
				 offsetof(zr__lenseg, at), c);
}

/* Counters [c, c + n) of s, all in segment g, into out; returns how many
 * it wrote (up to the end of a cycle, an iid block or the segment). */
static uint64_t source_piece(const zr__source *s, const zr__lenseg *g,
			     uint64_t end, uint64_t c, uint64_t n,
			     uint64_t *out)
{
	uint64_t d = c - g->at, x, m;

	if (end - c < n)
		n = end - c;
	if (s->mode == ZR_SAMPLER_SEQUENTIAL) {
		x = d % g->n;
		m = g->n - x < n ? g->n - x : n;
		for (uint64_t i = 0; i < m; i++)
			out[i] = x + i;
	} else if (s->mode == ZR_SAMPLER_CYCLIC) {
		zr__feistel f;

		x = d % g->len;
		m = g->len - x < n ? g->len - x : n;
		zr__feistel_init(&f, s->key, g->cycles + d / g->len, g->n);
		zr__feistel_run(&f, x, m, out);
	} else {
		zr__words w;
		uint64_t u = c % s->granule;

		m = s->granule - u < n ? s->granule - u : n;
		zr__words_init(&w, s->key, c / s->granule);
		/* The block's draws before c are made and dropped, m at a
		 * time, in out. */
		while (u) {
			uint64_t k = u < m ? u : m;

			zr__draw_many(&w, g->n, out, k);
			u -= k;
		}
		zr__draw_many(&w, g->n, out, m);
	}
	return m;
}

/* Counters [c, c + n) of s into out. */
static void source_run(const zr__source *s, uint64_t c, uint64_t n,
		       uint64_t *out)
{
	while (n) {
		const zr__lenseg *g = seg_of(s, c);
		uint64_t end = g + 1 < s->seg + s->nseg ? g[1].at : UINT64_MAX;
		uint64_t m = source_piece(s, g, end, c, n, out);

		c += m;
		out += m;
		n -= m;
	}
}

/* The interleave of one period: C[k] draws of source k so far; source k
 * is ready at offset x when floor(C[k] * S / w[k]) <= x (rel[k]) and
 * due by floor((C[k] + 1) * S / w[k]) (due[k], with remainder rem[k]).
 * Each draw moves due on by S / w[k] = sq[k] + sr[k] / w[k], so a step
 * divides nothing. */
typedef struct edf {
	uint32_t k;
	uint64_t s;
	const uint64_t *w;
	uint64_t *c, *rel, *due, *rem, *sq, *sr;
} edf;

#define ZR__EDF_ARRAYS 6

static void edf_reset(edf *e)
{
	for (uint32_t i = 0; i < e->k; i++) {
		e->c[i] = 0;
		if (!e->w[i]) {
			e->rel[i] = UINT64_MAX;
			continue;
		}
		e->rel[i] = 0;
		e->sq[i] = e->s / e->w[i];
		e->sr[i] = e->s % e->w[i];
		e->due[i] = e->sq[i];
		e->rem[i] = e->sr[i];
	}
}

/* The source at offset x (the ready one due first, the lowest on a tie). */
static uint32_t edf_step(edf *e, uint64_t x)
{
	uint32_t best = 0;
	uint64_t due = UINT64_MAX;

	for (uint32_t i = 0; i < e->k; i++)
		if (e->rel[i] <= x && e->due[i] < due) {
			due = e->due[i];
			best = i;
		}
	if (++e->c[best] >= e->w[best]) {
		e->rel[best] = UINT64_MAX; /* all its draws of the period */
		return best;
	}
	e->rel[best] = e->due[best];
	e->due[best] += e->sq[best];
	e->rem[best] += e->sr[best];
	if (e->rem[best] >= e->w[best]) {
		e->rem[best] -= e->w[best];
		e->due[best]++;
	}
	return best;
}

/* A mixture source's current cycle: counters [lo, hi) are perm(c - lo)
 * (its sources are cyclic, granule 1), so consecutive draws of one
 * source set up its permutation once. */
typedef struct cycle_cache {
	uint64_t lo, hi;
	zr__feistel f;
} cycle_cache;

static uint64_t cached_index(const zr__source *s, cycle_cache *cc,
			     uint64_t c)
{
	uint64_t i;

	if (c < cc->lo || c >= cc->hi) {
		const zr__lenseg *g = seg_of(s, c);
		uint64_t end = g + 1 < s->seg + s->nseg ? g[1].at : UINT64_MAX;
		uint64_t d = c - g->at;

		cc->lo = c - d % g->len;
		cc->hi = end - cc->lo > g->len ? cc->lo + g->len : end;
		zr__feistel_init(&cc->f, s->key, g->cycles + d / g->len, g->n);
	}
	zr__feistel_run(&cc->f, c - cc->lo, 1, &i);
	return i;
}

/* Scratch of a mixture call: the interleave's arrays, each source's
 * counter and cycle. */
typedef struct scratch {
	edf e;
	uint64_t *ctr;
	cycle_cache *cc;
	void *mem;
} scratch;

static int scratch_new(scratch *sc, uint32_t k)
{
	size_t arrays = ZR__EDF_ARRAYS + 1;
	size_t words = arrays * k + k * ((sizeof(cycle_cache) + 7) / 8);
	uint64_t *m = calloc(words, sizeof(*m));

	if (!m)
		return zr__fail(-ENOMEM, "stream: no memory for %u sources",
				(unsigned)k);
	sc->mem = m;
	sc->e.k = k;
	sc->e.c = m;
	sc->e.rel = m + k;
	sc->e.due = m + 2 * (size_t)k;
	sc->e.rem = m + 3 * (size_t)k;
	sc->e.sq = m + 4 * (size_t)k;
	sc->e.sr = m + 5 * (size_t)k;
	sc->ctr = m + 6 * (size_t)k;
	sc->cc = (cycle_cache *)(m + arrays * k);
	return 0;
}

static const zr__wseg *wseg_of(const zr_stream *st, uint64_t pos)
{
	return last_at_or_before(st->ws, st->nw, sizeof(*st->ws),
				 offsetof(zr__wseg, from), pos);
}

/* Places the interleave of g at position pos: sc->e at the period's
 * offset and sc->ctr at each source's counter there.  Returns the
 * offset. */
static uint64_t edf_seek(scratch *sc, const zr__wseg *g, uint64_t pos)
{
	uint64_t d = pos - g->from, q = d / g->period, o = d % g->period;

	sc->e.s = g->period;
	sc->e.w = g->w;
	edf_reset(&sc->e);
	for (uint64_t x = 0; x < o; x++)
		edf_step(&sc->e, x);
	for (uint32_t i = 0; i < sc->e.k; i++)
		sc->ctr[i] = g->base[i] + q * g->w[i] + sc->e.c[i];
	return o;
}

int zr__stream_counts(const zr_stream *st, uint64_t pos, uint64_t *counts)
{
	scratch sc;
	int rc;

	if (!st->mixture) {
		counts[0] = pos;
		return 0;
	}
	rc = scratch_new(&sc, st->k);
	if (rc)
		return rc;
	edf_seek(&sc, wseg_of(st, pos), pos);
	memcpy(counts, sc.ctr, st->k * sizeof(*counts));
	free(sc.mem);
	return 0;
}

/* Positions [pos, pos + n) of a mixture. */
static int mixture_run(const zr_stream *st, uint64_t pos, uint64_t n,
		       uint32_t *source, uint64_t *index)
{
	scratch sc;
	int rc = scratch_new(&sc, st->k);

	if (rc)
		return rc;
	while (n) {
		const zr__wseg *g = wseg_of(st, pos);
		uint64_t end = g + 1 < st->ws + st->nw ? g[1].from : UINT64_MAX;
		uint64_t o = edf_seek(&sc, g, pos);

		for (; n && pos < end; n--, pos++) {
			uint32_t k = edf_step(&sc.e, o);

			if (source)
				*source++ = k;
			*index++ = cached_index(&st->src[k], &sc.cc[k],
						sc.ctr[k]++);
			if (++o == g->period) {
				o = 0;
				edf_reset(&sc.e);
			}
		}
	}
	free(sc.mem);
	return 0;
}

/* Raw positions, skips not considered. */
static int map_run(const zr_stream *st, uint64_t pos, uint64_t n,
		   uint32_t *source, uint64_t *index)
{
	if (st->mixture)
		return mixture_run(st, pos, n, source, index);
	source_run(&st->src[0], pos, n, index);
	if (source)
		memset(source, 0, n * sizeof(*source));
	return 0;
}

int zr_stream_map(const zr_stream *st, uint64_t pos, uint64_t count,
		  uint32_t *source, uint64_t *index)
{
	zr__clear();
	if (!st || (count && !index))
		return -EINVAL;
	if (pos > UINT64_MAX - count)
		return zr__fail(-EINVAL, "stream: positions %llu + %llu pass "
				"2^64", (unsigned long long)pos,
				(unsigned long long)count);
	return map_run(st, pos, count, source, index);
}

/* The number of served (not skipped) positions before pos. */
static uint64_t served_before(const zr_stream *st, uint64_t pos)
{
	uint64_t skipped = 0;

	for (uint32_t i = 0; i < st->nskip && st->skip[i].from < pos; i++) {
		uint64_t u = st->skip[i].until < pos ? st->skip[i].until : pos;

		skipped += u - st->skip[i].from;
	}
	return pos - skipped;
}

/* The position of served ordinal o (callers checked it is below 2^64)
 * and the first skipped range after it. */
static uint64_t position_of(const zr_stream *st, uint64_t o, uint32_t *next)
{
	uint32_t i = 0;

	for (; i < st->nskip && st->skip[i].from <= o; i++)
		o += st->skip[i].until - st->skip[i].from;
	*next = i;
	return o;
}

/* Served positions from the served ordinal o on, n of them, past the
 * skipped ranges. */
static int served_run(const zr_stream *st, uint64_t o, uint64_t n,
		      uint32_t *source, uint64_t *index)
{
	uint32_t i;
	uint64_t p = position_of(st, o, &i);
	int rc = 0;

	while (!rc && n) {
		uint64_t room = i < st->nskip ? st->skip[i].from - p : n;
		uint64_t m = room < n ? room : n;

		rc = map_run(st, p, m, source, index);
		index += m;
		source = source ? source + m : NULL;
		n -= m;
		if (i < st->nskip)
			p = st->skip[i++].until;
	}
	return rc;
}

int zr_stream_position(const zr_stream *st, uint64_t start, uint64_t served,
		       uint64_t *pos)
{
	uint64_t o;
	uint32_t next;

	zr__clear();
	if (!st || !pos)
		return -EINVAL;
	o = served_before(st, start);
	if (served > UINT64_MAX - st->skipped - o)
		return zr__fail(-EINVAL, "stream: position passes 2^64");
	*pos = position_of(st, o + served, &next);
	return 0;
}

int zr_stream_batch(const zr_stream *st, uint64_t start, uint64_t step,
		    uint32_t rank, uint32_t world, uint64_t batch,
		    uint32_t *source, uint64_t *index)
{
	uint64_t w = world > 1 ? world : 1;
	u128 o;

	zr__clear();
	if (!st || !index)
		return -EINVAL;
	if (!batch)
		return zr__fail(-EINVAL, "stream: batch size is 0");
	if (rank >= w)
		return zr__fail(-EINVAL, "stream: rank %u is not below world "
				"%llu", (unsigned)rank, (unsigned long long)w);
	o = (u128)served_before(st, start) + (u128)step * w * batch +
	    (u128)rank * batch + batch;
	if (o > (u128)UINT64_MAX + 1 - st->skipped)
		return zr__fail(-EINVAL, "stream: step %llu passes position "
				"2^64", (unsigned long long)step);
	return served_run(st, (uint64_t)(o - batch), batch, source, index);
}
