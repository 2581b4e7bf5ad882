/*
 * s3_cache_evict.c - the host cache kept within its size.  Every process
 * adds the blocks it keeps to one count, dir/usage (a mapped uint64 that
 * each adds to atomically); one that finds the count past the size takes
 * the eviction (flock of the count's file, without waiting: another
 * process is already at it) and removes the blocks used longest ago
 * (their mtime, which a hit renews) down to 9/10 of the size.  The walk
 * that finds them also sets the count to what is there, so a count a
 * killed process left short is made true, and removes what killed
 * fetchers left: temporary blocks and lock files older than an hour.
 * Removing a block another process is reading is safe: its open file
 * keeps the bytes.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "s3_cache.h"

/* Leftovers of a killed fetcher are removed after this long. */
#define STALE_S 3600

struct blk {
	uint64_t used; /* mtime in ns: blocks kept within a second differ */
	uint64_t len;
	char name[64]; /* "XX/KEY.N" */
};

struct walk {
	struct blk *b;
	size_t n, cap;
	uint64_t total;
};

/* A block's name is KEY.N: one dot; lock files and temporary blocks
 * have more. */
static int is_block(const char *name)
{
	const char *dot = strchr(name, '.');

	return dot && !strchr(dot + 1, '.') && strlen(name) < 60;
}

static int add(struct walk *w, const char *sub, const char *name,
	       const struct stat *st)
{
	if (w->n == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 1024;
		void *p = realloc(w->b, cap * sizeof(*w->b));

		if (!p)
			return -ENOMEM;
		w->b = p;
		w->cap = cap;
	}
	w->b[w->n].used = (uint64_t)st->st_mtim.tv_sec * 1000000000u +
			  (uint64_t)st->st_mtim.tv_nsec;
	w->b[w->n].len = (uint64_t)st->st_size;
	snprintf(w->b[w->n].name, sizeof(w->b[w->n].name), "%.2s/%.60s", sub,
		 name);
	w->n++;
	w->total += (uint64_t)st->st_size;
	return 0;
}

/* One folder dir/sub's blocks into w, its stale leftovers removed. */
static int walk_sub(struct walk *w, int dfd, const char *sub, time_t now)
{
	int fd = openat(dfd, sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;
	int err = 0;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while (!err && (e = readdir(d))) {
		struct stat st;

		if (e->d_name[0] == '.' ||
		    fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode))
			continue;
		if (is_block(e->d_name))
			err = add(w, sub, e->d_name, &st);
		else if (st.st_mtime + STALE_S < now)
			unlinkat(fd, e->d_name, 0);
	}
	closedir(d);
	return err;
}

static int older(const void *a, const void *b)
{
	const struct blk *x = a, *y = b;

	return x->used < y->used ? -1 : x->used > y->used;
}

/* The oldest blocks removed until w->total is at most keep. */
static void trim(struct walk *w, int dfd, uint64_t keep)
{
	qsort(w->b, w->n, sizeof(*w->b), older);
	for (size_t i = 0; i < w->n && w->total > keep; i++)
		if (!unlinkat(dfd, w->b[i].name, 0) || errno == ENOENT)
			w->total -= w->b[i].len;
}

/* One walker per process: the flock below is the file description's,
 * which this process's threads share. */
static pthread_mutex_t walking = PTHREAD_MUTEX_INITIALIZER;

static void walk_all(struct zr__cache *c, int evict)
{
	int dfd = open(c->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct walk w = { 0 };
	time_t now = time(NULL);
	int err = dfd < 0;

	if (err || flock(c->fd, LOCK_EX | LOCK_NB)) {
		if (dfd >= 0)
			close(dfd);
		return; /* another process walks it now */
	}
	for (unsigned i = 0; i < 256 && !err; i++) {
		char sub[3];

		snprintf(sub, sizeof(sub), "%02x", i);
		err = walk_sub(&w, dfd, sub, now);
	}
	if (!err && (evict || w.total > c->max))
		trim(&w, dfd, c->max / 10 * 9);
	if (!err)
		__atomic_store_n(c->used, w.total, __ATOMIC_RELAXED);
	flock(c->fd, LOCK_UN);
	close(dfd);
	free(w.b);
}

void zr__cache_walk(struct zr__cache *c, int evict)
{
	if (pthread_mutex_trylock(&walking))
		return;
	walk_all(c, evict);
	pthread_mutex_unlock(&walking);
}

void zr__cache_added(struct zr__cache *c, uint64_t len)
{
	if (__atomic_add_fetch(c->used, len, __ATOMIC_RELAXED) > c->max)
		zr__cache_walk(c, 1);
}
