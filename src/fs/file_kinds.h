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
	struct zrtree_store *st;	/* NULL: nothing changed                 */
	uint64_t *idx;		/* the deleted indices, sorted (malloc'd) */
	size_t n;
	uint64_t length;	/* the store's length after the delete    */
};

/* A new handle holds the kernel's reference; every request that uses a
 * handle takes one more (zrfs_fh_get) and drops it when done, after its
 * reply.  The last zrfs_fh_put frees. */
struct zrfs_fh *zrfs_fh_new(struct zrfs_fs *fs, struct zrtree_node *n);
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

/* What one kind of file does.  The dispatcher (ops.c) calls through its
 * node's entry (kind_table.h) and never switches on the kind;
 * no kind calls back up into it.  Each function returns 0 or a library /
 * -errno code (read: 0 once it replied, or ZRFS_E_PARK).  NULL: nothing to
 * do (open, flush, release; size: 0 bytes), or a call that does not
 * apply (read, write: EBADF). */
struct zrfs_kind_ops {
	mode_t mode;
	unsigned flags;		/* ZRFS_KF_*                              */
	double attr_ttl, entry_ttl; /* getattr's and lookup's timeouts    */
	int (*open)(struct zrfs_fs *fs, struct zrfs_fh *fh, int flags);
	int (*read)(fuse_req_t req, struct zrfs_fs *fs, struct zrfs_fh *fh,
		    size_t size, off_t off);
	int (*write)(struct zrfs_fs *fs, struct zrfs_fh *fh, const char *buf,
		     size_t size, off_t off, struct zrfs_change *ch);
	/* close by process caller; release: the kernel's last reference */
	int (*flush)(struct zrfs_fs *fs, struct zrfs_fh *fh, pid_t caller,
		     struct zrfs_change *ch);
	void (*release)(struct zrfs_fs *fs, struct zrfs_fh *fh,
			struct zrfs_change *ch);
	/* by name (getattr, lookup) */
	int (*size)(struct zrfs_fs *fs, const struct zrtree_node *n,
		    uint64_t *size);
};
/* Append and control files: opened write-only to act, read-only to show
 * their usage line; never both at once (O_RDWR). */
#define ZRFS_KF_WRITABLE 1u
/* A node's bytes never change (see Contents in tree.h): the kernel may keep
 * its pages from open to open, unless the handle is uncached. */
#define ZRFS_KF_KEEP_CACHE 2u
/* An open file's size is what its handle serves (fh->len). */
#define ZRFS_KF_HANDLE_SIZE 4u

/* The kinds, each defined in its own file (kind_table.c maps enum
 * zrfs_kind to them). */
extern const struct zrfs_kind_ops zrfs_record_kind, zrfs_batch_kind,
	zrfs_text_kind, zrfs_append_kind, zrfs_control_kind,
	zrfs_delete_kind;

/* getattr: fills st (mode, size, ...) and the timeouts of node n of kind
 * k, or of open handle fh of it (NULL: by name). */
int zrfs_attr(struct zrfs_fs *fs, const struct zrtree_node *n,
	     const struct zrfs_kind_ops *k, const struct zrfs_fh *fh,
	     struct stat *st, double *attr_ttl, double *entry_ttl);
/* A record or batch node's size, fixed at lookup (their kinds' size). */
int zrfs_node_size(struct zrfs_fs *fs, const struct zrtree_node *n,
		   uint64_t *size);
/* statfs: the mount's size is its store files' (meta.zr, data.zr,
 * dict.zr, by stat(2): no lock, no library call that could wait), all
 * used; f_files is the number of stores. */
void zrfs_statfs(const struct zrfs_fs *fs, struct statvfs *out);

/* Record files (records/I.npy, record.c): open checks that the name still
 * shows the node's bytes (else -ESTALE: the kernel looks the name up
 * again, or, for bytes of the same size, an uncached handle) and begins a
 * library view of the store; the first read the page cache cannot answer
 * copies them through it (ZRFS_E_PARK while a delete or compact of the
 * store runs), whatever deletes came since.
 *
 * Makes the kernel look up again every record name it may know whose
 * bytes a delete changed: the holes (now holding a moved record; del
 * sorted) and everything at or past length.  Their old inodes keep the
 * old bytes for open files. */
void zrfs_record_unname_changed(struct zrfs_fs *fs,
			       const struct zrtree_store *st,
			       const uint64_t *del, size_t ndel,
			       uint64_t length);

/* Record and batch files (tree_files.c): open opens the node's file of
 * src/tree (open_file.h; ZRFS_E_PARK while a delete or compact of a store
 * it reads runs), read serves it from its buffer. */
int zrfs_file_open(struct zrfs_fs *fs, struct zrfs_fh *fh, int flags);
int zrfs_file_read(fuse_req_t req, struct zrfs_fs *fs, struct zrfs_fh *fh,
		   size_t size, off_t off);

/* Batch files (batch.c): open checks that the stores still hold the
 * node's content (else, at the same size, an uncached handle with the new
 * one; at another size -ESTALE); a read the page cache cannot answer
 * gathers the pieces of the file it covers (ZRFS_E_PARK while a delete or
 * compact of one of its stores runs), through the library views the
 * handle began at open, one per store, whatever deletes came since. */

/* stats, schema, errors (text_kind.c): the text is made at open (and by
 * getattr, to measure it).  append, sync, compact, delete: reading them
 * shows a usage line; these are their read and size. */
int zrfs_usage_read(fuse_req_t req, struct zrfs_fs *fs, struct zrfs_fh *fh,
		   size_t size, off_t off);
int zrfs_usage_size(struct zrfs_fs *fs, const struct zrtree_node *n,
		   uint64_t *size);

/* sync, compact (control.c): act on every write.  delete (delete.c):
 * each write checks what it completes; the close by the opening process
 * (fh->owner) deletes the indices together, and the release what is still
 * pending.  append (append.c): one session per open; the close by the
 * opening process commits it, the release what is still pending. */

/* The process (thread group) a request comes from; 0 if unknown. */
pid_t zrfs_caller(fuse_req_t req);

#endif
