/*
 * store_content.c - the mark that says a store's records are encoded
 * images (JPEG, PNG or WebP file bytes): STORE/content.zr, a file beside
 * the seed's three that holds "images\n".  The seed's own reader opens
 * only meta.zr, data.zr and dict.zr, so it still opens such a store and
 * sees each record as the ragged uint8 bytes of its file; the schema
 * stays the seed's (which accepts no other key), and meta.zr and data.zr
 * stay byte for byte the seed's format.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "store.h"

#define CONTENT_IMAGES "images\n"
#define CONTENT_NEW ZR__CONTENT_FILE ".new"

/* Only ragged uint8 records can be a file's bytes. */
static int images_schema(const zr_store *s)
{
	if (s->schema.ragged && s->schema.dtype.itemsize == 1 &&
	    s->schema.dtype.kind == 'u')
		return 0;
	return zr__fail(ZR_E_SCHEMA, "%s: an encoded-image store is ragged "
			"|u1 (each record one file's bytes); this one is %s%s",
			s->path, s->schema.dtype.str,
			s->schema.ragged ? "" : " dense");
}

int zr__content_load(zr_store *s)
{
	char p[4096], buf[64];
	ssize_t n;
	int fd;

	snprintf(p, sizeof(p), "%s/" ZR__CONTENT_FILE, s->path);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		return 0;
	if (fd < 0)
		return zr__fail(-errno, "%s: %s", p, strerror(errno));
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n < 0)
		return zr__fail(-errno, "%s: %s", p, strerror(errno));
	if ((size_t)n != strlen(CONTENT_IMAGES) ||
	    memcmp(buf, CONTENT_IMAGES, (size_t)n))
		return zr__fail(ZR_E_SCHEMA, "%s: unknown content mark (this "
				"library knows \"images\"); remove the file to "
				"read the records as plain bytes", p);
	atomic_store(&s->images, 1);
	return images_schema(s);
}

int zr_store_images(const zr_store *s)
{
	return atomic_load(&s->images);
}

static int write_mark(zr_store *s)
{
	char from[4096], to[4096];
	int err;

	snprintf(from, sizeof(from), "%s/" CONTENT_NEW, s->path);
	snprintf(to, sizeof(to), "%s/" ZR__CONTENT_FILE, s->path);
	unlink(from); /* a mark cut short before its rename */
	err = zr__write_file(s->path, CONTENT_NEW, CONTENT_IMAGES,
			     strlen(CONTENT_IMAGES));
	if (!err && rename(from, to))
		err = zr__fail(-errno, "%s: rename: %s", from,
			       strerror(errno));
	if (!err)
		err = zr__fsync_path(s->path, O_RDONLY | O_DIRECTORY);
	if (err)
		unlink(from);
	return err;
}

int zr_store_mark_images(zr_store *s)
{
	int err;

	zr__clear();
	if (s->readonly)
		return zr__fail(-EROFS, "%s: read-only handle: cannot mark "
				"the store as encoded images", s->path);
	err = images_schema(s);
	if (err || atomic_load(&s->images))
		return err;
	err = write_mark(s);
	if (err)
		return err;
	atomic_store(&s->images, 1);
	return 0;
}
