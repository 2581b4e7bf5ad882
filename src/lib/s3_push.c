/*
 * s3_push.c - zr_store_push: a local store published to
 * s3://BUCKET/PREFIX as immutable part objects and a manifest written
 * last (s3_manifest.h; docs/many-hosts.md, "Publishing").
 *
 * Each file is cut into parts of at most part_size bytes, each stored at
 * PREFIX/parts/SHA256-OF-ITS-BYTES.  Parts of the version already
 * published are kept as they are while the local file still holds their
 * bytes (data.zr only grows, so a newer version uploads its new tail);
 * a part is uploaded unless a HEAD finds it there with its size already
 * (what a push killed before its manifest left: the next push completes
 * it).  Only when every part is up does one PUT replace the manifest, so
 * a reader sees the old version or the new one, never a mix, and since no
 * push deletes a part, a reader that opened the old one keeps reading it.
 * Separate PUTs rather than S3 multipart uploads: a multipart upload
 * becomes visible only whole, so a killed one resumes only through
 * ListParts of an upload id kept somewhere, and leaves parts that cost
 * money until aborted; content-addressed objects resume by name, and
 * are the unit a newer version shares with the old.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "s3.h"
#include "s3_manifest.h"
#include "sha256.h"
#include "vfs.h"

static const char *const store_files[ZR__MANIFEST_FILES] = {
	"meta.zr", "data.zr", "dict.zr", "content.zr",
};

/* One push: where to, what was there, what is being built. */
struct push {
	const char *path;   /* the local store */
	const char *url;    /* its destination, no trailing '/' */
	uint64_t part_size;
	struct zr__s3_conf conf;
	struct zr__manifest old; /* the published version (nfiles 0: none) */
	struct zr__manifest new;
	uint8_t *buf;       /* one part's bytes */
	size_t cap;
	long pause_after;   /* tests: parts to upload before stopping (-1:
			     * all, stopping before the manifest) */
	zr_transfer *t;
};

/* buf grown to len bytes. */
static int reserve(struct push *p, uint64_t len)
{
	uint8_t *nb;

	if (len <= p->cap)
		return 0;
	nb = realloc(p->buf, (size_t)len);
	if (!nb)
		return zr__fail(-ENOMEM, "%s: no memory for a part of %" PRIu64
				" bytes", p->path, len);
	p->buf = nb;
	p->cap = (size_t)len;
	return 0;
}

/* len bytes of local file f at off into p->buf, and their digest. */
static int read_part(struct push *p, struct zr__file *f, const char *name,
		     uint64_t off, uint64_t len, char sha[65])
{
	struct zr__sha256 c;
	int err = reserve(p, len);

	if (!err)
		err = zr__io_read_all(f, p->buf, (size_t)len, off, p->path,
				      name);
	if (err)
		return err;
	zr__sha256_init(&c);
	zr__sha256_update(&c, p->buf, (size_t)len);
	zr__sha256_hex(&c, sha);
	return 0;
}

/* The part object of digest sha, parsed. */
static int part_obj(const struct push *p, const char *sha,
		    struct zr__s3_obj *o)
{
	char name[80];

	snprintf(name, sizeof(name), ZR__PARTS_DIR "%s", sha);
	return zr__s3_obj_child(&p->conf, p->url, name, o);
}

/* A message for a request on o that failed with err (its cause kept). */
static int request_failed(const struct zr__s3_obj *o, const char *what,
			  int err)
{
	return zr__fail(err, "%s: %s: %s", o->url, what, zr_strerror(err));
}

/* PUT of len bytes of buf at o: its ETag into etag. */
static int put(const struct push *p, const struct zr__s3_obj *o,
	       const void *buf, size_t len, char etag[128])
{
	struct zr__s3_req r = { .conf = &p->conf, .url = o->url,
				.http = o->http, .body = buf, .body_len = len };
	struct zr__s3_resp resp;
	int err = zr__s3_send(&r, &resp);

	if (!err && (resp.status < 200 || resp.status > 299))
		err = resp.status == 404 ? zr__s3_missing(&p->conf, o)
					 : zr__s3_status_err(&r, &resp);
	if (err)
		return request_failed(o, "PUT", err);
	memcpy(etag, resp.etag, 128);
	return 0;
}

/* Tests (tests/rgw/test_s3_push.py) stop a push after N parts with
 * ZR_TEST_PUSH_PAUSE_AFTER=N (or, =manifest, with every part up and the
 * manifest not written) to kill it there: it says so on stderr and waits
 * for the signal, so the test needs no timing. */
static void maybe_pause(struct push *p, int before_manifest)
{
	if (before_manifest ? p->pause_after != -1
			    : p->pause_after <= 0 ||
			      (long)p->t->parts_sent != p->pause_after)
		return;
	fprintf(stderr, "zrecord: push stopped for a test after %" PRIu64
		" parts\n", p->t->parts_sent);
	for (;;)
		pause();
}

/* ZR_TEST_PUSH_PAUSE_AFTER's stop (maybe_pause): 0 for none. */
static long pause_point(void)
{
	const char *v = getenv("ZR_TEST_PUSH_PAUSE_AFTER");

	if (!v)
		return 0;
	return strcmp(v, "manifest") ? strtol(v, NULL, 10) : -1;
}

/* Part pt (its bytes in p->buf) up: skipped if a HEAD finds it with its
 * size (a killed push's), else PUT; its ETag into pt. */
static int upload_part(struct push *p, struct zr__part *pt)
{
	struct zr__s3_resp resp;
	struct zr__s3_obj o;
	int err = part_obj(p, pt->sha, &o);

	if (err)
		return err;
	err = zr__s3_head(&p->conf, &o, &resp);
	if (!err && resp.length == pt->len && resp.etag[0]) {
		memcpy(pt->etag, resp.etag, sizeof(pt->etag));
	} else if (!err || err == -ENOENT) {
		err = put(p, &o, p->buf, (size_t)pt->len, pt->etag);
		if (!err) {
			p->t->parts_sent++;
			p->t->bytes_sent += pt->len;
			maybe_pause(p, 0);
		}
	} else {
		err = request_failed(&o, "HEAD", err);
	}
	zr__s3_obj_free(&o);
	return err;
}

/* The parts of the published version's entry old that the local file
 * (size bytes) still holds, kept into f: where they end. */
static int keep_old(struct push *p, struct zr__file *fd,
		    const struct zr__mfile *old,
		    struct zr__mfile *f, uint64_t size, uint64_t *end)
{
	*end = 0;
	for (size_t i = 0; old && i < old->n; i++) {
		const struct zr__part *o = &old->parts[i];
		char sha[65];
		int err;

		if (o->off + o->len > size)
			break;
		err = read_part(p, fd, f->name, o->off, o->len, sha);
		if (err)
			return err;
		if (strcmp(sha, o->sha))
			break;
		err = zr__mfile_add(f, o);
		if (err)
			return zr__fail(err, "%s: no memory", p->path);
		*end = o->off + o->len;
	}
	return 0;
}

/* Local file fd (size bytes) as the parts of entry f: the old version's
 * that still hold, then new ones of at most part_size. */
static int plan_file(struct push *p, struct zr__file *fd, uint64_t size,
		     struct zr__mfile *f)
{
	uint64_t off;
	int err = keep_old(p, fd, zr__manifest_file(&p->old, f->name), f,
			   size, &off);

	while (!err && off < size) {
		struct zr__part pt = { .off = off };

		pt.len = size - off < p->part_size ? size - off : p->part_size;
		err = read_part(p, fd, f->name, off, pt.len, pt.sha);
		if (!err)
			err = upload_part(p, &pt);
		if (!err && zr__mfile_add(f, &pt))
			err = zr__fail(-ENOMEM, "%s: no memory", p->path);
		off += pt.len;
	}
	f->size = size;
	p->t->parts += f->n;
	p->t->bytes += size;
	return err;
}

/* Local file name of the store into the new manifest (if it exists:
 * dict.zr and content.zr may not). */
static int push_file(struct push *p, const char *name)
{
	struct zr__mfile *f = &p->new.files[p->new.nfiles];
	char path[4096];
	struct zr__file *fd = NULL;
	uint64_t size;
	int err;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", p->path, name) >=
	    sizeof(path))
		return zr__fail(-ENAMETOOLONG, "%s: path too long", p->path);
	err = zr__vfs_posix.open(&zr__vfs_posix, path, 0, 0, &fd);
	if (err == -ENOENT)
		return 0;
	if (!err)
		err = fd->io->size(fd, 0, &size);
	if (err)
		err = zr__fail(err, "%s: %s", path, strerror(-err));
	else {
		snprintf(f->name, sizeof(f->name), "%s", name);
		p->new.nfiles++;
		err = plan_file(p, fd, size, f);
	}
	zr__io_close(fd);
	return err;
}

/* 0 if the bucket of url's object o is there, else -errno with a
 * message (a missing bucket: create it first). */
static int bucket_there(const struct push *p, const struct zr__s3_obj *o)
{
	struct zr__s3_obj b = *o;
	struct zr__s3_resp resp;
	int err;

	b.http = o->http_bucket; /* a HEAD of the bucket itself */
	err = zr__s3_head(&p->conf, &b, &resp);
	if (err == -ENOENT)
		return zr__fail(err, "%s: no bucket \"%s\" to push to: create "
				"it first, or name another", p->url, o->bucket);
	if (err)
		return request_failed(o, "HEAD of the bucket", err);
	return 0;
}

/* The published version into p->old, if there is one; fails for a
 * missing bucket or refused credentials before anything is written. */
static int read_old(struct push *p)
{
	struct zr__s3_obj o;
	int err = zr__manifest_fetch(&p->conf, p->url, &p->old);

	if (err == -ENOENT) {
		err = zr__s3_obj_child(&p->conf, p->url, ZR__MANIFEST_KEY, &o);
		if (!err)
			err = bucket_there(p, &o);
		zr__s3_obj_free(&o);
		return err;
	}
	if (err)
		return zr__fail(err, "%s/" ZR__MANIFEST_KEY ": %s", p->url,
				zr_strerror(err));
	return 0;
}

/* The new manifest up, unless it is the published version already. */
static int publish(struct push *p)
{
	struct zr__s3_obj o;
	char etag[128];
	char *text = zr__manifest_format(&p->new);
	int err;

	if (!text)
		return zr__fail(-ENOMEM, "%s: no memory", p->path);
	snprintf(p->t->version, sizeof(p->t->version), "%s",
		 p->new.version);
	if (p->old.nfiles && !strcmp(p->old.version, p->new.version)) {
		free(text); /* the same bytes: nothing to publish */
		return 0;
	}
	maybe_pause(p, 1);
	err = zr__s3_obj_child(&p->conf, p->url, ZR__MANIFEST_KEY, &o);
	if (!err)
		err = put(p, &o, text, strlen(text), etag);
	zr__s3_obj_free(&o);
	free(text);
	if (!err)
		p->t->published = 1;
	return err;
}

/* url checked: "s3://BUCKET/KEY" with a key; a copy without the
 * trailing '/' into *out. */
static int check_url(const char *url, char **out)
{
	const char *b = url + strlen("s3://"), *slash;
	size_t n;

	if (strncmp(url, "s3://", 5) || !(slash = strchr(b, '/')) ||
	    slash == b || !slash[1] || slash[1] == '/')
		return zr__fail(-EINVAL, "%s: not a destination: give "
				"s3://BUCKET/PREFIX/NAME", url);
	n = strlen(url);
	while (url[n - 1] == '/')
		n--;
	*out = strndup(url, n);
	return *out ? 0 : zr__fail(-ENOMEM, "%s: no memory", url);
}

/* Every store file up, then the manifest. */
static int push_all(struct push *p)
{
	int err = read_old(p);

	for (size_t i = 0; !err && i < ZR__MANIFEST_FILES; i++)
		err = push_file(p, store_files[i]);
	return err ? err : publish(p);
}

/* The local store opened read-only: a store, and kept from writers (a
 * reader's locks) while it is read. */
static int open_source(const char *path, zr_store **s)
{
	const struct zr__vfs *vfs;
	int err = zr__vfs_find(path, &vfs);

	if (!err && vfs != &zr__vfs_posix)
		return zr__fail(-EINVAL, "%s: push takes a local store "
				"folder; to copy between buckets, pull then "
				"push", path);
	err = err ? err : zr_store_open(path, ZR_OPEN_RDONLY, s);
	if (err == ZR_E_NOSTORE)
		return zr__fail(err, "%s: not a store (no meta.zr): push "
				"takes a folder zrecord create made", path);
	return err;
}

/* err as the call's result after s is closed (zr_store_close clears the
 * thread's message). */
static int close_keeping(zr_store *s, int err)
{
	zr__error e = { 0 };

	if (!s)
		return err;
	if (err)
		zr__error_capture(&e, err);
	zr_store_close(s);
	return err ? zr__error_replay(&e) : 0;
}

int zr_store_push(const char *path, const char *url, uint64_t part_size,
		  zr_transfer *out)
{
	struct push p = { .path = path, .t = out };
	zr_store *s = NULL;
	int err;

	zr__clear();
	if (!path || !url || !out)
		return zr__fail(-EINVAL, "zr_store_push: bad arguments");
	memset(out, 0, sizeof(*out));
	p.part_size = part_size ? part_size : ZR_PUSH_PART_SIZE;
	if (p.part_size < ZR_PUSH_PART_MIN || p.part_size > ZR_PUSH_PART_MAX)
		return zr__fail(-EINVAL, "part size %" PRIu64 ": from %u "
				"to %llu bytes", p.part_size,
				ZR_PUSH_PART_MIN,
				(unsigned long long)ZR_PUSH_PART_MAX);
	p.pause_after = pause_point();
	err = check_url(url, (char **)&p.url);
	if (!err)
		err = open_source(path, &s);
	if (!err && (err = zr__s3_conf_load(&p.conf)))
		err = zr__fail(err, "%s: %s", url, zr_strerror(err));
	if (!err)
		err = push_all(&p);
	zr__manifest_free(&p.old);
	zr__manifest_free(&p.new);
	zr__s3_conf_free(&p.conf);
	free(p.buf);
	free((char *)p.url);
	return close_keeping(s, err);
}
