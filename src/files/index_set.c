/*
 * index_set.c - the indices read so far (index_set.h): a list that
 * doubles while it costs less than the bitmaps would, then the bitmaps.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "index_set.h"

/* A list of this many bytes is kept even where the bitmaps would cost
 * less (a small store): short lists stay in input order, as they were. */
#define LIST_MIN_BYTES (32u << 10)

static uint64_t words_of(uint64_t bits)
{
	return bits / 64 + (bits % 64 != 0);
}

/* What the two bitmaps of limit bits cost, or SIZE_MAX if no size_t
 * holds it. */
static size_t bitmap_bytes(uint64_t limit)
{
	uint64_t w = words_of(limit);

	return w <= SIZE_MAX / 16 ? (size_t)(w * 16) : SIZE_MAX;
}

static int bit(const uint64_t *map, uint64_t x)
{
	return (int)(map[x / 64] >> (x % 64) & 1);
}

/* The bitmaps hold `bits` bits; a store grown since needs more.  Only a
 * whole success sets bits, the mark of the bitmaps' form: a failure
 * leaves the set as it was (maybe with more room). */
static int bitmaps_grow(struct zrfile_idxset *s, uint64_t bits)
{
	uint64_t have = words_of(s->bits), want = words_of(bits);
	uint64_t *seen, *peaks;

	if (want <= have)
		return 0;
	if (want > SIZE_MAX / sizeof(uint64_t))
		return -ENOMEM;
	seen = realloc(s->seen, want * sizeof(uint64_t));
	if (seen)
		s->seen = seen;
	peaks = seen ? realloc(s->peaks, want * sizeof(uint64_t)) : NULL;
	if (!peaks)
		return -ENOMEM;
	s->peaks = peaks;
	memset(s->seen + have, 0, (want - have) * sizeof(uint64_t));
	memset(s->peaks + have, 0, (want - have) * sizeof(uint64_t));
	s->bits = want * 64;
	return 0;
}

static void bitmaps_set(struct zrfile_idxset *s, uint64_t x, int first)
{
	if (first || x > s->peak) {
		s->peaks[x / 64] |= 1ull << (x % 64);
		s->peak = x;
	}
	if (!bit(s->seen, x)) {
		s->seen[x / 64] |= 1ull << (x % 64);
		s->n++;
	}
}

/* The list into bitmaps of limit bits, replaying it in input order so
 * that its peaks are marked.  An index the list kept may be past a limit
 * that shrank since (finish refuses it): the bitmaps reach it too. */
static int to_bitmaps(struct zrfile_idxset *s, uint64_t limit)
{
	uint64_t *list = s->list;
	size_t n = s->n;
	int err = bitmaps_grow(s, s->peak >= limit ? s->peak + 1 : limit);

	if (err)
		return err;
	s->list = NULL;
	s->n = s->cap = 0;
	for (size_t i = 0; i < n; i++)
		bitmaps_set(s, list[i], i == 0);
	free(list);
	return 0;
}

/* 0: x is in the list; 1: the list became bitmaps, x is for them. */
static int list_push(struct zrfile_idxset *s, uint64_t x, uint64_t limit)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64, bound;
		uint64_t *v;

		bound = bitmap_bytes(limit);
		if (bound < LIST_MIN_BYTES)
			bound = LIST_MIN_BYTES;
		if (cap > bound / sizeof(*v)) {
			int err = to_bitmaps(s, limit);

			return err ? err : 1;
		}
		v = realloc(s->list, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		s->list = v;
		s->cap = cap;
	}
	if (!s->n || x > s->peak)
		s->peak = x;
	s->list[s->n++] = x;
	return 0;
}

int zrfile_idxset_add(struct zrfile_idxset *s, uint64_t x, uint64_t limit)
{
	int err;

	if (!s->bits && (err = list_push(s, x, limit)) <= 0)
		return err;
	if (x >= s->bits &&
	    (err = bitmaps_grow(s, x >= limit ? x + 1 : limit)))
		return err;
	bitmaps_set(s, x, 0);
	return 0;
}

/* The first set bit of map at or past x, below bits: 1 and *x, or 0. */
static int next_bit(const uint64_t *map, uint64_t bits, uint64_t *x)
{
	uint64_t w = *x / 64, word;

	if (*x >= bits)
		return 0;
	word = map[w] & (~0ull << (*x % 64));
	while (!word) {
		if (++w >= words_of(bits))
			return 0;
		word = map[w];
	}
	*x = w * 64 + (uint64_t)__builtin_ctzll(word);
	return 1;
}

int zrfile_idxset_first_at(const struct zrfile_idxset *s, uint64_t bound,
			   uint64_t *x)
{
	uint64_t at = bound;

	if (!s->n || s->peak < bound)
		return 0;
	if (s->bits)
		return next_bit(s->peaks, s->bits, &at) ? (*x = at, 1) : 0;
	for (size_t i = 0; i < s->n; i++)
		if (s->list[i] >= bound) {
			*x = s->list[i];
			return 1;
		}
	return 0;
}

int zrfile_idxset_take(struct zrfile_idxset *s, uint64_t **idx, size_t *n)
{
	uint64_t *v = s->list, at = 0;
	size_t k = 0;

	if (s->bits && s->n) {
		v = malloc(s->n * sizeof(*v));
		if (!v)
			return -ENOMEM;
		while (next_bit(s->seen, s->bits, &at))
			v[k++] = at++;
	}
	*n = s->n;
	*idx = s->n ? v : NULL;
	if (v == s->list)
		s->list = NULL;
	zrfile_idxset_clear(s);
	return 0;
}

size_t zrfile_idxset_bytes(const struct zrfile_idxset *s)
{
	return s->cap * sizeof(uint64_t) +
	       (size_t)(words_of(s->bits) * 2 * sizeof(uint64_t));
}

void zrfile_idxset_clear(struct zrfile_idxset *s)
{
	free(s->list);
	free(s->seen);
	free(s->peaks);
	*s = (struct zrfile_idxset){ 0 };
}
