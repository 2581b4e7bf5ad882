/*
 * vfs_s3.c - the S3 backend, read-only (vfs.h): a store at
 * s3://BUCKET/PREFIX is the objects PREFIX/meta.zr, PREFIX/data.zr and,
 * if there, PREFIX/dict.zr and PREFIX/content.zr.  An open is a HEAD (the
 * size and the ETag), a read a ranged GET that must still match that ETag
 * (If-Match): an object replaced after the open fails the read (ESTALE)
 * instead of mixing two versions' bytes.  No write, map or lock: the
 * engine reads meta.zr's table into memory and records with read, as over
 * zr__vfs_posix_readonly.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "s3.h"
#include "vfs.h"

struct s3_file {
	struct zr__file f; /* first: the engine's handle */
	struct zr__s3_conf conf;
	struct zr__s3_obj obj;
	uint64_t size;
	char etag[128];
};

static struct s3_file *s3_of(struct zr__file *f)
{
	return (struct s3_file *)f;
}

static void s3_free(struct s3_file *s)
{
	zr__s3_conf_free(&s->conf);
	zr__s3_obj_free(&s->obj);
	free(s);
}

static int s3_close(struct zr__file *f)
{
	s3_free(s3_of(f));
	return 0;
}

/* Fresh or not: the object is pinned to its ETag, so its size is the one
 * the open saw. */
static int s3_size(struct zr__file *f, int fresh, uint64_t *out)
{
	(void)fresh;
	*out = s3_of(f)->size;
	return 0;
}

static ssize_t s3_read(struct zr__file *f, void *buf, size_t len,
		       uint64_t off)
{
	struct s3_file *s = s3_of(f);
	struct zr__s3_req r = {
		.conf = &s->conf, .url = s->obj.url, .http = s->obj.http,
		.ranged = 1, .off = off, .buf = buf, .if_match = s->etag,
	};
	struct zr__s3_resp resp;
	int err;

	if (off >= s->size || !len)
		return 0;
	r.cap = len < s->size - off ? len : (size_t)(s->size - off);
	err = zr__s3_send(&r, &resp);
	if (err)
		return err;
	if (resp.status == 200 && off) { /* the whole object, not the range */
		zr__cause("%s: the server ignored the Range of a GET",
			  s->obj.url);
		return -EIO;
	}
	if (resp.status != 200 && resp.status != 206)
		return zr__s3_status_err(&r, &resp);
	return (ssize_t)resp.got;
}

static const struct zr__io s3_io = {
	.close = s3_close,
	.size = s3_size,
	.read = s3_read,
};

/* After a 404 for o: -ENOENT, with a cause if the bucket itself is
 * missing (a HEAD has no body to tell NoSuchBucket from NoSuchKey). */
static int missing(const struct zr__s3_conf *c, const struct zr__s3_obj *o)
{
	struct zr__s3_req r = { .conf = c, .url = o->url,
				.http = o->http_bucket, .head = 1 };
	struct zr__s3_resp resp;

	if (zr__s3_send(&r, &resp) == 0 && resp.status == 404)
		zr__cause("no bucket \"%s\" at %s (NoSuchBucket)", o->bucket,
			  c->endpoint ? c->endpoint : "AWS S3");
	return -ENOENT;
}

/* HEAD of o into resp: 0 if the object is there, else -errno (with a
 * cause but for a plain missing key). */
static int head(const struct zr__s3_conf *c, const struct zr__s3_obj *o,
		struct zr__s3_resp *resp)
{
	struct zr__s3_req r = { .conf = c, .url = o->url, .http = o->http,
				.head = 1 };
	int err = zr__s3_send(&r, resp);

	if (err)
		return err;
	if (resp->status >= 200 && resp->status <= 299)
		return 0;
	if (resp->status == 404)
		return missing(c, o);
	return zr__s3_status_err(&r, resp);
}

/* The configuration and path's object taken apart, into s. */
static int s3_setup(struct s3_file *s, const char *path)
{
	int err = zr__s3_conf_load(&s->conf);

	return err ? err : zr__s3_obj_parse(&s->conf, path, &s->obj);
}

static int s3_open(const struct zr__vfs *v, const char *path,
		   unsigned flags, unsigned mode, struct zr__file **out)
{
	struct s3_file *s;
	struct zr__s3_resp resp;
	int err;

	(void)v;
	(void)mode;
	if (flags & (ZR__VFS_WRITE | ZR__VFS_CREATE | ZR__VFS_TRUNC))
		return -EROFS;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	err = s3_setup(s, path);
	if (!err)
		err = head(&s->conf, &s->obj, &resp);
	if (!err && !resp.etag[0]) {
		zr__cause("%s: no ETag in the answer to a HEAD", path);
		err = -EIO;
	}
	if (err) {
		s3_free(s);
		return err;
	}
	s->size = resp.length;
	memcpy(s->etag, resp.etag, sizeof(s->etag));
	s->f.io = &s3_io;
	*out = &s->f;
	return 0;
}

/* Anything at path: an object, or a "folder" (a key under path/). */
static int list_some(const struct s3_file *s)
{
	char body[8192];
	struct zr__s3_req r = { .conf = &s->conf, .url = s->obj.url,
				.buf = body, .cap = sizeof(body) - 1 };
	struct zr__s3_resp resp;
	char *url = zr__s3_list_url(&s->obj);
	int err;

	if (!url)
		return -ENOMEM;
	r.http = url;
	err = zr__s3_send(&r, &resp);
	free(url);
	if (err)
		return err;
	if (resp.status != 200)
		return resp.status == 404 ? missing(&s->conf, &s->obj)
					  : zr__s3_status_err(&r, &resp);
	body[resp.got] = '\0';
	return strstr(body, "<Contents>") ? 0 : -ENOENT;
}

static int s3_probe(const struct zr__vfs *v, const char *path)
{
	struct s3_file *s = calloc(1, sizeof(*s));
	struct zr__s3_resp resp;
	int err;

	(void)v;
	if (!s)
		return -ENOMEM;
	err = s3_setup(s, path);
	if (!err)
		err = head(&s->conf, &s->obj, &resp);
	if (err == -ENOENT)
		err = list_some(s);
	s3_free(s);
	return err;
}

const struct zr__vfs zr__vfs_s3 = {
	.name = "s3",
	.scheme = "s3://",
	.open = s3_open,
	.probe = s3_probe,
};
