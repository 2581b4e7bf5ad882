/*
 * vfs_s3.c - the S3 backend, read-only (vfs.h).  A store at
 * s3://BUCKET/PREFIX is one of two layouts:
 *  - published (zrecord push, s3_manifest.h): PREFIX/manifest lists each
 *    file's immutable part objects PREFIX/parts/SHA256; a file is read by
 *    mapping its offsets onto them (a read stops at a part's end; the
 *    engine asks for the rest).  The manifest is fetched when meta.zr is
 *    opened, and the store's other files are opened from that same
 *    manifest (pinned per thread: a store opens its files one after the
 *    other on the caller's thread), so a push that publishes meanwhile
 *    never mixes two versions: an open store keeps reading the parts of
 *    the version it opened, which push never deletes;
 *  - plain (the files uploaded as they are, no manifest): the objects
 *    PREFIX/meta.zr, PREFIX/data.zr and, if there, PREFIX/dict.zr and
 *    PREFIX/content.zr.
 * An open is a HEAD (the size and the ETag) or the manifest's entry, a
 * read a ranged GET that must still match that ETag (If-Match): an object
 * replaced after the open fails the read (ESTALE) instead of mixing two
 * versions' bytes.  Reads go through the host cache (s3_cache.h) but
 * for a file opened ZR__VFS_DIRECT.  A published file is a client's
 * cached view (ZR__FILE_CACHED): asked its size fresh (a follower taking
 * up growth, store_follow.c), it fetches the manifest again, at most
 * every RECHECK_NS, and takes up a newer version that extends the one it
 * holds (zr__s3_newer, s3_follow.c), as an NFS client's cache takes up a
 * file that grew; one that does not is ESTALE.  No write, map or lock:
 * the engine reads meta.zr's table into memory and records with read, as
 * over zr__vfs_posix_readonly.
 */
#include <errno.h>
#include <pthread.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "s3.h"
#include "s3_cache.h"
#include "s3_manifest.h"
#include "vfs.h"

struct s3_file {
	struct zr__file f; /* first: the engine's handle */
	struct zr__s3_conf conf;
	struct zr__s3_obj obj;
	uint64_t size;
	int direct;         /* ZR__VFS_DIRECT: past the host cache */
	char etag[128];     /* plain layout: the object's */
	char key[41];       /* and its host cache key (struct ver) */
	char *prefix;       /* published layout: "s3://BUCKET/PREFIX" */
	/* The version held: its parts and size, replaced whole under lock
	 * when a fresh size takes up a newer one (reads copy a part out). */
	pthread_mutex_t lock;
	struct zr__mfile mf;
	char (*pkey)[41];   /* each part's key, made at its first read */
	char version[65];
	uint64_t checked_ns; /* when the manifest was last fetched */
	struct zr__cmaps maps; /* the cache's blocks its views point into */
};

/* The manifest the calling thread's last meta.zr open fetched, and its
 * prefix (absent: that prefix had none).  A thread-specific value rather
 * than a thread-local: the library's thread-locals live in the static TLS
 * block (sigbus.c's are initial-exec), which a dlopen'ed library must keep
 * small, and the key's destructor frees it when the thread ends. */
struct pin {
	char *prefix;
	int absent;
	struct zr__manifest m;
};

static pthread_once_t pin_once = PTHREAD_ONCE_INIT;
static pthread_key_t pin_key;
static int pin_key_err;

static void pin_free(void *v)
{
	struct pin *p = v;

	free(p->prefix);
	zr__manifest_free(&p->m);
	free(p);
}

static void pin_key_make(void)
{
	pin_key_err = pthread_key_create(&pin_key, pin_free);
}

/* The calling thread's pin (made empty at first), NULL without memory. */
static struct pin *thread_pin(void)
{
	struct pin *p;

	pthread_once(&pin_once, pin_key_make);
	if (pin_key_err)
		return NULL;
	p = pthread_getspecific(pin_key);
	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (p && pthread_setspecific(pin_key, p)) {
		free(p);
		p = NULL;
	}
	return p;
}

static struct s3_file *s3_of(struct zr__file *f)
{
	return (struct s3_file *)f;
}

static void s3_free(struct s3_file *s)
{
	zr__cmaps_free(&s->maps);
	pthread_mutex_destroy(&s->lock);
	zr__s3_conf_free(&s->conf);
	zr__s3_obj_free(&s->obj);
	free(s->prefix);
	zr__mfile_free(&s->mf);
	free(s->pkey);
	free(s);
}

static int s3_close(struct zr__file *f)
{
	s3_free(s3_of(f));
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A fresh size asks the manifest again at most this often per file. */
#define RECHECK_NS 100000000u

/* The size of the version held. */
static uint64_t held_size(struct s3_file *s)
{
	uint64_t size;

	pthread_mutex_lock(&s->lock);
	size = s->size;
	pthread_mutex_unlock(&s->lock);
	return size;
}

/* A newer version of s's published file, if the manifest names one that
 * extends it: taken up whole (only the engine's one refresh at a time
 * asks, so s->mf changes on this thread alone). */
static int take_up(struct s3_file *s)
{
	struct zr__mfile next = { 0 }, held;
	char version[sizeof(s->version)], (*pkey)[41], (*held_key)[41];
	int got;

	s->checked_ns = now_ns();
	got = zr__s3_newer(&s->conf, s->prefix, &s->mf, s->version, &next,
			   version);
	if (got <= 0)
		return got;
	pkey = calloc(next.n ? next.n : 1, sizeof(*pkey));
	if (!pkey) {
		zr__mfile_free(&next);
		return -ENOMEM;
	}
	pthread_mutex_lock(&s->lock);
	held = s->mf;
	held_key = s->pkey;
	s->mf = next;
	s->pkey = pkey;
	s->size = s->mf.size;
	memcpy(s->version, version, sizeof(s->version));
	pthread_mutex_unlock(&s->lock);
	zr__mfile_free(&held); /* reads copied their part out */
	free(held_key);
	return 0;
}

/* A plain object is pinned to its ETag: its size is the one the open
 * saw.  A published file asked fresh takes up a newer version first. */
static int s3_size(struct zr__file *f, int fresh, uint64_t *out)
{
	struct s3_file *s = s3_of(f);
	int err = 0;

	if (fresh && s->prefix && now_ns() - s->checked_ns >= RECHECK_NS)
		err = take_up(s);
	*out = held_size(s);
	return err;
}

/* cap bytes at offset off of object o (pinned to etag) into buf. */
static ssize_t ranged_get(const struct s3_file *s, const struct zr__s3_obj *o,
			  const char *etag, uint64_t off, void *buf,
			  size_t cap)
{
	struct zr__s3_req r = {
		.conf = &s->conf, .url = o->url, .http = o->http,
		.ranged = 1, .off = off, .buf = buf, .cap = cap,
		.if_match = etag,
	};
	struct zr__s3_resp resp;
	int err = zr__s3_send(&r, &resp);

	if (err)
		return err;
	if (resp.status == 200 && off) { /* the whole object, not the range */
		zr__cause("%s: the server ignored the Range of a GET", o->url);
		return -EIO;
	}
	if (resp.status != 200 && resp.status != 206)
		return zr__s3_status_err(&r, &resp);
	return (ssize_t)resp.got;
}

/* What the host cache fetches a miss with: ranged_get's arguments. */
struct get_args {
	const struct s3_file *s;
	const struct zr__s3_obj *o;
	const char *etag;
};

static ssize_t get_cb(const void *ctx, uint64_t off, void *buf, size_t len)
{
	const struct get_args *g = ctx;

	return ranged_get(g->s, g->o, g->etag, off, buf, len);
}

/* An object's version as the reads take it: its ETag (the GETs are
 * pinned to it), its size, and its key in the host cache, made once per
 * file or part: the SHA-256 of the URL, the ETag and the size ("" past
 * the cache: a direct file, or a name too long to key).  Not of the
 * endpoint: one service reached another way (a relay, another port, a
 * proxy) keeps its blocks, and an ETag is a digest of the object's bytes
 * (of its parts' for a multipart upload) or, where a service makes it
 * otherwise, unique to that version. */
struct ver {
	const char *etag;
	uint64_t size;
	char key[41];
};

static void key_of(const struct s3_file *s, const char *url,
		   struct ver *v)
{
	char id[2048];
	int n = snprintf(id, sizeof(id), "%s %s %llu", url, v->etag,
			 (unsigned long long)v->size);

	v->key[0] = '\0';
	if (!s->direct && n > 0 && (size_t)n < sizeof(id))
		zr__cache_key(id, v->key);
}

/* o's version v as the cache reaches it: -1 if it must not. */
static int cobj_of(const struct s3_file *s, const struct zr__s3_obj *o,
		   const struct ver *v, struct get_args *g,
		   struct zr__cobj *c)
{
	*g = (struct get_args){ s, o, v->etag };
	*c = (struct zr__cobj){ .size = v->size, .get = get_cb, .ctx = g };
	memcpy(c->key, v->key, sizeof(c->key));
	return v->key[0] ? 0 : -1;
}

static ssize_t obj_read(const struct s3_file *s, const struct zr__s3_obj *o,
			const struct ver *v, void *buf, size_t len,
			uint64_t off)
{
	struct get_args g;
	struct zr__cobj c;

	if (cobj_of(s, o, v, &g, &c))
		return ranged_get(s, o, v->etag, off, buf, len);
	return zr__cache_read(&c, buf, len, off);
}

static int obj_warm(const struct s3_file *s, const struct zr__s3_obj *o,
		    const struct ver *v, uint64_t off, uint64_t len)
{
	struct get_args g;
	struct zr__cobj c;

	if (cobj_of(s, o, v, &g, &c))
		return -EOPNOTSUPP;
	return zr__cache_warm(&c, off, len);
}

/* A view fetches nothing: the object itself is not needed. */
static int obj_view(struct s3_file *s, const struct ver *v, uint64_t off,
		    size_t len, const void **p)
{
	struct get_args g;
	struct zr__cobj c;

	if (cobj_of(s, NULL, v, &g, &c))
		return -EOPNOTSUPP;
	return zr__cache_view(&c, &s->maps, off, len, p);
}

/* The part of s's published file that holds off, copied (a newer version
 * may replace s->mf meanwhile), and its version, keyed at its first use
 * (s->pkey[i]). */
static void part_find(struct s3_file *s, uint64_t off, struct zr__part *p,
		      struct ver *v)
{
	size_t i;

	pthread_mutex_lock(&s->lock);
	i = zr__mfile_find(&s->mf, off);
	*p = s->mf.parts[i];
	*v = (struct ver){ p->etag, p->len, "" };
	if (!s->pkey[i][0] && !s->direct) {
		char url[2048];

		snprintf(url, sizeof(url), "%s/" ZR__PARTS_DIR "%.64s",
			 s->prefix, p->sha);
		key_of(s, url, v);
		memcpy(s->pkey[i], v->key, sizeof(v->key));
	}
	memcpy(v->key, s->pkey[i], sizeof(v->key));
	pthread_mutex_unlock(&s->lock);
}

/* part_find's part and the object that holds it. */
static int part_at(struct s3_file *s, uint64_t off, struct zr__part *p,
		   struct ver *v, struct zr__s3_obj *o)
{
	char name[80];

	part_find(s, off, p, v);
	snprintf(name, sizeof(name), ZR__PARTS_DIR "%.64s", p->sha);
	return zr__s3_obj_child(&s->conf, s->prefix, name, o);
}

/* A published file's bytes from the one part that holds off. */
static ssize_t part_read(struct s3_file *s, void *buf, size_t len,
			 uint64_t off)
{
	struct zr__part p;
	struct ver v;
	struct zr__s3_obj o;
	uint64_t in;
	ssize_t n;
	int err = part_at(s, off, &p, &v, &o);

	if (err)
		return err;
	in = off - p.off;
	n = obj_read(s, &o, &v, buf,
		     len < p.len - in ? len : (size_t)(p.len - in), in);
	zr__s3_obj_free(&o);
	return n;
}

/* A published file's [off, off + len) warmed part by part. */
static int parts_warm(struct s3_file *s, uint64_t off, uint64_t len)
{
	int err = 0;

	while (len && !err) {
		struct zr__part p;
		struct ver v;
		struct zr__s3_obj o;
		uint64_t in, n;

		err = part_at(s, off, &p, &v, &o);
		if (err)
			break;
		in = off - p.off;
		n = len < p.len - in ? len : p.len - in;
		err = obj_warm(s, &o, &v, in, n);
		zr__s3_obj_free(&o);
		off += n;
		len -= n;
	}
	return err;
}

/* The plain layout's one version. */
static struct ver plain_ver(const struct s3_file *s, uint64_t size)
{
	struct ver v = { s->etag, size, "" };

	memcpy(v.key, s->key, sizeof(v.key));
	return v;
}

static int s3_warm(struct zr__file *f, uint64_t off, uint64_t len)
{
	struct s3_file *s = s3_of(f);
	uint64_t size = held_size(s);
	struct ver v;

	if (off >= size || !len)
		return 0;
	if (len > size - off)
		len = size - off;
	if (s->prefix)
		return parts_warm(s, off, len);
	v = plain_ver(s, size);
	return obj_warm(s, &s->obj, &v, off, len);
}

/* A view lies in one part (one object's block). */
static int s3_view(struct zr__file *f, uint64_t off, size_t len,
		   const void **p)
{
	struct s3_file *s = s3_of(f);
	uint64_t size = held_size(s);
	struct zr__part part;
	struct ver v;

	if (off > size || len > size - off)
		return -ENOENT;
	if (!s->prefix) {
		v = plain_ver(s, size);
		return obj_view(s, &v, off, len, p);
	}
	part_find(s, off, &part, &v);
	if (off - part.off + len > part.len)
		return -ENOENT;
	return obj_view(s, &v, off - part.off, len, p);
}

static ssize_t s3_read(struct zr__file *f, void *buf, size_t len,
		       uint64_t off)
{
	struct s3_file *s = s3_of(f);
	uint64_t size = held_size(s);
	struct ver v;

	if (off >= size || !len)
		return 0;
	if (len > size - off)
		len = (size_t)(size - off);
	if (s->prefix)
		return part_read(s, buf, len, off);
	v = plain_ver(s, size);
	return obj_read(s, &s->obj, &v, buf, len, off);
}

static const struct zr__io s3_io = {
	.close = s3_close,
	.size = s3_size,
	.read = s3_read,
	.warm = s3_warm,
	.view = s3_view,
};

/* The configuration and path's object taken apart, into s. */
static int s3_setup(struct s3_file *s, const char *path)
{
	int err = zr__s3_conf_load(&s->conf);

	return err ? err : zr__s3_obj_parse(&s->conf, path, &s->obj);
}

/* path's prefix ("s3://b/p" of "s3://b/p/meta.zr") into a new string,
 * its file's name into *name; NULL if path has no key (or no memory). */
static char *split(const char *path, const char **name)
{
	const char *bucket_end = strchr(path + strlen("s3://"), '/');
	const char *slash = strrchr(path, '/');

	if (!bucket_end || slash == bucket_end)
		return NULL; /* "s3://b/NAME": no prefix to hold a manifest */
	*name = slash + 1;
	return strndup(path, (size_t)(slash - path));
}

/* The pinned manifest for prefix: fetched again for meta.zr (a store's
 * first file) or another prefix.  0 with *m (NULL: the prefix has no
 * manifest), else -errno with a cause. */
static int pinned(const struct zr__s3_conf *c, const char *prefix,
		  const char *name, const struct zr__manifest **m)
{
	struct pin *pin = thread_pin();
	int err;

	if (!pin)
		return -ENOMEM;
	if (!pin->prefix || strcmp(pin->prefix, prefix) ||
	    !strcmp(name, "meta.zr")) {
		free(pin->prefix);
		pin->prefix = NULL;
		zr__manifest_free(&pin->m);
		err = zr__manifest_fetch(c, prefix, &pin->m);
		if (err && err != -ENOENT)
			return err == ZR_E_CORRUPT ? -EIO : err;
		pin->absent = err == -ENOENT;
		pin->prefix = strdup(prefix);
		if (!pin->prefix)
			return -ENOMEM;
	}
	*m = pin->absent ? NULL : &pin->m;
	return 0;
}

/* The published layout's open of s's file name from m: -ENOENT if m
 * has no such file. */
static int open_published(struct s3_file *s, char *prefix, const char *name,
			  const struct zr__manifest *m)
{
	const struct zr__mfile *f = zr__manifest_file(m, name);
	int err;

	if (!f)
		return -ENOENT;
	err = zr__mfile_copy(f, &s->mf);
	if (err)
		return err;
	s->pkey = calloc(f->n ? f->n : 1, sizeof(*s->pkey));
	if (!s->pkey)
		return -ENOMEM;
	s->prefix = prefix;
	s->size = f->size;
	memcpy(s->version, m->version, sizeof(s->version));
	s->checked_ns = now_ns();
	s->f.traits = ZR__FILE_CACHED;
	return 0;
}

/* The plain layout's open: a HEAD of the object. */
static int open_plain(struct s3_file *s, const char *name)
{
	struct zr__s3_resp resp;
	struct ver v;
	int err = zr__s3_head(&s->conf, &s->obj, &resp);

	/* A store's optional files may be missing; its meta.zr missing is
	 * no store, and the message says whether the bucket is. */
	if (err == -ENOENT && (!name || !strcmp(name, "meta.zr")))
		return zr__s3_missing(&s->conf, &s->obj);
	if (!err && !resp.etag[0]) {
		zr__cause("%s: no ETag in the answer to a HEAD", s->obj.url);
		err = -EIO;
	}
	if (err)
		return err;
	s->size = resp.length;
	memcpy(s->etag, resp.etag, sizeof(s->etag));
	v = plain_ver(s, s->size);
	key_of(s, s->obj.url, &v);
	memcpy(s->key, v.key, sizeof(s->key));
	return 0;
}

/* s's file, published or plain. */
static int open_either(struct s3_file *s, const char *path)
{
	const struct zr__manifest *m = NULL;
	const char *name = NULL;
	char *prefix = split(path, &name);
	int err = prefix ? pinned(&s->conf, prefix, name, &m) : 0;

	if (!err && m)
		err = open_published(s, prefix, name, m);
	else if (!err)
		err = open_plain(s, name);
	if (err || !s->prefix)
		free(prefix);
	return err;
}

static int s3_open(const struct zr__vfs *v, const char *path,
		   unsigned flags, unsigned mode, struct zr__file **out)
{
	struct s3_file *s;
	int err;

	(void)v;
	(void)mode;
	if (flags & (ZR__VFS_WRITE | ZR__VFS_CREATE | ZR__VFS_TRUNC))
		return -EROFS;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	pthread_mutex_init(&s->lock, NULL);
	zr__cmaps_init(&s->maps);
	s->direct = !!(flags & ZR__VFS_DIRECT);
	err = s3_setup(s, path);
	if (!err)
		err = open_either(s, path);
	if (err) {
		s3_free(s);
		return err;
	}
	s->f.io = &s3_io;
	*out = &s->f;
	return 0;
}

/* Anything at path: an object, or a "folder" (a key under path/). */
static int list_some(const struct s3_file *s)
{
	char *prefix;
	int err;

	if (asprintf(&prefix, "%s/", s->obj.key) < 0)
		return -ENOMEM;
	err = zr__s3_list_any(&s->conf, &s->obj, prefix);
	free(prefix);
	return err;
}

/* A published store's file at path: 0 if the prefix's manifest names
 * it, -ENOENT if there is no manifest or it does not. */
static int probe_published(const struct s3_file *s, const char *path)
{
	struct zr__manifest m;
	const char *name = NULL;
	char *prefix = split(path, &name);
	int err = prefix ? zr__manifest_fetch(&s->conf, prefix, &m) : -ENOENT;

	free(prefix);
	if (err)
		return err == ZR_E_CORRUPT ? -EIO : err;
	err = zr__manifest_file(&m, name) ? 0 : -ENOENT;
	zr__manifest_free(&m);
	return err;
}

static int s3_probe(const struct zr__vfs *v, const char *path)
{
	struct s3_file *s = calloc(1, sizeof(*s));
	struct zr__s3_resp resp;
	int err;

	(void)v;
	if (!s)
		return -ENOMEM;
	pthread_mutex_init(&s->lock, NULL);
	zr__cmaps_init(&s->maps);
	err = s3_setup(s, path);
	if (!err)
		err = zr__s3_head(&s->conf, &s->obj, &resp);
	if (err == -ENOENT)
		err = probe_published(s, path);
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
