/*
 * check_schedule.c - the batch schedule shared by `zrecord batch` and the
 * mount (src/common/schedule.h): values refused with a message, entries
 * kept in position order (as given on a tie), a mixture file's weight
 * changes merged first on a tie, a batch's need for grown lengths, and a
 * run's start with its granule (P@G, batch_stream.h).
 */
#include <errno.h>
#include <string.h>

#include "batch_stream.h"
#include "check_suites.h"
#include "schedule.h"

START_TEST(test_bad_values_are_refused)
{
	static const char *const skips[] = { "5", "5:5", "7:3", "x:9",
					     "1:2:3", ":", "", "1:" };
	static const char *const grows[] = { "5", "1:2:3:4", "4:1024:9",
					     ":", "a:b", "1::2",
					     "99999999999999999999:1" };
	zrcommon_schedule s = { 0 };
	char msg[160];

	for (size_t i = 0; i < sizeof(skips) / sizeof(*skips); i++) {
		ck_assert_int_eq(zrcommon_schedule_add(&s, ZRCOMMON_SKIP,
						       skips[i], msg,
						       sizeof(msg)), -1);
		ck_assert_ptr_nonnull(strstr(msg, "FROM < UNTIL"));
	}
	for (size_t i = 0; i < sizeof(grows) / sizeof(*grows); i++) {
		ck_assert_int_eq(zrcommon_schedule_add(&s, ZRCOMMON_GROW,
						       grows[i], msg,
						       sizeof(msg)), -1);
		ck_assert_ptr_nonnull(strstr(msg, "POSITION:LENGTH"));
	}
	ck_assert_uint_eq(s.n, 0);
	ck_assert_int_eq(zrcommon_schedule_lengths(&s, "5,,6", ',', msg,
						   sizeof(msg)), -1);
	ck_assert_ptr_nonnull(strstr(msg, "N or N,N"));
	ck_assert_int_eq(zrcommon_schedule_lengths(&s, "5:6", ':', msg,
						   sizeof(msg)), 0);
	ck_assert_uint_eq(s.nlen, 2);
	ck_assert_uint_eq(s.len[1], 6);
	zrcommon_schedule_free(&s);
}
END_TEST

START_TEST(test_order_is_by_position_then_as_given)
{
	static const char *const in[][2] = {
		{ "g", "30:0:9" }, { "s", "10:12" }, { "g", "10:1:5" },
		{ "s", "30:31" }, { "g", "0:7" },
	};
	/* positions 0, 10, 10, 30, 30: the second 10 and 30 as given */
	static const uint64_t at[] = { 0, 10, 10, 30, 30 };
	static const int kind[] = { ZRCOMMON_GROW, ZRCOMMON_SKIP,
				    ZRCOMMON_GROW, ZRCOMMON_GROW,
				    ZRCOMMON_SKIP };
	zrcommon_schedule s = { 0 };
	char msg[160];

	for (size_t i = 0; i < 5; i++)
		ck_assert_int_eq(zrcommon_schedule_add(
			&s, in[i][0][0] == 's' ? ZRCOMMON_SKIP : ZRCOMMON_GROW,
			in[i][1], msg, sizeof(msg)), 0);
	for (size_t i = 0; i < 5; i++) {
		ck_assert_uint_eq(s.e[i].at, at[i]);
		ck_assert_int_eq(s.e[i].kind, kind[i]);
	}
	ck_assert_uint_eq(s.e[0].source, 0);
	ck_assert_uint_eq(s.e[2].source, 1);
	ck_assert_uint_eq(s.e[3].length, 9);
	zrcommon_schedule_free(&s);
}
END_TEST

/* The same entries through the library in hand order give the same
 * stream as through the schedule: weights first on a tie. */
START_TEST(test_apply_merges_weights_first)
{
	uint64_t len[2] = { 10, 4 }, w0[2] = { 1, 1 }, from[1] = { 8 };
	uint64_t w1[2] = { 3, 1 }, a[64], b[64];
	zrcommon_schedule s = { 0 };
	zr_stream *x, *y;
	uint32_t sa[64], sb[64];
	char msg[160];

	ck_assert_int_eq(zrcommon_schedule_add(&s, ZRCOMMON_SKIP, "8:9", msg,
					       sizeof(msg)), 0);
	ck_assert_int_eq(zrcommon_schedule_add(&s, ZRCOMMON_GROW, "8:1:6",
					       msg, sizeof(msg)), 0);
	ck_assert_int_eq(zr_stream_new_mixture(3, 2, len, w0, &x), 0);
	ck_assert_int_eq(zrcommon_schedule_apply(&s, x, from, w1, 1, 2), 0);
	ck_assert_int_eq(zr_stream_new_mixture(3, 2, len, w0, &y), 0);
	ck_assert_int_eq(zr_stream_weights(y, 8, w1), 0);
	ck_assert_int_eq(zr_stream_skip(y, 8, 9), 0);
	ck_assert_int_eq(zr_stream_grow(y, 8, 1, 6), 0);
	ck_assert_int_eq(zr_stream_batch(x, 0, 0, 0, 1, 64, sa, a), 0);
	ck_assert_int_eq(zr_stream_batch(y, 0, 0, 0, 1, 64, sb, b), 0);
	ck_assert_mem_eq(a, b, sizeof(a));
	ck_assert_mem_eq(sa, sb, sizeof(sa));
	zr_stream_free(x);
	zr_stream_free(y);
	zrcommon_schedule_free(&s);
}
END_TEST

START_TEST(test_batch_needs_the_grown_length)
{
	zrcommon_schedule s = { 0 };
	uint64_t base = 20, have = 20;
	zr_stream *st;
	char msg[256];

	ck_assert_int_eq(zrcommon_schedule_add(&s, ZRCOMMON_GROW, "40:30",
					       msg, sizeof(msg)), 0);
	ck_assert_int_eq(zr_stream_new(ZR_SAMPLER_CYCLIC, 5, 20, 8, &st), 0);
	ck_assert_int_eq(zrcommon_schedule_apply(&s, st, NULL, NULL, 0, 1), 0);
	/* step 4 of 8 ends at 39, step 5 starts at 40 */
	ck_assert_int_eq(zrcommon_schedule_check(&s, st, 0, 4, 0, 1, 8, &base,
						 &have, msg, sizeof(msg)), 0);
	ck_assert_int_eq(zrcommon_schedule_check(&s, st, 0, 5, 0, 1, 8, &base,
						 &have, msg, sizeof(msg)),
			 -ENOENT);
	ck_assert_ptr_nonnull(strstr(msg, "source 0 has 20 records, fewer "
				     "than the 30"));
	have = 30;
	ck_assert_int_eq(zrcommon_schedule_check(&s, st, 0, 5, 0, 1, 8, &base,
						 &have, msg, sizeof(msg)), 0);
	/* -o length's count must match the sources */
	ck_assert_int_eq(zrcommon_schedule_lengths(&s, "12", ',', msg,
						   sizeof(msg)), 0);
	ck_assert_int_eq(zrcommon_schedule_base(&s, 2, &have, &base, msg,
						sizeof(msg)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(msg, "want one per source (2)"));
	ck_assert_int_eq(zrcommon_schedule_base(&s, 1, &have, &base, msg,
						sizeof(msg)), 0);
	ck_assert_uint_eq(base, 12);
	zr_stream_free(st);
	zrcommon_schedule_free(&s);
}
END_TEST

START_TEST(test_a_start_carries_its_granule)
{
	static const char *const bad[] = { "", "@", "5@", "@5", "5@0", "x",
					   "5@6@7", "5@x", "-1",
					   "99999999999999999999" };
	uint64_t p = 9, g = 9;
	char msg[320];

	ck_assert_int_eq(zrcommon_schedule_start("1280", &p, &g), 0);
	ck_assert_uint_eq(p, 1280);
	ck_assert_uint_eq(g, 0);
	ck_assert_int_eq(zrcommon_schedule_start("1280@32", &p, &g), 0);
	ck_assert_uint_eq(p, 1280);
	ck_assert_uint_eq(g, 32);
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		p = g = 7;
		ck_assert_int_eq(zrcommon_schedule_start(bad[i], &p, &g), -1);
		ck_assert_uint_eq(p, 7);
		ck_assert_uint_eq(g, 7);
	}
	/* past 0, cyclic and iid need the granule; sequential never */
	ck_assert_int_eq(zrfile_batch_resumed(ZR_SAMPLER_CYCLIC, 1280, 0, msg,
						sizeof(msg)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(msg, "start 1280 has no granule: a "
				     "cyclic stream"));
	ck_assert_int_eq(zrfile_batch_resumed(ZR_SAMPLER_IID, 5, 0, msg,
						sizeof(msg)), -EINVAL);
	ck_assert_int_eq(zrfile_batch_resumed(ZR_SAMPLER_IID, 5, 3, msg,
						sizeof(msg)), 0);
	ck_assert_int_eq(zrfile_batch_resumed(ZR_SAMPLER_CYCLIC, 0, 0, msg,
						sizeof(msg)), 0);
	ck_assert_int_eq(zrfile_batch_resumed(ZR_SAMPLER_SEQUENTIAL, 5, 0,
						msg, sizeof(msg)), 0);
}
END_TEST

Suite *suite_schedule(void)
{
	Suite *s = suite_create("schedule");
	TCase *tc = tcase_create("schedule");

	tcase_add_test(tc, test_bad_values_are_refused);
	tcase_add_test(tc, test_order_is_by_position_then_as_given);
	tcase_add_test(tc, test_apply_merges_weights_first);
	tcase_add_test(tc, test_a_start_carries_its_granule);
	tcase_add_test(tc, test_batch_needs_the_grown_length);
	suite_add_tcase(s, tc);
	return s;
}
