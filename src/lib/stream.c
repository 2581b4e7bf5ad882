/*
 * stream.c - building a zr_stream: a plain one (one store, any mode) or a
 * weighted mixture, then its schedule entries in position order (weights
 * from a position on, skipped ranges, a source grown longer).  The
 * mapping is stream_map.c; zrecord.h, "Streams", specifies both.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "sampler.h"
#include "stream.h"

typedef unsigned __int128 u128;

static uint64_t gcd(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/* The positions of one cycle of source s at length n (0: n cannot serve
 * the source's mode). */
static uint64_t cycle_len(const zr__source *s, uint64_t n)
{
	if (s->mode == ZR_SAMPLER_SEQUENTIAL)
		return n;
	if (n >= s->granule)
		return n / s->granule * s->granule;
	return s->mode == ZR_SAMPLER_IID ? s->granule : 0;
}

static int source_init(zr__source *s, zr_sampler_mode mode, uint64_t key,
		       uint64_t granule, uint64_t n)
{
	s->mode = mode;
	s->key = key;
	s->granule = granule;
	s->seg = calloc(1, sizeof(*s->seg));
	if (!s->seg)
		return zr__fail(-ENOMEM, "stream: no memory");
	s->nseg = 1;
	s->seg[0].n = n;
	s->seg[0].len = cycle_len(s, n);
	if (!s->seg[0].len)
		return zr__fail(-EINVAL, "stream: cyclic needs granule (%llu) "
				"<= length (%llu)", (unsigned long long)granule,
				(unsigned long long)n);
	return 0;
}

void zr_stream_free(zr_stream *st)
{
	if (!st)
		return;
	for (uint32_t i = 0; st->src && i < st->k; i++)
		free(st->src[i].seg);
	for (uint32_t i = 0; st->ws && i < st->nw; i++)
		free(st->ws[i].w);
	free(st->src);
	free(st->ws);
	free(st->skip);
	free(st);
}

static zr_stream *stream_alloc(uint32_t k)
{
	zr_stream *st = calloc(1, sizeof(*st));

	if (!st)
		return NULL;
	st->k = k;
	st->src = calloc(k, sizeof(*st->src));
	if (!st->src) {
		free(st);
		return NULL;
	}
	return st;
}

int zr_stream_new(zr_sampler_mode mode, uint64_t seed, uint64_t length,
		  uint64_t granule, zr_stream **out)
{
	zr_stream *st;
	int rc;

	zr__clear();
	if (!out)
		return -EINVAL;
	if ((unsigned)mode > ZR_SAMPLER_CYCLIC)
		return zr__fail(-EINVAL, "stream: unknown mode %d", (int)mode);
	if (!length)
		return zr__fail(-EINVAL, "stream: length is 0 (empty store)");
	if (!granule)
		return zr__fail(-EINVAL, "stream: granule is 0 (want world * "
				"batch size)");
	st = stream_alloc(1);
	if (!st)
		return zr__fail(-ENOMEM, "stream: no memory");
	rc = source_init(&st->src[0], mode, seed, granule, length);
	if (rc) {
		zr_stream_free(st);
		return rc;
	}
	*out = st;
	return 0;
}

/* w reduced by its gcd into seg (fresh arrays); -EINVAL when the period
 * is 0 or too long. */
static int wseg_make(uint32_t k, const uint64_t *w, uint64_t from,
		     zr__wseg *seg)
{
	uint64_t g = 0, sum = 0;

	for (uint32_t i = 0; i < k; i++) {
		if (w[i] > ZR__STREAM_MAX_PERIOD)
			return zr__fail(-EINVAL, "stream: weight %llu of source "
					"%u is above %llu", (unsigned long long)
					w[i], (unsigned)i, ZR__STREAM_MAX_PERIOD);
		g = gcd(g, w[i]);
	}
	if (!g)
		return zr__fail(-EINVAL, "stream: every weight is 0");
	for (uint32_t i = 0; i < k; i++)
		sum += w[i] / g;
	if (sum > ZR__STREAM_MAX_PERIOD)
		return zr__fail(-EINVAL, "stream: the weights' period (their "
				"sum over their gcd, %llu) is above %llu: use "
				"smaller weights", (unsigned long long)sum,
				ZR__STREAM_MAX_PERIOD);
	seg->w = calloc(2 * (size_t)k, sizeof(*seg->w));
	if (!seg->w)
		return zr__fail(-ENOMEM, "stream: no memory");
	seg->base = seg->w + k;
	for (uint32_t i = 0; i < k; i++)
		seg->w[i] = w[i] / g;
	seg->from = from;
	seg->period = sum;
	return 0;
}

static int mixture_sources(zr_stream *st, uint64_t seed,
			   const uint64_t *lengths)
{
	for (uint32_t i = 0; i < st->k; i++) {
		int rc;

		if (!lengths[i])
			return zr__fail(-EINVAL, "stream: source %u is empty",
					(unsigned)i);
		rc = source_init(&st->src[i], ZR_SAMPLER_CYCLIC,
				 zr__fmix(seed + (i + 1) * ZR__GOLDEN), 1,
				 lengths[i]);
		if (rc)
			return rc;
	}
	return 0;
}

int zr_stream_new_mixture(uint64_t seed, uint32_t sources,
			  const uint64_t *lengths, const uint64_t *weights,
			  zr_stream **out)
{
	zr_stream *st;
	int rc;

	zr__clear();
	if (!out || !lengths || !weights)
		return -EINVAL;
	if (!sources || sources > ZR__STREAM_MAX_SOURCES)
		return zr__fail(-EINVAL, "stream: %u sources (want 1..%u)",
				(unsigned)sources, ZR__STREAM_MAX_SOURCES);
	st = stream_alloc(sources);
	if (!st)
		return zr__fail(-ENOMEM, "stream: no memory");
	st->mixture = 1;
	st->ws = calloc(1, sizeof(*st->ws));
	rc = st->ws ? 0 : zr__fail(-ENOMEM, "stream: no memory");
	if (!rc)
		rc = mixture_sources(st, seed, lengths);
	if (!rc)
		rc = wseg_make(sources, weights, 0, &st->ws[0]);
	if (rc) {
		zr_stream_free(st);
		return rc;
	}
	st->nw = 1;
	*out = st;
	return 0;
}

uint32_t zr_stream_sources(const zr_stream *st)
{
	return st ? st->k : 0;
}

/* Entries come in position order: at must not precede the last one. */
static int in_order(zr_stream *st, uint64_t at, const char *what)
{
	if (at < st->last)
		return zr__fail(-EINVAL, "stream: %s at position %llu comes "
				"before an entry at %llu (entries go in "
				"position order)", what, (unsigned long long)at,
				(unsigned long long)st->last);
	return 0;
}

/* Makes room for one more zeroed element in *arr (of n, each sz). */
static int push(void **arr, uint32_t n, size_t sz)
{
	char *a;

	if (n >= ZR__STREAM_MAX_ENTRIES)
		return zr__fail(-EINVAL, "stream: more than %u entries of one "
				"kind", ZR__STREAM_MAX_ENTRIES);
	a = realloc(*arr, (n + 1) * sz);
	if (!a)
		return zr__fail(-ENOMEM, "stream: no memory");
	memset(a + n * sz, 0, sz);
	*arr = a;
	return 0;
}

int zr_stream_weights(zr_stream *st, uint64_t from, const uint64_t *weights)
{
	zr__wseg seg = { 0 }, *last;
	int rc;

	zr__clear();
	if (!st || !weights)
		return -EINVAL;
	if (!st->mixture)
		return zr__fail(-EINVAL, "stream: weights need a mixture");
	rc = in_order(st, from, "a weight change");
	if (!rc)
		rc = wseg_make(st->k, weights, from, &seg);
	if (!rc)
		rc = zr__stream_counts(st, from, seg.base);
	if (!rc)
		rc = push((void **)&st->ws, st->nw, sizeof(*st->ws));
	if (rc) {
		free(seg.w);
		return rc;
	}
	last = &st->ws[st->nw - 1];
	if (last->from == from) {
		free(last->w); /* the later entry replaces it */
		*last = seg;
	} else {
		st->ws[st->nw++] = seg;
	}
	st->last = from;
	return 0;
}

int zr_stream_skip(zr_stream *st, uint64_t from, uint64_t until)
{
	zr__skip *prev;
	int rc;

	zr__clear();
	if (!st)
		return -EINVAL;
	if (from >= until)
		return zr__fail(-EINVAL, "stream: skip %llu..%llu is empty "
				"(want from < until)", (unsigned long long)from,
				(unsigned long long)until);
	rc = in_order(st, from, "a skip");
	prev = st->nskip ? &st->skip[st->nskip - 1] : NULL;
	if (!rc && prev && from < prev->until)
		rc = zr__fail(-EINVAL, "stream: skip %llu..%llu overlaps "
			      "%llu..%llu", (unsigned long long)from,
			      (unsigned long long)until,
			      (unsigned long long)prev->from,
			      (unsigned long long)prev->until);
	if (rc)
		return rc;
	if (prev && from == prev->until) {
		prev->until = until;
	} else {
		rc = push((void **)&st->skip, st->nskip, sizeof(*st->skip));
		if (rc)
			return rc;
		st->skip[st->nskip].from = from;
		st->skip[st->nskip++].until = until;
	}
	st->skipped += until - from;
	st->last = from;
	return 0;
}

/* The first cycle boundary of s at or after counter c, in *b, and the
 * cycles its counter completed before it. */
static int boundary(const zr__source *s, uint64_t c, uint64_t *b,
		    uint64_t *cycles)
{
	const zr__lenseg *g = &s->seg[s->nseg - 1];
	uint64_t k = c > g->at ? (c - g->at - 1) / g->len + 1 : 0;
	u128 at = (u128)g->at + (u128)k * g->len;

	if (at > UINT64_MAX)
		return zr__fail(-EINVAL, "stream: the next cycle starts past "
				"2^64");
	*b = (uint64_t)at;
	*cycles = g->cycles + k;
	return 0;
}

static int grow_source(zr__source *s, uint64_t c, uint64_t n)
{
	zr__lenseg *g = &s->seg[s->nseg - 1];
	uint64_t b = 0, cycles = 0, len = cycle_len(s, n);
	int rc;

	if (n < g->n)
		return zr__fail(-EINVAL, "stream: length %llu is below %llu "
				"(a store that shrank needs a new stream)",
				(unsigned long long)n,
				(unsigned long long)g->n);
	if (n == g->n)
		return 0;
	rc = boundary(s, c, &b, &cycles);
	if (rc)
		return rc;
	if (b == g->at) {
		g->n = n; /* not begun yet: the later length replaces it */
		g->len = len;
		return 0;
	}
	rc = push((void **)&s->seg, s->nseg, sizeof(*s->seg));
	if (rc)
		return rc;
	g = &s->seg[s->nseg++];
	*g = (zr__lenseg){ .at = b, .n = n, .cycles = cycles, .len = len };
	return 0;
}

int zr_stream_grow(zr_stream *st, uint64_t at, uint32_t source,
		   uint64_t length)
{
	uint64_t *counts;
	int rc;

	zr__clear();
	if (!st)
		return -EINVAL;
	if (source >= st->k)
		return zr__fail(-EINVAL, "stream: source %u is not below %u",
				(unsigned)source, (unsigned)st->k);
	rc = in_order(st, at, "a length change");
	if (rc)
		return rc;
	counts = calloc(st->k, sizeof(*counts));
	if (!counts)
		return zr__fail(-ENOMEM, "stream: no memory");
	rc = zr__stream_counts(st, at, counts);
	if (!rc)
		rc = grow_source(&st->src[source], counts[source], length);
	free(counts);
	if (!rc)
		st->last = at;
	return rc;
}
