/*
 * dataset.c - the length of a dataset (dataset.h).
 */
#include "dataset.h"

uint64_t zrtree_ds_length(const struct zrtree_dataset *ds)
{
	uint64_t n = zr_store_length(ds->st[0]->zs);

	for (size_t i = 1; i < ds->n; i++) {
		uint64_t l = zr_store_length(ds->st[i]->zs);

		n = l < n ? l : n;
	}
	return n;
}
