/*
 * tree_node.h - the parts of the tree (tree_node.c) that the scan of a
 * local folder (tree_build.c) and of a URL (tree_url.c) both add.
 */
#ifndef ZRTREE_TREE_NODE_H
#define ZRTREE_TREE_NODE_H

#include <stddef.h>

#include "tree.h"

/* A new node of t under parent (NULL: the root); NULL without memory. */
struct zrtree_node *zrtree_node_new(struct zrtree *t, enum zrtree_kind kind,
				    const char *name,
				    struct zrtree_node *parent);
/* The store at abs opened and shown as folder name under parent with its
 * fixed files (rel: its path in the tree); -errno after a message. */
int zrtree_mount_store(struct zrtree *t, struct zrtree_node *parent,
		       const char *name, const char *abs, const char *rel,
		       struct zrtree_store **out);
/* SRC itself is a store at path: the mount root is its folder. */
int zrtree_root_store(struct zrtree *t, struct zrtree_node *root,
		      const char *path);
/* A dataset with room for n stores, none yet; NULL without memory. */
struct zrtree_dataset *zrtree_dataset_new(size_t n);
void zrtree_dataset_free(struct zrtree_dataset *ds);
/* ds (dir's stores) as a dataset with its @batch folder in dir: t holds
 * ds from the first step on, and frees it, even on failure (-ENOMEM). */
int zrtree_add_dataset(struct zrtree *t, struct zrtree_node *dir,
		       struct zrtree_dataset *ds);

#endif
