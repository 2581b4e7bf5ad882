/*
 * handles.c - open-file handles: allocation, reference counts (and the list
 * shutdown frees), the cache of large batch buffers, and replying to reads
 * straight from a handle's buffer.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "file_kinds.h"
#include "file_bytes.h"
#include "npystream.h"
#include "lookup.h"

/* Released batch buffers kept for the next open: a fresh 37 MiB buffer
 * costs more in page faults than gathering into it does. */
#define CACHE_SLOTS 4
#define CACHE_BYTES (512u << 20)

static struct {
	pthread_mutex_t mu; /* guards the slots */
	void *buf[CACHE_SLOTS];
	size_t cap[CACHE_SLOTS];
	size_t bytes;
} cache = { .mu = PTHREAD_MUTEX_INITIALIZER };

void *zrfs_buf_get(size_t size, size_t *cap)
{
	int best = -1;
	void *p;

	pthread_mutex_lock(&cache.mu);
	for (int i = 0; i < CACHE_SLOTS; i++)
		if (cache.buf[i] && cache.cap[i] >= size &&
		    (best < 0 || cache.cap[i] < cache.cap[best]))
			best = i;
	if (best >= 0) {
		p = cache.buf[best];
		*cap = cache.cap[best];
		cache.bytes -= *cap;
		cache.buf[best] = NULL;
		pthread_mutex_unlock(&cache.mu);
		return p;
	}
	pthread_mutex_unlock(&cache.mu);
	*cap = size ? size : 1;
	return malloc(*cap);
}

void zrfs_buf_put(void *buf, size_t cap)
{
	int slot = -1;

	if (!buf)
		return;
	pthread_mutex_lock(&cache.mu);
	for (int i = 0; i < CACHE_SLOTS; i++) {
		if (!cache.buf[i]) {
			slot = i;
			break;
		}
		if (slot < 0 || cache.cap[i] < cache.cap[slot])
			slot = i;
	}
	/* evict the smallest occupant if the new buffer is larger */
	if (cache.buf[slot] && cache.cap[slot] < cap) {
		cache.bytes -= cache.cap[slot];
		free(cache.buf[slot]);
		cache.buf[slot] = NULL;
	}
	if (!cache.buf[slot] && cache.bytes + cap <= CACHE_BYTES) {
		cache.buf[slot] = buf;
		cache.cap[slot] = cap;
		cache.bytes += cap;
		buf = NULL;
	}
	pthread_mutex_unlock(&cache.mu);
	free(buf);
}

struct zrfs_fh *zrfs_fh_new(struct zrfs_fs *fs, struct zrfs_node *n)
{
	struct zrfs_fh *fh = calloc(1, sizeof(*fh));

	if (!fh)
		return NULL;
	fh->node = n;
	zrfs_ns_hold(fs, n);
	atomic_init(&fh->refs, 1);
	pthread_mutex_init(&fh->mu, NULL);
	pthread_mutex_lock(&fs->fh_mu);
	fh->next = fs->fhs;
	if (fs->fhs)
		fs->fhs->prev = fh;
	fs->fhs = fh;
	pthread_mutex_unlock(&fs->fh_mu);
	return fh;
}

static void fh_free(struct zrfs_fs *fs, struct zrfs_fh *fh)
{
	pthread_mutex_lock(&fs->fh_mu);
	if (fh->prev)
		fh->prev->next = fh->next;
	else
		fs->fhs = fh->next;
	if (fh->next)
		fh->next->prev = fh->prev;
	pthread_mutex_unlock(&fs->fh_mu);
	if (fh->cached)
		zrfs_buf_put(fh->buf, fh->cap);
	else
		free(fh->buf);
	zrfs_batch_fill_free(fh);
	zr_view_end(fh->view);
	zrfs_batch_views_end(fh);
	pthread_mutex_destroy(&fh->mu);
	zr_npystream_free(fh->ns); /* an unfinished session is aborted */
	zrfs_ns_forget(fs, fh->node->ino, 1);
	free(fh);
}

/* A handle reaches the threads that use it through the kernel (fi->fh):
 * the reply that hands it over and the request that brings it back are
 * system calls, which order memory, but ThreadSanitizer cannot see them.
 * Tell it, before the first access to the handle. */
#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#define HANDED_OVER(p) __tsan_release(p)
#define TAKEN_OVER(p) __tsan_acquire(p)
#else
#define HANDED_OVER(p) ((void)(p))
#define TAKEN_OVER(p) ((void)(p))
#endif

void zrfs_fh_publish(struct zrfs_fh *fh)
{
	HANDED_OVER(fh);
}

struct zrfs_fh *zrfs_fh_get(struct zrfs_fh *fh)
{
	TAKEN_OVER(fh);
	atomic_fetch_add_explicit(&fh->refs, 1, memory_order_relaxed);
	return fh;
}

void zrfs_fh_put(struct zrfs_fs *fs, struct zrfs_fh *fh)
{
	/* acq_rel: the freeing thread sees every other holder's writes */
	if (fh && atomic_fetch_sub_explicit(&fh->refs, 1,
					    memory_order_acq_rel) == 1)
		fh_free(fs, fh);
}

/* Only after the session loop has ended: no request holds a reference. */
void zrfs_fh_free_all(struct zrfs_fs *fs)
{
	while (fs->fhs)
		fh_free(fs, fs->fhs);
}

void zrfs_reply_slice(fuse_req_t req, const char *buf, size_t len,
		     size_t size, off_t off)
{
	if (off < 0 || (uint64_t)off >= len)
		size = 0;
	else if (size > len - (size_t)off)
		size = len - (size_t)off;
	fuse_reply_buf(req, size ? buf + off : NULL, size);
}

void zrfs_fh_reply(fuse_req_t req, struct zrfs_fh *fh, size_t size, off_t off)
{
	zrfs_reply_slice(req, fh->buf, fh->len, size, off);
}
