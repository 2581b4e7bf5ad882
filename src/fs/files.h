/*
 * files.h - the per-kind file operations the FUSE layer dispatches to, and
 * the open-file handle helpers they share.  Each returns 0 or a library /
 * -errno code; the FUSE layer maps it (zr_errno) and replies once, except
 * for reads, which reply themselves (straight from the file's buffer).
 */
#ifndef ZR_FS_FILES_H
#define ZR_FS_FILES_H

#include "fs.h"

/* Attribute and entry timeouts, in seconds. */
#define ZR__TTL_LONG 86400.0

/* A new handle holds the kernel's reference; every request that uses a
 * handle takes one more (zr__fh_get) and drops it when done, after its
 * reply.  The last zr__fh_put frees. */
struct zr__fh *zr__fh_new(struct zr__fs *fs, struct zr__node *n);
/* Before the reply that hands fh to the kernel: tells ThreadSanitizer
 * that what open wrote into it happens before every zr__fh_get of it. */
void zr__fh_publish(struct zr__fh *fh);
struct zr__fh *zr__fh_get(struct zr__fh *fh);
void zr__fh_put(struct zr__fs *fs, struct zr__fh *fh);
/* At shutdown: frees the handles the kernel never released. */
void zr__fh_free_all(struct zr__fs *fs);
/* Large buffers, reused across opens (fh->cached marks a buffer from
 * here, returned at zr__fh_free). */
void *zr__buf_get(size_t size, size_t *cap);
void zr__buf_put(void *buf, size_t cap);
/* Replies to a read of size bytes at off from the len bytes of buf. */
void zr__reply_slice(fuse_req_t req, const char *buf, size_t len,
		     size_t size, off_t off);
/* ... from fh->buf (the caller holds a reference). */
void zr__fh_reply(fuse_req_t req, struct zr__fh *fh, size_t size, off_t off);

/* getattr: fills st (mode, size, ...) and the timeouts of node n, or of
 * open handle fh of it (NULL: by name). */
int zr__attr(struct zr__fs *fs, const struct zr__node *n,
	     const struct zr__fh *fh, struct stat *st, double *attr_ttl,
	     double *entry_ttl);

/* Record files (records/I.npy): open checks that the name still shows
 * the node's bytes (else -ESTALE: the kernel looks the name up again, or,
 * for bytes of the same size, an uncached handle); the first read the
 * page cache cannot answer copies them (ZR__E_PARK while a delete or
 * compact of the store runs).  A delete first fills the open, unfilled
 * handles of the indices it changes (del sorted, n of them), and the
 * open batch handles of the store that have not gathered yet. */
int zr__record_open(struct zr__fh *fh);
int zr__record_read(fuse_req_t req, struct zr__fh *fh, size_t size,
		    off_t off);
void zr__record_prefill(struct zr__fs *fs, struct zr__fstore *st,
			const uint64_t *del, size_t n);
/* Makes the kernel look records/IDX.npy up again at its next use. */
void zr__record_unname(struct zr__fs *fs, const struct zr__fstore *st,
		       uint64_t idx);
/* New references to the open handles of kind (record or batch) that read
 * st, in a malloc'd array. */
int zr__fh_collect(struct zr__fs *fs, const struct zr__fstore *st,
		   enum zr__kind kind, struct zr__fh ***out, size_t *n);
/* Marks st's open batch handles that have not copied their bytes lost
 * (their reads fail with EIO): what a delete does when it cannot make
 * them copy first.  Caller holds st's write lock. */
void zr__fh_lose(struct zr__fs *fs, const struct zr__fstore *st);

/* Batch files (see batch.c): open checks that the stores still hold the
 * node's content (else, at the same size, an uncached handle with the new
 * one; at another size -ESTALE); a read the page cache cannot answer
 * gathers the pieces of the file it covers (ZR__E_PARK while a delete or
 * compact of one of its stores runs).  A delete of st first makes the open handles
 * that read st and have not gathered yet gather (caller holds st's write
 * lock), as it does for record handles (delete.c calls both). */
int zr__batch_open(struct zr__fs *fs, struct zr__fh *fh);
int zr__batch_read(fuse_req_t req, struct zr__fs *fs, struct zr__fh *fh,
		   size_t size, off_t off);
void zr__batch_prefill(struct zr__fs *fs, struct zr__fstore *st);
/* Frees what a batch handle's piece-by-piece fill keeps (fh_free). */
void zr__batch_fill_free(struct zr__fh *fh);

/* stats, schema, errors: the text is made at open (and by getattr, to
 * measure it). */
int zr__text_make(struct zr__fs *fs, const struct zr__node *n, char **out,
		  size_t *len);
/* append, sync, compact, delete: what reading them shows (a usage line):
 * its size, and the reply to a read. */
size_t zr__usage_len(enum zr__kind kind);
void zr__usage_read(fuse_req_t req, enum zr__kind kind, size_t size,
		    off_t off);
/* sync, compact: act on every write; delete: checks each write. */
int zr__control_write(struct zr__fs *fs, struct zr__fh *fh, const char *buf,
		      size_t size);

/* The process (thread group) a request comes from; 0 if unknown. */
pid_t zr__caller(fuse_req_t req);

/* delete (delete.c): each write checks what it completes; the close by
 * the opening process (fh->owner) deletes the indices together, and the
 * release what is still pending. */
int zr__delete_write(struct zr__fh *fh, const char *buf, size_t size);
int zr__delete_flush(struct zr__fs *fs, struct zr__fh *fh, pid_t caller);
void zr__delete_release(struct zr__fs *fs, struct zr__fh *fh);

/* append (append.c): one session per open; the close by the opening
 * process commits it, the release what is still pending. */
int zr__append_open(struct zr__fs *fs, struct zr__fh *fh, int flags);
int zr__append_write(struct zr__fs *fs, struct zr__fh *fh, const char *buf,
		     size_t size, off_t off);
int zr__append_flush(struct zr__fs *fs, struct zr__fh *fh, pid_t caller);
void zr__append_release(struct zr__fs *fs, struct zr__fh *fh);

#endif
