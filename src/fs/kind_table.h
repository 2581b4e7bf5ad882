/*
 * kind_table.h - the table of file kinds the dispatcher (ops.c) calls
 * through; only it includes this, so no kind can call back up.
 */
#ifndef ZRFS_KIND_TABLE_H
#define ZRFS_KIND_TABLE_H

#include "file_kinds.h"

/* The entry of a node's kind (struct zrfs_kind_ops). */
const struct zrfs_kind_ops *zrfs_kind_of(enum zrtree_kind kind);

#endif
