/*
 * big_buffers.h - large buffers kept for reuse: a fresh 37 MiB buffer
 * costs more in page faults than gathering into it does (the daemon's
 * batch files; measured against plain malloc and against mmap with
 * MAP_POPULATE or MADV_HUGEPAGE in docs/performance.md).  At most 4
 * buffers and 512 MiB are kept, and a buffer nobody has taken for
 * ZRCOMMON_BIGBUF_IDLE_MS is freed and its memory handed back to the
 * system (malloc_trim) by a thread of its own, so an idle process shrinks
 * back after using large buffers (zrecordfs(8), Memory).
 */
#ifndef ZRCOMMON_BIG_BUFFERS_H
#define ZRCOMMON_BIG_BUFFERS_H

#include <stddef.h>

#define ZRCOMMON_BIGBUF_IDLE_MS 5000u

/* A buffer of at least size bytes (*cap gets its size): a kept one, or a
 * new one; NULL if out of memory.  Any thread. */
void *zrcommon_bigbuf_get(size_t size, size_t *cap);
/* Gives buf (of cap bytes) back: kept for the next get, or freed.  Any
 * thread; buf NULL is fine. */
void zrcommon_bigbuf_put(void *buf, size_t cap);

/* The thread that frees idle buffers: start it once, stop it once before
 * exit (which frees every kept buffer). */
int zrcommon_bigbuf_reaper_start(void);
void zrcommon_bigbuf_reaper_stop(void);

#endif
