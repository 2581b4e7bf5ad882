/*
 * shape_cache.c - what plans of packed and padded batch files kept for the
 * plans of the same batch that follow (see shape_cache.h): a handful of slots,
 * replaced round-robin, under one mutex held while an entry is found and
 * its shapes copied (at most MAX_SHAPES bytes).  Kept records count
 * against one budget for all slots (MAX_RECS): past it, the oldest
 * slots' records go first; their shapes stay.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "shape_cache.h"

#define SLOTS 8
#define MAX_SHAPES (1u << 20) /* per entry: B * ndim * 8 */
#define MAX_RECS (64u << 20)  /* all entries' records     */

struct slot {
	struct zrfile_shape_key key;
	struct zrfile_kept k;
};

static struct {
	pthread_mutex_t mu; /* guards everything below */
	struct slot s[SLOTS];
	size_t next;
	uint64_t recs;		/* bytes of records kept */
} cache = { .mu = PTHREAD_MUTEX_INITIALIZER };

static int same(const struct zrfile_shape_key *a,
		const struct zrfile_shape_key *b)
{
	return a->stores == b->stores && a->seed == b->seed &&
	       a->step == b->step && a->bsize == b->bsize &&
	       a->length == b->length && a->epoch == b->epoch &&
	       a->count == b->count && a->mode == b->mode;
}

void zrfile_kept_free(struct zrfile_kept *k)
{
	free(k->shapes);
	free(k->recs);
	free(k->off);
	memset(k, 0, sizeof(*k));
}

static uint64_t recs_bytes(const struct slot *s)
{
	return s->k.recs ? s->k.off[s->key.count] : 0;
}

/* The slot holding k's batch, or -1.  Caller holds cache.mu. */
static int find(const struct zrfile_shape_key *k)
{
	for (int i = 0; i < SLOTS; i++)
		if (cache.s[i].k.shapes && same(&cache.s[i].key, k))
			return i;
	return -1;
}

/* Empties slot i, giving what it held to *old (freed by the caller,
 * outside the mutex).  Caller holds cache.mu. */
static void empty(int i, struct zrfile_kept *old)
{
	cache.recs -= recs_bytes(&cache.s[i]);
	*old = cache.s[i].k;
	memset(&cache.s[i].k, 0, sizeof(cache.s[i].k));
}

/* Drops the records of the oldest slots until `more` bytes fit in the
 * budget, into drop[] (one per slot).  Caller holds cache.mu. */
static void make_room(uint64_t more, char *drop[SLOTS],
		      uint64_t *dropoff[SLOTS])
{
	for (size_t j = 0; j < SLOTS && cache.recs + more > MAX_RECS; j++) {
		struct slot *s = &cache.s[(cache.next + j) % SLOTS];

		cache.recs -= recs_bytes(s);
		drop[j] = s->k.recs;
		dropoff[j] = s->k.off;
		s->k.recs = NULL;
		s->k.off = NULL;
	}
}

void zrfile_shapes_put(const struct zrfile_shape_key *key,
		       struct zrfile_kept *k)
{
	struct slot s = { .key = *key };
	uint64_t count = key->count;
	struct zrfile_kept old = { 0 };
	char *drop[SLOTS] = { 0 };
	uint64_t *dropoff[SLOTS] = { 0 };
	uint64_t more;
	int i;

	if (!k->shapes || !count ||
	    count * (k->rndim ? k->rndim : 1) > MAX_SHAPES / 8) {
		zrfile_kept_free(k);
		return;
	}
	s.k = *k;
	memset(k, 0, sizeof(*k));
	if ((more = recs_bytes(&s)) > MAX_RECS) {
		free(s.k.recs);
		free(s.k.off);
		s.k.recs = NULL;
		s.k.off = NULL;
		more = 0;
	}
	pthread_mutex_lock(&cache.mu);
	i = find(&s.key);
	if (i < 0) {
		i = (int)cache.next;
		cache.next = (cache.next + 1) % SLOTS;
	}
	empty(i, &old);
	make_room(more, drop, dropoff);
	cache.s[i] = s;
	cache.recs += more;
	pthread_mutex_unlock(&cache.mu);
	zrfile_kept_free(&old);
	for (size_t j = 0; j < SLOTS; j++) {
		free(drop[j]);
		free(dropoff[j]);
	}
}

int zrfile_shapes_get(const struct zrfile_shape_key *key, int recs,
		      struct zrfile_kept *out)
{
	uint64_t count = key->count;
	size_t bytes;
	int i;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&cache.mu);
	i = find(key);
	if (i >= 0) {
		struct zrfile_kept *k = &cache.s[i].k;

		out->rndim = k->rndim;
		bytes = count * (k->rndim ? k->rndim : 1) * sizeof(*k->shapes);
		out->shapes = malloc(bytes);
		if (out->shapes)
			memcpy(out->shapes, k->shapes, bytes);
		if (recs && out->shapes && k->recs) {
			cache.recs -= recs_bytes(&cache.s[i]);
			out->recs = k->recs;
			out->off = k->off;
			k->recs = NULL;
			k->off = NULL;
		}
	}
	pthread_mutex_unlock(&cache.mu);
	return out->shapes ? 0 : -1;
}

void zrfile_shapes_clear(void)
{
	pthread_mutex_lock(&cache.mu);
	for (size_t i = 0; i < SLOTS; i++)
		zrfile_kept_free(&cache.s[i].k);
	cache.recs = 0;
	pthread_mutex_unlock(&cache.mu);
}
