/*
 * bench.h - pieces of the library benchmark (scripts/bench_gather): the
 * synthetic workloads, the clock and the batch-timing loop.
 */
#ifndef ZR_BENCH_H
#define ZR_BENCH_H

#include <stddef.h>
#include <stdint.h>

#define BENCH_BATCH 256

/* One synthetic corpus: count records of one dense row each. */
typedef struct bench_workload {
	const char *name;
	const char *dtype;
	uint32_t ndim;
	uint64_t shape[3];
	uint64_t count;
	int with_dict; /* also build a zstd_dict (balanced) store */
	/* Writes records first..first+n-1 (deterministic in the index). */
	void (*fill)(uint64_t first, uint64_t n, void *rows);
} bench_workload;

/* Smooth uint8 (3, 224, 224) images: low-frequency waves plus mild noise. */
void bench_fill_images(uint64_t first, uint64_t n, void *rows);
/* int32[512] blocks of Zipf-like token ids. */
void bench_fill_tokens(uint64_t first, uint64_t n, void *rows);

/* Monotonic seconds. */
double bench_now(void);

/* Gathers idx[0..n) into dst (n * row bytes); 0 or an error code. */
typedef int (*bench_gather_fn)(void *ctx, const uint64_t *idx, size_t n,
			       void *dst, size_t cap);

typedef struct bench_timing {
	size_t batches;   /* timed batches                 */
	double median_s;  /* median seconds per batch      */
	double p95_s;     /* 95th percentile, per batch    */
} bench_timing;

/* Runs the plan (batches of BENCH_BATCH indices, back to back) repeatedly
 * until min_s seconds have passed; returns 0 or the first gather error. */
int bench_time_plan(bench_gather_fn fn, void *ctx, const uint64_t *plan,
		    size_t batches, void *dst, size_t cap, double min_s,
		    bench_timing *out);

#endif
