/*
 * check_store_sigbus.c - zr_sigbus_guard: with the guard on, a store file
 * truncated behind the library's back (what a media error looks like to a
 * reader of a mapping: SIGBUS) fails the one call with -EIO and a message
 * naming the file, and the process goes on serving other stores; a SIGBUS
 * the library did not cause still reaches the handler installed before.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_suites.h"
#include "check_util.h"
#include "zrecord.h"

#define ROW 1000u  /* mapped (under 64 KiB), several per page */
#define ROWS 200u
#define FAR 150u   /* a record well past data.zr's first page */

/* Incompressible rows, so zstd frames stay about ROW bytes and the
 * records spread over many pages. */
static void noise(uint8_t *p, size_t len, uint64_t seed)
{
	uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;

	for (size_t i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (uint8_t)(x >> 24);
	}
}

static uint8_t *rows_of(uint64_t seed)
{
	uint8_t *rows = malloc((size_t)ROWS * ROW);

	ck_assert_ptr_nonnull(rows);
	noise(rows, (size_t)ROWS * ROW, seed);
	return rows;
}

static void make_dense(const char *name, zr_codec codec, uint64_t seed)
{
	uint64_t shape[1] = { ROW };
	zr_schema sc = ck_schema("|u1", 1, shape);
	uint8_t *rows = rows_of(seed);
	zr_store *s = ck_store(ck_dir, name, &sc, codec);

	ck_assert_int_eq(zr_store_append_dense(s, rows, ROWS), 0);
	ck_assert_int_eq(zr_store_close(s), 0);
	free(rows);
}

static void make_ragged(const char *name)
{
	zr_schema sc = ck_schema("|u1", -1, NULL);
	uint8_t *rows = rows_of(3);
	zr_ragged_in recs[ROWS];
	uint64_t shapes[ROWS];
	zr_store *s = ck_store(ck_dir, name, &sc, ZR_CODEC_ZSTD);

	for (unsigned i = 0; i < ROWS; i++) {
		shapes[i] = ROW - 16;
		recs[i] = (zr_ragged_in){ .ndim = 1, .shape = &shapes[i],
					  .data = rows + (size_t)i * ROW };
	}
	ck_assert_int_eq(zr_store_append_ragged(s, recs, ROWS), 0);
	ck_assert_int_eq(zr_store_close(s), 0);
	free(rows);
}

static zr_store *open_ro(const char *name)
{
	char p[4096];
	zr_store *s;

	ck_path(p, sizeof(p), ck_dir, name);
	ck_assert_int_eq(zr_store_open(p, ZR_OPEN_RDONLY, &s), 0);
	return s;
}

static void expect_eio(int err, const char *file)
{
	ck_assert_msg(err == -EIO, "got %d (%s), want -EIO", err,
		      zr_errmsg());
	ck_assert_msg(strstr(zr_errmsg(), file), "message %s does not name %s",
		      zr_errmsg(), file);
}

/* The records [FAR, ROWS), which lie past any first page. */
static int gather_far(zr_store *s, uint8_t *dst)
{
	uint64_t idx[ROWS - FAR];

	for (unsigned i = 0; i < ROWS - FAR; i++)
		idx[i] = FAR + i;
	return zr_store_gather(s, idx, ROWS - FAR, dst,
			       (size_t)(ROWS - FAR) * ROW, NULL);
}

/* An intact store still serves, byte for byte. */
static void check_intact(const char *name, uint64_t seed)
{
	uint8_t *want = rows_of(seed), *got = malloc((size_t)ROWS * ROW);
	uint64_t idx[ROWS];
	zr_store *s = open_ro(name);

	ck_assert_ptr_nonnull(got);
	for (unsigned i = 0; i < ROWS; i++)
		idx[i] = ROWS - 1 - i;
	ck_assert_int_eq(zr_store_gather(s, idx, ROWS, got, (size_t)ROWS * ROW,
					 NULL), 0);
	for (unsigned i = 0; i < ROWS; i++)
		ck_assert_mem_eq(got + (size_t)i * ROW,
				 want + (size_t)idx[i] * ROW, ROW);
	ck_assert_int_eq(zr_store_close(s), 0);
	free(got);
	free(want);
}

static void count_bad(void *ctx, uint64_t idx, int err)
{
	(void)idx;
	if (err == -EIO)
		++*(int *)ctx;
}

static void truncated_data(const char *name, zr_codec codec)
{
	uint8_t *dst = malloc((size_t)ROWS * ROW);
	uint64_t one = ROWS - 1;
	zr_store *s;
	int bad = 0;
	char file[64];

	ck_assert_ptr_nonnull(dst);
	make_dense(name, codec, 1);
	s = open_ro(name);
	ck_assert_int_eq(zr_sigbus_guard(), 0);
	snprintf(file, sizeof(file), "%s/data.zr", name);
	ck_file_truncate(ck_dir, file, 3);
	expect_eio(gather_far(s, dst), "data.zr");
	expect_eio(zr_store_gather(s, &one, 1, dst, ROW, NULL), "data.zr");
	/* verify reports the records, it does not die on them. */
	ck_assert_int_ge(zr_store_verify(s, count_bad, &bad, NULL, NULL),
			 ROWS - FAR);
	ck_assert_int_ge(bad, ROWS - FAR);
	ck_assert_int_eq(zr_store_close(s), 0);
	free(dst);
}

START_TEST(test_raw_data_truncated)
{
	make_dense("ok", ZR_CODEC_ZSTD, 9);
	truncated_data("raw", ZR_CODEC_RAW);
	check_intact("ok", 9);
}
END_TEST

START_TEST(test_zstd_data_truncated)
{
	make_dense("ok", ZR_CODEC_RAW, 9);
	truncated_data("zstd", ZR_CODEC_ZSTD);
	check_intact("ok", 9);
}
END_TEST

START_TEST(test_meta_truncated)
{
	uint8_t *dst = malloc((size_t)ROWS * ROW);
	uint64_t one = FAR, size;
	zr_store *s;
	zr_loc l;

	ck_assert_ptr_nonnull(dst);
	make_dense("ok", ZR_CODEC_ZSTD, 9);
	make_dense("m", ZR_CODEC_RAW, 1);
	s = open_ro("m");
	ck_assert_int_eq(zr_sigbus_guard(), 0);
	ck_assert_int_eq(zr_sigbus_guard(), 0); /* idempotent */
	ck_file_truncate(ck_dir, "m/meta.zr", 10);
	expect_eio(gather_far(s, dst), "meta.zr");
	expect_eio(zr_store_gather(s, &one, 1, dst, ROW, NULL), "meta.zr");
	expect_eio(zr_store_loc(s, 0, &l), "meta.zr");
	expect_eio(zr_store_gather_size(s, &one, 1, &size), "meta.zr");
	ck_assert_int_eq(zr_store_close(s), 0);
	check_intact("ok", 9);
	free(dst);
}
END_TEST

START_TEST(test_ragged_head_truncated)
{
	uint32_t ndim;
	uint64_t shape[ZR_MAX_NDIM], offsets[ROWS - FAR + 1];
	uint8_t *dst = malloc((size_t)ROWS * ROW);
	uint64_t idx[ROWS - FAR];
	zr_store *s;

	ck_assert_ptr_nonnull(dst);
	for (unsigned i = 0; i < ROWS - FAR; i++)
		idx[i] = FAR + i;
	make_dense("ok", ZR_CODEC_RAW, 9);
	make_ragged("r");
	s = open_ro("r");
	ck_assert_int_eq(zr_ragged_shape(s, FAR, &ndim, shape), 0);
	ck_assert_uint_eq(shape[0], ROW - 16);
	ck_assert_int_eq(zr_sigbus_guard(), 0);
	ck_file_truncate(ck_dir, "r/data.zr", 3);
	expect_eio(zr_ragged_shape(s, FAR, &ndim, shape), "data.zr");
	/* The table is intact: the bounds pass, the records fault. */
	expect_eio(zr_store_gather(s, idx, ROWS - FAR, dst,
				   (size_t)ROWS * ROW, offsets), "data.zr");
	ck_assert_int_eq(zr_store_close(s), 0);
	check_intact("ok", 9);
	free(dst);
}
END_TEST

static volatile sig_atomic_t chained;

/* A handler that was there before the guard.  A fault cannot be returned
 * from (it would fault again): exit with a code the parent checks. */
static void old_handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	if (si->si_code > 0)
		_exit(42);
	chained = 1;
}

/* Reads a page of a mapping whose file was truncated: a SIGBUS that is
 * not the library's.  Returns only if no signal came. */
static int foreign_fault(void)
{
	char p[4096];
	volatile const uint8_t *m;
	int fd;

	ck_path(p, sizeof(p), ck_dir, "plain");
	fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, 3 * 4096))
		return 3;
	m = mmap(NULL, 3 * 4096, PROT_READ, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED || ftruncate(fd, 0))
		return 4;
	return m[2 * 4096] + 5;
}

static int chain_child(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = old_handler;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	if (sigaction(SIGBUS, &sa, NULL) || zr_sigbus_guard())
		return 1;
	raise(SIGBUS);
	if (!chained)
		return 2;
	return foreign_fault();
}

static int wait_child(int (*fn)(void))
{
	pid_t pid = fork();
	int st;

	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(fn());
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	return st;
}

START_TEST(test_other_sigbus_chains)
{
	int st = wait_child(chain_child);

	/* 42: the sent SIGBUS reached the old handler, then the fault. */
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 42,
		      "child status %#x", st);
}
END_TEST

static int default_child(void)
{
#ifdef __SANITIZE_ADDRESS__
	/* Its report of the expected fault is not a finding. */
	int null = open("/dev/null", O_WRONLY);

	if (null < 0 || dup2(null, 2) < 0)
		return 2;
#endif
	if (zr_sigbus_guard())
		return 2;
	return foreign_fault();
}

START_TEST(test_other_sigbus_default)
{
	int st = wait_child(default_child);

#ifdef __SANITIZE_ADDRESS__
	/* ASan's handler was the one before: it reports and exits 1. */
	if (WIFEXITED(st) && WEXITSTATUS(st) == 1)
		return;
#endif
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGBUS,
		      "child status %#x", st);
}
END_TEST

Suite *suite_store_sigbus(void)
{
	Suite *s = suite_create("store_sigbus");
	TCase *tc = tcase_create("sigbus");

	tcase_add_checked_fixture(tc, ck_dir_setup, ck_dir_teardown);
	tcase_add_test(tc, test_raw_data_truncated);
	tcase_add_test(tc, test_zstd_data_truncated);
	tcase_add_test(tc, test_meta_truncated);
	tcase_add_test(tc, test_ragged_head_truncated);
	tcase_add_test(tc, test_other_sigbus_chains);
	tcase_add_test(tc, test_other_sigbus_default);
	suite_add_tcase(s, tc);
	return s;
}
