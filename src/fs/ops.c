/*
 * ops.c - the FUSE low-level operations.  Each one looks up the node,
 * calls through its kind's entry (file_kinds.h), acts on what a delete or
 * compact changed, maps the result with zr_errno() and replies
 * exactly once -- or, when a store's delete or compact holds what it
 * needs, parks the request for that writer's thread to run again (see
 * store_park.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kind_table.h"
#include "lookup.h"
#include "ops.h"
#include "readdir.h"
#include "store_park.h"

#define FS(req) ((struct zrfs_fs *)fuse_req_userdata(req))
#define FH(fi) ((struct zrfs_fh *)(uintptr_t)(fi)->fh)

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

/* Parks req on the store whose writer made a step fail with ZRFS_E_PARK
 * (store_park.h): 1 when parked (the writer's thread will run it again), 0
 * when that writer is already done (run it again now), or -ENOMEM. */
static int park(fuse_req_t req, const struct zrfs_parked *how,
		const char *name)
{
	size_t len = name ? strlen(name) + 1 : 0;
	struct zrfs_parked *p = malloc(sizeof(*p) + len);

	if (!p)
		return -ENOMEM;
	*p = *how;
	p->req = req;
	if (name)
		memcpy(p->name, name, len);
	if (zrfs_park(&FS(req)->park, p) == 0)
		return 1;
	free(p);
	return 0;
}

static void run(struct zrfs_fs *fs, fuse_req_t req, struct zrfs_parked *how,
		const char *name);
static void changed(struct zrfs_fs *fs, struct zrfs_change *ch);

static int lookup_once(struct zrfs_fs *fs, fuse_req_t req, fuse_ino_t parent,
		       const char *name)
{
	struct zrtree_node *p = zrfs_inode_get(fs, parent), *n;
	struct fuse_entry_param e;
	int err;

	if (!p)
		return -ESTALE;
	err = zrfs_inode_lookup(fs, p, name, &n);
	if (err)
		return err;
	memset(&e, 0, sizeof(e));
	err = zrfs_attr(fs, n, zrfs_kind_of(n->kind), NULL, &e.attr,
		       &e.attr_timeout, &e.entry_timeout);
	e.ino = n->ino;
	if (err || fuse_reply_entry(req, &e))
		zrfs_inode_forget(fs, n->ino, 1);
	return err;
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct zrfs_parked how = { .op = ZRFS_P_LOOKUP, .ino = parent };

	run(FS(req), req, &how, name);
}

static void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	zrfs_inode_forget(FS(req), ino, nlookup);
	fuse_reply_none(req);
}

static void op_forget_multi(fuse_req_t req, size_t count,
			    struct fuse_forget_data *forgets)
{
	for (size_t i = 0; i < count; i++)
		zrfs_inode_forget(FS(req), forgets[i].ino, forgets[i].nlookup);
	fuse_reply_none(req);
}

static int getattr_once(struct zrfs_fs *fs, fuse_req_t req, fuse_ino_t ino,
			const struct zrfs_fh *fh)
{
	struct zrtree_node *n = zrfs_inode_get(fs, ino);
	struct stat st;
	double attr_ttl, entry_ttl;
	int err;

	if (!n)
		return -ESTALE;
	err = zrfs_attr(fs, n, zrfs_kind_of(n->kind), fh, &st, &attr_ttl,
		       &entry_ttl);
	if (!err)
		fuse_reply_attr(req, &st, attr_ttl);
	return err;
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	struct zrfs_parked how = {
		.op = ZRFS_P_GETATTR, .ino = ino,
		.fh = fi && fi->fh ? zrfs_fh_get(FH(fi)) : NULL,
	};

	run(FS(req), req, &how, NULL);
}

static int writable(enum zrtree_kind kind)
{
	return !!(zrfs_kind_of(kind)->flags & ZRFS_KF_WRITABLE);
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
	struct zrfs_fs *fs = FS(req);
	struct zrtree_node *n = zrfs_inode_get(fs, ino);

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
static int open_kind(struct zrfs_fs *fs, struct zrfs_fh *fh, int flags)
{
	const struct zrfs_kind_ops *k = zrfs_kind_of(fh->node->kind);
	int acc = flags & O_ACCMODE;

	if (acc != O_RDONLY && (acc != O_WRONLY || !writable(fh->node->kind)))
		return -EACCES;
	if (acc == O_WRONLY && fs->opts.ro)
		return -EROFS;
	if (acc == O_RDONLY && writable(fh->node->kind))
		return 0;
	if (S_ISDIR(k->mode))
		return -EISDIR;
	return k->open ? k->open(fs, fh, flags) : 0;
}

/* The kind's release, and what it changed. */
static void release_kind(struct zrfs_fs *fs, struct zrfs_fh *fh)
{
	const struct zrfs_kind_ops *k = zrfs_kind_of(fh->node->kind);
	struct zrfs_change ch = { 0 };

	if (k->release) {
		k->release(fs, fh, &ch);
		changed(fs, &ch);
	}
}

static int open_once(struct zrfs_fs *fs, fuse_req_t req, fuse_ino_t ino,
		     struct fuse_file_info *fi)
{
	struct zrtree_node *n = zrfs_inode_get(fs, ino);
	const struct zrfs_kind_ops *k;
	struct zrfs_fh *fh;
	int err;

	if (!n)
		return -ESTALE;
	k = zrfs_kind_of(n->kind);
	fh = zrfs_fh_new(fs, n);
	if (!fh)
		return -ENOMEM;
	err = open_kind(fs, fh, fi->flags);
	if (err) {
		zrfs_fh_put(fs, fh);
		return err;
	}
	fi->fh = (uintptr_t)fh;
	if ((fi->flags & O_ACCMODE) == O_WRONLY)
		fh->owner = zrfs_caller(req);
	/* A record or batch node's bytes never change (see Contents in
	 * tree.h): the kernel may keep its pages from open to open. */
	if ((k->flags & ZRFS_KF_KEEP_CACHE) && !fh->uncached)
		fi->keep_cache = 1;
	else
		fi->direct_io = 1;
	/* Only append and delete act on close, when written: spare the
	 * others a FLUSH. */
	if (!k->flush || (fi->flags & O_ACCMODE) == O_RDONLY)
		fi->noflush = 1;
	zrfs_fh_publish(fh);
	if (fuse_reply_open(req, fi)) {
		release_kind(fs, fh);
		zrfs_fh_put(fs, fh);
	}
	return 0;
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct zrfs_parked how = { .op = ZRFS_P_OPEN, .ino = ino, .fi = *fi };

	run(FS(req), req, &how, NULL);
}

/* A read replies itself, unless it fails (ZRFS_E_PARK: a record or batch
 * file's first copy needs a store a writer holds). */
static int read_once(struct zrfs_fs *fs, fuse_req_t req, struct zrfs_fh *fh,
		     size_t size, off_t off)
{
	const struct zrfs_kind_ops *k = zrfs_kind_of(fh->node->kind);

	return k->read ? k->read(req, fs, fh, size, off) : -EBADF;
}

/* One try of a request that may park: 0 once it replied, an error to
 * reply with, or ZRFS_E_PARK. */
static int run_once(struct zrfs_fs *fs, fuse_req_t req,
		    struct zrfs_parked *how, const char *name)
{
	switch (how->op) {
	case ZRFS_P_LOOKUP:
		return lookup_once(fs, req, how->ino, name);
	case ZRFS_P_GETATTR:
		return getattr_once(fs, req, how->ino, how->fh);
	case ZRFS_P_OPEN:
		return open_once(fs, req, how->ino, &how->fi);
	default:
		return read_once(fs, req, how->fh, how->size, how->off);
	}
}

/* Runs the request how describes until it replies, or parks it while a
 * store's writer holds what it needs.  Consumes how->fh (a getattr of an
 * open file, a read), which a parked request keeps. */
static void run(struct zrfs_fs *fs, fuse_req_t req, struct zrfs_parked *how,
		const char *name)
{
	int err;

	while ((err = run_once(fs, req, how, name)) == ZRFS_E_PARK) {
		err = park(req, how, name);
		if (err > 0)
			return; /* the parked request holds how->fh */
		if (err)
			break;
	}
	if (err)
		reply_err(req, err);
	zrfs_fh_put(fs, how->fh);
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct zrfs_parked how = {
		.op = ZRFS_P_READ, .fh = zrfs_fh_get(FH(fi)), .size = size,
		.off = off,
	};

	(void)ino;
	run(FS(req), req, &how, NULL);
}

/* Acts on what a delete or compact changed (struct zrfs_change), before
 * its reply: runs the requests parked on the store while its writer held
 * it, then makes the kernel look up again the names whose bytes
 * changed. */
static void changed(struct zrfs_fs *fs, struct zrfs_change *ch)
{
	struct zrfs_parked *p, *next;

	if (!ch->st)
		return;
	for (p = zrfs_park_take_ready(&fs->park); p; p = next) {
		next = p->next;
		/* only a lookup has a name; the others' name[] is empty */
		run(fs, p->req, p, p->op == ZRFS_P_LOOKUP ? p->name : NULL);
		free(p);
	}
	if (ch->n)
		zrfs_record_unname_changed(fs, ch->st, ch->idx, ch->n,
					   ch->length);
	free(ch->idx);
}

static void op_write(fuse_req_t req, fuse_ino_t ino, const char *buf,
		     size_t size, off_t off, struct fuse_file_info *fi)
{
	struct zrfs_fs *fs = FS(req);
	struct zrfs_fh *fh = zrfs_fh_get(FH(fi));
	const struct zrfs_kind_ops *k = zrfs_kind_of(fh->node->kind);
	struct zrfs_change ch = { 0 };
	int err;

	(void)ino;
	err = k->write ? k->write(fs, fh, buf, size, off, &ch) : -EBADF;
	changed(fs, &ch);
	if (err)
		reply_err(req, err);
	else
		fuse_reply_write(req, size);
	zrfs_fh_put(fs, fh);
}

static void op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct zrfs_fs *fs = FS(req);
	struct zrfs_fh *fh = zrfs_fh_get(FH(fi));
	const struct zrfs_kind_ops *k = zrfs_kind_of(fh->node->kind);
	struct zrfs_change ch = { 0 };
	int err = 0;

	(void)ino;
	if (k->flush)
		err = k->flush(fs, fh, zrfs_caller(req), &ch);
	changed(fs, &ch);
	reply_err(req, err);
	zrfs_fh_put(fs, fh);
}

static void op_release(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	struct zrfs_fs *fs = FS(req);
	struct zrfs_fh *fh = zrfs_fh_get(FH(fi));

	(void)ino;
	release_kind(fs, fh);
	fuse_reply_err(req, 0);
	zrfs_fh_put(fs, fh);
	zrfs_fh_put(fs, fh); /* the kernel's reference */
}

static void op_opendir(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	struct zrtree_node *n = zrfs_inode_get(FS(req), ino);

	if (!n)
		fuse_reply_err(req, ESTALE);
	else if (!S_ISDIR(zrfs_kind_of(n->kind)->mode))
		fuse_reply_err(req, ENOTDIR);
	else
		fuse_reply_open(req, fi);
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size,
		       off_t off, struct fuse_file_info *fi)
{
	(void)fi;
	zrfs_readdir(req, FS(req), zrfs_inode_get(FS(req), ino), size, off);
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

static void op_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct statvfs sv;

	(void)ino;
	zrfs_statfs(fuse_req_userdata(req), &sv);
	fuse_reply_statfs(req, &sv);
}

const struct fuse_lowlevel_ops zrfs_ops = {
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
	.statfs = op_statfs,
};
