/*
 * store_create.c - making a new store: validate the schema and codec, lay
 * down data.zr, dict.zr and then meta.zr durably, and leave nothing behind
 * if any step fails.  meta.zr appears last and whole (written under a
 * temporary name, then renamed), so a power cut during create leaves no
 * store (ZR_E_NOSTORE) rather than a malformed one.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "store.h"

#define META_NEW "meta.zr.new"

static const char *const store_files[] = { "meta.zr", "data.zr", "dict.zr",
					   META_NEW };

/* mkdir -p of every folder above path. */
static int mkdir_parents(const char *path)
{
	char *p = strdup(path);
	int err = 0;

	if (!p)
		return zr__fail(-ENOMEM, "%s: no memory", path);
	for (char *c = p + 1; *c; c++) {
		if (*c != '/')
			continue;
		*c = '\0';
		if (mkdir(p, 0777) && errno != EEXIST) {
			err = zr__fail(-errno, "%s: mkdir: %s", p,
				       strerror(errno));
			break;
		}
		*c = '/';
	}
	free(p);
	return err;
}

int zr__fsync_path(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC);
	int err = 0;

	if (fd < 0)
		return zr__fail(-errno, "%s: %s", path, strerror(errno));
	if (fsync(fd))
		err = zr__fail(-errno, "%s: fsync: %s", path, strerror(errno));
	close(fd);
	return err;
}

int zr__write_file(const char *dir, const char *name, const void *buf,
		   size_t len)
{
	char p[4096];
	int fd, err;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (fd < 0)
		return zr__fail(-errno, "%s: %s", p, strerror(errno));
	err = zr__pwrite_all(fd, buf, len, 0, dir, name);
	if (!err && fsync(fd))
		err = zr__fail(-errno, "%s: fsync: %s", p, strerror(errno));
	close(fd);
	return err;
}

static void remove_store(const char *path)
{
	char p[4096];

	for (size_t i = 0; i < sizeof(store_files) / sizeof(*store_files);
	     i++) {
		snprintf(p, sizeof(p), "%s/%s", path, store_files[i]);
		unlink(p);
	}
	rmdir(path);
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
static int lay_down(const char *path, const uint8_t *page, zr_codec codec,
		    const void *dict, size_t dict_len)
{
	char from[4096], to[4096];
	int err = zr__write_file(path, "data.zr", NULL, 0);

	if (!err && codec == ZR_CODEC_ZSTD_DICT)
		err = zr__write_file(path, "dict.zr", dict, dict_len);
	if (!err)
		err = zr__write_file(path, META_NEW, page, ZR__PAGE);
	snprintf(from, sizeof(from), "%s/" META_NEW, path);
	snprintf(to, sizeof(to), "%s/meta.zr", path);
	if (!err && rename(from, to))
		err = zr__fail(-errno, "%s: rename: %s", from, strerror(errno));
	if (!err)
		err = zr__fsync_path(path, O_RDONLY | O_DIRECTORY);
	return err;
}

static int fsync_parent(const char *path)
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
	err = zr__fsync_path(slash ? p : ".", O_RDONLY | O_DIRECTORY);
	free(p);
	return err;
}

int zr_store_create(const char *path, const zr_schema *schema,
		    zr_codec codec, const void *dict, size_t dict_len,
		    zr_store **out)
{
	uint8_t page[ZR__PAGE];
	struct stat st;
	int err;

	zr__clear();
	err = check_args(path, schema, codec, dict, dict_len);
	if (!err && !out)
		err = zr__fail(-EINVAL, "zr_store_create: out is NULL");
	if (!err)
		err = build_page(schema, codec, page);
	if (err)
		return err;
	if (lstat(path, &st) == 0)
		return zr__fail(ZR_E_EXISTS, "%s: already exists", path);
	if (errno != ENOENT)
		return zr__fail(-errno, "%s: %s", path, strerror(errno));
	err = mkdir_parents(path);
	if (err)
		return err;
	if (mkdir(path, 0777))
		return zr__fail(errno == EEXIST ? ZR_E_EXISTS : -errno,
				"%s: mkdir: %s", path, strerror(errno));
	err = lay_down(path, page, codec, dict, dict_len);
	if (!err)
		err = fsync_parent(path);
	if (!err)
		err = zr_store_open(path, 0, out);
	if (err)
		remove_store(path);
	return err;
}
