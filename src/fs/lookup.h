/*
 * lookup.h - the namespace, zrfs_inode_*: inode numbers to nodes, names
 * to nodes.
 *
 * Inode numbers: static nodes are 1..nstat; dynamic nodes count up from
 * 2^32, one per (name, content version): every lookup of a record whose
 * bytes have not changed yields the same inode, so the kernel's page cache
 * of it stays valid.  A listing of records/ cannot know those numbers
 * ahead of lookup and gives ZRFS_REC_BIT | store id << 40 | index instead.
 */
#ifndef ZRFS_LOOKUP_H
#define ZRFS_LOOKUP_H

#include "fs.h"

#define ZRFS_REC_BIT (1ull << 63)
#define ZRFS_REC_IDX_BITS 40

int zrfs_inode_init(struct zrfs_fs *fs);
void zrfs_inode_free(struct zrfs_fs *fs);
/* The node of ino, or NULL if the kernel should not know it. */
struct zrtree_node *zrfs_inode_get(struct zrfs_fs *fs, fuse_ino_t ino);
/* Resolves name in parent.  A dynamic node gains one kernel reference
 * (drop it with zrfs_inode_forget if the reply fails).  -ENOENT for names that
 * do not exist. */
int zrfs_inode_lookup(struct zrfs_fs *fs, struct zrtree_node *parent,
		      const char *name, struct zrtree_node **out);
void zrfs_inode_forget(struct zrfs_fs *fs, fuse_ino_t ino, uint64_t nlookup);
/* One more reference to n, dropped with zrfs_inode_forget(n->ino, 1): an open
 * handle holds one, since the kernel may forget an inode before the
 * release of its last file reaches us. */
void zrfs_inode_hold(struct zrfs_fs *fs, struct zrtree_node *n);
/* Indices of st's record nodes the kernel currently references, in a new
 * malloc'd array (NULL when none). */
int zrfs_inode_records(struct zrfs_fs *fs, const struct zrtree_store *st,
		       uint64_t **idx, size_t *n);

#endif
