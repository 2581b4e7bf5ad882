/*
 * vfs.c - the storage seam's engine side (vfs.h): which backend serves a
 * path (and whether it is a URL, zr_path_is_url), whole transfers over a
 * backend's single ones, and whole files (a new file written and synced,
 * a folder synced) over any backend.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "vfs.h"
#include "zrecord.h"

/* Every backend but POSIX, by scheme. */
static const struct zr__vfs *const schemes[] = { &zr__vfs_s3 };

/* The length of path's "name://" prefix (RFC 3986's scheme), 0 if none. */
static size_t scheme_len(const char *path)
{
	size_t n = 0;

	if (!isalpha((unsigned char)path[0]))
		return 0;
	while (isalnum((unsigned char)path[n]) || path[n] == '+' ||
	       path[n] == '-' || path[n] == '.')
		n++;
	return strncmp(path + n, "://", 3) ? 0 : n + 3;
}

int zr_path_is_url(const char *path)
{
	return path && scheme_len(path) > 0;
}

int zr__vfs_find(const char *path, const struct zr__vfs **out)
{
	size_t n = scheme_len(path);

	if (!n) {
		*out = &zr__vfs_posix;
		return 0;
	}
	for (size_t i = 0; i < sizeof(schemes) / sizeof(*schemes); i++)
		if (schemes[i] && strlen(schemes[i]->scheme) == n &&
		    strncmp(path, schemes[i]->scheme, n) == 0) {
			*out = schemes[i];
			return 0;
		}
	return zr__fail(-EPROTONOSUPPORT, "%s: no storage backend serves "
			"\"%.*s\" in this build (a local folder of that name "
			"is ./%s)", path, (int)n, path, path);
}

int zr__io_write_all(struct zr__file *f, const void *buf, size_t len,
		     uint64_t off, const char *path, const char *file)
{
	const uint8_t *p = buf;

	if (!f->io->write)
		return zr__fail(-EROFS, "%s/%s: write on a read-only medium",
				path, file);
	while (len) {
		ssize_t n = f->io->write(f, p, len, off);

		if (n == -EINTR)
			continue;
		if (n <= 0) {
			int err = n < 0 ? (int)-n : ENOSPC;

			return zr__fail(-err, "%s/%s: write of %zu bytes at "
					"%" PRIu64 ": %s", path, file, len,
					off, strerror(err));
		}
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

int zr__io_read_all(struct zr__file *f, void *buf, size_t len, uint64_t off,
		    const char *path, const char *file)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = f->io->read(f, p, len, off);

		if (n == -EINTR)
			continue;
		if (n < 0)
			return zr__fail((int)n, "%s/%s: read at %" PRIu64
					": %s", path, file, off,
					strerror((int)-n));
		if (n == 0)
			return zr__fail(ZR_E_CORRUPT, "%s/%s: ends before "
					"offset %" PRIu64, path, file, off);
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

int zr__fsync_dir(const struct zr__vfs *vfs, const char *path)
{
	int err = ZR__VFS_DO(vfs, sync_dir, path);

	if (err)
		return zr__fail(err, "%s: fsync: %s", path, strerror(-err));
	return 0;
}

int zr__write_file(const struct zr__vfs *vfs, const char *dir,
		   const char *name, const void *buf, size_t len)
{
	struct zr__file *f;
	char p[4096];
	int err;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	err = vfs->open(vfs, p, ZR__VFS_WRITE | ZR__VFS_CREATE | ZR__VFS_EXCL,
			0666, &f);
	if (err)
		return zr__fail(err, "%s: %s", p, strerror(-err));
	err = zr__io_write_all(f, buf, len, 0, dir, name);
	if (!err && (err = zr__io_sync(f, ZR__SYNC_ALL)))
		err = zr__fail(err, "%s: fsync: %s", p, strerror(-err));
	zr__io_close(f);
	return err;
}
