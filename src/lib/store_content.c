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
#include <stdio.h>
#include <string.h>

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
	struct zr__file *f;
	ssize_t n;
	int err;

	snprintf(p, sizeof(p), "%s/" ZR__CONTENT_FILE, s->path);
	err = s->vfs->open(s->vfs, p, 0, 0, &f);
	if (err == -ENOENT)
		return 0;
	if (err)
		return zr__fail(err, "%s: %s", p, strerror(-err));
	n = f->io->read(f, buf, sizeof(buf), 0);
	zr__io_close(f);
	if (n < 0)
		return zr__fail((int)n, "%s: %s", p, strerror((int)-n));
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

/* Written aside and renamed, so a reader sees no mark or a whole one. */
static int write_mark(zr_store *s)
{
	const struct zr__vfs *v = s->vfs;
	char from[4096], to[4096];
	int err;

	if (!v->remove || !v->rename)
		return zr__fail(-EROFS, "%s: read-only medium: cannot mark "
				"the store as encoded images", s->path);
	snprintf(from, sizeof(from), "%s/" CONTENT_NEW, s->path);
	snprintf(to, sizeof(to), "%s/" ZR__CONTENT_FILE, s->path);
	v->remove(v, from); /* a mark cut short before its rename */
	err = zr__write_file(v, s->path, CONTENT_NEW, CONTENT_IMAGES,
			     strlen(CONTENT_IMAGES));
	if (!err && (err = v->rename(v, from, to)))
		err = zr__fail(err, "%s: rename: %s", from, strerror(-err));
	if (!err)
		err = zr__fsync_dir(v, s->path);
	if (err)
		v->remove(v, from);
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
