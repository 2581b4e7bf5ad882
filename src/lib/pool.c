/*
 * pool.c - the process-wide worker pool behind every batched call.
 *
 * One job runs at a time.  A caller publishes its job, works on it as lane
 * 0, then closes it and waits for the workers that joined.  A caller that
 * finds another job running does all of its own work inline instead of
 * waiting, so nested or concurrent calls never deadlock and never block on
 * someone else's batch.  Lanes claim contiguous blocks of items from an
 * atomic cursor, which keeps each lane's reads and writes sequential while
 * still balancing uneven records.
 *
 * Lock order: pool.lock, then a job's err_lock (never the reverse; err_lock
 * is only taken by a lane that holds nothing else).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "error.h"
#include "pool.h"

#define ZR__POOL_MAX_WORKERS 256
/* Blocks per lane: enough to even out uneven records, few enough that the
 * cursor is not contended. */
#define ZR__POOL_BLOCKS_PER_LANE 4

struct job {
	zr__pool_fn fn;
	void *ctx;
	size_t n;
	size_t chunk;
	atomic_size_t next;   /* first unclaimed item */
	atomic_int failed;    /* set once a lane failed: others stop claiming */
	pthread_mutex_t err_lock; /* guards error */
	zr__error error;
};

static struct {
	pthread_mutex_t lock;    /* guards job, gen, closed, running */
	pthread_cond_t work_cv;  /* gen changed */
	pthread_cond_t done_cv;  /* running dropped to 0 */
	struct job *job;         /* the running job, NULL if idle */
	unsigned long gen;       /* bumped for every published job */
	int closed;              /* the job takes no more workers */
	unsigned running;        /* workers inside the job */
	int stop;                /* workers exit (process teardown) */
	unsigned workers;        /* threads started (fixed after start) */
	pthread_t tid[ZR__POOL_MAX_WORKERS];
} pool = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.work_cv = PTHREAD_COND_INITIALIZER,
	.done_cv = PTHREAD_COND_INITIALIZER,
};

static pthread_once_t pool_once = PTHREAD_ONCE_INIT;

static void lane_work(struct job *j, unsigned lane)
{
	for (;;) {
		size_t b, e;
		int err;

		if (atomic_load_explicit(&j->failed, memory_order_relaxed))
			return;
		b = atomic_fetch_add(&j->next, j->chunk);
		if (b >= j->n)
			return;
		e = j->n - b < j->chunk ? j->n : b + j->chunk;
		err = j->fn(j->ctx, b, e, lane);
		if (err) {
			pthread_mutex_lock(&j->err_lock);
			zr__error_capture(&j->error, err);
			pthread_mutex_unlock(&j->err_lock);
			atomic_store(&j->failed, 1);
			return;
		}
	}
}

static void *worker_main(void *arg)
{
	unsigned lane = (unsigned)(uintptr_t)arg;
	unsigned long seen = 0;

	pthread_mutex_lock(&pool.lock);
	for (;;) {
		struct job *j;

		while (pool.gen == seen && !pool.stop)
			pthread_cond_wait(&pool.work_cv, &pool.lock);
		if (pool.stop)
			break;
		seen = pool.gen;
		if (!pool.job || pool.closed)
			continue;
		j = pool.job;
		pool.running++;
		pthread_mutex_unlock(&pool.lock);
		lane_work(j, lane);
		pthread_mutex_lock(&pool.lock);
		if (--pool.running == 0)
			pthread_cond_broadcast(&pool.done_cv);
	}
	pthread_mutex_unlock(&pool.lock);
	return NULL;
}

static unsigned default_workers(void)
{
	const char *env = getenv("ZR_THREADS");
	cpu_set_t set;
	unsigned cpus = 1;

	if (env && *env) {
		char *end;
		unsigned long v = strtoul(env, &end, 10);

		if (*end == '\0')
			return v > ZR__POOL_MAX_WORKERS ? ZR__POOL_MAX_WORKERS
							  : (unsigned)v;
	}
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		cpus = (unsigned)CPU_COUNT(&set);
	cpus = cpus * 3 / 4;
	if (cpus < 1)
		cpus = 1;
	return cpus > ZR__POOL_MAX_WORKERS ? ZR__POOL_MAX_WORKERS : cpus;
}

/* A forked child has no workers (only the forking thread survives): run
 * every job inline there, with fresh synchronization objects. */
static void pool_atfork_child(void)
{
	pthread_mutex_init(&pool.lock, NULL);
	pthread_cond_init(&pool.work_cv, NULL);
	pthread_cond_init(&pool.done_cv, NULL);
	pool.job = NULL;
	pool.running = 0;
	pool.workers = 0;
}

static void pool_start(void)
{
	unsigned want = default_workers();

	pthread_atfork(NULL, NULL, pool_atfork_child);
	for (unsigned i = 0; i < want; i++) {
		if (pthread_create(&pool.tid[i], NULL, worker_main,
				   (void *)(uintptr_t)(i + 1)))
			break; /* fewer workers still work */
		pool.workers++;
	}
}

/* Joins the workers when the process exits (or the library is unloaded),
 * so that no thread outlives the code it runs.  A job still running
 * finishes first. */
__attribute__((destructor)) static void pool_stop(void)
{
	unsigned n;

	pthread_mutex_lock(&pool.lock);
	pool.stop = 1;
	n = pool.workers;
	pool.workers = 0;
	pthread_cond_broadcast(&pool.work_cv);
	pthread_mutex_unlock(&pool.lock);
	for (unsigned i = 0; i < n; i++)
		pthread_join(pool.tid[i], NULL);
}

unsigned zr__pool_lanes(void)
{
	pthread_once(&pool_once, pool_start);
	return pool.workers + 1;
}

unsigned zr_pool_lanes(void)
{
	return zr__pool_lanes();
}

static size_t chunk_size(size_t n, size_t grain, unsigned lanes)
{
	size_t parts = (size_t)lanes * ZR__POOL_BLOCKS_PER_LANE;
	size_t chunk = n / parts + (n % parts != 0);

	return chunk < grain ? grain : chunk;
}

int zr__pool_run(zr__pool_fn fn, void *ctx, size_t n, size_t grain)
{
	unsigned lanes = zr__pool_lanes();
	struct job j = { .fn = fn, .ctx = ctx, .n = n };

	if (n == 0)
		return 0;
	if (grain == 0)
		grain = 1;
	if (lanes == 1 || n <= grain)
		return fn(ctx, 0, n, 0);
	j.chunk = chunk_size(n, grain, lanes);
	atomic_init(&j.next, 0);
	atomic_init(&j.failed, 0);
	pthread_mutex_init(&j.err_lock, NULL);

	pthread_mutex_lock(&pool.lock);
	if (pool.job || pool.workers == 0) {
		pthread_mutex_unlock(&pool.lock);
		pthread_mutex_destroy(&j.err_lock);
		return fn(ctx, 0, n, 0);
	}
	pool.job = &j;
	pool.closed = 0;
	pool.gen++;
	pthread_cond_broadcast(&pool.work_cv);
	pthread_mutex_unlock(&pool.lock);

	lane_work(&j, 0);

	pthread_mutex_lock(&pool.lock);
	pool.closed = 1;
	while (pool.running)
		pthread_cond_wait(&pool.done_cv, &pool.lock);
	pool.job = NULL;
	pthread_mutex_unlock(&pool.lock);
	pthread_mutex_destroy(&j.err_lock);
	if (j.error.err)
		return zr__error_replay(&j.error);
	return 0;
}
