/*
 * bench_time.c - the clock and the batch-timing loop of the benchmark.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "bench.h"

double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Grows the sample array by doubling. */
static int push(double **v, size_t *n, size_t *cap, double x)
{
	if (*n == *cap) {
		size_t ncap = *cap ? 2 * *cap : 1024;
		double *nv = realloc(*v, ncap * sizeof(**v));

		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = ncap;
	}
	(*v)[(*n)++] = x;
	return 0;
}

int bench_time_plan(bench_gather_fn fn, void *ctx, const uint64_t *plan,
		    size_t batches, void *dst, size_t cap, double min_s,
		    bench_timing *out)
{
	double *t = NULL, start = bench_now();
	size_t n = 0, tcap = 0;
	int rc = 0;

	do {
		for (size_t b = 0; !rc && b < batches; b++) {
			double t0 = bench_now();

			rc = fn(ctx, plan + b * BENCH_BATCH, BENCH_BATCH, dst,
				cap);
			if (!rc)
				rc = push(&t, &n, &tcap, bench_now() - t0);
		}
	} while (!rc && bench_now() - start < min_s);
	if (rc)
		goto out;
	qsort(t, n, sizeof(*t), cmp_double);
	out->batches = n;
	out->median_s = t[n / 2];
	out->p95_s = t[(n * 95) / 100 < n ? (n * 95) / 100 : n - 1];
out:
	free(t);
	return rc;
}
