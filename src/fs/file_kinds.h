/*
 * file_kinds.h - the per-kind file operations the FUSE layer dispatches to, and
 * the open-file handle helpers they share.  Each returns 0 or a library /
 * -errno code; the FUSE layer maps it (zr_errno) and replies once, except
 * for reads, which reply themselves (straight from the file's buffer).
 */
#ifndef ZRFS_FILE_KINDS_H
#define ZRFS_FILE_KINDS_H

#include "fs.h"

/* Attribute and entry timeouts, in seconds. */
#define ZRFS_TTL_LONG 86400.0

/* What a delete or compact changed in a store, which the dispatcher acts
 * on before its reply: first it runs the requests parked on st while the
 * writer held it (store_park.h), then it makes the kernel look up again
 * the record names whose bytes changed (zrfs_record_unname_changed) --
 * in that order: a parked lookup holds the kernel's lock of its folder,
 * which an entry invalidation of that folder waits for. */
struct zrfs_change {
	struct zrfs_fstore *st;	/* NULL: nothing changed                 */
	uint64_t *idx;		/* the deleted indices, sorted (malloc'd) */
	size_t n;
	uint64_t length;	/* the store's length after the delete    */
};

/* A new handle holds the kernel's reference; every request that uses a
 * handle takes one more (zrfs_fh_get) and drops it when done, after its
 * reply.  The last zrfs_fh_put frees. */
struct zrfs_fh *zrfs_fh_new(struct zrfs_fs *fs, struct zrfs_node *n);
/* Before the reply that hands fh to the kernel: tells ThreadSanitizer
 * that what open wrote into it happens before every zrfs_fh_get of it. */
void zrfs_fh_publish(struct zrfs_fh *fh);
struct zrfs_fh *zrfs_fh_get(struct zrfs_fh *fh);
void zrfs_fh_put(struct zrfs_fs *fs, struct zrfs_fh *fh);
/* At shutdown: frees the handles the kernel never released. */
void zrfs_fh_free_all(struct zrfs_fs *fs);
/* Replies to a read of size bytes at off from the len bytes of buf. */
void zrfs_reply_slice(fuse_req_t req, const char *buf, size_t len,
		     size_t size, off_t off);
/* ... from fh->buf (the caller holds a reference). */
void zrfs_fh_reply(fuse_req_t req, struct zrfs_fh *fh, size_t size, off_t off);

/* getattr: fills st (mode, size, ...) and the timeouts of node n, or of
 * open handle fh of it (NULL: by name). */
int zrfs_attr(struct zrfs_fs *fs, const struct zrfs_node *n,
	     const struct zrfs_fh *fh, struct stat *st, double *attr_ttl,
	     double *entry_ttl);
/* statfs: the mount's size is its store files' (meta.zr, data.zr,
 * dict.zr, by stat(2): no lock, no library call that could wait), all
 * used; f_files is the number of stores. */
void zrfs_statfs(const struct zrfs_fs *fs, struct statvfs *out);

/* Record files (records/I.npy): open checks that the name still shows
 * the node's bytes (else -ESTALE: the kernel looks the name up again, or,
 * for bytes of the same size, an uncached handle) and begins a library
 * view of the store; the first read the page cache cannot answer copies
 * them through it (ZRFS_E_PARK while a delete or compact of the store
 * runs), whatever deletes came since. */
int zrfs_record_open(struct zrfs_fh *fh);
int zrfs_record_read(fuse_req_t req, struct zrfs_fh *fh, size_t size,
		    off_t off);
/* Makes the kernel look up again every record name it may know whose
 * bytes a delete changed: the holes (now holding a moved record; del
 * sorted) and everything at or past length.  Their old inodes keep the
 * old bytes for open files. */
void zrfs_record_unname_changed(struct zrfs_fs *fs,
			       const struct zrfs_fstore *st,
			       const uint64_t *del, size_t ndel,
			       uint64_t length);

/* Batch files (see batch.c): open checks that the stores still hold the
 * node's content (else, at the same size, an uncached handle with the new
 * one; at another size -ESTALE); a read the page cache cannot answer
 * gathers the pieces of the file it covers (ZRFS_E_PARK while a delete or
 * compact of one of its stores runs), through the library views the
 * handle began at open, one per store, whatever deletes came since. */
int zrfs_batch_open(struct zrfs_fs *fs, struct zrfs_fh *fh);
int zrfs_batch_read(fuse_req_t req, struct zrfs_fs *fs, struct zrfs_fh *fh,
		   size_t size, off_t off);

/* stats, schema, errors: the text is made at open (and by getattr, to
 * measure it). */
int zrfs_text_make(struct zrfs_fs *fs, const struct zrfs_node *n, char **out,
		  size_t *len);
/* append, sync, compact, delete: what reading them shows (a usage line):
 * its size, and the reply to a read. */
size_t zrfs_usage_len(enum zrfs_kind kind);
void zrfs_usage_read(fuse_req_t req, enum zrfs_kind kind, size_t size,
		    off_t off);
/* sync, compact: act on every write; delete: checks each write. */
int zrfs_control_write(struct zrfs_fs *fs, struct zrfs_fh *fh, const char *buf,
		      size_t size, struct zrfs_change *ch);

/* The process (thread group) a request comes from; 0 if unknown. */
pid_t zrfs_caller(fuse_req_t req);

/* delete (delete.c): each write checks what it completes; the close by
 * the opening process (fh->owner) deletes the indices together, and the
 * release what is still pending. */
int zrfs_delete_write(struct zrfs_fh *fh, const char *buf, size_t size);
int zrfs_delete_flush(struct zrfs_fh *fh, pid_t caller,
		     struct zrfs_change *ch);
void zrfs_delete_release(struct zrfs_fh *fh, struct zrfs_change *ch);

/* append (append.c): one session per open; the close by the opening
 * process commits it, the release what is still pending. */
int zrfs_append_open(struct zrfs_fs *fs, struct zrfs_fh *fh, int flags);
int zrfs_append_write(struct zrfs_fs *fs, struct zrfs_fh *fh, const char *buf,
		     size_t size, off_t off);
int zrfs_append_flush(struct zrfs_fs *fs, struct zrfs_fh *fh, pid_t caller);
void zrfs_append_release(struct zrfs_fs *fs, struct zrfs_fh *fh);

#endif
