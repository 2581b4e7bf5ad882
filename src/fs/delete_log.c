/*
 * delete_log.c - the bounded log of a store's deletes (see
 * delete_log.h).  The caller serializes: writers under the store's write
 * lock, readers under its read lock.
 */
#include <stdlib.h>
#include <string.h>

#include "delete_log.h"

static void drop_oldest(struct zrfs_dlog *d)
{
	struct zrfs_dlog_entry *e = &d->e[d->first];

	d->floor = e->gen;
	d->holes -= e->n;
	free(e->holes);
	memset(e, 0, sizeof(*e));
	d->first = (d->first + 1) % ZRFS_DLOG_DELETES;
	d->count--;
}

void zrfs_dlog_add(struct zrfs_dlog *d, uint64_t gen, const uint64_t *holes,
		  size_t n, uint64_t length)
{
	struct zrfs_dlog_entry *e;
	uint64_t *h = NULL;
	size_t k = 0;

	if (n > ZRFS_DLOG_HOLES || (n && !(h = malloc(n * sizeof(*h))))) {
		/* forget everything up to this delete */
		while (d->count)
			drop_oldest(d);
		d->floor = gen;
		return;
	}
	for (size_t i = 0; i < n; i++)
		if (holes[i] < length && (!k || h[k - 1] != holes[i]))
			h[k++] = holes[i];
	while (d->count == ZRFS_DLOG_DELETES ||
	       (d->count && d->holes + k > ZRFS_DLOG_HOLES))
		drop_oldest(d);
	e = &d->e[(d->first + d->count++) % ZRFS_DLOG_DELETES];
	e->gen = gen;
	e->length = length;
	e->holes = h;
	e->n = k;
	d->holes += k;
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

int zrfs_dlog_unchanged(const struct zrfs_dlog *d, uint64_t idx, uint64_t since)
{
	if (since < d->floor)
		return 0; /* deletes since then were forgotten */
	for (size_t i = d->count; i-- > 0;) {
		const struct zrfs_dlog_entry *e =
			&d->e[(d->first + i) % ZRFS_DLOG_DELETES];

		if (e->gen <= since)
			break;
		if (idx >= e->length || has(e->holes, e->n, idx))
			return 0;
	}
	return 1;
}

void zrfs_dlog_free(struct zrfs_dlog *d)
{
	while (d->count)
		drop_oldest(d);
}
