/*
 * iopool.h - a few threads kept for work that waits on the network, not
 * on a core: a remote backend's ranges read at once (store_stage.c).  The
 * CPU pool (pool.h) has a lane per core and spins; these threads sleep in
 * their reads.  They live as long as the process, so what a backend keeps
 * per thread (the S3 backend's HTTP connection) is reused from batch to
 * batch, and there are never more than ZR__IO_THREADS of them: the
 * connections a process opens to a backend are bounded.
 */
#ifndef ZR_IOPOOL_H
#define ZR_IOPOOL_H

#include <stddef.h>

/* Reads in flight at once for one process, the caller's own included:
 * with 20 ms a request, a batch of 256 random 64 KiB records of a 64 MiB
 * store took 225 ms with 8 and 101 ms with 32, against 54-56 ms with no
 * delay (scripts/bench_object, docs/performance.md). */
#define ZR__IO_THREADS 32

/* Item i of a job: 0, or an error code after zr__fail(). */
typedef int (*zr__io_fn)(void *ctx, size_t i);

/* Runs fn(ctx, i) for every i in 0..n-1, on the caller and up to
 * ZR__IO_THREADS - 1 threads, and returns once all have ended: 0, or the
 * first failure with its message on the calling thread (the items not
 * started by then are not run).  Any thread; jobs of several callers
 * share the threads. */
int zr__io_run(zr__io_fn fn, void *ctx, size_t n);

#endif
