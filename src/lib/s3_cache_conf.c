/*
 * s3_cache_conf.c - which host cache the process uses (zr_cache_set,
 * zr_cache_status in zrecord.h): its folder made and its count mapped, the
 * default found (ZR_CACHE, ZR_CACHE_SIZE, the XDG cache folder, or
 * /var/cache for root), and the cache held by each read so that a change
 * frees the old one only once no read uses it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "s3_cache.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct zr__cache *cur; /* NULL: no cache */
static int chosen;	      /* zr_cache_set ran (or the default did) */
static char why_off[256];     /* the default's failure */
static uint64_t fetched, hits; /* this process's bytes (atomic) */

static void cache_free(struct zr__cache *c)
{
	if (!c)
		return;
	if (c->used)
		munmap(c->used, sizeof(*c->used));
	if (c->fd >= 0)
		close(c->fd);
	free(c->dir);
	free(c);
}

/* mkdir -p of path (a copy is cut at each '/'). */
static int make_dirs(const char *path)
{
	char p[PATH_MAX];

	if (snprintf(p, sizeof(p), "%s", path) >= (int)sizeof(p))
		return -ENAMETOOLONG;
	for (char *s = p + 1; ; s++) {
		if (*s && *s != '/')
			continue;
		char c = *s;

		*s = '\0';
		if (mkdir(p, 0755) && errno != EEXIST)
			return -errno;
		if (!(*s = c))
			break;
	}
	return access(path, W_OK | X_OK) ? -errno : 0;
}

/* The count file dir/usage mapped; 1 if it was new (nothing counted). */
static int map_usage(struct zr__cache *c)
{
	char p[PATH_MAX];
	struct stat st;
	int fresh;

	snprintf(p, sizeof(p), "%s/usage", c->dir);
	c->fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (c->fd < 0 || fstat(c->fd, &st))
		return -errno;
	fresh = st.st_size < (off_t)sizeof(*c->used);
	if (fresh && ftruncate(c->fd, sizeof(*c->used)))
		return -errno;
	c->used = mmap(NULL, sizeof(*c->used), PROT_READ | PROT_WRITE,
		       MAP_SHARED, c->fd, 0);
	if (c->used == MAP_FAILED) {
		c->used = NULL;
		return -errno;
	}
	return fresh;
}

/* The cache in folder dir ("DIR/v1": another layout gets another name). */
static int cache_open(const char *dir, uint64_t max, struct zr__cache **out,
		      char *msg, size_t cap)
{
	struct zr__cache *c = calloc(1, sizeof(*c));
	int err;

	if (!c)
		return -ENOMEM;
	c->fd = -1;
	c->max = max;
	if (asprintf(&c->dir, "%s/v1", dir) < 0) {
		c->dir = NULL;
		err = -ENOMEM;
	} else {
		err = make_dirs(c->dir);
	}
	if (!err) { /* absolute: a daemon changes its working folder */
		char *abs = realpath(c->dir, NULL);

		if (abs) {
			free(c->dir);
			c->dir = abs;
		} else {
			err = -errno;
		}
	}
	if (!err)
		err = map_usage(c);
	if (err < 0) {
		cache_free(c);
		snprintf(msg, cap, "cache %.120s: %s (another folder: "
			 "--cache DIR, -o cache=DIR or ZR_CACHE; none: off)",
			 dir, strerror(-err));
		return err;
	}
	if (err)
		zr__cache_walk(c, 0);
	*out = c;
	return 0;
}

/* The default folder into p: ZR_CACHE, else root's /var/cache/zrecord,
 * else $XDG_CACHE_HOME/zrecord or ~/.cache/zrecord. */
static int default_dir(char *p, size_t cap, char *msg, size_t mcap)
{
	const char *env = getenv("ZR_CACHE"), *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	int n;

	if (env && *env)
		n = snprintf(p, cap, "%s", env);
	else if (geteuid() == 0)
		n = snprintf(p, cap, "/var/cache/zrecord");
	else if (xdg && xdg[0] == '/')
		n = snprintf(p, cap, "%s/zrecord", xdg);
	else if (home && home[0] == '/')
		n = snprintf(p, cap, "%s/.cache/zrecord", home);
	else
		n = -1;
	if (n < 0)
		snprintf(msg, mcap, "no cache folder: HOME is not set (give "
			 "one: --cache DIR, -o cache=DIR or ZR_CACHE)");
	else if (n >= (int)cap)
		snprintf(msg, mcap, "cache folder %.64s...: name too long", p);
	return n < 0 ? -ENOENT : n >= (int)cap ? -ENAMETOOLONG : 0;
}

/* ZR_CACHE_SIZE: bytes, with K, M or G; ZR_CACHE_SIZE_DEFAULT if unset. */
static int default_size(uint64_t *out, char *msg, size_t cap)
{
	const char *s = getenv("ZR_CACHE_SIZE");
	unsigned shift = 0;
	char *end;
	unsigned long long v;

	*out = ZR_CACHE_SIZE_DEFAULT;
	if (!s || !*s)
		return 0;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end == 'K' || *end == 'M' || *end == 'G')
		shift = *end == 'K' ? 10 : *end == 'M' ? 20 : 30;
	if (*s < '0' || *s > '9' || errno || end[shift ? 1 : 0] ||
	    v > (UINT64_MAX >> shift) || (v << shift) < ZR_CACHE_SIZE_MIN) {
		snprintf(msg, cap, "ZR_CACHE_SIZE=%.64s: a byte count of at "
			 "least %u, with an optional K, M or G (64G)", s,
			 ZR_CACHE_SIZE_MIN);
		return -EINVAL;
	}
	*out = (uint64_t)v << shift;
	return 0;
}

/* The cache dir/max names (NULL, 0: the defaults; "off": none) into
 * *c; -errno with msg saying why. */
static int choose(const char *dir, uint64_t max, struct zr__cache **c,
		  char *msg, size_t cap)
{
	char def[PATH_MAX];
	int err = 0;

	*c = NULL;
	if (!dir)
		err = default_dir(def, sizeof(def), msg, cap);
	if (!err && !max)
		err = default_size(&max, msg, cap);
	if (!err && max < ZR_CACHE_SIZE_MIN) {
		snprintf(msg, cap, "cache size %llu: at least %u bytes",
			 (unsigned long long)max, ZR_CACHE_SIZE_MIN);
		err = -EINVAL;
	}
	dir = dir ? dir : def;
	if (err || !strcmp(dir, "off"))
		return err;
	if (!*dir) {
		snprintf(msg, cap, "an empty cache folder (none: off)");
		return -EINVAL;
	}
	return cache_open(dir, max, c, msg, cap);
}

/* The cache chosen from now on; the failure's message in why_off. */
static int set(const char *dir, uint64_t max, char msg[sizeof(why_off)])
{
	struct zr__cache *c, *old;
	int err;

	msg[0] = '\0';
	err = choose(dir, max, &c, msg, sizeof(why_off));
	pthread_mutex_lock(&mu);
	old = cur;
	cur = c;
	__atomic_store_n(&chosen, 1, __ATOMIC_RELEASE);
	memcpy(why_off, msg, sizeof(why_off));
	if (old && !old->refs)
		cache_free(old);
	else if (old)
		old->retired = 1; /* freed by its last holder */
	pthread_mutex_unlock(&mu);
	return err;
}

ZR_API int zr_cache_set(const char *dir, uint64_t max_bytes)
{
	char msg[sizeof(why_off)];
	int err;

	zr__clear();
	err = set(dir, max_bytes, msg);
	return err ? zr__fail(err, "%s", msg) : 0;
}

ZR_API int zr_cache_status(zr_cache_info *out)
{
	zr__clear();
	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&mu);
	if (cur) {
		snprintf(out->dir, sizeof(out->dir), "%s", cur->dir);
		out->max_bytes = cur->max;
		out->used_bytes = __atomic_load_n(cur->used, __ATOMIC_RELAXED);
	}
	snprintf(out->why_off, sizeof(out->why_off), "%s", why_off);
	pthread_mutex_unlock(&mu);
	out->fetched_bytes = __atomic_load_n(&fetched, __ATOMIC_RELAXED);
	out->hit_bytes = __atomic_load_n(&hits, __ATOMIC_RELAXED);
	return 0;
}

struct zr__cache *zr__cache_hold(void)
{
	struct zr__cache *c;

	/* The default, at the first read of a process that chose none;
	 * a failure leaves it off (zr_cache_status says why).  Two first
	 * readers may both set it: the same cache twice. */
	if (!__atomic_load_n(&chosen, __ATOMIC_ACQUIRE)) {
		char msg[sizeof(why_off)];

		set(NULL, 0, msg);
	}
	pthread_mutex_lock(&mu);
	c = cur;
	if (c)
		c->refs++;
	pthread_mutex_unlock(&mu);
	return c;
}

int zr__cache_on(void)
{
	struct zr__cache *c = zr__cache_hold();

	if (c)
		zr__cache_drop(c);
	return c != NULL;
}

void zr__cache_drop(struct zr__cache *c)
{
	int last;

	pthread_mutex_lock(&mu);
	last = --c->refs == 0 && c->retired;
	pthread_mutex_unlock(&mu);
	if (last)
		cache_free(c);
}

void zr__cache_count(int hit, uint64_t bytes)
{
	__atomic_add_fetch(hit ? &hits : &fetched, bytes, __ATOMIC_RELAXED);
}
