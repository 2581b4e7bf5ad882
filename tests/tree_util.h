/*
 * tree_util.h - what the Check suites of src/tree share (check_tree*.c):
 * a real source folder of stores, a dataset and mixture files in a
 * temporary folder, the tree over it, paths walked as a mount's lookups
 * walk them, files read through the tree's open files, and the bytes
 * `zrecord` writes for the same records, to compare with.
 */
#ifndef ZR_TREE_UTIL_H
#define ZR_TREE_UTIL_H

#include <stdint.h>

#include "tree.h"

/* The source folder (made by ckt_src_make):
 *   img/   dense |u1 (4,5,3) zstd, 10 records: image records (PNG)
 *   img2/  dense |u1 (4,5,3) raw, 7 records
 *   rag/   ragged <u2 of ndim 1 (1 to 7 elements), zstd, 9 records
 *   ds/    a dataset: a/ dense <i4 (3,) raw, b/ dense <f8 (2,) zstd, 8 each
 *   plain/inner/  a store in a plain folder, dense <u1 (2,), 3 records
 *   mix.mix.json  img (weight 2) and img2 (weight 1)
 *   notes.txt     a file, which the tree does not show
 * SRC itself holds three stores: it is a dataset too (@batch). */
extern char ckt_src[4096];
void ckt_src_make(void);
void ckt_src_remove(void);
/* Writes text into the file ckt_src/name. */
void ckt_text_file(const char *name, const char *text);

/* The tree over ckt_src with flags (ZR_OPEN_RDONLY: beside `zrecord`'s
 * shared locks) and the run options opts ("rank=1,world=2"; NULL: the
 * defaults), parsed by the run options' table.  Aborts the test on
 * failure.  ckt_free frees the tree and its run. */
struct ckt_tree {
	struct zrtree t;
	struct zrtree_run run;
};
void ckt_build(struct ckt_tree *c, unsigned flags, const char *opts);
void ckt_free(struct ckt_tree *c);

/* A path walked name by name from the root, as the kernel walks a mount:
 * the static node reached and the dynamic nodes named below it. */
struct ckt_walk {
	struct zrtree_node *base;
	struct zrtree_node dyn[4];
	size_t ndyn;
};
/* 0, or the failing lookup's error (w is then empty). */
int ckt_walk(struct zrtree *t, const char *path, struct ckt_walk *w);
struct zrtree_node *ckt_at(struct ckt_walk *w);
void ckt_walk_end(struct ckt_walk *w);

/* Record or batch node n's bytes through an open file (open_file.h),
 * filled piece bytes at a time from the last piece to the first; a
 * malloc'd buffer of *len bytes (n->size). */
char *ckt_read_node(struct zrtree *t, const struct zrtree_node *n,
		    uint64_t piece, uint64_t *len);
/* The bytes reading path gives: an open file's, or a text node's. */
char *ckt_read(struct zrtree *t, const char *path, uint64_t *len);

/* What `zrecord ARGS > FILE` writes, run in ckt_src (so that paths in
 * its output are relative, as in a mount's); a malloc'd buffer of *len
 * bytes.  The command is the build's (top_builddir, else the one beside
 * this program's folder). */
char *ckt_zrecord(const char *args, uint64_t *len);
/* Asserts that the two buffers are equal, naming what. */
void ckt_same(const char *what, const char *a, uint64_t alen, const char *b,
	      uint64_t blen);

#endif
