/*
 * store_create.c - making a new store: validate the schema and codec, lay
 * down data.zr, dict.zr and then meta.zr durably, and leave nothing behind
 * if any step fails.  meta.zr appears last and whole (written under a
 * temporary name, then renamed), so a power cut during create leaves no
 * store (ZR_E_NOSTORE) rather than a malformed one.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "error.h"
#include "store_io.h"

#define META_NEW "meta.zr.new"

static const char *const store_files[] = { "meta.zr", "data.zr", "dict.zr",
					   META_NEW };

/* mkdir -p of every folder above path. */
static int mkdir_parents(const struct zr__vfs *vfs, const char *path)
{
	char *p = strdup(path);
	int err = 0;

	if (!p)
		return zr__fail(-ENOMEM, "%s: no memory", path);
	for (char *c = p + 1; *c; c++) {
		if (*c != '/')
			continue;
		*c = '\0';
		err = ZR__VFS_DO(vfs, mkdir, p);
		if (err && err != -EEXIST) {
			err = zr__fail(err, "%s: mkdir: %s", p, strerror(-err));
			break;
		}
		err = 0;
		*c = '/';
	}
	free(p);
	return err;
}

static void remove_store(const struct zr__vfs *vfs, const char *path)
{
	char p[4096];

	for (size_t i = 0; i < sizeof(store_files) / sizeof(*store_files);
	     i++) {
		snprintf(p, sizeof(p), "%s/%s", path, store_files[i]);
		ZR__VFS_DO(vfs, remove, p);
	}
	ZR__VFS_DO(vfs, rmdir, path);
}

/* The static page of a new store: header, schema, zero padding. */
static int build_page(const zr_schema *schema, zr_codec codec, uint8_t *page)
{
	zr_schema check;
	size_t slen, row;
	int err;

	memset(page, 0, ZR__PAGE);
	err = zr_schema_encode(schema, page + ZR__HEADER, ZR_SCHEMA_MAX,
			       &slen);
	if (!err)
		err = zr_schema_decode(page + ZR__HEADER, slen, &check);
	if (!err && !check.ragged)
		err = zr_schema_row_bytes(&check, &row);
	if (err)
		return err;
	zr__header_encode(page, 0, 0, (uint32_t)slen, codec);
	return 0;
}

static int check_args(const char *path, const zr_schema *schema,
		      zr_codec codec, const void *dict, size_t dict_len)
{
	if (!path || !*path || !schema || (unsigned)codec > ZR_CODEC_ZSTD_DICT)
		return zr__fail(-EINVAL, "zr_store_create: bad arguments");
	if (strlen(path) > 3900)
		return zr__fail(-ENAMETOOLONG, "%s: path too long", path);
	if (codec == ZR_CODEC_ZSTD_DICT && (!dict || !dict_len))
		return zr__fail(ZR_E_NODICT, "%s: a zstd_dict store needs a "
				"dictionary", path);
	if (codec != ZR_CODEC_ZSTD_DICT && (dict || dict_len))
		return zr__fail(-EINVAL, "%s: a dictionary is only for "
				"zstd_dict stores", path);
	return 0;
}

/* meta.zr is what makes a folder a store: it is renamed into place only
 * once everything it needs is durable. */
static int lay_down(const struct zr__vfs *vfs, const char *path,
		    const uint8_t *page, zr_codec codec, const void *dict,
		    size_t dict_len)
{
	char from[4096], to[4096];
	int err = zr__write_file(vfs, path, "data.zr", NULL, 0);

	if (!err && codec == ZR_CODEC_ZSTD_DICT)
		err = zr__write_file(vfs, path, "dict.zr", dict, dict_len);
	if (!err)
		err = zr__write_file(vfs, path, META_NEW, page, ZR__PAGE);
	snprintf(from, sizeof(from), "%s/" META_NEW, path);
	snprintf(to, sizeof(to), "%s/meta.zr", path);
	if (!err && (err = ZR__VFS_DO(vfs, rename, from, to)))
		err = zr__fail(err, "%s: rename: %s", from, strerror(-err));
	if (!err)
		err = zr__fsync_dir(vfs, path);
	return err;
}

static int fsync_parent(const struct zr__vfs *vfs, const char *path)
{
	char *p = strdup(path);
	char *slash;
	int err;

	if (!p)
		return zr__fail(-ENOMEM, "%s: no memory", path);
	slash = strrchr(p, '/');
	if (slash == p)
		slash[1] = '\0';
	else if (slash)
		*slash = '\0';
	err = zr__fsync_dir(vfs, slash ? p : ".");
	free(p);
	return err;
}

int zr_store_create(const char *path, const zr_schema *schema,
		    zr_codec codec, const void *dict, size_t dict_len,
		    zr_store **out)
{
	const struct zr__vfs *vfs = NULL;
	uint8_t page[ZR__PAGE];
	int err;

	zr__clear();
	err = check_args(path, schema, codec, dict, dict_len);
	if (!err && !out)
		err = zr__fail(-EINVAL, "zr_store_create: out is NULL");
	if (!err)
		err = build_page(schema, codec, page);
	if (!err)
		err = zr__vfs_find(path, &vfs);
	if (err)
		return err;
	if (!vfs->mkdir) /* before any request: nothing to ask the medium */
		return zr__fail(-EROFS, "%s: cannot create a store there: "
				"the %s backend is read-only", path,
				vfs->name);
	err = vfs->probe(vfs, path);
	if (err == 0)
		return zr__fail(ZR_E_EXISTS, "%s: already exists", path);
	if (err != -ENOENT)
		return zr__fail(err, "%s: %s", path, strerror(-err));
	err = mkdir_parents(vfs, path);
	if (err)
		return err;
	err = ZR__VFS_DO(vfs, mkdir, path);
	if (err)
		return zr__fail(err == -EEXIST ? ZR_E_EXISTS : err,
				"%s: mkdir: %s", path, strerror(-err));
	err = lay_down(vfs, path, page, codec, dict, dict_len);
	if (!err)
		err = fsync_parent(vfs, path);
	if (!err)
		err = zr__store_open_vfs(path, vfs, 0, out);
	if (err)
		remove_store(vfs, path);
	return err;
}
