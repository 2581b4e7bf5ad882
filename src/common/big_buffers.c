/*
 * big_buffers.c - the kept buffers and the thread that frees idle ones
 * (big_buffers.h).  One lock, cache.mu, held by nothing else; the reaper
 * waits in poll(2) on an eventfd that stopping writes.
 */
#include <errno.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "big_buffers.h"

#define CACHE_SLOTS 4
#define CACHE_BYTES (512u << 20)

static struct {
	pthread_mutex_t mu; /* guards the slots */
	void *buf[CACHE_SLOTS];
	size_t cap[CACHE_SLOTS];
	uint64_t put_ms[CACHE_SLOTS]; /* when each was given back */
	size_t bytes;
} cache = { .mu = PTHREAD_MUTEX_INITIALIZER };

static uint64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

void *zrcommon_bigbuf_get(size_t size, size_t *cap)
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

void zrcommon_bigbuf_put(void *buf, size_t cap)
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
		cache.put_ms[slot] = now_ms();
		cache.bytes += cap;
		buf = NULL;
	}
	pthread_mutex_unlock(&cache.mu);
	free(buf);
}

/* Frees the buffers kept longer than idle_ms; whether it freed any. */
static int trim_idle(uint64_t idle_ms)
{
	void *gone[CACHE_SLOTS];
	uint64_t t = now_ms();
	int n = 0;

	pthread_mutex_lock(&cache.mu);
	for (int i = 0; i < CACHE_SLOTS; i++)
		if (cache.buf[i] && t - cache.put_ms[i] >= idle_ms) {
			gone[n++] = cache.buf[i];
			cache.bytes -= cache.cap[i];
			cache.buf[i] = NULL;
		}
	pthread_mutex_unlock(&cache.mu);
	for (int i = 0; i < n; i++)
		free(gone[i]);
	return n;
}

static struct {
	pthread_t th;
	int stopfd;		/* eventfd; -1: not running */
} reaper = { .stopfd = -1 };

static void *reap(void *arg)
{
	struct pollfd p = { .fd = reaper.stopfd, .events = POLLIN };
	int r;

	(void)arg;
	while ((r = poll(&p, 1, 1000)) == 0 || (r < 0 && errno == EINTR))
		/* A buffer under the mmap threshold went back to an arena:
		 * trimming hands its pages to the system. */
		if (trim_idle(ZRCOMMON_BIGBUF_IDLE_MS))
			malloc_trim(0);
	return NULL;
}

int zrcommon_bigbuf_reaper_start(void)
{
	reaper.stopfd = eventfd(0, EFD_CLOEXEC);
	if (reaper.stopfd < 0)
		return -1;
	if (pthread_create(&reaper.th, NULL, reap, NULL) == 0)
		return 0;
	close(reaper.stopfd);
	reaper.stopfd = -1;
	return -1;
}

void zrcommon_bigbuf_reaper_stop(void)
{
	uint64_t one = 1;

	if (reaper.stopfd < 0)
		return;
	if (write(reaper.stopfd, &one, sizeof(one)) != sizeof(one))
		(void)0; /* cannot fail: the counter is far from full */
	pthread_join(reaper.th, NULL);
	close(reaper.stopfd);
	reaper.stopfd = -1;
	trim_idle(0);
}
