/*
 * check_prefetch.c - the prefetcher (src/prefetch) over a fake gather:
 * what arms a sequence, that a take gets exactly the version asked for,
 * that the budget bounds what is held, that a take of a step still being
 * gathered stops it, that the foreground pauses it, and that free
 * releases everything.  No test asserts on time: each waits for the
 * event it needs.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check_suites.h"
#include "prefetch.h"

#define SIZE 4096

/* What the fake gather did, for the tests to wait on and check. */
static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned gathers, cancelled;
	size_t live, max_live;	/* bytes made and not released yet */
	uint64_t gen;
	unsigned by_seed[3];	/* gathers of each sequence           */
	int gate;		/* 1: gathers wait until it is 0      */
	unsigned entered;	/* gathers begun                      */
	atomic_int foreground;	/* the test has a "request" running  */
	int went_busy;		/* a piece ran while it had           */
} fk;

static void fake_reset(void)
{
	memset(&fk, 0, sizeof(fk));
	pthread_mutex_init(&fk.mu, NULL);
	pthread_cond_init(&fk.cv, NULL);
}

static int fake_gather(void *ctx, const struct zrpf_seq *s, uint64_t step,
		       zrpf *pf, struct zrpf_batch *out)
{
	int err;

	(void)ctx;
	pthread_mutex_lock(&fk.mu);
	fk.entered++;
	pthread_cond_broadcast(&fk.cv);
	while (fk.gate)
		pthread_cond_wait(&fk.cv, &fk.mu);
	pthread_mutex_unlock(&fk.mu);
	err = zrpf_go(pf);
	if (!err && atomic_load(&fk.foreground))
		fk.went_busy = 1;
	pthread_mutex_lock(&fk.mu);
	if (err) {
		fk.cancelled++;
	} else {
		out->buf = malloc(SIZE);
		out->cap = SIZE;
		out->size = SIZE;
		out->ver[0] = step * 10 + s->seed;
		out->ver[1] = fk.gen;
		memset(out->buf, (int)(step & 0xff), SIZE);
		fk.live += SIZE;
		if (fk.live > fk.max_live)
			fk.max_live = fk.live;
		fk.gathers++;
		fk.by_seed[s->seed % 3]++;
	}
	pthread_cond_broadcast(&fk.cv);
	pthread_mutex_unlock(&fk.mu);
	return err;
}

static void fake_release(void *ctx, char *buf, size_t cap)
{
	(void)ctx;
	free(buf);
	pthread_mutex_lock(&fk.mu);
	fk.live -= cap;
	pthread_mutex_unlock(&fk.mu);
}

static zrpf *start(unsigned depth, uint64_t budget)
{
	struct zrpf_conf c = { .depth = depth, .budget = budget,
			       .gather = fake_gather,
			       .release = fake_release };
	zrpf *pf = NULL;

	fake_reset();
	ck_assert_int_eq(zrpf_new(&c, &pf), 0);
	return pf;
}

static void wait_entered(void)
{
	pthread_mutex_lock(&fk.mu);
	while (!fk.entered)
		pthread_cond_wait(&fk.cv, &fk.mu);
	pthread_mutex_unlock(&fk.mu);
}

/* Until n steps were gathered and filed (the fake's count comes first:
 * the prefetcher files a step after its gather returns). */
static void wait_gathers(zrpf *pf, unsigned n)
{
	const struct timespec nap = { .tv_nsec = 1000000 };
	struct zrpf_counts c;

	for (zrpf_count(pf, &c); c.gathered < n; zrpf_count(pf, &c))
		nanosleep(&nap, NULL);
}

static const struct zrpf_seq SEQ_A = { .src = &fk, .seed = 1 };
static const struct zrpf_seq SEQ_B = { .src = &fk, .seed = 2 };

/* Takes step of s at the fake's version; 1 if it was there. */
static int take(zrpf *pf, const struct zrpf_seq *s, uint64_t step)
{
	uint64_t ver[2] = { step * 10 + s->seed, fk.gen };
	struct zrpf_batch b;

	if (!zrpf_take(pf, s, step, ver, SIZE, &b))
		return 0;
	ck_assert_uint_eq(b.size, SIZE);
	for (size_t i = 0; i < SIZE; i++)
		ck_assert_int_eq((unsigned char)b.buf[i], step & 0xff);
	fake_release(NULL, b.buf, b.cap);
	return 1;
}

/* Takes steps step and step + 1 of s, then frees the prefetcher: nothing
 * of the fake's may be left. */
static void take_pair_and_free(zrpf *pf, const struct zrpf_seq *s,
			       uint64_t step)
{
	ck_assert(take(pf, s, step) && take(pf, s, step + 1));
	zrpf_free(pf, NULL);
	ck_assert_uint_eq(fk.live, 0);
}

START_TEST(test_consecutive_steps_arm_and_take_matches_exactly)
{
	zrpf *pf = start(2, 1 << 20);
	uint64_t wrong[2] = { 999, 0 };
	struct zrpf_batch b;

	zrpf_hint(pf, &SEQ_A, 0, 0, SIZE);
	zrpf_hint(pf, &SEQ_A, 1, 0, SIZE);
	wait_gathers(pf, 2);
	ck_assert(take(pf, &SEQ_A, 3));
	ck_assert(!zrpf_take(pf, &SEQ_A, 2, wrong, SIZE, &b));
	ck_assert(!take(pf, &SEQ_B, 3)); /* another sequence's */
	zrpf_free(pf, NULL);
	ck_assert_uint_eq(fk.live, 0);
}
END_TEST

START_TEST(test_random_steps_arm_nothing)
{
	zrpf *pf = start(2, 1 << 20);
	struct zrpf_counts n;

	zrpf_hint(pf, &SEQ_A, 5, 0, SIZE);
	zrpf_hint(pf, &SEQ_A, 2, 0, SIZE);
	zrpf_hint(pf, &SEQ_A, 9, 0, SIZE);
	zrpf_hint(pf, &SEQ_A, 9, 0, SIZE); /* the same step again */
	/* B armed after A: its gathers run once A had its chance */
	zrpf_hint(pf, &SEQ_B, 0, 0, SIZE);
	zrpf_hint(pf, &SEQ_B, 1, 0, SIZE);
	wait_gathers(pf, 2);
	ck_assert(take(pf, &SEQ_B, 2) && take(pf, &SEQ_B, 3));
	ck_assert(!take(pf, &SEQ_A, 10));
	zrpf_free(pf, &n);
	ck_assert_uint_eq(fk.by_seed[SEQ_A.seed], 0);
	ck_assert_uint_ge(n.gathered, 2);
	ck_assert_uint_eq(n.served, 2);
}
END_TEST

START_TEST(test_budget_bounds_what_is_held)
{
	zrpf *pf = start(4, 2 * SIZE);

	zrpf_hint(pf, &SEQ_A, 0, 0, SIZE);
	zrpf_hint(pf, &SEQ_A, 1, 0, SIZE);
	wait_gathers(pf, 2);
	/* a newer sequence takes the room of the older one's steps */
	zrpf_hint(pf, &SEQ_B, 0, 0, SIZE);
	zrpf_hint(pf, &SEQ_B, 1, 0, SIZE);
	wait_gathers(pf, 4);
	/* before any take: what is held is the prefetcher's alone */
	pthread_mutex_lock(&fk.mu);
	ck_assert_uint_le(fk.max_live, 2 * SIZE);
	pthread_mutex_unlock(&fk.mu);
	take_pair_and_free(pf, &SEQ_B, 2);
}
END_TEST

START_TEST(test_take_of_a_running_step_stops_it)
{
	zrpf *pf = start(1, 1 << 20);

	fk.gate = 1;
	zrpf_hint(pf, &SEQ_A, 0, 0, SIZE);
	zrpf_hint(pf, &SEQ_A, 1, 0, SIZE);
	wait_entered();
	ck_assert(!take(pf, &SEQ_A, 2)); /* not ready: stop it */
	pthread_mutex_lock(&fk.mu);
	fk.gate = 0;
	pthread_cond_broadcast(&fk.cv);
	while (!fk.cancelled)
		pthread_cond_wait(&fk.cv, &fk.mu);
	pthread_mutex_unlock(&fk.mu);
	zrpf_free(pf, NULL);
	ck_assert_uint_eq(fk.gathers, 0);
}
END_TEST

START_TEST(test_a_new_generation_drops_the_old_steps)
{
	zrpf *pf = start(2, 1 << 20);

	zrpf_hint(pf, &SEQ_A, 0, 0, SIZE);
	zrpf_hint(pf, &SEQ_A, 1, 0, SIZE);
	wait_gathers(pf, 2);
	pthread_mutex_lock(&fk.mu);
	fk.gen = 1; /* a delete: gathers from now on are of gen 1 */
	pthread_mutex_unlock(&fk.mu);
	zrpf_hint(pf, &SEQ_A, 2, 1, SIZE);
	wait_gathers(pf, 4);
	take_pair_and_free(pf, &SEQ_A, 3);
}
END_TEST

START_TEST(test_foreground_requests_pause_the_gathers)
{
	zrpf *pf = start(2, 1 << 20);

	atomic_store(&fk.foreground, 1);
	zrpf_busy(pf, 1);
	zrpf_hint(pf, &SEQ_A, 0, 0, SIZE);
	zrpf_hint(pf, &SEQ_A, 1, 0, SIZE);
	wait_entered();
	atomic_store(&fk.foreground, 0);
	zrpf_busy(pf, -1);
	wait_gathers(pf, 2);
	ck_assert(!fk.went_busy);
	zrpf_free(pf, NULL);
}
END_TEST

START_TEST(test_bad_configurations_are_refused)
{
	struct zrpf_conf c = { .depth = 0, .budget = 1,
			       .gather = fake_gather,
			       .release = fake_release };
	zrpf *pf = NULL;

	ck_assert_int_eq(zrpf_new(&c, &pf), -EINVAL);
	c.depth = ZRPF_DEPTH_MAX + 1;
	ck_assert_int_eq(zrpf_new(&c, &pf), -EINVAL);
	c.depth = 1;
	c.budget = 0;
	ck_assert_int_eq(zrpf_new(&c, &pf), -EINVAL);
	ck_assert_ptr_null(pf);
	zrpf_free(NULL, NULL);
	zrpf_busy(NULL, 1);
	ck_assert_uint_gt(zrpf_default_budget(), 0);
	ck_assert_uint_le(zrpf_default_budget(), 1ull << 30);
}
END_TEST

Suite *suite_prefetch(void)
{
	Suite *s = suite_create("prefetch");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_consecutive_steps_arm_and_take_matches_exactly);
	tcase_add_test(tc, test_random_steps_arm_nothing);
	tcase_add_test(tc, test_budget_bounds_what_is_held);
	tcase_add_test(tc, test_take_of_a_running_step_stops_it);
	tcase_add_test(tc, test_a_new_generation_drops_the_old_steps);
	tcase_add_test(tc, test_foreground_requests_pause_the_gathers);
	tcase_add_test(tc, test_bad_configurations_are_refused);
	suite_add_tcase(s, tc);
	return s;
}
