/*
 * store_changes.c - which indices a handle's recent deletes changed
 * (zr_store_index_changed): a bounded ring of the last deletes, each with
 * the holes it refilled and the length it left.  A delete changes those
 * holes and every index at or past its new length, and nothing else:
 * appends only add indices, compact only moves bytes.  Written by
 * zr__log_publish under the exclusive rw and view_lock; read under
 * view_lock alone, so an answer never waits for a running delete.
 */
#include <stdlib.h>
#include <string.h>

#include "store.h"

#define CHANGES_DELETES 1024		/* deletes remembered            */
#define CHANGES_HOLES (1u << 16)	/* hole indices remembered, all  */

struct zr__change {
	uint64_t epoch;		/* the delete's epoch (1, 2, ...)         */
	uint64_t length;	/* the store's length after it            */
	uint64_t *holes;	/* ascending indices it refilled          */
	size_t n;
};

struct zr__changes {
	struct zr__change e[CHANGES_DELETES]; /* ring, oldest at first */
	size_t first, count, holes;
	uint64_t floor;		/* newest delete forgotten (0: none yet)  */
};

static void drop_oldest(struct zr__changes *c)
{
	struct zr__change *e = &c->e[c->first];

	c->floor = e->epoch;
	c->holes -= e->n;
	free(e->holes);
	memset(e, 0, sizeof(*e));
	c->first = (c->first + 1) % CHANGES_DELETES;
	c->count--;
}

static void forget_all(struct zr__changes *c, uint64_t epoch)
{
	while (c->count)
		drop_oldest(c);
	c->floor = epoch;
}

void zr__changes_add(zr_store *s, const uint64_t *sorted, size_t n,
		     uint64_t length)
{
	struct zr__changes *c = s->changes;
	struct zr__change *e;
	uint64_t *h = NULL;
	size_t k = 0;

	if (!c) {
		c = s->changes = calloc(1, sizeof(*c));
		if (!c)
			return; /* every answer is "changed" until one fits */
		c->floor = s->epoch - 1; /* any deletes before: unknown */
	}
	if (n > CHANGES_HOLES || (n && !(h = malloc(n * sizeof(*h))))) {
		forget_all(c, s->epoch);
		return;
	}
	/* sorted is descending: keep the holes below the new length,
	 * ascending, for the binary search */
	for (size_t i = n; i-- > 0;)
		if (sorted[i] < length)
			h[k++] = sorted[i];
	while (c->count == CHANGES_DELETES ||
	       (c->count && c->holes + k > CHANGES_HOLES))
		drop_oldest(c);
	e = &c->e[(c->first + c->count++) % CHANGES_DELETES];
	*e = (struct zr__change){ s->epoch, length, h, k };
	c->holes += k;
}

static int has(const uint64_t *v, size_t n, uint64_t x)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid] == x)
			return 1;
		if (v[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* Caller holds view_lock. */
static int changed(const zr_store *s, uint64_t lo, uint64_t hi, uint64_t idx)
{
	const struct zr__changes *c = s->changes;

	if (lo == hi)
		return 0;
	if (hi > s->epoch || !c || lo < c->floor)
		return 1; /* not this handle's, or forgotten */
	for (size_t i = c->count; i-- > 0;) {
		const struct zr__change *e =
			&c->e[(c->first + i) % CHANGES_DELETES];

		if (e->epoch <= lo)
			break;
		if (e->epoch <= hi &&
		    (idx >= e->length || has(e->holes, e->n, idx)))
			return 1;
	}
	return 0;
}

int zr_store_index_changed(zr_store *s, uint64_t a, uint64_t b, uint64_t idx)
{
	int r;

	pthread_mutex_lock(&s->view_lock);
	r = a < b ? changed(s, a, b, idx) : changed(s, b, a, idx);
	pthread_mutex_unlock(&s->view_lock);
	return r;
}

void zr__changes_free(zr_store *s)
{
	if (!s->changes)
		return;
	forget_all(s->changes, 0);
	free(s->changes);
	s->changes = NULL;
}
