/*
 * reply.c - replying to a read straight from a buffer (file_kinds.h): a
 * leaf every kind of file uses.
 */
#include "file_kinds.h"

void zrfs_reply_slice(fuse_req_t req, const char *buf, size_t len,
		     size_t size, off_t off)
{
	if (off < 0 || (uint64_t)off >= len)
		size = 0;
	else if (size > len - (size_t)off)
		size = len - (size_t)off;
	fuse_reply_buf(req, size ? buf + off : NULL, size);
}

void zrfs_fh_reply(fuse_req_t req, struct zrfs_fh *fh, size_t size, off_t off)
{
	zrfs_reply_slice(req, fh->buf, fh->len, size, off);
}
