/*
 * check_pool.c - the worker pool: every item is worked exactly once in
 * contiguous blocks, failures come back with their message on the caller,
 * nested and concurrent jobs complete instead of deadlocking, and a kind
 * of job for which the pool did not pay runs inline for a while.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check_suites.h"
#include "error.h"
#include "pool.h"

struct count_job {
	atomic_uint *seen;
	atomic_uint blocks;
	size_t grain;
	atomic_int short_block; /* a block under grain that is not the last */
	size_t n;
};

static int count_items(void *ctx, size_t b, size_t e, unsigned lane)
{
	struct count_job *j = ctx;

	ck_assert_uint_lt(lane, zr__pool_lanes());
	ck_assert_uint_lt(b, e);
	if (e - b < j->grain && e != j->n)
		atomic_store(&j->short_block, 1);
	for (size_t i = b; i < e; i++)
		atomic_fetch_add(&j->seen[i], 1);
	atomic_fetch_add(&j->blocks, 1);
	return 0;
}

static void run_count(size_t n, size_t grain)
{
	struct count_job j = { .grain = grain, .n = n };

	j.seen = calloc(n ? n : 1, sizeof(*j.seen));
	ck_assert_int_eq(zr__pool_run(count_items, &j, n, grain), 0);
	for (size_t i = 0; i < n; i++)
		ck_assert_uint_eq(atomic_load(&j.seen[i]), 1);
	ck_assert_int_eq(atomic_load(&j.short_block), 0);
	if (n == 0)
		ck_assert_uint_eq(atomic_load(&j.blocks), 0);
	free(j.seen);
}

START_TEST(test_every_item_once)
{
	ck_assert_uint_ge(zr_pool_lanes(), 1);
	ck_assert_uint_eq(zr_pool_lanes(), zr__pool_lanes());
	run_count(0, 1);
	run_count(1, 1);
	run_count(7, 1);
	run_count(100000, 1);
	run_count(100000, 3000);
	/* Shrinking chunks never leave a short one but the last. */
	run_count(5999, 3000);
	run_count(6001, 3000);
	run_count(9001, 3000);
	run_count(12345, 100000);
}
END_TEST

static int fail_at(void *ctx, size_t b, size_t e, unsigned lane)
{
	size_t bad = *(size_t *)ctx;

	(void)lane;
	if (bad >= b && bad < e)
		return zr__fail(ZR_E_CORRUPT, "item %zu is bad", bad);
	return 0;
}

START_TEST(test_failure_replayed)
{
	size_t bad = 4321;

	zr__clear();
	ck_assert_int_eq(zr__pool_run(fail_at, &bad, 10000, 1), ZR_E_CORRUPT);
	ck_assert_str_eq(zr_errmsg(), "item 4321 is bad");
	bad = 0;
	ck_assert_int_eq(zr__pool_run(fail_at, &bad, 1, 1), ZR_E_CORRUPT);
	ck_assert_str_eq(zr_errmsg(), "item 0 is bad");
	bad = 99999;
	ck_assert_int_eq(zr__pool_run(fail_at, &bad, 5000, 1), 0);
}
END_TEST

static int nested(void *ctx, size_t b, size_t e, unsigned lane)
{
	atomic_uint *total = ctx;

	(void)lane;
	for (size_t i = b; i < e; i++) {
		struct count_job j = { .grain = 1, .n = 50 };

		j.seen = calloc(50, sizeof(*j.seen));
		if (zr__pool_run(count_items, &j, 50, 1))
			return ZR_E_CODEC;
		for (size_t k = 0; k < 50; k++)
			atomic_fetch_add(total, atomic_load(&j.seen[k]));
		free(j.seen);
	}
	return 0;
}

START_TEST(test_nested_runs_inline)
{
	atomic_uint total = 0;

	ck_assert_int_eq(zr__pool_run(nested, &total, 64, 1), 0);
	ck_assert_uint_eq(atomic_load(&total), 64 * 50);
}
END_TEST

static void *caller_thread(void *arg)
{
	(void)arg;
	for (int r = 0; r < 50; r++)
		run_count(2000 + (size_t)r, 1);
	return NULL;
}

START_TEST(test_concurrent_callers)
{
	pthread_t t[4];

	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, caller_thread,
						NULL), 0);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_join(t[i], NULL), 0);
}
END_TEST

/* ZR_THREADS is read when the pool starts: in a fresh test process (Check
 * forks one per test) that is here.  A forked child checks ZR_THREADS=0. */
START_TEST(test_threads_env)
{
	const char *fork_mode = getenv("CK_FORK");
	int status;
	pid_t pid;

	if (fork_mode && strcmp(fork_mode, "no") == 0) {
		ck_assert_uint_ge(zr_pool_lanes(), 1); /* already started */
		return;
	}
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		setenv("ZR_THREADS", "0", 1);
		if (zr_pool_lanes() != 1)
			_exit(1);
		run_count(1000, 1);
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	setenv("ZR_THREADS", "3", 1);
	ck_assert_uint_eq(zr_pool_lanes(), 4);
	run_count(100000, 1);
}
END_TEST

START_TEST(test_backoff_verdict)
{
	/* Pays: faster than the inline estimate. */
	ck_assert_uint_eq(zr__pool_backoff(0, 1600, 1599), 0);
	ck_assert_uint_eq(zr__pool_backoff(8, 1600, 100), 0);
	/* Does not pay: 1, then doubling up to the cap of 16. */
	ck_assert_uint_eq(zr__pool_backoff(0, 1600, 1600), 1);
	ck_assert_uint_eq(zr__pool_backoff(1, 1000, 5000), 2);
	ck_assert_uint_eq(zr__pool_backoff(4, 1000, 1000), 8);
	ck_assert_uint_eq(zr__pool_backoff(8, 1000, 1001), 16);
	ck_assert_uint_eq(zr__pool_backoff(16, 1000, 1000), 16);
}
END_TEST

/* A job whose worker lanes stall (as a worker descheduled while it holds
 * a chunk does) and whose caller lane is instant: the pool never pays. */
struct stall_job {
	unsigned calls;       /* fn calls (blocks) in the last run */
	unsigned other_lanes; /* of which on a worker lane */
};

static int stall_items(void *ctx, size_t b, size_t e, unsigned lane)
{
	struct stall_job *j = ctx;
	struct timespec ts = { 0, 5000000 };

	(void)b;
	(void)e;
	__atomic_add_fetch(&j->calls, 1, __ATOMIC_SEQ_CST);
	if (lane) {
		__atomic_add_fetch(&j->other_lanes, 1, __ATOMIC_SEQ_CST);
		nanosleep(&ts, NULL);
	}
	return 0;
}

/* Runs the stall job over n items; returns whether it ran inline (one
 * call on the caller's lane: a pooled run always splits n into chunks). */
static int stall_inline(size_t n)
{
	struct stall_job j = { 0, 0 };

	ck_assert_int_eq(zr__pool_run(stall_items, &j, n, 1), 0);
	return j.calls == 1 && j.other_lanes == 0;
}

START_TEST(test_unpaid_kind_runs_inline)
{
	const char *fork_mode = getenv("CK_FORK");

	/* A fresh test process (Check forks one per test) starts its pool
	 * here: give it a worker whatever the machine. */
	if (!fork_mode || strcmp(fork_mode, "no"))
		setenv("ZR_THREADS", "1", 1);
	if (zr__pool_lanes() < 2)
		return; /* CK_FORK=no with ZR_THREADS=0: nothing to judge */
	/* A pooled run takes at least the caller's own time, and the
	 * estimate is that time when no worker joined (a worker that did
	 * stalls 5 ms), so it never beats the inline estimate here: 1 call
	 * inline, then 2, then 4. */
	ck_assert(!stall_inline(1000));
	ck_assert(stall_inline(1000));
	ck_assert(!stall_inline(1000));
	ck_assert(stall_inline(1000));
	ck_assert(stall_inline(1000));
	ck_assert(!stall_inline(1000));
	/* Another kind (n of another power of two) has its own verdict. */
	ck_assert(!stall_inline(5000));
	for (int i = 0; i < 4; i++)
		ck_assert(stall_inline(1000));
	ck_assert(!stall_inline(1000));
}
END_TEST

Suite *suite_pool(void)
{
	Suite *s = suite_create("pool");
	TCase *tc = tcase_create("pool");

	tcase_add_test(tc, test_every_item_once);
	tcase_add_test(tc, test_failure_replayed);
	tcase_add_test(tc, test_nested_runs_inline);
	tcase_add_test(tc, test_concurrent_callers);
	tcase_add_test(tc, test_threads_env);
	tcase_add_test(tc, test_backoff_verdict);
	tcase_add_test(tc, test_unpaid_kind_runs_inline);
	suite_add_tcase(s, tc);
	return s;
}
