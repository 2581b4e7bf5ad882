/*
 * batch_node.c - what a batch node reads and where its failures go
 * (batch_node.h).
 */
#include "batch_node.h"

size_t zrtree_batch_stores(const struct zrtree_node *n,
			struct zrtree_store *const **out)
{
	if (n->mix) {
		*out = n->mix->st;
		return n->mix->nst;
	}
	if (n->ds) {
		*out = n->ds->st;
		return n->ds->n;
	}
	*out = &n->st;
	return 1;
}

struct zrtree_elog *zrtree_batch_elog(const struct zrtree_node *n,
				  const char **name)
{
	struct zrtree_store *const *st;

	if (n->mix) {
		*name = n->mix->path;
		return n->mix->log;
	}
	zrtree_batch_stores(n, &st);
	*name = st[0]->path;
	return st[0]->log;
}
