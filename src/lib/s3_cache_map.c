/*
 * s3_cache_map.c - blocks of the host cache mapped for a file's reads
 * (zr__cache_view, s3_cache.h).  A gather from a warm cache would
 * otherwise open, read and close a block file per record and copy each
 * record twice (into a staging buffer, then into the batch); pointing at
 * a mapping leaves the one copy a local store's gather makes.
 *
 * A block file is immutable once renamed into place: a refetch or an
 * eviction replaces or unlinks it, and a mapping keeps the bytes it was
 * made with, so a mapping is never wrong and is kept until the file is
 * closed.  The process-wide count bounds what that can hold (mappings of
 * evicted blocks keep their disk space until unmapped).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "s3_cache.h"

struct zr__cmap {
	char key[41];	/* "" for an empty slot */
	uint64_t b;
	const uint8_t *base;
	size_t len;
};

static atomic_uint mapped; /* the process's block mappings */

void zr__cmaps_init(struct zr__cmaps *m)
{
	*m = (struct zr__cmaps){ .slot = NULL };
	pthread_mutex_init(&m->lock, NULL);
}

void zr__cmaps_free(struct zr__cmaps *m)
{
	for (size_t i = 0; i < m->cap; i++)
		if (m->slot[i].key[0])
			munmap((void *)m->slot[i].base, m->slot[i].len);
	atomic_fetch_sub(&mapped, (unsigned)m->n);
	free(m->slot);
	pthread_mutex_destroy(&m->lock);
	*m = (struct zr__cmaps){ .slot = NULL };
}

static size_t hash(const char *key, uint64_t b, size_t cap)
{
	uint64_t h = b * 0x9E3779B97F4A7C15ull;

	for (int i = 0; i < 16; i++)
		h = (h ^ (uint8_t)key[i]) * 0x100000001B3ull;
	return (size_t)(h ^ h >> 29) & (cap - 1);
}

/* The slot of (key, b): its own, or the empty one it would take. */
static struct zr__cmap *slot_of(const struct zr__cmaps *m, const char *key,
				uint64_t b)
{
	size_t i = hash(key, b, m->cap);

	while (m->slot[i].key[0] &&
	       (m->slot[i].b != b || memcmp(m->slot[i].key, key, 40)))
		i = (i + 1) & (m->cap - 1);
	return &m->slot[i];
}

/* Room for one more entry: the table doubled past half full. */
static int grow(struct zr__cmaps *m)
{
	struct zr__cmaps next = { .cap = m->cap ? m->cap * 2 : 64 };

	if (m->cap && m->n + 1 <= m->cap / 2)
		return 0;
	next.slot = calloc(next.cap, sizeof(*next.slot));
	if (!next.slot)
		return -ENOMEM;
	for (size_t i = 0; i < m->cap; i++)
		if (m->slot[i].key[0])
			*slot_of(&next, m->slot[i].key, m->slot[i].b) =
				m->slot[i];
	free(m->slot);
	m->slot = next.slot;
	m->cap = next.cap;
	return 0;
}

/* Block b of o (key) mapped from the cache c into e. */
static int map_block(const struct zr__cache *c, const struct zr__cobj *o,
		     const char *key, uint64_t b, struct zr__cmap *e)
{
	char p[PATH_MAX];
	uint64_t len = zr__cache_block_len(o, b);
	struct stat st;
	void *base = MAP_FAILED;
	int fd;

	zr__cache_path(c, key, b, "", p, sizeof(p));
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ENOENT;
	if (!fstat(fd, &st) && (uint64_t)st.st_size == len && len) {
		base = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
		zr__cache_touch(fd, &st);
	}
	close(fd);
	if (base == MAP_FAILED)
		return -ENOENT;
	memcpy(e->key, key, sizeof(e->key));
	e->b = b;
	e->base = base;
	e->len = len;
	return 0;
}

/* The entry of block b of o, mapped now if it was not, the lock held. */
static int find(struct zr__cmaps *m, const struct zr__cobj *o,
		const char *key, uint64_t b, const struct zr__cmap **out)
{
	struct zr__cache *c;
	struct zr__cmap *e;
	int err;

	if (m->cap && (e = slot_of(m, key, b))->key[0]) {
		*out = e;
		return 0;
	}
	if (atomic_fetch_add(&mapped, 1) >= ZR__CACHE_MAPS) {
		atomic_fetch_sub(&mapped, 1);
		return -ENOSPC;
	}
	c = zr__cache_hold();
	err = !c ? -EOPNOTSUPP : grow(m);
	if (!err) {
		e = slot_of(m, key, b);
		err = map_block(c, o, key, b, e);
	}
	if (c)
		zr__cache_drop(c);
	if (err) {
		atomic_fetch_sub(&mapped, 1);
		return err;
	}
	m->n++;
	*out = e;
	return 0;
}

int zr__cache_view(const struct zr__cobj *o, struct zr__cmaps *m,
		   uint64_t off, size_t len, const void **p)
{
	uint64_t b = off / ZR__CACHE_BLOCK, in = off - b * ZR__CACHE_BLOCK;
	const struct zr__cmap *e;
	int err;

	if (in + len > ZR__CACHE_BLOCK || off + len > o->size)
		return -ENOENT;
	pthread_mutex_lock(&m->lock);
	err = find(m, o, o->key, b, &e);
	if (!err)
		*p = e->base + in;
	pthread_mutex_unlock(&m->lock);
	if (!err)
		zr__cache_count(1, len);
	return err;
}
