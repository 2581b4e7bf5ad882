/*
 * check_iopool.c - the I/O threads (src/lib/iopool.h): every item of a
 * job runs exactly once while several callers share the threads, at
 * most ZR__IO_THREADS run at once, a failure comes back with its message
 * on the caller (and no item runs twice), and an empty job is nothing.  In make check-tsan.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "check_suites.h"
#include "error.h"
#include "iopool.h"

#define ITEMS 600

struct job {
	atomic_uint seen[ITEMS];
	atomic_uint now, most;	/* items running, the most at once */
	size_t fail_at;		/* ITEMS: none */
	unsigned tag;
	unsigned slot[ITEMS];	/* written by the item alone */
};

static int item(void *ctx, size_t i)
{
	struct job *j = ctx;
	unsigned now = atomic_fetch_add(&j->now, 1) + 1, most;
	struct timespec ts = { 0, 20000 }; /* a read's wait, briefly */

	while (now > (most = atomic_load(&j->most)) &&
	       !atomic_compare_exchange_weak(&j->most, &most, now))
		;
	nanosleep(&ts, NULL);
	atomic_fetch_add(&j->seen[i], 1);
	j->slot[i] = j->tag * 100000u + (unsigned)i;
	atomic_fetch_sub(&j->now, 1);
	if (i == j->fail_at)
		return zr__fail(-EIO, "item %zu of job %u failed", i, j->tag);
	return 0;
}

static void *caller(void *arg)
{
	struct job *j = arg;

	ck_assert_int_eq(zr__io_run(item, j, ITEMS), 0);
	return NULL;
}

START_TEST(test_every_item_once_across_callers)
{
	static struct job jobs[3];
	pthread_t t[3];

	for (unsigned c = 0; c < 3; c++) {
		memset(&jobs[c], 0, sizeof(jobs[c]));
		jobs[c].fail_at = ITEMS;
		jobs[c].tag = c + 1;
		ck_assert_int_eq(pthread_create(&t[c], NULL, caller, &jobs[c]),
				 0);
	}
	for (unsigned c = 0; c < 3; c++)
		pthread_join(t[c], NULL);
	for (unsigned c = 0; c < 3; c++) {
		for (size_t i = 0; i < ITEMS; i++) {
			ck_assert_uint_eq(atomic_load(&jobs[c].seen[i]), 1);
			ck_assert_uint_eq(jobs[c].slot[i],
					  (c + 1) * 100000u + i);
		}
		ck_assert_uint_le(atomic_load(&jobs[c].most), ZR__IO_THREADS);
	}
}
END_TEST

START_TEST(test_items_run_at_once)
{
	static struct job j;

	memset(&j, 0, sizeof(j));
	j.fail_at = ITEMS;
	ck_assert_int_eq(zr__io_run(item, &j, ITEMS), 0);
	/* each item sleeps: the threads overlap them */
	ck_assert_uint_gt(atomic_load(&j.most), 1);
	ck_assert_uint_le(atomic_load(&j.most), ZR__IO_THREADS);
}
END_TEST

START_TEST(test_failure_replayed)
{
	static struct job j;
	size_t ran = 0;

	memset(&j, 0, sizeof(j));
	j.fail_at = 3;
	j.tag = 7;
	zr__clear();
	ck_assert_int_eq(zr__io_run(item, &j, ITEMS), -EIO);
	ck_assert_str_eq(zr_errmsg(), "item 3 of job 7 failed");
	/* none twice; how many ran before the failure was seen depends on
	 * the scheduler, so only the failed one is sure */
	for (size_t i = 0; i < ITEMS; i++) {
		ck_assert_uint_le(atomic_load(&j.seen[i]), 1);
		ran += atomic_load(&j.seen[i]);
	}
	ck_assert_uint_ge(ran, 1);
	ck_assert_uint_eq(atomic_load(&j.seen[3]), 1);
	/* the threads serve the next job */
	memset(&j, 0, sizeof(j));
	j.fail_at = ITEMS;
	ck_assert_int_eq(zr__io_run(item, &j, 10), 0);
	ck_assert_uint_eq(atomic_load(&j.seen[9]), 1);
}
END_TEST

START_TEST(test_empty_job)
{
	ck_assert_int_eq(zr__io_run(item, NULL, 0), 0);
}
END_TEST

Suite *suite_iopool(void)
{
	Suite *s = suite_create("iopool");
	TCase *tc = tcase_create("iopool");

	tcase_add_test(tc, test_every_item_once_across_callers);
	tcase_add_test(tc, test_items_run_at_once);
	tcase_add_test(tc, test_failure_replayed);
	tcase_add_test(tc, test_empty_job);
	suite_add_tcase(s, tc);
	return s;
}
