/*
 * vfs.h - the storage seam.  Every file operation of the store engine goes
 * through one backend: a const table of operations on a medium (open,
 * probe, mkdir, remove, rename, folder sync) and, per open file, a const
 * table of operations on it (size, read, write, truncate, sync, lock, map,
 * refresh), the way SQLite's pager reaches the OS through sqlite3_vfs and
 * sqlite3_io_methods only.  The engine never calls the OS for a store's
 * files itself.
 *
 * A backend is chosen per store open by the path: one that starts with a
 * URL scheme ("name://") goes to the backend of that scheme, any other
 * path to POSIX (vfs_posix.c); "s3://" to S3 (vfs_s3.c, read-only).
 *
 * Only close, size and read are required.  Every other operation may be
 * NULL, and the engine then does without it:
 *   write, truncate   NULL: a read-only medium (writing opens fail, EROFS);
 *   writev            NULL: the pieces are written one after the other;
 *   sync              NULL: nothing to flush (a medium nothing writes);
 *   lock              NULL: nothing to lock against (every lock granted);
 *   map               NULL: meta.zr's table is read into memory once per
 *                     growth (a read-only handle's copy stays true) and
 *                     records are read with read (the engine's pread path);
 *   refresh           NULL: no client cache to drop;
 *   warm              NULL: reads are local already (nothing to fetch);
 *   view              NULL: bytes are read (into the caller's memory);
 *   lock_reach        NULL: locks reach every host that opens the store.
 * Errors are -errno; the engine words the message (it knows the store).
 */
#ifndef ZR_VFS_H
#define ZR_VFS_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

/* How a file is opened (zr__vfs.open). */
enum {
	ZR__VFS_WRITE = 1u << 0,  /* read and write (else read only) */
	ZR__VFS_CREATE = 1u << 1, /* made if missing */
	ZR__VFS_EXCL = 1u << 2,   /* with CREATE: fails if it exists */
	ZR__VFS_TRUNC = 1u << 3,  /* emptied */
	ZR__VFS_DIRECT = 1u << 4, /* reads past every cache (-EINVAL if
				   * the medium cannot) */
};

/* Non-blocking lock requests (zr__io.lock). */
enum { ZR__LOCK_SH = 1, ZR__LOCK_EX = 2 };

/* What zr__io.sync makes durable: the bytes (and the size), or all. */
enum { ZR__SYNC_DATA = 0, ZR__SYNC_ALL = 1 };

/* zr__file.traits: what a file's medium is like. */
enum {
	/* Each client caches contents and sizes (NFS, FUSE, ...): the
	 * engine refreshes before it trusts what it reads (store_guard.c)
	 * and asks sizes fresh. */
	ZR__FILE_CACHED = 1u << 0,
};

/* An open file.  A backend embeds this first in its own struct. */
struct zr__file {
	const struct zr__io *io;
	unsigned traits;
};

struct zr__io {
	/* Releases the file (and its locks). */
	int (*close)(struct zr__file *f);
	/* The size; fresh asks past the client's cached attributes. */
	int (*size)(struct zr__file *f, int fresh, uint64_t *out);
	/* One transfer, as pread/pwrite: bytes moved (0 at the end for
	 * read) or -errno.  The engine retries short ones. */
	ssize_t (*read)(struct zr__file *f, void *buf, size_t len,
			uint64_t off);
	ssize_t (*write)(struct zr__file *f, const void *buf, size_t len,
			 uint64_t off);
	ssize_t (*writev)(struct zr__file *f, const struct iovec *iov, int n,
			  uint64_t off);
	int (*truncate)(struct zr__file *f, uint64_t len);
	int (*sync)(struct zr__file *f, int how);
	/* op ZR__LOCK_SH or _EX, never waiting: 0 held, 1 busy, -errno.
	 * Taking the other kind converts the lock (possibly through
	 * unlocked, as flock does). */
	int (*lock)(struct zr__file *f, int op);
	/* A read-only shared mapping of the first len bytes (len may pass
	 * the end: the reserve a growing file maps into), and its end. */
	int (*map)(struct zr__file *f, size_t len, const void **base);
	void (*unmap)(struct zr__file *f, const void *base, size_t len);
	/* Makes the next read of f come from the server, past client
	 * caches. */
	int (*refresh)(struct zr__file *f);
	/* Makes bytes [off, off + len) of f local ahead of the reads that
	 * will take them (a remote medium's host cache), copying nothing:
	 * 0, -EOPNOTSUPP when it cannot (no cache: read as usual), -errno. */
	int (*warm)(struct zr__file *f, uint64_t off, uint64_t len);
	/* Where bytes [off, off + len) of f already are in memory (a block
	 * of a host cache, mapped), valid until f is closed: 0 and *p, or
	 * -errno when they are not (then the engine reads them). */
	int (*view)(struct zr__file *f, uint64_t off, size_t len,
		    const void **p);
	/* Why locks on f stay on this host (NULL if they do not or it is
	 * not known), and the medium's type name into type[0..cap). */
	const char *(*lock_reach)(struct zr__file *f, char *type, size_t cap);
};

struct zr__vfs {
	const char *name;   /* for messages: "posix" */
	const char *scheme; /* "s3://"; NULL for plain paths */
	/* Opens path (mode: the permissions of a created file). */
	int (*open)(const struct zr__vfs *v, const char *path, unsigned flags,
		    unsigned mode, struct zr__file **out);
	/* 0 if anything is at path, -ENOENT if nothing is. */
	int (*probe)(const struct zr__vfs *v, const char *path);
	/* The rest writes the medium: NULL on a read-only one. */
	int (*mkdir)(const struct zr__vfs *v, const char *path);
	int (*remove)(const struct zr__vfs *v, const char *path);
	int (*rmdir)(const struct zr__vfs *v, const char *path);
	int (*rename)(const struct zr__vfs *v, const char *from,
		      const char *to);
	/* Makes the names in folder path durable. */
	int (*sync_dir)(const struct zr__vfs *v, const char *path);
};

/* The POSIX backend (vfs_posix.c), and the same without map or any write:
 * a read-only medium such as an object store, over local files, so that
 * the suites run the engine's paths for one. */
extern const struct zr__vfs zr__vfs_posix;
extern const struct zr__vfs zr__vfs_posix_readonly;
/* s3://BUCKET/KEY, read-only, over libcurl (vfs_s3.c). */
extern const struct zr__vfs zr__vfs_s3;

/* The backend of path: by its URL scheme, POSIX if it has none;
 * -EPROTONOSUPPORT (with a message) for a scheme no backend serves. */
int zr__vfs_find(const char *path, const struct zr__vfs **out);

/* Reads/writes exactly len bytes at off, retrying short transfers and
 * EINTR; -errno (ENOSPC for a full disk, ZR_E_CORRUPT for a file that
 * ends first) with a message naming path/file. */
int zr__io_read_all(struct zr__file *f, void *buf, size_t len, uint64_t off,
		    const char *path, const char *file);
int zr__io_write_all(struct zr__file *f, const void *buf, size_t len,
		     uint64_t off, const char *path, const char *file);

/* A folder or naming operation of backend vfs (mkdir, rmdir, remove,
 * rename, sync_dir), or -EROFS where the medium has none. */
#define ZR__VFS_DO(vfs, op, ...) \
	((vfs)->op ? (vfs)->op((vfs), __VA_ARGS__) : -EROFS)

/* fsync of folder path, and a new file dir/name (O_EXCL) written and
 * fsynced, through backend vfs; -errno with a message. */
int zr__fsync_dir(const struct zr__vfs *vfs, const char *path);
int zr__write_file(const struct zr__vfs *vfs, const char *dir,
		   const char *name, const void *buf, size_t len);

/* The optional operations, as the engine calls them (see the top). */
static inline int zr__io_close(struct zr__file *f)
{
	return f ? f->io->close(f) : 0;
}

static inline int zr__io_truncate(struct zr__file *f, uint64_t len)
{
	return f->io->truncate ? f->io->truncate(f, len) : -EROFS;
}

static inline int zr__io_sync(struct zr__file *f, int how)
{
	return f->io->sync ? f->io->sync(f, how) : 0;
}

static inline int zr__io_lock(struct zr__file *f, int op)
{
	return f->io->lock ? f->io->lock(f, op) : 0;
}

#endif
