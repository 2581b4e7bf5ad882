/*
 * dataset.h - a folder of several stores served as one dataset: the
 * length its @batch files draw over.  A leaf: the names (names.c)
 * and the batch bytes (file_bytes.c) both use it.
 */
#ifndef ZRTREE_DATASET_H
#define ZRTREE_DATASET_H

#include "tree.h"

/* A dataset's length: that of its shortest stream.  Its @batch draws over
 * it, so while one stream has grown ahead of another (an append to img,
 * then to lbl) the folder stays and serves the records all streams
 * hold. */
uint64_t zrtree_ds_length(const struct zrtree_dataset *ds);

#endif
