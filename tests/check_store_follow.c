/*
 * check_store_follow.c - the lock scheme (zrecord.h, Locking) and
 * followers: which handles share a store, a seed-style meta.zr lock
 * against each of them, delete and compact refused while a follower reads,
 * and zr_store_refresh taking up exactly what the writer synced, also
 * while gathers run in other threads.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "check_suites.h"
#include "check_util.h"
#include "zrecord.h"

#define FOLLOW (ZR_OPEN_RDONLY | ZR_OPEN_FOLLOW)

static zr_store *writer(char *path, size_t cap)
{
	zr_schema sc = ck_schema("<u4", 1, (const uint64_t[]){ 4 });
	zr_store *s = ck_store(ck_dir, "s", &sc, ZR_CODEC_ZSTD);

	ck_path(path, cap, ck_dir, "s");
	return s;
}

/* Row i holds i, i+1, i+2, i+3: a gather shows which record it read. */
static void append_rows(zr_store *s, uint32_t first, uint32_t n)
{
	uint32_t r[64][4];

	ck_assert_uint_le(n, 64);
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t j = 0; j < 4; j++)
			r[i][j] = first + i + j;
	ck_assert_int_eq(zr_store_append_dense(s, r, n), 0);
}

static int row_ok(const uint32_t *r, uint64_t i)
{
	for (uint32_t j = 0; j < 4; j++)
		if (r[j] != (uint32_t)i + j)
			return 0;
	return 1;
}

/* A process that takes meta.zr alone, as the seed does. */
static int seed_lock(const char *path)
{
	char p[4200];
	int fd;

	snprintf(p, sizeof(p), "%s/meta.zr", path);
	fd = open(p, O_RDWR | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		close(fd);
		return -1;
	}
	return fd;
}

START_TEST(writer_and_followers_share)
{
	char p[4096];
	zr_store *w = writer(p, sizeof(p)), *f1, *f2, *x;

	ck_assert_int_eq(zr_store_open(p, FOLLOW, &f1), 0);
	ck_assert_int_eq(zr_store_open(p, FOLLOW, &f2), 0);
	ck_assert_int_eq(zr_store_open(p, 0, &x), ZR_E_BUSY);
	ck_assert_int_eq(zr_store_open(p, ZR_OPEN_RDONLY, &x), ZR_E_BUSY);
	ck_assert_ptr_nonnull(strstr(zr_errmsg(), "ZR_OPEN_FOLLOW"));
	ck_assert_int_eq(zr_store_open(p, ZR_OPEN_FOLLOW, &x), -EINVAL);
	ck_assert_int_eq(zr_store_close(w), 0);
	ck_assert_int_eq(zr_store_close(f1), 0);
	ck_assert_int_eq(zr_store_close(f2), 0);
}
END_TEST

START_TEST(reader_keeps_writers_out)
{
	char p[4096];
	zr_store *r, *f, *x;

	ck_assert_int_eq(zr_store_close(writer(p, sizeof(p))), 0);
	ck_assert_int_eq(zr_store_open(p, ZR_OPEN_RDONLY, &r), 0);
	ck_assert_int_eq(zr_store_open(p, 0, &x), ZR_E_BUSY);
	ck_assert_int_eq(zr_store_open(p, FOLLOW, &f), 0);
	ck_assert_int_eq(zr_store_close(r), 0);
	ck_assert_int_eq(zr_store_open(p, 0, &x), 0);
	ck_assert_int_eq(zr_store_close(x), 0);
	ck_assert_int_eq(zr_store_close(f), 0);
}
END_TEST

START_TEST(seed_lock_excludes_every_handle)
{
	char p[4096];
	unsigned modes[3] = { 0, ZR_OPEN_RDONLY, FOLLOW };
	zr_store *x;
	int fd;

	ck_assert_int_eq(zr_store_close(writer(p, sizeof(p))), 0);
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(zr_store_open(p, modes[i], &x), 0);
		ck_assert_int_eq(seed_lock(p), -1);
		ck_assert_int_eq(zr_store_close(x), 0);
	}
	fd = seed_lock(p);
	ck_assert_int_ge(fd, 0);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(zr_store_open(p, modes[i], &x), ZR_E_BUSY);
	close(fd);
}
END_TEST

START_TEST(maintenance_waits_for_followers)
{
	char p[4096];
	zr_store *w = writer(p, sizeof(p)), *f;
	uint64_t idx = 0;
	uint32_t r[4];

	append_rows(w, 0, 3);
	ck_assert_int_eq(zr_store_sync(w), 0);
	ck_assert_int_eq(zr_store_open(p, FOLLOW, &f), 0);
	ck_assert_int_eq(zr_store_delete(w, &idx, 1), ZR_E_BUSY);
	ck_assert_ptr_nonnull(strstr(zr_errmsg(), "follower"));
	ck_assert_int_eq(zr_store_compact(w, NULL, NULL), ZR_E_BUSY);
	ck_assert_uint_eq(zr_store_length(w), 3);
	/* the writer kept its place: it appends, and a seed cannot get in */
	append_rows(w, 3, 1);
	ck_assert_int_eq(zr_store_sync(w), 0);
	ck_assert_int_eq(seed_lock(p), -1);
	ck_assert_int_eq(zr_store_close(f), 0);
	ck_assert_int_eq(zr_store_delete(w, &idx, 1), 0);
	/* and shares it again after the delete: followers come back */
	ck_assert_int_eq(zr_store_open(p, FOLLOW, &f), 0);
	ck_assert_uint_eq(zr_store_length(f), 3);
	ck_assert_int_eq(zr_store_gather(f, &idx, 1, r, sizeof(r), NULL), 0);
	ck_assert(row_ok(r, 3)); /* swap-last moved record 3 to 0 */
	ck_assert_int_eq(zr_store_close(f), 0);
	ck_assert_int_eq(zr_store_close(w), 0);
}
END_TEST

START_TEST(refresh_takes_up_synced_records_only)
{
	char p[4096];
	zr_store *w = writer(p, sizeof(p)), *f;
	uint64_t idx[5] = { 0, 1, 2, 3, 4 };
	uint32_t r[5][4];

	append_rows(w, 0, 2);
	ck_assert_int_eq(zr_store_sync(w), 0);
	ck_assert_int_eq(zr_store_open(p, FOLLOW, &f), 0);
	ck_assert_uint_eq(zr_store_length(f), 2);
	append_rows(w, 2, 3);
	ck_assert_int_eq(zr_store_refresh(f), 0);
	ck_assert_uint_eq(zr_store_length(f), 2); /* not synced yet */
	ck_assert_int_eq(zr_store_sync(w), 0);
	ck_assert_uint_eq(zr_store_length(f), 2); /* not refreshed yet */
	ck_assert_int_eq(zr_store_refresh(f), 0);
	ck_assert_uint_eq(zr_store_length(f), 5);
	ck_assert_int_eq(zr_store_gather(f, idx, 5, r, sizeof(r), NULL), 0);
	for (int i = 0; i < 5; i++)
		ck_assert(row_ok(r[i], (uint64_t)i));
	ck_assert_int_eq(zr_store_refresh(f), 0);
	ck_assert_uint_eq(zr_store_length(f), 5);
	ck_assert_int_eq(zr_store_close(w), 0);
	ck_assert_int_eq(zr_store_close(f), 0);
}
END_TEST

START_TEST(refresh_stats_follow)
{
	char p[4096];
	zr_store *w = writer(p, sizeof(p)), *f;
	zr_stats a, b;

	append_rows(w, 0, 4);
	ck_assert_int_eq(zr_store_sync(w), 0);
	ck_assert_int_eq(zr_store_open(p, FOLLOW, &f), 0);
	ck_assert_int_eq(zr_store_stats(f, &a), 0); /* live sum now known */
	append_rows(w, 4, 7);
	ck_assert_int_eq(zr_store_sync(w), 0);
	ck_assert_int_eq(zr_store_refresh(f), 0);
	ck_assert_int_eq(zr_store_stats(f, &a), 0);
	ck_assert_int_eq(zr_store_stats(w, &b), 0);
	ck_assert_uint_eq(a.records, 11);
	ck_assert_uint_eq(a.live_bytes, b.live_bytes);
	ck_assert_uint_eq(a.data_bytes, b.data_bytes);
	ck_assert_int_eq(zr_store_close(w), 0);
	ck_assert_int_eq(zr_store_close(f), 0);
}
END_TEST

/* Three synced rows, their writer gone, and a follower of them: the
 * tests below then change the files as another writer would. */
static zr_store *three_rows_followed(void)
{
	char p[4096];
	zr_store *w = writer(p, sizeof(p)), *f;

	append_rows(w, 0, 3);
	ck_assert_int_eq(zr_store_close(w), 0);
	ck_assert_int_eq(zr_store_open(p, FOLLOW, &f), 0);
	return f;
}

START_TEST(refresh_waits_for_files_and_refuses_shrink)
{
	zr_store *f = three_rows_followed();
	uint8_t h[16], bad[16];

	ck_file_read(ck_dir, "s/meta.zr", 0, h, sizeof(h));
	/* a header whose table is not on disk yet: left for later */
	memcpy(bad, h, sizeof(bad));
	bad[0] = 200;
	ck_file_write(ck_dir, "s/meta.zr", 0, bad, sizeof(bad));
	ck_assert_int_eq(zr_store_refresh(f), 0);
	ck_assert_uint_eq(zr_store_length(f), 3);
	/* a header that shrank: the lock did not reach its writer */
	bad[0] = 1;
	ck_file_write(ck_dir, "s/meta.zr", 0, bad, sizeof(bad));
	ck_assert_int_eq(zr_store_refresh(f), ZR_E_CHANGED);
	ck_assert_uint_eq(zr_store_length(f), 3);
	ck_assert_int_eq(zr_store_close(f), 0);
}
END_TEST

START_TEST(refresh_refuses_bad_entries)
{
	zr_store *f = three_rows_followed();
	uint8_t h[16], loc[16];

	/* one more entry, pointing past the frontier */
	ck_file_read(ck_dir, "s/meta.zr", 4096 + 2 * 16, loc, sizeof(loc));
	loc[0] += 200;
	ck_file_write(ck_dir, "s/meta.zr", 4096 + 3 * 16, loc, sizeof(loc));
	ck_file_read(ck_dir, "s/meta.zr", 0, h, sizeof(h));
	h[0] = 4;
	ck_file_write(ck_dir, "s/meta.zr", 0, h, sizeof(h));
	ck_assert_int_eq(zr_store_refresh(f), ZR_E_CORRUPT);
	ck_assert_uint_eq(zr_store_length(f), 3);
	ck_assert_int_eq(zr_store_close(f), 0);
}
END_TEST

struct gatherer {
	zr_store *f;
	atomic_int stop;
	int bad;
	uint64_t seen;
};

static void *gather_loop(void *arg)
{
	struct gatherer *g = arg;
	uint32_t r[8][4];

	while (!atomic_load(&g->stop)) {
		uint64_t n = zr_store_length(g->f), idx[8];

		for (int i = 0; i < 8; i++)
			idx[i] = n - 1 - (uint64_t)i % n;
		if (zr_store_gather(g->f, idx, 8, r, sizeof(r), NULL))
			g->bad++;
		for (int i = 0; i < 8; i++)
			g->bad += !row_ok(r[i], idx[i]);
		g->seen = n;
	}
	return NULL;
}

START_TEST(refresh_beside_gathers)
{
	char p[4096];
	zr_store *w = writer(p, sizeof(p));
	struct gatherer g = { 0 };
	pthread_t t;

	append_rows(w, 0, 8);
	ck_assert_int_eq(zr_store_sync(w), 0);
	ck_assert_int_eq(zr_store_open(p, FOLLOW, &g.f), 0);
	ck_assert_int_eq(pthread_create(&t, NULL, gather_loop, &g), 0);
	for (uint32_t n = 8; n < 8 + 200 * 5; n += 5) {
		append_rows(w, n, 5);
		ck_assert_int_eq(zr_store_sync(w), 0);
		ck_assert_int_eq(zr_store_refresh(g.f), 0);
		ck_assert_uint_eq(zr_store_length(g.f), n + 5);
	}
	atomic_store(&g.stop, 1);
	pthread_join(t, NULL);
	ck_assert_int_eq(g.bad, 0);
	ck_assert_uint_gt(g.seen, 8);
	ck_assert_int_eq(zr_store_close(w), 0);
	ck_assert_int_eq(zr_store_close(g.f), 0);
}
END_TEST

Suite *suite_store_follow(void)
{
	Suite *su = suite_create("store_follow");
	TCase *tc = tcase_create("follow");

	tcase_add_checked_fixture(tc, ck_dir_setup, ck_dir_teardown);
	tcase_add_test(tc, writer_and_followers_share);
	tcase_add_test(tc, reader_keeps_writers_out);
	tcase_add_test(tc, seed_lock_excludes_every_handle);
	tcase_add_test(tc, maintenance_waits_for_followers);
	tcase_add_test(tc, refresh_takes_up_synced_records_only);
	tcase_add_test(tc, refresh_stats_follow);
	tcase_add_test(tc, refresh_waits_for_files_and_refuses_shrink);
	tcase_add_test(tc, refresh_refuses_bad_entries);
	tcase_add_test(tc, refresh_beside_gathers);
	suite_add_tcase(su, tc);
	return su;
}
