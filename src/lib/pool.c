/*
 * pool.c - the process-wide worker pool behind every batched call.
 *
 * One job runs at a time.  A caller publishes its job, works on it as lane
 * 0, then closes it and waits for the workers that joined.  A caller that
 * finds another job running does all of its own work inline instead of
 * waiting, and a call made from inside a lane always runs inline, so
 * nested or concurrent calls never deadlock and never block on someone
 * else's batch.  Lanes claim contiguous chunks of items from an atomic
 * cursor: each lane's reads and writes stay sequential, uneven records
 * balance out, and a worker that arrives late only takes what is left, so
 * the caller never waits for more than the chunk a worker holds.  Chunks
 * shrink as the job drains (a share of what is left, down to the grain):
 * large ones keep claims few, and the last ones are small, so the lanes
 * finish together: with fixed chunks of n / (8 x lanes) the caller of a
 * 256 x 150 KB zstd gather on 2 lanes waited 1.2-1.4 ms of its 45-60 ms
 * in job_close for the worker's last chunk (a core idle meanwhile), with
 * shrinking ones 0.2-0.4 ms.
 *
 * A batch can take less time than waking a sleeping thread, so a worker
 * that finishes a job spins for a short while on the job counter before it
 * sleeps, and the caller makes the (system call) wakeup only when some
 * worker actually sleeps.  Publishing is lock-free; the lock only guards
 * sleeping and waking.
 *
 * Joining: a worker counts itself in `running` before it reads `job`, and
 * the caller clears `job` before it waits for `running` to drop to 0; with
 * sequentially consistent atomics a worker that saw the job is therefore
 * always waited for, and one that did not never touches it (the job lives
 * on the caller's stack).  The same Dekker pattern pairs `sleepers` with
 * `gen` so that no wakeup is lost.
 *
 * Paying for itself: the caller cannot return before every chunk is done,
 * so a worker that the scheduler takes off its CPU while it holds a chunk
 * stalls the caller until it runs again (on 2 cores with two busy-loop
 * processes the caller waited 0.6-0.9 ms on average per 4 ms zstd token
 * batch in job_close, up to 20 ms, against 75 us quiet), a worker that
 * wakes late adds nothing, and a small batch costs more to hand out than
 * to do.  So every pooled job is judged: its wall time against the
 * caller's own time per item times n (what running it inline would have
 * cost).  A kind of job (its function, and n and grain to the nearest
 * power of two) whose pooled run was not faster than that runs inline
 * for the next 1, 2, 4 .. ZR__POOL_BACKOFF_MAX calls, then tries the pool
 * again.  Measured on 2 cores shared with other jobs: of back-to-back
 * 256 x 2 KiB raw token gathers (30-40 us each, about what handing out
 * work to a worker costs) 67-90% ran inline, 93% with two busy-loop
 * processes; of zstd ones (2.5 ms) about half ran inline, 55-66% with
 * the busy loops.  A waiting caller keeps its short spin even under
 * load: it yields to whatever shares its CPU, and sleeping at once would
 * add its own wakeup to the stall (tried: no better than inline).
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
#include <time.h>

#include "error.h"
#include "pool.h"

#define ZR__POOL_MAX_WORKERS 256
/* A chunk is the items left over this many times the lanes: enough to
 * even out uneven records and late workers, few enough claims (about
 * that many times the lanes times log(n / grain)) that the cursor is not
 * contended. */
#define ZR__POOL_CHUNK_SHARE 2
/* How long an idle worker (or a caller waiting for one) spins before it
 * sleeps: about the cost of a wakeup, so back-to-back batches never pay
 * one while an idle pool burns almost nothing. */
#define ZR__POOL_SPIN_NS 50000
/* Spins between two looks at the clock. */
#define ZR__POOL_SPIN_CHECK 64
/* A pooled run pays when it takes less than this share (in 1/16) of the
 * inline estimate: when it was faster at all.  Asking for more (15/16 and
 * 14/16 were tried) sent marginal batches inline on a busy machine, where
 * the estimate is noisy and the pool was still ahead on average. */
#define ZR__POOL_MARGIN 16
/* The longest run of inline calls before a kind of job tries the pool
 * again: a probe that loses costs one slow batch in 17 at most, and a
 * machine that becomes quiet is noticed within a few batches. */
#define ZR__POOL_BACKOFF_MAX 16
/* Kinds of job remembered (a direct-mapped table; a collision only
 * shares a verdict). */
#define ZR__POOL_KINDS 16

struct job {
	zr__pool_fn fn;
	void *ctx;
	size_t n;
	size_t grain;         /* the smallest chunk (but the last) */
	size_t share;         /* a chunk is at least 1/share of what is left */
	atomic_size_t next;   /* first unclaimed item */
	atomic_int failed;    /* set once a lane failed: others stop claiming */
	pthread_mutex_t err_lock; /* guards error */
	zr__error error;
};

static struct {
	pthread_mutex_t lock;    /* guards sleeping on and signalling the cvs */
	pthread_cond_t work_cv;  /* gen changed (or stop) */
	pthread_cond_t done_cv;  /* running dropped to 0 */
	_Atomic(struct job *) job; /* the open job, NULL if none */
	atomic_ulong gen;        /* bumped for every published job */
	atomic_uint running;     /* workers that may be inside a job */
	atomic_uint sleepers;    /* workers asleep (or about to) on work_cv */
	atomic_int stop;         /* workers exit (process teardown) */
	unsigned workers;        /* threads started (fixed after start) */
	pthread_t tid[ZR__POOL_MAX_WORKERS];
} pool = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.work_cv = PTHREAD_COND_INITIALIZER,
	.done_cv = PTHREAD_COND_INITIALIZER,
};

/* The verdict on one kind of job.  Only its atomics are shared: callers of
 * one kind may race on them, which at worst costs one wrong verdict. */
struct kind {
	atomic_uintptr_t key;
	atomic_uint skip;     /* calls left to run inline */
	atomic_uint backoff;  /* the last skip granted; 0 while the pool pays */
};

static struct kind kinds[ZR__POOL_KINDS];

static pthread_once_t pool_once = PTHREAD_ONCE_INIT;

/* Set while this thread works a lane.  A lane that calls zr__pool_run
 * again must run that work inline: were it to open a job of its own once
 * the outer caller has closed the outer one, it would wait in job_close
 * for `running` to drop while counting in it itself. */
static _Thread_local int in_lane;

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Spins until done(arg) or ZR__POOL_SPIN_NS pass; returns done(arg). */
static int spin_until(int (*done)(const void *), const void *arg)
{
	uint64_t deadline = 0;

	for (unsigned i = 1;; i++) {
		if (done(arg))
			return 1;
		cpu_relax();
		if (i % ZR__POOL_SPIN_CHECK)
			continue;
		/* On a busy machine the thread we wait for may share our
		 * CPU: let it run. */
		sched_yield();
		if (!deadline)
			deadline = now_ns() + ZR__POOL_SPIN_NS;
		else if (now_ns() > deadline)
			return done(arg);
	}
}

/* The size of the chunk to claim when b is the first unclaimed item:
 * 1/share of what is left, at least the grain, and all of it when the
 * rest would be a short chunk. */
static size_t chunk_at(const struct job *j, size_t b)
{
	size_t left = j->n - b;
	size_t c = left / j->share;

	if (c < j->grain)
		c = j->grain;
	return c + j->grain > left ? left : c;
}

/* Claims the next chunk [*b, *e); 0 when none is left. */
static int claim(struct job *j, size_t *b, size_t *e)
{
	size_t at = atomic_load_explicit(&j->next, memory_order_relaxed);

	do {
		if (at >= j->n)
			return 0;
		*e = at + chunk_at(j, at);
	} while (!atomic_compare_exchange_weak_explicit(
			&j->next, &at, *e, memory_order_relaxed,
			memory_order_relaxed));
	*b = at;
	return 1;
}

/* Works chunks until none is left; returns the items this lane did. */
static size_t lane_work(struct job *j, unsigned lane)
{
	size_t done = 0;

	for (;;) {
		size_t b, e;
		int err;

		if (atomic_load_explicit(&j->failed, memory_order_relaxed))
			return done;
		if (!claim(j, &b, &e))
			return done;
		err = j->fn(j->ctx, b, e, lane);
		if (err) {
			pthread_mutex_lock(&j->err_lock);
			zr__error_capture(&j->error, err);
			pthread_mutex_unlock(&j->err_lock);
			atomic_store(&j->failed, 1);
			return done;
		}
		done += e - b;
	}
}

static int gen_moved(const void *seen)
{
	return atomic_load_explicit(&pool.gen, memory_order_relaxed) !=
	       *(const unsigned long *)seen ||
	       atomic_load_explicit(&pool.stop, memory_order_relaxed);
}

/* Returns once gen differs from seen or the pool stops. */
static void wait_for_work(unsigned long seen)
{
	if (spin_until(gen_moved, &seen))
		return;
	pthread_mutex_lock(&pool.lock);
	atomic_fetch_add(&pool.sleepers, 1);
	while (atomic_load(&pool.gen) == seen && !atomic_load(&pool.stop))
		pthread_cond_wait(&pool.work_cv, &pool.lock);
	atomic_fetch_sub(&pool.sleepers, 1);
	pthread_mutex_unlock(&pool.lock);
}

/* Leaves a job; the last one out wakes a caller sleeping in job_close. */
static void job_leave(void)
{
	if (atomic_fetch_sub(&pool.running, 1) != 1)
		return;
	pthread_mutex_lock(&pool.lock);
	pthread_cond_broadcast(&pool.done_cv);
	pthread_mutex_unlock(&pool.lock);
}

static void *worker_main(void *arg)
{
	unsigned lane = (unsigned)(uintptr_t)arg;
	unsigned long seen = 0;

	for (;;) {
		struct job *j;

		wait_for_work(seen);
		if (atomic_load(&pool.stop))
			break;
		seen = atomic_load(&pool.gen);
		atomic_fetch_add(&pool.running, 1);
		j = atomic_load(&pool.job);
		if (j) {
			in_lane = 1;
			lane_work(j, lane);
			in_lane = 0;
		}
		job_leave();
	}
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
	atomic_store(&pool.job, NULL);
	atomic_store(&pool.running, 0);
	atomic_store(&pool.sleepers, 0);
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
	atomic_store(&pool.stop, 1);
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

/* Makes j the open job; 0 if another job holds the pool. */
static int job_open(struct job *j)
{
	struct job *none = NULL;

	if (!atomic_compare_exchange_strong(&pool.job, &none, j))
		return 0;
	atomic_fetch_add(&pool.gen, 1);
	if (atomic_load(&pool.sleepers)) {
		pthread_mutex_lock(&pool.lock);
		pthread_cond_broadcast(&pool.work_cv);
		pthread_mutex_unlock(&pool.lock);
	}
	return 1;
}

static int none_running(const void *unused)
{
	(void)unused;
	return atomic_load(&pool.running) == 0;
}

/* Stops new workers from joining j and waits for those inside. */
static void job_close(void)
{
	atomic_store(&pool.job, NULL);
	if (spin_until(none_running, NULL))
		return;
	pthread_mutex_lock(&pool.lock);
	while (atomic_load(&pool.running))
		pthread_cond_wait(&pool.done_cv, &pool.lock);
	pthread_mutex_unlock(&pool.lock);
}

static unsigned ilog2(size_t v)
{
	return v ? (unsigned)(sizeof(v) * 8 - 1) - (unsigned)__builtin_clzl(v)
		 : 0;
}

/* Bit 0 is set (functions are aligned, so it is free): no key equals the
 * 0 of a slot never used. */
static uintptr_t kind_key(zr__pool_fn fn, size_t n, size_t grain)
{
	return (uintptr_t)fn ^ ((uintptr_t)ilog2(n) << 1) ^
	       ((uintptr_t)ilog2(grain) << 7) ^ 1;
}

static struct kind *kind_of(uintptr_t key)
{
	struct kind *k = &kinds[(key ^ key >> 5 ^ key >> 13) %
				ZR__POOL_KINDS];

	if (atomic_load_explicit(&k->key, memory_order_relaxed) != key) {
		atomic_store_explicit(&k->key, key, memory_order_relaxed);
		atomic_store_explicit(&k->skip, 0, memory_order_relaxed);
		atomic_store_explicit(&k->backoff, 0, memory_order_relaxed);
	}
	return k;
}

/* Whether this call of kind k runs inline (uses up one skip). */
static int kind_skips(struct kind *k)
{
	unsigned left = atomic_load_explicit(&k->skip, memory_order_relaxed);

	while (left && !atomic_compare_exchange_weak_explicit(
			&k->skip, &left, left - 1, memory_order_relaxed,
			memory_order_relaxed))
		;
	return left != 0;
}

unsigned zr__pool_backoff(unsigned backoff, uint64_t inline_ns,
			  uint64_t pooled_ns)
{
	if (pooled_ns * 16 < inline_ns * ZR__POOL_MARGIN)
		return 0;
	if (!backoff)
		return 1;
	return backoff >= ZR__POOL_BACKOFF_MAX / 2 ? ZR__POOL_BACKOFF_MAX
						   : backoff * 2;
}

/* Records the verdict on a pooled run of n items that took pooled_ns,
 * mine of which the caller did in mine_ns. */
static void kind_judge(struct kind *k, size_t n, size_t mine,
		       uint64_t mine_ns, uint64_t pooled_ns)
{
	unsigned b;

	if (!mine)
		return; /* the workers did it all: no estimate, and no loss */
	b = zr__pool_backoff(atomic_load_explicit(&k->backoff,
						  memory_order_relaxed),
			     (uint64_t)((double)mine_ns * (double)n /
					(double)mine),
			     pooled_ns);
	atomic_store_explicit(&k->backoff, b, memory_order_relaxed);
	atomic_store_explicit(&k->skip, b, memory_order_relaxed);
}

int zr__pool_run(zr__pool_fn fn, void *ctx, size_t n, size_t grain)
{
	unsigned lanes = zr__pool_lanes();
	struct job j = { .fn = fn, .ctx = ctx, .n = n };
	struct kind *k;
	uint64_t t0, t1;
	size_t mine;

	if (n == 0)
		return 0;
	if (grain == 0)
		grain = 1;
	if (lanes == 1 || pool.workers == 0 || n <= grain || in_lane)
		return fn(ctx, 0, n, 0);
	k = kind_of(kind_key(fn, n, grain));
	if (kind_skips(k))
		return fn(ctx, 0, n, 0);
	j.grain = grain;
	j.share = (size_t)lanes * ZR__POOL_CHUNK_SHARE;
	atomic_init(&j.next, 0);
	atomic_init(&j.failed, 0);
	pthread_mutex_init(&j.err_lock, NULL);
	t0 = now_ns();
	if (!job_open(&j)) {
		pthread_mutex_destroy(&j.err_lock);
		return fn(ctx, 0, n, 0);
	}
	in_lane = 1;
	mine = lane_work(&j, 0);
	in_lane = 0;
	t1 = now_ns();
	job_close();
	kind_judge(k, n, mine, t1 - t0, now_ns() - t0);
	pthread_mutex_destroy(&j.err_lock);
	if (j.error.err)
		return zr__error_replay(&j.error);
	return 0;
}
