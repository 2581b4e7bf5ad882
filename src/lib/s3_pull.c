/*
 * s3_pull.c - zr_store_pull: a store at s3://BUCKET/PREFIX (published by
 * push, or plain files) copied into a new local store folder.  It reads
 * through the S3 backend (vfs_s3.c), so it takes one published version
 * whole, and writes into a temporary folder beside the destination that
 * becomes it by one rename once the copy opens as a store: a pull that
 * fails or is killed leaves no store at the destination, at most a
 * DEST.pull-XXXXXX folder.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "vfs.h"

/* Bytes per GET of a pull. */
#define CHUNK (8u << 20)

static const char *const store_files[] = {
	"meta.zr", "data.zr", "dict.zr", "content.zr",
};

/* size bytes of remote file f into local file fd. */
static int copy_bytes(struct zr__file *f, int fd, uint64_t size,
		      const char *url, const char *name, zr_transfer *t)
{
	uint8_t *buf = malloc(CHUNK);
	uint64_t off = 0;
	int err = buf ? 0 : -ENOMEM;

	while (!err && off < size) {
		size_t n = size - off < CHUNK ? (size_t)(size - off) : CHUNK;

		err = zr__io_read_all(f, buf, n, off, url, name);
		if (!err && pwrite(fd, buf, n, (off_t)off) != (ssize_t)n)
			err = -(errno ? errno : ENOSPC);
		off += n;
	}
	free(buf);
	if (!err && fsync(fd))
		err = -errno;
	if (!err) {
		t->bytes += size;
		t->bytes_sent += size;
	}
	return err;
}

/* Remote file name (if it exists: dict.zr and content.zr may not) into
 * folder dir. */
static int pull_file(const char *url, const char *dir, const char *name,
		     zr_transfer *t)
{
	char src[4096], dst[4096];
	struct zr__file *f;
	uint64_t size;
	int fd, err;

	if ((size_t)snprintf(src, sizeof(src), "%s/%s", url, name) >=
	    sizeof(src) ||
	    (size_t)snprintf(dst, sizeof(dst), "%s/%s", dir, name) >=
	    sizeof(dst))
		return zr__fail(-ENAMETOOLONG, "%s: path too long", dir);
	/* Direct: the copy is the local store, a cached one a second. */
	err = zr__vfs_s3.open(&zr__vfs_s3, src, ZR__VFS_DIRECT, 0, &f);
	if (err == -ENOENT && strcmp(name, "meta.zr") &&
	    strcmp(name, "data.zr"))
		return 0; /* an optional file */
	if (err == -ENOENT)
		return zr__fail(ZR_E_NOSTORE, "%s: no store (no %s)", url,
				name);
	if (err)
		return zr__fail(err, "%s: %s", src, zr_strerror(err));
	fd = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	err = fd < 0 ? -errno : f->io->size(f, 0, &size);
	if (!err)
		err = copy_bytes(f, fd, size, url, name, t);
	if (!err)
		t->files++;
	else if (!zr_errmsg()[0])
		err = zr__fail(err, "%s: %s", dst, strerror(-err));
	if (fd >= 0)
		close(fd);
	zr__io_close(f);
	return err;
}

/* The copy in tmp opens as a store. */
static int check_copy(const char *tmp)
{
	zr_store *s;
	int err = zr_store_open(tmp, ZR_OPEN_RDONLY, &s);

	if (err)
		return err;
	return zr_store_close(s);
}

/* tmp and what is in it removed (a failed pull's). */
static void discard(const char *tmp)
{
	char p[4096];

	for (size_t i = 0; i < sizeof(store_files) / sizeof(*store_files);
	     i++) {
		if ((size_t)snprintf(p, sizeof(p), "%s/%s", tmp,
				     store_files[i]) < sizeof(p))
			unlink(p);
	}
	rmdir(tmp);
}

/* The folder dest's parent, for its fsync. */
static int sync_parent(const char *dest)
{
	char dir[4096];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", dest);
	slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = '\0';
	else if (slash)
		*slash = '\0';
	else
		snprintf(dir, sizeof(dir), ".");
	return zr__fsync_dir(&zr__vfs_posix, dir);
}

/* Every file into tmp, checked, then tmp renamed to dest. */
static int pull_into(const char *url, const char *tmp, const char *dest,
		     zr_transfer *t)
{
	int err = 0;

	for (size_t i = 0; !err && i < sizeof(store_files) /
					   sizeof(*store_files); i++)
		err = pull_file(url, tmp, store_files[i], t);
	if (!err)
		err = check_copy(tmp);
	if (!err && rename(tmp, dest))
		err = zr__fail(-errno, "%s: %s", dest, strerror(errno));
	return err ? err : sync_parent(dest);
}

/* url without its trailing '/'s, in buf (or as it is if too long). */
static const char *trimmed(const char *url, char *buf, size_t cap)
{
	size_t n = strlen(url);

	while (n > strlen("s3://") && url[n - 1] == '/')
		n--;
	if (n >= cap)
		return url;
	memcpy(buf, url, n);
	buf[n] = '\0';
	return buf;
}

int zr_store_pull(const char *url, const char *dest, zr_transfer *out)
{
	char tmp[4096], src[4096];
	struct stat st;
	int err;

	zr__clear();
	if (!url || !dest || !*dest || !out)
		return zr__fail(-EINVAL, "zr_store_pull: bad arguments");
	memset(out, 0, sizeof(*out));
	if (strncmp(url, "s3://", 5))
		return zr__fail(-EINVAL, "%s: not a source: give "
				"s3://BUCKET/PREFIX", url);
	if (!lstat(dest, &st))
		return zr__fail(-EEXIST, "%s exists: pull makes a new store; "
				"remove it or name another", dest);
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.pull-XXXXXX", dest) >=
	    sizeof(tmp))
		return zr__fail(-ENAMETOOLONG, "%s: path too long", dest);
	if (!mkdtemp(tmp))
		return zr__fail(-errno, "%s: %s", tmp, strerror(errno));
	err = pull_into(trimmed(url, src, sizeof(src)), tmp, dest, out);
	if (err)
		discard(tmp);
	return err;
}
