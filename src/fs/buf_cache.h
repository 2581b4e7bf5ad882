/*
 * buf_cache.h - large batch buffers kept across opens: a fresh 37 MiB
 * buffer costs more in page faults than gathering into it does.  At most
 * 4 buffers and 512 MiB are kept, and a buffer nobody has taken for
 * ZRFS_BUF_IDLE_MS is freed and its memory handed back to the system
 * (malloc_trim), so an idle daemon shrinks back after serving large
 * batches (zrecordfs(8), Memory).
 */
#ifndef ZRFS_BUF_CACHE_H
#define ZRFS_BUF_CACHE_H

#include <stddef.h>

#define ZRFS_BUF_IDLE_MS 5000u

/* A buffer of at least size bytes (*cap gets its size): a kept one, or a
 * new one; NULL if out of memory.  Any thread. */
void *zrfs_buf_get(size_t size, size_t *cap);
/* Gives buf (of cap bytes) back: kept for the next open, or freed. */
void zrfs_buf_put(void *buf, size_t cap);

/* The thread that frees idle buffers, for the life of the session. */
int zrfs_buf_reaper_start(void);
void zrfs_buf_reaper_stop(void);

#endif
