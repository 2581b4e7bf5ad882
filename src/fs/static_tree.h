/*
 * static_tree.h - the static part of the namespace, built once at mount: SRC's
 * folders, its stores (opened and kept open) and their fixed files, and
 * the datasets (folders holding two or more stores).
 */
#ifndef ZRFS_STATIC_TREE_H
#define ZRFS_STATIC_TREE_H

#include "fs.h"
#include "mixsource.h"

/* Name of a dataset folder's aligned-batch folder; a SRC entry of that name
 * inside a dataset folder is hidden (and is no field of a mixture's
 * dataset source: mixsource.h). */
#define ZRFS_DS_BATCH ZRCOMMON_DS_BATCH

/* Scans fs->opts.src and opens every store.  Prints a one-line reason to
 * stderr on failure ("store busy: ..." when a lock conflicts). */
int zrfs_tree_build(struct zrfs_fs *fs);
/* Closes every store (syncing read-write ones) and frees the tree.
 * Returns the first close failure. */
int zrfs_tree_free(struct zrfs_fs *fs);

#endif
