/*
 * readdir.c - directory listings: the entries the tree lists
 * (zrtree_entry), with "." and ".." and the inode numbers only the mount
 * has.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lookup.h"
#include "readdir.h"

/* Offset i's entry; -1 past the last. */
static int entry(struct zrtree_node *n, uint64_t i, char *name, size_t cap,
		 struct stat *st)
{
	struct zrtree_node *kid;
	int dir;

	st->st_mode = S_IFDIR;
	st->st_ino = n->ino;
	if (i < 2) {
		snprintf(name, cap, "%s", i ? ".." : ".");
		return 0;
	}
	if (zrtree_entry(n, i - 2, name, cap, &dir, &kid))
		return -1;
	st->st_mode = dir ? S_IFDIR : S_IFREG;
	if (kid)
		st->st_ino = kid->ino;
	else if (n->kind == ZRTREE_K_RECDIR)
		st->st_ino = ZRFS_REC_BIT | (uint64_t)n->st->id <<
			     ZRFS_REC_IDX_BITS |
			     ((i - 2) & ((1ull << ZRFS_REC_IDX_BITS) - 1));
	else
		st->st_ino = FUSE_ROOT_ID; /* unknown until looked up */
	return 0;
}

void zrfs_readdir(fuse_req_t req, struct zrfs_fs *fs, struct zrtree_node *n,
		 size_t size, off_t off)
{
	char *buf, name[64 + 256];
	size_t used = 0;
	struct stat st;

	(void)fs;
	if (!n) {
		fuse_reply_err(req, ESTALE);
		return;
	}
	buf = malloc(size ? size : 1);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	memset(&st, 0, sizeof(st));
	for (uint64_t i = off < 0 ? 0 : (uint64_t)off;; i++) {
		size_t need;

		if (entry(n, i, name, sizeof(name), &st))
			break;
		need = fuse_add_direntry(req, buf + used, size - used, name,
					 &st, (off_t)(i + 1));
		if (need > size - used)
			break;
		used += need;
	}
	fuse_reply_buf(req, buf, used);
	free(buf);
}
