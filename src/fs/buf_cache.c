/*
 * buf_cache.c - the kept batch buffers and the thread that frees idle
 * ones (buf_cache.h).  Lock order: cache.mu alone; the reaper's mu is
 * never held with it.
 */
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "buf_cache.h"

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
	pthread_mutex_t mu; /* guards stop */
	pthread_cond_t cv;
	int stop, running;
	pthread_t th;
} reaper = { .mu = PTHREAD_MUTEX_INITIALIZER,
	     .cv = PTHREAD_COND_INITIALIZER };

static void *reap(void *arg)
{
	struct timespec at;

	(void)arg;
	pthread_mutex_lock(&reaper.mu);
	while (!reaper.stop) {
		clock_gettime(CLOCK_REALTIME, &at);
		at.tv_sec += 1;
		pthread_cond_timedwait(&reaper.cv, &reaper.mu, &at);
		pthread_mutex_unlock(&reaper.mu);
		/* A buffer under the mmap threshold went back to an arena:
		 * trimming hands its pages to the system. */
		if (trim_idle(ZRFS_BUF_IDLE_MS))
			malloc_trim(0);
		pthread_mutex_lock(&reaper.mu);
	}
	pthread_mutex_unlock(&reaper.mu);
	return NULL;
}

int zrfs_buf_reaper_start(void)
{
	reaper.stop = 0;
	reaper.running = pthread_create(&reaper.th, NULL, reap, NULL) == 0;
	return reaper.running ? 0 : -1;
}

void zrfs_buf_reaper_stop(void)
{
	if (!reaper.running)
		return;
	pthread_mutex_lock(&reaper.mu);
	reaper.stop = 1;
	pthread_cond_signal(&reaper.cv);
	pthread_mutex_unlock(&reaper.mu);
	pthread_join(reaper.th, NULL);
	reaper.running = 0;
	trim_idle(0);
}
