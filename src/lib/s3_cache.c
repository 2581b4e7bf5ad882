/*
 * s3_cache.c - the host cache's read path (s3_cache.h).  A block of an
 * object version is one file, dir/XX/KEY.N (KEY the SHA-256 of the
 * version's id, XX its first two digits), written under a temporary name,
 * synced and renamed: a reader on the host sees a whole block or none,
 * after a crash too, and a file of the wrong size is not trusted.  Two
 * fetchers of one block (threads or processes) meet at its lock file
 * dir/XX/KEY.N.lock: one fetches, the other waits and reads what it
 * kept; the lock only saves a second download (a process killed holding
 * it releases it), never decides what bytes are served.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "s3_cache.h"
#include "sha256.h"

/* How long a reader waits for another's fetch of a block before it
 * fetches the block itself: past a GET's own bounds (s3_http.c). */
#define WAIT_MS 40000
/* A hit older than this is marked used again (the eviction's order). */
#define TOUCH_S 60

enum { HIT, MINE, WAIT, NOLOCK };

/* One read's blocks [b0, b0 + nb) of object o. */
struct rd {
	struct zr__cache *c;
	const struct zr__cobj *o;
	const char *key;
	uint8_t *buf;
	uint64_t off, len; /* what the caller asked, clipped to the window */
	uint64_t b0;
	unsigned nb;
	int state[ZR__CACHE_WINDOW];
	int lock[ZR__CACHE_WINDOW];
};

void zr__cache_path(const struct zr__cache *c, const char *key, uint64_t b,
		    const char *tail, char *p, size_t cap)
{
	snprintf(p, cap, "%s/%.2s/%s.%" PRIu64 "%s", c->dir, key, key, b,
		 tail);
}

uint64_t zr__cache_block_len(const struct zr__cobj *o, uint64_t b)
{
	uint64_t end = (b + 1) * ZR__CACHE_BLOCK;

	return (end < o->size ? end : o->size) - b * ZR__CACHE_BLOCK;
}

static void block_path(const struct rd *r, uint64_t b, const char *tail,
		       char *p, size_t cap)
{
	zr__cache_path(r->c, r->key, b, tail, p, cap);
}

static uint64_t block_len(const struct rd *r, uint64_t b)
{
	return zr__cache_block_len(r->o, b);
}

/* The part of block b the caller asked for: its offset in the block,
 * its place in buf and its length. */
static void slice(const struct rd *r, uint64_t b, uint64_t *in,
		  uint64_t *at, uint64_t *n)
{
	uint64_t start = b * ZR__CACHE_BLOCK, end = start + block_len(r, b);
	uint64_t lo = r->off > start ? r->off : start;
	uint64_t hi = r->off + r->len < end ? r->off + r->len : end;

	*in = lo - start;
	*at = lo - r->off;
	*n = hi - lo;
}

/* Block b's asked part from the cache: 1 if it held the block whole. */
static int try_hit(struct rd *r, uint64_t b)
{
	char p[PATH_MAX];
	uint64_t in, at, n;
	struct stat st;
	int fd, ok = 0;

	block_path(r, b, "", p, sizeof(p));
	if (!r->buf) /* a warm: there whole is enough */
		return !stat(p, &st) && (uint64_t)st.st_size == block_len(r, b);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	slice(r, b, &in, &at, &n);
	if (!fstat(fd, &st) && (uint64_t)st.st_size == block_len(r, b) &&
	    pread(fd, r->buf + at, n, (off_t)in) == (ssize_t)n) {
		ok = 1;
		zr__cache_touch(fd, &st);
		zr__cache_count(1, n);
	}
	close(fd);
	return ok;
}

void zr__cache_touch(int fd, const struct stat *st)
{
	if (st->st_mtime + TOUCH_S < time(NULL))
		futimens(fd, NULL);
}

/* dir/XX made if missing (it is removed by nobody, but a user may). */
static int open_in_dir(const struct rd *r, const char *p, int flags)
{
	char d[PATH_MAX];
	int fd = open(p, flags | O_CLOEXEC, 0644);

	if (fd >= 0 || errno != ENOENT)
		return fd;
	snprintf(d, sizeof(d), "%s/%.2s", r->c->dir, r->key);
	if (mkdir(d, 0755) && errno != EEXIST)
		return -1;
	return open(p, flags | O_CLOEXEC, 0644);
}

/* Block b's lock: its fd, -1 if another holds it (after WAIT_MS when
 * wait), -2 if it cannot be had (then the block is fetched unlocked). */
static int lock_take(const struct rd *r, uint64_t b, int wait)
{
	char p[PATH_MAX];
	int fd, ms = 0;

	block_path(r, b, ".lock", p, sizeof(p));
	fd = open_in_dir(r, p, O_RDWR | O_CREAT);
	if (fd < 0)
		return -2;
	while (flock(fd, LOCK_EX | LOCK_NB)) {
		struct timespec ts = { 0, 2000000 };

		if (errno != EWOULDBLOCK || !wait || ms >= WAIT_MS) {
			close(fd);
			return errno == EWOULDBLOCK ? -1 : -2;
		}
		nanosleep(&ts, NULL);
		ms += 2;
	}
	return fd;
}

/* Unlinked before it is released: a waiter then holds a lock nobody
 * else can take, and finds the block kept. */
static void lock_drop(const struct rd *r, uint64_t b, int fd)
{
	char p[PATH_MAX];

	if (fd < 0)
		return;
	block_path(r, b, ".lock", p, sizeof(p));
	unlink(p);
	close(fd);
}

/* Block b's bytes kept: written, synced and renamed into place. */
static void keep(const struct rd *r, uint64_t b, const uint8_t *data)
{
	char tmp[PATH_MAX], p[PATH_MAX], tail[48];
	uint64_t len = block_len(r, b), done = 0;
	int fd;

	snprintf(tail, sizeof(tail), ".%d.tmp", (int)gettid());
	block_path(r, b, tail, tmp, sizeof(tmp));
	fd = open_in_dir(r, tmp, O_WRONLY | O_CREAT | O_TRUNC);
	if (fd < 0)
		return;
	while (done < len) {
		ssize_t n = write(fd, data + done, len - done);

		if (n <= 0)
			break;
		done += (uint64_t)n;
	}
	block_path(r, b, "", p, sizeof(p));
	if (done == len && !fdatasync(fd) && !rename(tmp, p)) {
		close(fd);
		zr__cache_added(r->c, len);
		return;
	}
	close(fd);
	unlink(tmp);
}

/* Blocks [s, e) in one GET: each kept, its asked part copied, its lock
 * dropped. */
static int fetch_run(struct rd *r, unsigned s, unsigned e)
{
	uint64_t from = (r->b0 + s) * ZR__CACHE_BLOCK, len = 0;
	uint8_t *tmp;
	ssize_t got;
	int err = 0;

	for (unsigned i = s; i < e; i++)
		len += block_len(r, r->b0 + i);
	tmp = malloc(len);
	got = tmp ? r->o->get(r->o->ctx, from, tmp, len) : -ENOMEM;
	if (got >= 0 && (uint64_t)got != len)
		got = -EIO; /* a range GET answers whole or fails */
	for (unsigned i = s; i < e; i++) {
		uint64_t b = r->b0 + i, in, at, n;

		if (got >= 0) {
			slice(r, b, &in, &at, &n);
			if (r->buf)
				memcpy(r->buf + at, tmp + (b * ZR__CACHE_BLOCK -
							   from) + in, n);
			keep(r, b, tmp + (b * ZR__CACHE_BLOCK - from));
			zr__cache_count(0, block_len(r, b));
			r->state[i] = HIT;
		}
		lock_drop(r, b, r->lock[i]);
		r->lock[i] = -1;
	}
	free(tmp);
	if (got < 0)
		err = (int)got;
	return err;
}

/* Each block hit, or locked for this read's fetch, or left to wait for
 * another's. */
static void claim(struct rd *r)
{
	for (unsigned i = 0; i < r->nb; i++) {
		uint64_t b = r->b0 + i;

		r->lock[i] = -1;
		if (try_hit(r, b)) {
			r->state[i] = HIT;
			continue;
		}
		r->lock[i] = lock_take(r, b, 0);
		if (r->lock[i] >= 0 && try_hit(r, b)) {
			lock_drop(r, b, r->lock[i]);
			r->lock[i] = -1;
			r->state[i] = HIT;
		} else {
			r->state[i] = r->lock[i] == -1 ? WAIT : MINE;
		}
	}
}

/* The runs of this read's own blocks, one GET each. */
static int fetch_mine(struct rd *r)
{
	int err = 0;

	for (unsigned i = 0; i < r->nb && !err; i++) {
		unsigned e = i;

		if (r->state[i] != MINE)
			continue;
		while (e < r->nb && r->state[e] == MINE)
			e++;
		err = fetch_run(r, i, e);
		i = e - 1;
	}
	return err;
}

/* The blocks another was fetching: read once its lock is free, fetched
 * here if it kept nothing. */
static int fetch_waited(struct rd *r)
{
	int err = 0;

	for (unsigned i = 0; i < r->nb && !err; i++) {
		uint64_t b = r->b0 + i;

		if (r->state[i] != WAIT)
			continue;
		r->lock[i] = lock_take(r, b, 1);
		if (try_hit(r, b)) {
			lock_drop(r, b, r->lock[i]);
			r->lock[i] = -1;
			r->state[i] = HIT;
			continue;
		}
		err = fetch_run(r, i, i + 1);
	}
	return err;
}

void zr__cache_key(const char *id, char key[41])
{
	struct zr__sha256 h;
	char hex[65];

	zr__sha256_init(&h);
	zr__sha256_update(&h, id, strlen(id));
	zr__sha256_hex(&h, hex);
	memcpy(key, hex, 40);
	key[40] = '\0';
}

static ssize_t cached(struct zr__cache *c, const struct zr__cobj *o,
		      void *buf, size_t len, uint64_t off)
{
	struct rd r = { .c = c, .o = o, .key = o->key, .buf = buf,
			.off = off };
	uint64_t last;
	int err;

	r.b0 = off / ZR__CACHE_BLOCK;
	last = (off + len - 1) / ZR__CACHE_BLOCK;
	r.nb = last - r.b0 + 1 < ZR__CACHE_WINDOW ?
	       (unsigned)(last - r.b0 + 1) : ZR__CACHE_WINDOW;
	last = (r.b0 + r.nb) * ZR__CACHE_BLOCK;
	r.len = off + len < last ? len : last - off;
	claim(&r);
	err = fetch_mine(&r);
	if (!err)
		err = fetch_waited(&r);
	for (unsigned i = 0; i < r.nb; i++)
		lock_drop(&r, r.b0 + i, r.lock[i]);
	return err ? err : (ssize_t)r.len;
}

int zr__cache_warm(const struct zr__cobj *o, uint64_t off, uint64_t len)
{
	struct zr__cache *c = zr__cache_hold();
	ssize_t n = 0;

	if (!c)
		return -EOPNOTSUPP;
	while (len && n >= 0) {
		n = cached(c, o, NULL, len, off);
		off += n > 0 ? (uint64_t)n : 0;
		len -= n > 0 ? (uint64_t)n : 0;
	}
	zr__cache_drop(c);
	return n < 0 ? (int)n : 0;
}

ssize_t zr__cache_read(const struct zr__cobj *o, void *buf, size_t len,
		       uint64_t off)
{
	struct zr__cache *c;
	ssize_t n;

	if (!len)
		return 0;
	c = zr__cache_hold();
	if (!c)
		return o->get(o->ctx, off, buf, len);
	n = cached(c, o, buf, len, off);
	zr__cache_drop(c);
	return n;
}
