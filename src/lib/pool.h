/*
 * pool.h - the process-wide worker pool that fans a batch of items out
 * across lanes (the calling thread plus the workers).
 */
#ifndef ZR_POOL_H
#define ZR_POOL_H

#include <stddef.h>
#include <stdint.h>

/* Works on items [begin, end) as lane `lane` (0 .. zr__pool_lanes() - 1;
 * distinct lanes never run at once with the same number within one job, so
 * per-lane scratch indexed by lane is private).  Returns 0 or an error code
 * after zr__fail(); the first failure stops the job and is replayed on the
 * caller. */
typedef int (*zr__pool_fn)(void *ctx, size_t begin, size_t end,
			   unsigned lane);

/* Runs fn over items 0..n-1 in contiguous blocks of at least grain items,
 * the caller working as lane 0.  If the pool is busy with another job, n
 * is small, or the pool did not pay for itself on the last call of this
 * kind (fn, n and grain alike; see pool.c), the caller runs everything
 * itself.  Returns the first failure with its message on the calling
 * thread. */
int zr__pool_run(zr__pool_fn fn, void *ctx, size_t n, size_t grain);

/* The pool's verdict on a kind of job after a pooled run that took
 * pooled_ns where inline_ns was expected, given the last verdict backoff:
 * 0 if the pool was faster, else how many calls of that kind to run inline
 * (1, then doubling up to a cap).  Pure; exposed for the tests. */
unsigned zr__pool_backoff(unsigned backoff, uint64_t inline_ns,
			  uint64_t pooled_ns);

/* Lanes a job may use: workers + 1 (starts the pool). */
unsigned zr__pool_lanes(void);

#endif
