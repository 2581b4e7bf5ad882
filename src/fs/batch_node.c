/*
 * batch_node.c - what a batch node reads and where its failures go
 * (batch_node.h).
 */
#include "batch_node.h"

size_t zrfs_batch_stores(const struct zrfs_node *n,
			struct zrfs_fstore *const **out)
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

struct zrfs_elog *zrfs_batch_elog(const struct zrfs_node *n,
				  const char **name)
{
	struct zrfs_fstore *const *st;

	if (n->mix) {
		*name = n->mix->path;
		return n->mix->log;
	}
	zrfs_batch_stores(n, &st);
	*name = st[0]->path;
	return st[0]->log;
}
