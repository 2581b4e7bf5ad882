/*
 * s3_cache.h - the host cache of S3 reads (s3_cache.c): fetched bytes kept
 * on local disk, in blocks of one object version, for every process on
 * the host (zr_cache_set in zrecord.h says what a user sees).
 */
#ifndef ZR_S3_CACHE_H
#define ZR_S3_CACHE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "zrecord.h"

/* Bytes per cached block: a read fetches the whole blocks it touches. */
#define ZR__CACHE_BLOCK ZR_CACHE_BLOCK
/* Blocks one zr__cache_read handles (it returns short past them). */
#define ZR__CACHE_WINDOW 8

/* One immutable object version, as the cache reaches it. */
struct zr__cobj {
	/* Names the version: zr__cache_key of an id that names the object
	 * and its ETag (a replaced object has another ETag, so never its
	 * old bytes). */
	char key[41];
	uint64_t size;
	/* len bytes at off of the object into buf: bytes or -errno (with a
	 * cause, error.h). */
	ssize_t (*get)(const void *ctx, uint64_t off, void *buf, size_t len);
	const void *ctx;
};

/* Bytes [off, off + len) of o (off < o->size, len within it) into buf:
 * the blocks the cache holds read from it, the others fetched with one
 * GET per run and kept.  Bytes read (short past ZR__CACHE_WINDOW blocks:
 * the caller asks again) or -errno of the fetch.  The cache's own
 * failures (a full disk, a removed folder) never fail a read: the block
 * is served from the fetch and not kept.  Without a cache (zr_cache_set
 * "off"), every read is a fetch. */
ssize_t zr__cache_read(const struct zr__cobj *o, void *buf, size_t len,
		       uint64_t off);

/* Bytes [off, off + len) of o made local: the blocks the cache lacks
 * fetched and kept, nothing copied.  0, -EOPNOTSUPP without a cache, or
 * -errno of a fetch. */
int zr__cache_warm(const struct zr__cobj *o, uint64_t off, uint64_t len);

/* The blocks of a version a file holds mapped (s3_cache_map.c), each
 * until the file is closed: reads then point into them and copy nothing.
 * A process maps at most ZR__CACHE_MAPS blocks at once, far below the
 * kernel's limit on mappings (vm.max_map_count, 65530 by default). */
#define ZR__CACHE_MAPS 4096
struct zr__cmaps {
	pthread_mutex_t lock;
	struct zr__cmap *slot; /* open addressing, cap a power of two */
	size_t n, cap;
};

void zr__cmaps_init(struct zr__cmaps *m);
void zr__cmaps_free(struct zr__cmaps *m);
/* Where bytes [off, off + len) of o are in a block the cache holds,
 * mapped into m: 0 and *p (valid until m is freed), -ENOENT if the block
 * is not kept or the bytes cross into the next one, -EOPNOTSUPP without a
 * cache, -ENOSPC past ZR__CACHE_MAPS.  The caller then reads them. */
int zr__cache_view(const struct zr__cobj *o, struct zr__cmaps *m,
		   uint64_t off, size_t len, const void **p);

/* The cache in use (s3_cache_conf.c), held while a read uses it so that
 * a zr_cache_set meanwhile frees it only after. */
struct zr__cache {
	char *dir;	  /* ".../v1": blocks in dir/XX/KEY.BLOCK */
	uint64_t max;	  /* bytes */
	int fd;		  /* dir/usage: the count below, and the eviction's
			   * lock (flock) */
	uint64_t *used;	  /* mapped from it: every process's blocks */
	unsigned refs;	  /* reads using it */
	int retired;	  /* replaced: freed by the last read */
};

struct zr__cache *zr__cache_hold(void);
/* 1 if reads go through a cache (the default chosen first if none was). */
int zr__cache_on(void);
void zr__cache_drop(struct zr__cache *c);
/* This process's counters (zr_cache_status). */
void zr__cache_count(int hit, uint64_t bytes);

/* s3_cache.c's naming of blocks: the key of a version's id (40 hex
 * digits, a SHA-256's first), block b's file (tail "" or ".lock"), its
 * length, and a hit's mark of use (its mtime, renewed once a minute). */
void zr__cache_key(const char *id, char key[41]);
void zr__cache_path(const struct zr__cache *c, const char *key, uint64_t b,
		    const char *tail, char *p, size_t cap);
uint64_t zr__cache_block_len(const struct zr__cobj *o, uint64_t b);
void zr__cache_touch(int fd, const struct stat *st);

/* s3_cache_evict.c: a new block of len bytes counted, and the oldest
 * blocks removed when the cache passed its size; the count made true by
 * a walk of the folder (at a cache's first use, and by each eviction). */
void zr__cache_added(struct zr__cache *c, uint64_t len);
void zr__cache_walk(struct zr__cache *c, int evict);

#endif
