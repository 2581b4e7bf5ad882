/*
 * tree_files.c - what the record and batch kinds share: an open file of
 * src/tree (open_file.h) behind a handle, and reads served from its
 * buffer, gathering first what the page cache asked for and the buffer
 * does not hold yet.
 */
#include "file_kinds.h"
#include "open_file.h"
#include "store_park.h"

int zrfs_file_open(struct zrfs_fs *fs, struct zrfs_fh *fh, int flags)
{
	int err = zrtree_file_open(&fs->tree, fh->node, &fh->file);

	(void)flags;
	if (err)
		return zrfs_busy_to_park(err);
	fh->len = zrtree_file_size(fh->file);
	fh->uncached = zrtree_file_fresh(fh->file);
	return 0;
}

int zrfs_file_read(fuse_req_t req, struct zrfs_fs *fs, struct zrfs_fh *fh,
		   size_t size, off_t off)
{
	uint64_t end = (uint64_t)off + size;
	int err;

	(void)fs;
	if (off < 0 || (uint64_t)off >= fh->len || !size) {
		fuse_reply_buf(req, NULL, 0);
		return 0;
	}
	if (end > fh->len || end < (uint64_t)off)
		end = fh->len;
	if (!zrtree_file_have(fh->file, (uint64_t)off, end)) {
		err = zrtree_file_fill(fh->file, (uint64_t)off, end);
		/* ESTALE: not the node's size any more, its records are gone */
		if (err)
			return err == -ESTALE ? -EIO : zrfs_busy_to_park(err);
	}
	zrfs_reply_slice(req, zrtree_file_bytes(fh->file), fh->len, size, off);
	return 0;
}
