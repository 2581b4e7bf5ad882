/*
 * ns.h - the namespace: inode numbers to nodes, names to nodes.
 *
 * Inode numbers: static nodes are 1..nstat; dynamic nodes count up from
 * 2^32, one per (name, content version): every lookup of a record whose
 * bytes have not changed yields the same inode, so the kernel's page cache
 * of it stays valid.  A listing of records/ cannot know those numbers
 * ahead of lookup and gives ZR__REC_BIT | store id << 40 | index instead.
 */
#ifndef ZR_FS_NS_H
#define ZR_FS_NS_H

#include "fs.h"

#define ZR__REC_BIT (1ull << 63)
#define ZR__REC_IDX_BITS 40

int zr__ns_init(struct zr__fs *fs);
void zr__ns_free(struct zr__fs *fs);
/* The node of ino, or NULL if the kernel should not know it. */
struct zr__node *zr__ns_get(struct zr__fs *fs, fuse_ino_t ino);
/* Resolves name in parent.  A dynamic node gains one kernel reference
 * (drop it with zr__ns_forget if the reply fails).  -ENOENT for names that
 * do not exist. */
int zr__ns_lookup(struct zr__fs *fs, struct zr__node *parent,
		  const char *name, struct zr__node **out);
void zr__ns_forget(struct zr__fs *fs, fuse_ino_t ino, uint64_t nlookup);
/* One more reference to n, dropped with zr__ns_forget(n->ino, 1): an open
 * handle holds one, since the kernel may forget an inode before the
 * release of its last file reaches us. */
void zr__ns_hold(struct zr__fs *fs, struct zr__node *n);
/* Indices of st's record nodes the kernel currently references, in a new
 * malloc'd array (NULL when none). */
int zr__ns_records(struct zr__fs *fs, const struct zr__fstore *st,
		   uint64_t **idx, size_t *n);
/* Whether every stream of a dataset has the same length; *len gets it. */
int zr__ds_equal(const struct zr__dataset *ds, uint64_t *len);

/* qsort/bsearch order of uint64_t. */
int zr__cmp_u64(const void *a, const void *b);
/* Parses a whole canonical decimal (no sign, no leading zero). */
int zr__parse_u64(const char *s, size_t len, uint64_t *out);

#endif
