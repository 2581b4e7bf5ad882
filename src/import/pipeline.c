/*
 * pipeline.c - the parallel part of `zrecord import`: sources fill a batch
 * of samples on the main thread while worker threads decode the batch
 * before it; the main thread then appends the decoded batch to the
 * stores in source order.  Two batches are alive at once, each of at
 * most 256 samples, 64 MiB of input and (sized from the batch before)
 * about 32 MiB decoded, so memory does not grow with the source.
 *
 * The workers are this file's own threads, not libzrecord's pool: the
 * pool is internal to the library and serves its gathers and append
 * compression, which run on the main thread here meanwhile.
 *
 * Locking: fan.mu guards gen, active and stop; a batch's samples belong
 * to the workers between fan_start and fan_wait, to the main thread
 * otherwise.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import.h"

#define BATCH 256
#define BATCH_BYTES (64u << 20)
#define BATCH_DECODED (32u << 20)
#define SHOW_SKIPPED 20

typedef struct batch {
	zr_imp_sample s[BATCH];
	size_t n;
	uint64_t bytes;
} batch;

typedef struct fan {
	pthread_mutex_t mu;
	pthread_cond_t go, done;
	unsigned gen, active, stop; /* guarded by mu */
	batch *b;
	atomic_size_t next;
	const zr_imp_image_opts *opts;
	pthread_t *tid;
	unsigned nthreads;
} fan;

/* What the import left out for one option: a count and the first few. */
typedef struct left_out {
	uint64_t n;
	char *names[SHOW_SKIPPED];
} left_out;

struct zr_imp_run {
	const zr_imp_config *cfg;
	zr_imp_dataset *d;
	batch *fill, *inflight;
	fan fan;
	zr_imp_progress prog;
	size_t limit;       /* samples per batch, from the decoded sizes */
	left_out skipped;   /* --skip-bad        */
	left_out dropped;   /* --drop-incomplete */
};

static volatile sig_atomic_t interrupted;

static void run_free(zr_imp_run *r);
static void report_skipped(zr_imp_run *r);
static int flush_all(zr_imp_run *r);
static void free_batch(batch *b);

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

void zr_imp_catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

static void decode_batch(fan *f, zr_imp_scratch *sc)
{
	size_t i;
	unsigned k;

	while ((i = atomic_fetch_add(&f->next, 1)) < f->b->n)
		for (k = 0; k < f->b->s[i].nfields; k++)
			zr_imp_field_decode(&f->b->s[i].f[k], f->opts, sc);
}

static void *worker(void *arg)
{
	fan *f = arg;
	unsigned seen = 0;
	zr_imp_scratch sc = { NULL, 0 };

	pthread_mutex_lock(&f->mu);
	for (;;) {
		while (f->gen == seen && !f->stop)
			pthread_cond_wait(&f->go, &f->mu);
		if (f->stop)
			break;
		seen = f->gen;
		pthread_mutex_unlock(&f->mu);
		decode_batch(f, &sc);
		pthread_mutex_lock(&f->mu);
		if (--f->active == 0)
			pthread_cond_signal(&f->done);
	}
	pthread_mutex_unlock(&f->mu);
	free(sc.buf);
	return NULL;
}

static void fan_start(fan *f, batch *b)
{
	pthread_mutex_lock(&f->mu);
	f->b = b;
	atomic_store(&f->next, 0);
	f->active = f->nthreads;
	f->gen++;
	pthread_cond_broadcast(&f->go);
	pthread_mutex_unlock(&f->mu);
}

static void fan_wait(fan *f)
{
	pthread_mutex_lock(&f->mu);
	while (f->active)
		pthread_cond_wait(&f->done, &f->mu);
	pthread_mutex_unlock(&f->mu);
}

static int fan_init(fan *f, unsigned n, const zr_imp_image_opts *opts)
{
	unsigned i;

	memset(f, 0, sizeof(*f));
	pthread_mutex_init(&f->mu, NULL);
	pthread_cond_init(&f->go, NULL);
	pthread_cond_init(&f->done, NULL);
	f->opts = opts;
	f->tid = calloc(n, sizeof(*f->tid));
	if (!f->tid)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (pthread_create(&f->tid[i], NULL, worker, f))
			return -EAGAIN;
		f->nthreads++;
	}
	return 0;
}

static void fan_free(fan *f)
{
	unsigned i;

	pthread_mutex_lock(&f->mu);
	f->stop = 1;
	pthread_cond_broadcast(&f->go);
	pthread_mutex_unlock(&f->mu);
	for (i = 0; i < f->nthreads; i++)
		pthread_join(f->tid[i], NULL);
	free(f->tid);
	pthread_cond_destroy(&f->go);
	pthread_cond_destroy(&f->done);
	pthread_mutex_destroy(&f->mu);
}

int zr_imp_run_new(const zr_imp_config *cfg, zr_imp_dataset *d,
		   uint64_t total_items, uint64_t total_bytes,
		   zr_imp_run **out)
{
	zr_imp_run *r = calloc(1, sizeof(*r));

	if (!r)
		return zr_imp_error(cfg->dest, -ENOMEM, NULL);
	r->cfg = cfg;
	r->d = d;
	r->fill = calloc(1, sizeof(batch));
	r->inflight = NULL;
	/* One sample per lane until their decoded size is known. */
	r->limit = cfg->threads < BATCH ? cfg->threads : BATCH;
	if (!r->fill || fan_init(&r->fan, cfg->threads, &cfg->img) < 0) {
		run_free(r);
		return zr_imp_error(cfg->dest, -ENOMEM, "cannot start the "
				    "decode threads");
	}
	zr_imp_progress_init(&r->prog, cfg->progress, total_items,
			     total_bytes);
	*out = r;
	return 0;
}

static void note_left(left_out *l, const char *where, const char *why)
{
	if (l->n < SHOW_SKIPPED &&
	    asprintf(&l->names[l->n], "%s: %s", where, why) < 0)
		l->names[l->n] = NULL;
	l->n++;
}

static void note_skipped(zr_imp_run *r, zr_imp_sample *s,
			 const zr_imp_field *f)
{
	note_left(&r->skipped, s->where, f->msg[0] ? f->msg :
		  zr_strerror(f->err));
	s->bad = 1;
}

/* Decode errors: the first ends the import, or (--skip-bad) its sample
 * is left out and named in the report. */
static int check_batch(zr_imp_run *r, batch *b)
{
	size_t i;
	unsigned k;

	for (i = 0; i < b->n; i++)
		for (k = 0; k < b->s[i].nfields && !b->s[i].bad; k++) {
			zr_imp_field *f = &b->s[i].f[k];

			if (!f->err)
				continue;
			if (!r->cfg->skip_bad || f->err == -ENOMEM)
				return zr_imp_error(b->s[i].where, f->err,
						    f->msg);
			note_skipped(r, &b->s[i], f);
		}
	return 0;
}

/* The next batches hold about BATCH_DECODED of decoded records, and at
 * least one sample per lane. */
static void size_batches(zr_imp_run *r, const batch *b)
{
	uint64_t out = 0, per;
	size_t i, lim;
	unsigned k;

	for (i = 0; i < b->n; i++)
		for (k = 0; k < b->s[i].nfields; k++)
			out += b->s[i].f[k].out.len;
	per = b->n ? out / b->n + 1 : 1;
	lim = per >= BATCH_DECODED ? 1 : (size_t)(BATCH_DECODED / per);
	if (lim < r->cfg->threads)
		lim = r->cfg->threads;
	r->limit = lim < BATCH ? lim : BATCH;
}

static int finish(zr_imp_run *r, batch *b)
{
	size_t i, n = b->n;
	int rc = check_batch(r, b);

	size_batches(r, b);
	if (rc == 0)
		rc = zr_imp_dataset_append(r->d, b->s, n);
	for (i = 0; i < n; i++)
		zr_imp_sample_clear(&b->s[i]);
	b->n = 0;
	zr_imp_progress_step(&r->prog, n, b->bytes);
	b->bytes = 0;
	if (rc == 0 && interrupted)
		rc = zr_imp_error(r->cfg->dest, -EINTR, "interrupted; "
				  "nothing was imported");
	return rc;
}

/* Hands the filled batch to the workers and appends the one before it
 * while they decode.  Once the dense stores are open the batch before is
 * appended first, which is cheap (its records are in place already), so
 * that the rows lent to the filled batch follow its own. */
static int cycle(zr_imp_run *r)
{
	batch *done = r->inflight;
	int rc = 0, first = 0;

	if (done)
		fan_wait(&r->fan);
	r->inflight = NULL;
	if (done && zr_imp_dataset_can_place(r->d)) {
		first = 1;
		rc = finish(r, done);
	}
	if (rc == 0 && r->fill->n) {
		if (first)
			rc = zr_imp_dataset_place(r->d, r->fill->s,
						  r->fill->n);
		if (rc == 0) {
			fan_start(&r->fan, r->fill);
			r->inflight = r->fill;
			r->fill = NULL;
		}
	}
	if (done) {
		if (!first)
			rc = finish(r, done);
		/* the finished batch is the next to fill, unless the empty
		 * one (nothing was started) still is */
		if (!r->fill)
			r->fill = done;
		else
			free_batch(done);
	}
	if (!r->fill)
		r->fill = calloc(1, sizeof(batch));
	if (rc == 0 && !r->fill)
		rc = zr_imp_error(r->cfg->dest, -ENOMEM, NULL);
	return rc;
}

int zr_imp_run_next(zr_imp_run *r, zr_imp_sample **out)
{
	int rc;

	if (r->fill->n >= r->limit || r->fill->bytes >= BATCH_BYTES) {
		rc = cycle(r);
		if (rc)
			return rc;
	}
	*out = &r->fill->s[r->fill->n++];
	return 0;
}

void zr_imp_run_bytes(zr_imp_run *r, uint64_t n)
{
	r->fill->bytes += n;
}

static int flush_all(zr_imp_run *r)
{
	int rc = cycle(r);

	if (rc == 0 && r->inflight)
		rc = cycle(r);
	return rc;
}

int zr_imp_run_end(zr_imp_run *r, int rc)
{
	if (rc == 0)
		rc = flush_all(r);
	report_skipped(r);
	run_free(r);
	return rc;
}

static void report_left(const left_out *l, const char *what,
			const char *option)
{
	uint64_t i;

	if (!l->n)
		return;
	fprintf(stderr, "zrecord: import: %s%s (%s):\n", what,
		l->n == 1 ? "" : "s", option);
	for (i = 0; i < l->n && i < SHOW_SKIPPED; i++)
		fprintf(stderr, "  %s\n", l->names[i] ? l->names[i] : "?");
	if (l->n > SHOW_SKIPPED)
		fprintf(stderr, "  ... and %llu more\n",
			(unsigned long long)(l->n - SHOW_SKIPPED));
}

static void report_skipped(zr_imp_run *r)
{
	char what[64];

	zr_imp_progress_end(&r->prog);
	snprintf(what, sizeof(what), "skipped %llu bad input",
		 (unsigned long long)r->skipped.n);
	report_left(&r->skipped, what, "--skip-bad");
	snprintf(what, sizeof(what), "dropped %llu incomplete sample",
		 (unsigned long long)r->dropped.n);
	report_left(&r->dropped, what, "--drop-incomplete");
}

static void free_batch(batch *b)
{
	size_t i;

	if (!b)
		return;
	for (i = 0; i < b->n; i++)
		zr_imp_sample_clear(&b->s[i]);
	free(b);
}

static void run_free(zr_imp_run *r)
{
	unsigned i;

	if (!r)
		return;
	if (r->fan.tid) {
		if (r->inflight)
			fan_wait(&r->fan);
		fan_free(&r->fan);
	}
	free_batch(r->fill);
	free_batch(r->inflight);
	for (i = 0; i < SHOW_SKIPPED; i++) {
		free(r->skipped.names[i]);
		free(r->dropped.names[i]);
	}
	free(r);
}

int zr_imp_skip_rest(zr_imp_run *r, const zr_imp_config *cfg,
		     const char *path, int rc)
{
	if (!rc || !cfg->skip_bad || !zr_imp_input_failed())
		return rc;
	zr_imp_run_skip(r, path, "the rest of this input (unreadable from "
			"here on)");
	return 0;
}

/* Counts a sample the source leaves out under --skip-bad (a bad tar
 * member, an unreadable entry) the same way as a bad decode. */
void zr_imp_run_skip(zr_imp_run *r, const char *where, const char *why)
{
	note_left(&r->skipped, where, why);
}

void zr_imp_run_drop(zr_imp_run *r, const char *where, const char *why)
{
	note_left(&r->dropped, where, why);
}
