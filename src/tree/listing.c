/*
 * listing.c - what a folder of the tree lists, entry by entry: a static
 * folder its children; records/ is generated from the entry's number
 * (entry k is record k), so listing 10^8 records streams in constant
 * memory; batch/ lists its mode folders only: batch files are unbounded
 * and found by name.  The mount's readdir and `zrecord ls` both list
 * through it.
 */
#include <errno.h>
#include <stdio.h>

#include "tree.h"

int zrtree_entry(const struct zrtree_node *n, uint64_t k, char *name,
		 size_t cap, int *is_dir, struct zrtree_node **kid)
{
	static const zr_sampler_mode modes[] = {
		ZR_SAMPLER_SEQUENTIAL, ZR_SAMPLER_IID, ZR_SAMPLER_CYCLIC
	};

	*kid = NULL;
	*is_dir = 0;
	switch (n->kind) {
	case ZRTREE_K_DIR:
	case ZRTREE_K_STORE:
		if (k >= n->nkids)
			return -ENOENT;
		snprintf(name, cap, "%s", n->kids[k]->name);
		*kid = n->kids[k];
		*is_dir = (*kid)->kind <= ZRTREE_K_BATCHDIR;
		return 0;
	case ZRTREE_K_RECDIR:
		if (k >= zr_store_length(n->st->zs))
			return -ENOENT;
		snprintf(name, cap, "%llu.npy", (unsigned long long)k);
		return 0;
	case ZRTREE_K_BATCHDIR:
		if (n->depth != 0 || k >= sizeof(modes) / sizeof(modes[0]))
			return -ENOENT;
		snprintf(name, cap, "%s", zr_sampler_mode_name(modes[k]));
		*is_dir = 1;
		return 0;
	default:
		return -ENOTDIR;
	}
}
