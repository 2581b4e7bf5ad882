/*
 * getattr.c - getattr for every node kind: modes, exact sizes and cache
 * timeouts, from the node's kind (file_kinds.h), and statfs.  Record and batch nodes keep the size they were looked up
 * with (see Contents in tree.h), so their attributes never expire; a batch
 * name's entry does at once (its content follows the store), a record
 * name's is invalidated by the delete that changes it.  Text and control
 * files have attribute timeout 0; a control file's size is that of its
 * usage line, what reading it shows.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "file_kinds.h"

int zrfs_attr(struct zrfs_fs *fs, const struct zrtree_node *n,
	     const struct zrfs_kind_ops *k, const struct zrfs_fh *fh,
	     struct stat *st, double *attr_ttl, double *entry_ttl)
{
	uint64_t size = 0;
	int err = 0;

	/* An open file is what its handle serves. */
	if (fh && (k->flags & ZRFS_KF_HANDLE_SIZE))
		size = fh->len;
	else if (k->size)
		err = k->size(fs, n, &size);
	if (err)
		return err;
	memset(st, 0, sizeof(*st));
	st->st_ino = n->ino;
	st->st_mode = k->mode;
	st->st_nlink = S_ISDIR(st->st_mode) ? 2 : 1;
	st->st_uid = fs->uid;
	st->st_gid = fs->gid;
	st->st_size = (off_t)size;
	st->st_blksize = 4096;
	st->st_blocks = (blkcnt_t)((size + 511) / 512);
	st->st_atim = st->st_mtim = st->st_ctim = fs->t0;
	*entry_ttl = k->entry_ttl;
	*attr_ttl = k->attr_ttl;
	return 0;
}

static uint64_t store_bytes(const struct zrfs_fs *fs,
			    const struct zrtree_store *st)
{
	static const char *const files[] = { "meta.zr", "data.zr", "dict.zr" };
	char p[4096];
	struct stat sb;
	uint64_t sum = 0;

	for (size_t i = 0; i < sizeof(files) / sizeof(*files); i++)
		if ((size_t)snprintf(p, sizeof(p), "%s/%s/%s", fs->opts.src,
				     st->path, files[i]) < sizeof(p) &&
		    !stat(p, &sb))
			sum += (uint64_t)sb.st_size;
	return sum;
}

void zrfs_statfs(const struct zrfs_fs *fs, struct statvfs *out)
{
	uint64_t bytes = 0;

	for (size_t i = 0; i < fs->tree.nstores; i++)
		bytes += store_bytes(fs, fs->tree.stores[i]);
	memset(out, 0, sizeof(*out));
	out->f_bsize = out->f_frsize = 4096;
	out->f_blocks = (fsblkcnt_t)((bytes + 4095) / 4096);
	out->f_files = (fsfilcnt_t)fs->tree.nstores;
	out->f_namemax = 255;
}

int zrfs_node_size(struct zrfs_fs *fs, const struct zrtree_node *n,
		   uint64_t *size)
{
	(void)fs;
	*size = n->size;
	return 0;
}
