/*
 * batch_node.h - what a batch node (a store's, a dataset's or a
 * mixture's batch file) reads and where its failures are written: the
 * two questions all batch code asks of a node.
 */
#ifndef ZRTREE_BATCH_NODE_H
#define ZRTREE_BATCH_NODE_H

#include "tree.h"

/* The stores batch node n reads, in the order of its views: a store's
 * one, a dataset's by name, a mixture's each once in ascending id. */
size_t zrtree_batch_stores(const struct zrtree_node *n,
			struct zrtree_store *const **out);
/* Where batch node n's failures go: its mixture's errors, else its first
 * store's; *name gets the name they start with. */
struct zrtree_elog *zrtree_batch_elog(const struct zrtree_node *n,
				  const char **name);

#endif
