/*
 * tree_build.h - the pieces of the tree's build (tree_build.c) that a URL
 * SRC's build (tree_url.c) shares with the scan of a local folder.
 */
#ifndef ZRTREE_TREE_BUILD_H
#define ZRTREE_TREE_BUILD_H

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
/* ds (dir's stores) as a dataset with its @batch folder in dir. */
int zrtree_add_dataset(struct zrtree *t, struct zrtree_node *dir,
		       struct zrtree_dataset *ds);
/* SRC itself is a store at path: the mount root is its folder. */
int zrtree_root_store(struct zrtree *t, struct zrtree_node *root,
		      const char *path);
/* SRC is a URL: the stores at and under it (tree_url.c). */
int zrtree_build_url(struct zrtree *t, struct zrtree_node *root);

#endif
