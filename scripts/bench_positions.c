/*
 * bench_positions.c - how fast positions become record indices on one
 * core: a plain cyclic stream (zr_stream_batch) against the step-based
 * zr_sampler_batch of the same batches and a memcpy of a precomputed
 * index table (the floor any table-based loader pays), and a 10-source
 * weighted mixture against the same baselines.  Each case runs several
 * rounds; the median rate and the ratio to each baseline are printed.
 *
 *   scripts/bench_positions [SECONDS_PER_CASE]   (default 2)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "zrecord.h"

#define BATCH 1024
#define STEPS 4096 /* steps per round: 4 M indices */
#define ROUNDS 7

typedef struct bcase {
	const char *name;
	zr_stream *st;     /* NULL: the sampler or the table */
	zr_sampler cfg;
	uint64_t *table;   /* memcpy baseline: STEPS * BATCH indices */
} bcase;

static int one_round(const bcase *c, uint64_t step0, uint64_t *out,
		     uint32_t *src)
{
	for (uint64_t t = 0; t < STEPS; t++) {
		int rc;

		if (c->table) {
			memcpy(out, c->table + t * BATCH, BATCH * 8);
			rc = out[0] == UINT64_MAX; /* keeps the copy */
		} else if (c->st) {
			rc = zr_stream_batch(c->st, 0, step0 + t, 0, 1, BATCH,
					     src, out);
		} else {
			rc = zr_sampler_batch(&c->cfg, step0 + t, out);
		}
		if (rc)
			return rc;
	}
	return 0;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp);
	return v[n / 2];
}

/* One round of case c for about secs: M indices/s. */
static double rate(const bcase *c, double secs, uint64_t *step)
{
	static uint64_t out[BATCH];
	static uint32_t src[BATCH];
	double t0 = bench_now(), t1;
	uint64_t n = 0;

	do {
		if (one_round(c, *step, out, src)) {
			fprintf(stderr, "bench_positions: %s: %s\n", c->name,
				zr_errmsg());
			exit(1);
		}
		*step += STEPS;
		n += STEPS * (uint64_t)BATCH;
		t1 = bench_now();
	} while (t1 - t0 < secs);
	return (double)n / (t1 - t0) / 1e6;
}

static uint64_t *table_of(zr_stream *st)
{
	uint64_t *t = malloc((size_t)STEPS * BATCH * 8);
	uint32_t *src = malloc((size_t)BATCH * 4);

	if (!t || !src) {
		fprintf(stderr, "bench_positions: out of memory\n");
		exit(1);
	}
	for (uint64_t s = 0; s < STEPS; s++)
		if (zr_stream_batch(st, 0, s, 0, 1, BATCH, src, t + s * BATCH)) {
			fprintf(stderr, "bench_positions: %s\n", zr_errmsg());
			exit(1);
		}
	free(src);
	return t;
}

enum { SAMPLER, TABLE, PLAIN, MIX, CASES };

/* Rounds go through the cases in turn, so a busy machine slows all of
 * them alike; the ratios are medians of each round's ratios. */
static void run(bcase *c, double secs)
{
	static const char *const what[CASES] = {
		"zr_sampler_batch (cyclic, N=10M)", "memcpy of an index table",
		"zr_stream_batch cyclic, N=10M",
		"zr_stream_batch 10-source mixture"
	};
	double r[CASES][ROUNDS], vs_s[CASES][ROUNDS], vs_t[CASES][ROUNDS];
	uint64_t step = 1000;

	for (int i = 0; i < ROUNDS; i++)
		for (int k = 0; k < CASES; k++) {
			r[k][i] = rate(&c[k], secs / ROUNDS, &step);
			if (k == CASES - 1)
				for (int j = 0; j < CASES; j++) {
					vs_s[j][i] = r[j][i] / r[SAMPLER][i];
					vs_t[j][i] = r[j][i] / r[TABLE][i];
				}
		}
	for (int k = 0; k < CASES; k++) {
		printf("%-34s %7.1f M indices/s", what[k],
		       median(r[k], ROUNDS));
		if (k >= PLAIN)
			printf("  x%.2f of zr_sampler_batch  x%.3f of memcpy",
			       median(vs_s[k], ROUNDS),
			       median(vs_t[k], ROUNDS));
		printf("\n");
	}
}

int main(int argc, char **argv)
{
	static const uint64_t w[10] = { 30, 20, 12, 10, 8, 7, 5, 4, 3, 1 };
	double secs = argc > 1 ? atof(argv[1]) : 2.0;
	uint64_t len[10];
	zr_stream *plain = NULL, *mix = NULL;
	bcase c[CASES] = { { 0 } };

	if (secs <= 0) {
		fprintf(stderr, "usage: bench_positions [SECONDS_PER_CASE]\n");
		return 2;
	}
	for (int k = 0; k < 10; k++)
		len[k] = 100000ull + 77777ull * (uint64_t)k;
	if (zr_stream_new(ZR_SAMPLER_CYCLIC, 7, 10000000, BATCH, &plain) ||
	    zr_stream_new_mixture(7, 10, len, w, &mix)) {
		fprintf(stderr, "bench_positions: %s\n", zr_errmsg());
		return 1;
	}
	c[SAMPLER].name = "sampler";
	c[SAMPLER].cfg = (zr_sampler){ .mode = ZR_SAMPLER_CYCLIC, .seed = 7,
				       .length = 10000000,
				       .batch_size = BATCH };
	c[TABLE].name = "table";
	c[TABLE].table = table_of(plain);
	c[PLAIN].name = "plain";
	c[PLAIN].st = plain;
	c[MIX].name = "mixture";
	c[MIX].st = mix;
	printf("one core, batches of %d, %d rounds through the cases, "
	       "medians\n", BATCH, ROUNDS);
	run(c, secs);
	free(c[TABLE].table);
	zr_stream_free(plain);
	zr_stream_free(mix);
	return 0;
}
