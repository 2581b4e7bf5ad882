/*
 * ops.c - the FUSE low-level operations.  Each one looks up the node,
 * calls the per-kind code, maps the result with zr_errno() and replies
 * exactly once -- or, when a store's delete or compact holds what it
 * needs, parks the request for that writer's thread to run again (see
 * stlock.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "files.h"
#include "ns.h"
#include "ops.h"
#include "stlock.h"
#include "tree.h"

#define FS(req) ((struct zr__fs *)fuse_req_userdata(req))
#define FH(fi) ((struct zr__fh *)(uintptr_t)(fi)->fh)

static void reply_err(fuse_req_t req, int err)
{
	fuse_reply_err(req, zr_errno(err));
}

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
	/* open(O_TRUNC) of append and control files needs no setattr */
	if (conn->capable & FUSE_CAP_ATOMIC_O_TRUNC)
		conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;
}

/* Parks req on the store whose writer made a step fail with ZR__E_PARK
 * (stlock.h): 1 when parked (the writer's thread will run it again), 0
 * when that writer is already done (run it again now), or -ENOMEM. */
static int park(fuse_req_t req, const struct zr__parked *how,
		const char *name)
{
	size_t len = name ? strlen(name) + 1 : 0;
	struct zr__parked *p = malloc(sizeof(*p) + len);

	if (!p)
		return -ENOMEM;
	*p = *how;
	p->req = req;
	if (name)
		memcpy(p->name, name, len);
	if (zr__st_park(zr__st_busy(), p) == 0)
		return 1;
	free(p);
	return 0;
}

static void run(struct zr__fs *fs, fuse_req_t req, struct zr__parked *how,
		const char *name);

static int lookup_once(struct zr__fs *fs, fuse_req_t req, fuse_ino_t parent,
		       const char *name)
{
	struct zr__node *p = zr__ns_get(fs, parent), *n;
	struct fuse_entry_param e;
	int err;

	if (!p)
		return -ESTALE;
	err = zr__ns_lookup(fs, p, name, &n);
	if (err)
		return err;
	memset(&e, 0, sizeof(e));
	err = zr__attr(fs, n, NULL, &e.attr, &e.attr_timeout,
		       &e.entry_timeout);
	e.ino = n->ino;
	if (err || fuse_reply_entry(req, &e))
		zr__ns_forget(fs, n->ino, 1);
	return err;
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct zr__parked how = { .op = ZR__P_LOOKUP, .ino = parent };

	run(FS(req), req, &how, name);
}

static void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	zr__ns_forget(FS(req), ino, nlookup);
	fuse_reply_none(req);
}

static void op_forget_multi(fuse_req_t req, size_t count,
			    struct fuse_forget_data *forgets)
{
	for (size_t i = 0; i < count; i++)
		zr__ns_forget(FS(req), forgets[i].ino, forgets[i].nlookup);
	fuse_reply_none(req);
}

static int getattr_once(struct zr__fs *fs, fuse_req_t req, fuse_ino_t ino,
			const struct zr__fh *fh)
{
	struct zr__node *n = zr__ns_get(fs, ino);
	struct stat st;
	double attr_ttl, entry_ttl;
	int err;

	if (!n)
		return -ESTALE;
	err = zr__attr(fs, n, fh, &st, &attr_ttl, &entry_ttl);
	if (!err)
		fuse_reply_attr(req, &st, attr_ttl);
	return err;
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	struct zr__parked how = {
		.op = ZR__P_GETATTR, .ino = ino,
		.fh = fi && fi->fh ? zr__fh_get(FH(fi)) : NULL,
	};

	run(FS(req), req, &how, NULL);
}

static int writable(enum zr__kind kind)
{
	return kind == ZR__K_APPEND || kind == ZR__K_SYNC ||
	       kind == ZR__K_COMPACT || kind == ZR__K_DELETE;
}

#define SET_TIMES (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME | \
		   FUSE_SET_ATTR_ATIME_NOW | FUSE_SET_ATTR_MTIME_NOW | \
		   FUSE_SET_ATTR_CTIME)

/* Only truncation to 0 (open with O_TRUNC, `>` in a shell) and new times
 * of a writable file are accepted; they change nothing.  New times of any
 * other file fail rather than seem to work (`touch` of a record). */
static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
		       int to_set, struct fuse_file_info *fi)
{
	struct zr__fs *fs = FS(req);
	struct zr__node *n = zr__ns_get(fs, ino);

	if (!n) {
		fuse_reply_err(req, ESTALE);
		return;
	}
	if ((to_set & ~(FUSE_SET_ATTR_SIZE | SET_TIMES)) ||
	    ((to_set & SET_TIMES) && !writable(n->kind))) {
		fuse_reply_err(req, EPERM);
		return;
	}
	if ((to_set & FUSE_SET_ATTR_SIZE) &&
	    (!writable(n->kind) || attr->st_size != 0)) {
		fuse_reply_err(req, writable(n->kind) ? EINVAL : EACCES);
		return;
	}
	op_getattr(req, ino, fi);
}

/* Record, batch and text files are opened read-only.  Append and control
 * files are opened write-only to act, or read-only to show their usage
 * line; never both at once (O_RDWR): one open would mean two things. */
static int open_kind(struct zr__fs *fs, struct zr__fh *fh, int flags)
{
	int acc = flags & O_ACCMODE;

	if (acc != O_RDONLY && (acc != O_WRONLY || !writable(fh->node->kind)))
		return -EACCES;
	if (acc == O_WRONLY && fs->opts.ro)
		return -EROFS;
	if (acc == O_RDONLY && writable(fh->node->kind))
		return 0;
	switch (fh->node->kind) {
	case ZR__K_RECORD:
		return zr__record_open(fh);
	case ZR__K_BATCH:
		return zr__batch_open(fs, fh);
	case ZR__K_STATS:
	case ZR__K_SCHEMA:
	case ZR__K_ERRORS:
		return zr__text_make(fs, fh->node, &fh->buf, &fh->len);
	case ZR__K_APPEND:
		return zr__append_open(fs, fh, flags);
	case ZR__K_SYNC:
	case ZR__K_COMPACT:
	case ZR__K_DELETE:
		return 0;
	default:
		return -EISDIR;
	}
}

static int open_once(struct zr__fs *fs, fuse_req_t req, fuse_ino_t ino,
		     struct fuse_file_info *fi)
{
	struct zr__node *n = zr__ns_get(fs, ino);
	struct zr__fh *fh;
	int err;

	if (!n)
		return -ESTALE;
	fh = zr__fh_new(fs, n);
	if (!fh)
		return -ENOMEM;
	err = open_kind(fs, fh, fi->flags);
	if (err) {
		zr__fh_put(fs, fh);
		return err;
	}
	fi->fh = (uintptr_t)fh;
	if ((fi->flags & O_ACCMODE) == O_WRONLY)
		fh->owner = zr__caller(req);
	/* A record or batch node's bytes never change (see Contents in
	 * fs.h): the kernel may keep its pages from open to open. */
	if ((n->kind == ZR__K_RECORD ||
	     (n->kind == ZR__K_BATCH && !fs->opts.direct_batches)) &&
	    !fh->uncached)
		fi->keep_cache = 1;
	else
		fi->direct_io = 1;
	/* Only append and delete act on close, when written: spare the
	 * others a FLUSH. */
	if ((n->kind != ZR__K_APPEND && n->kind != ZR__K_DELETE) ||
	    (fi->flags & O_ACCMODE) == O_RDONLY)
		fi->noflush = 1;
	zr__fh_publish(fh);
	if (fuse_reply_open(req, fi)) {
		if (n->kind == ZR__K_APPEND)
			zr__append_release(fs, fh);
		zr__fh_put(fs, fh);
	}
	return 0;
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct zr__parked how = { .op = ZR__P_OPEN, .ino = ino, .fi = *fi };

	run(FS(req), req, &how, NULL);
}

/* A read of a record or batch file: it replies itself, unless it fails
 * (ZR__E_PARK: its first copy needs a store a writer holds). */
static int read_once(struct zr__fs *fs, fuse_req_t req, struct zr__fh *fh,
		     size_t size, off_t off)
{
	if (fh->node->kind == ZR__K_RECORD)
		return zr__record_read(req, fh, size, off);
	return zr__batch_read(req, fs, fh, size, off);
}

/* One try of a request that may park: 0 once it replied, an error to
 * reply with, or ZR__E_PARK. */
static int run_once(struct zr__fs *fs, fuse_req_t req,
		    struct zr__parked *how, const char *name)
{
	switch (how->op) {
	case ZR__P_LOOKUP:
		return lookup_once(fs, req, how->ino, name);
	case ZR__P_GETATTR:
		return getattr_once(fs, req, how->ino, how->fh);
	case ZR__P_OPEN:
		return open_once(fs, req, how->ino, &how->fi);
	default:
		return read_once(fs, req, how->fh, how->size, how->off);
	}
}

/* Runs the request how describes until it replies, or parks it while a
 * store's writer holds what it needs.  Consumes how->fh (a getattr of an
 * open file, a read), which a parked request keeps. */
static void run(struct zr__fs *fs, fuse_req_t req, struct zr__parked *how,
		const char *name)
{
	int err;

	while ((err = run_once(fs, req, how, name)) == ZR__E_PARK) {
		err = park(req, how, name);
		if (err > 0)
			return; /* the parked request holds how->fh */
		if (err)
			break;
	}
	if (err)
		reply_err(req, err);
	zr__fh_put(fs, how->fh);
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct zr__fs *fs = FS(req); /* req is gone once replied to */
	struct zr__fh *fh = zr__fh_get(FH(fi));

	(void)ino;
	switch (fh->node->kind) {
	case ZR__K_RECORD:
	case ZR__K_BATCH: {
		struct zr__parked how = {
			.op = ZR__P_READ, .fh = fh, .size = size, .off = off,
		};

		run(fs, req, &how, NULL);
		return;
	}
	case ZR__K_STATS:
	case ZR__K_SCHEMA:
	case ZR__K_ERRORS:
		zr__fh_reply(req, fh, size, off);
		break;
	case ZR__K_APPEND:
	case ZR__K_SYNC:
	case ZR__K_COMPACT:
	case ZR__K_DELETE:
		zr__usage_read(req, fh->node->kind, size, off);
		break;
	default:
		fuse_reply_err(req, EBADF);
	}
	zr__fh_put(fs, fh);
}

void zr__ops_replay(struct zr__fs *fs, struct zr__fstore *st)
{
	struct zr__parked *p, *next;

	for (p = zr__st_take_ready(st); p; p = next) {
		next = p->next;
		/* only a lookup has a name; the others' name[] is empty */
		run(fs, p->req, p, p->op == ZR__P_LOOKUP ? p->name : NULL);
		free(p);
	}
}

static void op_write(fuse_req_t req, fuse_ino_t ino, const char *buf,
		     size_t size, off_t off, struct fuse_file_info *fi)
{
	struct zr__fs *fs = FS(req);
	struct zr__fh *fh = zr__fh_get(FH(fi));
	int err;

	(void)ino;
	if (fh->node->kind == ZR__K_APPEND)
		err = zr__append_write(fs, fh, buf, size, off);
	else if (writable(fh->node->kind))
		err = zr__control_write(fs, fh, buf, size);
	else
		err = -EBADF;
	if (err)
		reply_err(req, err);
	else
		fuse_reply_write(req, size);
	zr__fh_put(fs, fh);
}

static void op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct zr__fs *fs = FS(req);
	struct zr__fh *fh = zr__fh_get(FH(fi));
	int err = 0;

	(void)ino;
	if (fh->node->kind == ZR__K_APPEND)
		err = zr__append_flush(fs, fh, zr__caller(req));
	else if (fh->node->kind == ZR__K_DELETE)
		err = zr__delete_flush(fs, fh, zr__caller(req));
	reply_err(req, err);
	zr__fh_put(fs, fh);
}

static void op_release(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	struct zr__fs *fs = FS(req);
	struct zr__fh *fh = zr__fh_get(FH(fi));

	(void)ino;
	if (fh->node->kind == ZR__K_APPEND)
		zr__append_release(fs, fh);
	else if (fh->node->kind == ZR__K_DELETE)
		zr__delete_release(fs, fh);
	fuse_reply_err(req, 0);
	zr__fh_put(fs, fh);
	zr__fh_put(fs, fh); /* the kernel's reference */
}

static void op_opendir(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	struct zr__node *n = zr__ns_get(FS(req), ino);

	if (!n)
		fuse_reply_err(req, ESTALE);
	else if (n->kind != ZR__K_DIR && n->kind != ZR__K_STORE &&
		 n->kind != ZR__K_RECDIR && n->kind != ZR__K_BATCHDIR)
		fuse_reply_err(req, ENOTDIR);
	else
		fuse_reply_open(req, fi);
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size,
		       off_t off, struct fuse_file_info *fi)
{
	(void)fi;
	zr__readdir(req, FS(req), zr__ns_get(FS(req), ino), size, off);
}

/* Names are neither made, removed nor renamed here: a store changes
 * through its append and control files only.  EROFS on a read-only mount
 * (where the kernel mostly answers first), else EPERM, not the ENOSYS of
 * a missing operation, which tools report as "Function not implemented". */
static void refuse(fuse_req_t req)
{
	fuse_reply_err(req, FS(req)->opts.ro ? EROFS : EPERM);
}

static void op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode, dev_t rdev)
{
	(void)parent, (void)name, (void)mode, (void)rdev;
	refuse(req);
}

static void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode)
{
	(void)parent, (void)name, (void)mode;
	refuse(req);
}

static void op_create(fuse_req_t req, fuse_ino_t parent, const char *name,
		      mode_t mode, struct fuse_file_info *fi)
{
	(void)parent, (void)name, (void)mode, (void)fi;
	refuse(req);
}

static void op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent,
		       const char *name)
{
	(void)link, (void)parent, (void)name;
	refuse(req);
}

static void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent,
		    const char *newname)
{
	(void)ino, (void)newparent, (void)newname;
	refuse(req);
}

/* unlink and rmdir */
static void op_remove(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	(void)parent, (void)name;
	refuse(req);
}

static void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		      fuse_ino_t newparent, const char *newname,
		      unsigned int flags)
{
	(void)parent, (void)name, (void)newparent, (void)newname, (void)flags;
	refuse(req);
}

const struct fuse_lowlevel_ops zr__ops = {
	.init = op_init,
	.lookup = op_lookup,
	.forget = op_forget,
	.forget_multi = op_forget_multi,
	.getattr = op_getattr,
	.setattr = op_setattr,
	.mknod = op_mknod,
	.mkdir = op_mkdir,
	.create = op_create,
	.symlink = op_symlink,
	.link = op_link,
	.unlink = op_remove,
	.rmdir = op_remove,
	.rename = op_rename,
	.open = op_open,
	.read = op_read,
	.write = op_write,
	.flush = op_flush,
	.release = op_release,
	.opendir = op_opendir,
	.readdir = op_readdir,
};
