/*
 * tree_url.h - a URL SRC's tree (tree_url.c), which the tree's build
 * (tree_build.c) hands over to when SRC is a URL.
 */
#ifndef ZRTREE_TREE_URL_H
#define ZRTREE_TREE_URL_H

#include "tree.h"

/* SRC is a URL: the stores at and under it, below root. */
int zrtree_build_url(struct zrtree *t, struct zrtree_node *root);

#endif
