/*
 * vfs_posix.c - the POSIX backend of the storage seam (vfs.h): a store is a
 * folder of local (or network-mounted) files, read through mmap and pread,
 * locked with flock, made durable with fsync and fdatasync.  Also the
 * read-only row without map, which runs the engine's paths for a medium
 * like an object store over the same files.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "vfs.h"

struct posix_file {
	struct zr__file f;
	int fd;
};

static int fd_of(const struct zr__file *f)
{
	return ((const struct posix_file *)f)->fd;
}

static int fail(void)
{
	return -errno;
}

static int p_close(struct zr__file *f)
{
	int err = close(fd_of(f)) ? fail() : 0; /* also drops the flock */

	free(f);
	return err;
}

/* A forced statx asks the server, past the kernel's and the client's
 * cached attributes: a header newer than the cached size is not taken for
 * a truncated file. */
static int p_size(struct zr__file *f, int fresh, uint64_t *out)
{
	struct statx stx;

	if (statx(fd_of(f), "", AT_EMPTY_PATH |
		  (fresh ? AT_STATX_FORCE_SYNC : AT_STATX_SYNC_AS_STAT),
		  STATX_SIZE, &stx))
		return fail();
	*out = stx.stx_size;
	return 0;
}

static ssize_t p_read(struct zr__file *f, void *buf, size_t len,
		      uint64_t off)
{
	ssize_t n = pread(fd_of(f), buf, len, (off_t)off);

	return n < 0 ? fail() : n;
}

static ssize_t p_write(struct zr__file *f, const void *buf, size_t len,
		       uint64_t off)
{
	ssize_t n = pwrite(fd_of(f), buf, len, (off_t)off);

	return n < 0 ? fail() : n;
}

static ssize_t p_writev(struct zr__file *f, const struct iovec *iov, int n,
			uint64_t off)
{
	ssize_t r = pwritev(fd_of(f), iov, n, (off_t)off);

	return r < 0 ? fail() : r;
}

static int p_truncate(struct zr__file *f, uint64_t len)
{
	return ftruncate(fd_of(f), (off_t)len) ? fail() : 0;
}

static int p_sync(struct zr__file *f, int how)
{
	int rc = how == ZR__SYNC_ALL ? fsync(fd_of(f)) : fdatasync(fd_of(f));

	return rc ? fail() : 0;
}

static int p_lock(struct zr__file *f, int op)
{
	if (flock(fd_of(f), (op == ZR__LOCK_EX ? LOCK_EX : LOCK_SH) |
			    LOCK_NB) == 0)
		return 0;
	return errno == EWOULDBLOCK ? 1 : fail();
}

static int p_map(struct zr__file *f, size_t len, const void **base)
{
	void *b = mmap(NULL, len, PROT_READ, MAP_SHARED, fd_of(f), 0);

	if (b == MAP_FAILED)
		return fail();
	*base = b;
	return 0;
}

static void p_unmap(struct zr__file *f, const void *base, size_t len)
{
	(void)f;
	munmap((void *)base, len);
}

/* An allocation of a byte the file already has changes nothing, yet the
 * request reaches the server and each client cache drops what it held of
 * the file (GlusterFS: contents and size).  Where the filesystem cannot
 * allocate there is nothing to drop this way. */
static int p_refresh(struct zr__file *f)
{
	if (fallocate(fd_of(f), FALLOC_FL_KEEP_SIZE, 0, 1) == 0 ||
	    errno == EOPNOTSUPP || errno == ENOSYS)
		return 0;
	return fail();
}

/* FUSE filesystems known to keep flock in the client's kernel. */
static const char *const local_fuse[] = { "fuse.sshfs", "fuse.rclone",
					  "fuse.s3fs", "fuse.gcsfuse" };

static const char *verdict(const char *type, const char *opts)
{
	char o[1024];

	for (size_t i = 0; i < sizeof(local_fuse) / sizeof(*local_fuse); i++)
		if (strcmp(type, local_fuse[i]) == 0)
			return "its flock stays on this host (FUSE keeps it "
			       "in the local kernel)";
	if (strcmp(type, "nfs") && strcmp(type, "nfs4"))
		return NULL;
	snprintf(o, sizeof(o), ",%s,", opts);
	if (strstr(o, ",local_lock=flock,") || strstr(o, ",local_lock=all,"))
		return "its flock stays on this host (NFS local_lock)";
	return NULL;
}

/* One mountinfo line: "ID PARENT MAJ:MIN ROOT MNT OPTS [TAGS...] - TYPE
 * SOURCE SUPER_OPTS".  The verdict if it is the mount of dev. */
static const char *line_verdict(char *line, unsigned maj, unsigned min,
				char *type, size_t cap)
{
	unsigned a, b;
	char *sep = strstr(line, " - "), *t, *opts, *save;

	if (!sep || sscanf(line, "%*s %*s %u:%u", &a, &b) != 2 || a != maj ||
	    b != min)
		return NULL;
	t = strtok_r(sep + 3, " \n", &save);
	if (!t || !strtok_r(NULL, " \n", &save))
		return NULL;
	opts = strtok_r(NULL, " \n", &save);
	snprintf(type, cap, "%s", t);
	return verdict(t, opts ? opts : "");
}

/* Found from the mount the file is on (/proc/self/mountinfo: filesystem
 * type and super options); only a filesystem with client caches can keep
 * its locks on one host. */
static const char *p_lock_reach(struct zr__file *f, char *type, size_t cap)
{
	const char *why = NULL;
	char *line = NULL;
	struct stat st;
	size_t len = 0;
	FILE *mi;

	if (!(f->traits & ZR__FILE_CACHED) || fstat(fd_of(f), &st))
		return NULL;
	mi = fopen("/proc/self/mountinfo", "re");
	if (!mi)
		return NULL;
	while (!why && getline(&line, &len, mi) > 0)
		why = line_verdict(line, major(st.st_dev), minor(st.st_dev),
				   type, cap);
	free(line);
	fclose(mi);
	return why;
}

/* f_type values of filesystems that may cache a file on each client. */
static int client_cached(unsigned long type)
{
	switch (type) {
	case 0x65735546UL: /* FUSE: GlusterFS, sshfs, ... */
	case 0x6969UL:     /* NFS */
	case 0xff534d42UL: /* CIFS */
	case 0xfe534d42UL: /* SMB2 */
	case 0x00c36400UL: /* Ceph */
		return 1;
	}
	return 0;
}

static const struct zr__io posix_io = {
	.close = p_close,
	.size = p_size,
	.read = p_read,
	.write = p_write,
	.writev = p_writev,
	.truncate = p_truncate,
	.sync = p_sync,
	.lock = p_lock,
	.map = p_map,
	.unmap = p_unmap,
	.refresh = p_refresh,
	.lock_reach = p_lock_reach,
};

/* A medium that can only be read and has no map, as an object store. */
static const struct zr__io readonly_io = {
	.close = p_close,
	.size = p_size,
	.read = p_read,
	.lock_reach = p_lock_reach,
};

static int open_fd(const char *path, unsigned flags, unsigned mode)
{
	int o = (flags & ZR__VFS_WRITE) ? O_RDWR : O_RDONLY;

	if (flags & ZR__VFS_CREATE)
		o |= O_CREAT;
	if (flags & ZR__VFS_EXCL)
		o |= O_EXCL;
	if (flags & ZR__VFS_TRUNC)
		o |= O_TRUNC;
	if (flags & ZR__VFS_DIRECT)
		o |= O_DIRECT;
	return open(path, o | O_CLOEXEC, (mode_t)mode);
}

static int open_with(const struct zr__io *io, const char *path,
		     unsigned flags, unsigned mode, struct zr__file **out)
{
	struct posix_file *p = malloc(sizeof(*p));
	struct statfs sf;

	if (!p)
		return -ENOMEM;
	p->fd = open_fd(path, flags, mode);
	if (p->fd < 0) {
		int err = fail();

		free(p);
		return err;
	}
	p->f.io = io;
	p->f.traits = fstatfs(p->fd, &sf) == 0 &&
		      client_cached((unsigned long)sf.f_type) ?
		      ZR__FILE_CACHED : 0;
	*out = &p->f;
	return 0;
}

static int p_open(const struct zr__vfs *v, const char *path, unsigned flags,
		  unsigned mode, struct zr__file **out)
{
	(void)v;
	return open_with(&posix_io, path, flags, mode, out);
}

static int ro_open(const struct zr__vfs *v, const char *path,
		   unsigned flags, unsigned mode, struct zr__file **out)
{
	(void)v;
	if (flags & (ZR__VFS_WRITE | ZR__VFS_CREATE | ZR__VFS_TRUNC))
		return -EROFS;
	return open_with(&readonly_io, path, flags, mode, out);
}

static int p_probe(const struct zr__vfs *v, const char *path)
{
	struct stat st;

	(void)v;
	return lstat(path, &st) ? fail() : 0;
}

static int p_mkdir(const struct zr__vfs *v, const char *path)
{
	(void)v;
	return mkdir(path, 0777) ? fail() : 0;
}

static int p_remove(const struct zr__vfs *v, const char *path)
{
	(void)v;
	return unlink(path) ? fail() : 0;
}

static int p_rmdir(const struct zr__vfs *v, const char *path)
{
	(void)v;
	return rmdir(path) ? fail() : 0;
}

static int p_rename(const struct zr__vfs *v, const char *from,
		    const char *to)
{
	(void)v;
	return rename(from, to) ? fail() : 0;
}

static int p_sync_dir(const struct zr__vfs *v, const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), err = 0;

	(void)v;
	if (fd < 0 || fsync(fd))
		err = fail();
	if (fd >= 0)
		close(fd);
	return err;
}

const struct zr__vfs zr__vfs_posix = {
	.name = "posix",
	.open = p_open,
	.probe = p_probe,
	.mkdir = p_mkdir,
	.remove = p_remove,
	.rmdir = p_rmdir,
	.rename = p_rename,
	.sync_dir = p_sync_dir,
};

const struct zr__vfs zr__vfs_posix_readonly = {
	.name = "posix-readonly",
	.open = ro_open,
	.probe = p_probe,
};
