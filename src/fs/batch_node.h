/*
 * batch_node.h - what a batch node (a store's, a dataset's or a
 * mixture's batch file) reads and where its failures are written: the
 * two questions every part of the daemon's batch code asks of a node.
 */
#ifndef ZRFS_BATCH_NODE_H
#define ZRFS_BATCH_NODE_H

#include "fs.h"

/* The stores batch node n reads, in the order of its views: a store's
 * one, a dataset's by name, a mixture's each once in ascending id. */
size_t zrfs_batch_stores(const struct zrfs_node *n,
			struct zrfs_fstore *const **out);
/* Where batch node n's failures go: its mixture's errors, else its first
 * store's; *name gets the name they start with. */
struct zrfs_elog *zrfs_batch_elog(const struct zrfs_node *n,
				  const char **name);

#endif
