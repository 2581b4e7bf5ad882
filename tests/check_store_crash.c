/*
 * check_store_crash.c - crash safety of delete and compact: a delete is
 * durable when it returns, and a delete or compact cut short by a crash
 * leaves its journal STORE/maintenance.zr behind, which the next open
 * that may write the files (a read-only one included, as SQLite does with
 * a hot journal) replays or rolls back so that the store is exactly as
 * before or after the operation; an open that may not write says which
 * command will.
 * Crashes are real: a forked child does the work and is killed or exits
 * without closing.
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check_suites.h"
#include "check_util.h"
#include "journal.h"
#include "store.h"
#include "zrecord.h"

#define COLS 4

static void fill(uint32_t *rows, uint64_t first, uint64_t n)
{
	for (uint64_t k = 0; k < n; k++)
		for (uint32_t j = 0; j < COLS; j++)
			rows[k * COLS + j] = (uint32_t)((first + k) * COLS + j);
}

static void append_rows(zr_store *s, uint64_t first, uint64_t n)
{
	uint32_t *rows = malloc(n * COLS * sizeof(*rows));

	ck_assert_ptr_nonnull(rows);
	fill(rows, first, n);
	ck_assert_int_eq(zr_store_append_dense(s, rows, n), 0);
	free(rows);
}

/* A raw store of n rows; row k holds k*COLS + j, so any row names itself. */
static void make_store(const char *path, uint64_t n)
{
	zr_schema sc = { .ndim = 1, .shape = { COLS } };
	zr_store *s;

	ck_assert_int_eq(zr_dtype_parse("<u4", &sc.dtype), 0);
	ck_assert_int_eq(zr_store_create(path, &sc, ZR_CODEC_RAW, NULL, 0, &s),
			 0);
	append_rows(s, 0, n);
	ck_assert_int_eq(zr_store_close(s), 0);
}

/* A fresh store of n rows at DIR/s, DIR a new temporary folder. */
static void fresh_store(char *dir, size_t dcap, char *path, size_t pcap,
			uint64_t n)
{
	ck_tmpdir(dir, dcap);
	snprintf(path, pcap, "%s/s", dir);
	make_store(path, n);
}

/* Opens read-only and checks every row is a valid row, none twice, none
 * outside [0, limit); fills seen[] (may be NULL).  Returns the length. */
static uint64_t check_rows(const char *path, uint64_t limit, char *seen)
{
	zr_store *s;
	uint64_t n;
	char *mine = seen ? seen : calloc(limit, 1);

	ck_assert_ptr_nonnull(mine);
	ck_assert_int_eq(zr_store_open(path, ZR_OPEN_RDONLY, &s), 0);
	n = zr_store_length(s);
	for (uint64_t i = 0; i < n; i++) {
		uint32_t row[COLS];
		uint64_t k;

		ck_assert_int_eq(zr_store_gather(s, &i, 1, row, sizeof(row),
						 NULL), 0);
		k = row[0] / COLS;
		ck_assert_uint_lt(k, limit);
		ck_assert_msg(!mine[k], "row %llu visible twice",
			      (unsigned long long)k);
		mine[k] = 1;
		for (uint32_t j = 0; j < COLS; j++)
			ck_assert_uint_eq(row[j], k * COLS + j);
	}
	ck_assert_int_eq(zr_store_close(s), 0);
	if (!seen)
		free(mine);
	return n;
}

static int marker_exists(const char *path)
{
	char p[700];

	snprintf(p, sizeof(p), "%s/maintenance.zr", path);
	return access(p, F_OK) == 0;
}

static void run_child(void (*fn)(const char *), const char *path)
{
	pid_t pid = fork();
	int status;

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		fn(path);
		_exit(0); /* no close: whatever is not on disk is lost */
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* A journal with no valid slot was cut short before anything it guards
 * was touched: opens ignore it, and a read-write one removes it. */
START_TEST(test_torn_journal_ignored)
{
	char dir[512], path[600], marker[700];
	zr_store *s = NULL;
	FILE *f;

	ck_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/s", dir);
	make_store(path, 10);
	snprintf(marker, sizeof(marker), "%s/maintenance.zr", path);
	f = fopen(marker, "w");
	ck_assert_ptr_nonnull(f);
	fputs("ZRMAINT1 torn", f);
	fclose(f);
	ck_assert_int_eq(zr_store_open(path, ZR_OPEN_RDONLY, &s), 0);
	ck_assert_int_eq(zr_store_close(s), 0);
	ck_assert(marker_exists(path));
	ck_assert_int_eq(zr_store_open(path, 0, &s), 0);
	ck_assert_int_eq(zr_store_close(s), 0);
	ck_assert(!marker_exists(path));
	ck_assert_uint_eq(check_rows(path, 10, NULL), 10);
	zr_rmtree(dir);
}
END_TEST

/* A delete cut short after its undo slot and two torn table entries
 * (what a power cut can leave): the first open, read-only or not, rolls
 * back to exactly the rows before, in order, and says so. */
static void torn_delete(const char *path)
{
	const uint64_t pos[] = { 7, 2 };
	const uint8_t junk[ZR__LOC] = { 0xff, 0xff, 0xff, 0xff };
	zr_store *s;

	if (zr_store_open(path, 0, &s) ||
	    zr__journal_delete(s, zr_store_length(s), zr__tail(s), pos, 2) ||
	    zr__pwrite_all(s, ZR__META, junk, ZR__LOC, zr__loc_pos(7)) ||
	    zr__pwrite_all(s, ZR__META, junk, 8, zr__loc_pos(2)))
		_exit(1);
	_exit(0); /* no close: the journal stays */
}

START_TEST(test_interrupted_delete_rolls_back)
{
	char dir[512], path[600];
	zr_store *s = NULL;

	ck_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/s", dir);
	make_store(path, 10);
	run_child(torn_delete, path);
	ck_assert(marker_exists(path));
	ck_assert_int_eq(zr_store_open(path, ZR_OPEN_RDONLY, &s), 0);
	ck_assert(zr_store_readonly(s));
	ck_assert_ptr_nonnull(zr_store_recovered(s));
	ck_assert_ptr_nonnull(strstr(zr_store_recovered(s), "rolled back"));
	ck_assert(!marker_exists(path));
	for (uint64_t i = 0; i < 10; i++) {
		uint32_t row[COLS];

		ck_assert_int_eq(zr_store_gather(s, &i, 1, row, sizeof(row),
						 NULL), 0);
		ck_assert_uint_eq(row[0], i * COLS);
	}
	ck_assert_uint_eq(zr_store_length(s), 10);
	ck_assert_int_eq(zr_store_close(s), 0);
	ck_assert_int_eq(zr_store_open(path, ZR_OPEN_FOLLOW | ZR_OPEN_RDONLY,
					&s), 0);
	ck_assert_ptr_null(zr_store_recovered(s));
	ck_assert_int_eq(zr_store_close(s), 0);
	zr_rmtree(dir);
}
END_TEST

/* A reader that cannot take the write lock (another reader holds the
 * store) changes nothing and names the command that recovers. */
START_TEST(test_reader_busy_names_recover)
{
	char dir[512], path[600], data[700];
	zr_store *s = NULL;
	int fd;

	fresh_store(dir, sizeof(dir), path, sizeof(path), 10);
	run_child(torn_delete, path);
	snprintf(data, sizeof(data), "%s/data.zr", path);
	fd = open(data, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(flock(fd, LOCK_SH), 0);
	ck_assert_int_eq(zr_store_open(path, ZR_OPEN_RDONLY, &s), ZR_E_BUSY);
	ck_assert_ptr_null(s);
	ck_assert_msg(strstr(zr_errmsg(), "zrecord recover") &&
		      strstr(zr_errmsg(), "interrupted"), "%s", zr_errmsg());
	ck_assert(marker_exists(path));
	close(fd);
	ck_assert_int_eq(zr_store_open(path, ZR_OPEN_RDONLY, &s), 0);
	ck_assert_ptr_nonnull(zr_store_recovered(s));
	ck_assert_int_eq(zr_store_close(s), 0);
	ck_assert_uint_eq(check_rows(path, 10, NULL), 10);
	zr_rmtree(dir);
}
END_TEST

/* Opens read-only as an unprivileged user, who may read but not write. */
static void open_as_nobody(const char *path)
{
	zr_store *s = NULL;
	int err;

	if (setgid(65534) || setuid(65534))
		_exit(2);
	err = zr_store_open(path, ZR_OPEN_RDONLY, &s);
	_exit(err == -EACCES && !s &&
	      strstr(zr_errmsg(), "zrecord recover") ? 0 : 1);
}

START_TEST(test_reader_without_permission_names_recover)
{
	char dir[512], path[600];

	fresh_store(dir, sizeof(dir), path, sizeof(path), 10);
	ck_assert_int_eq(chmod(dir, 0755), 0);
	run_child(torn_delete, path);
	if (geteuid() == 0) {
		run_child(open_as_nobody, path);
		ck_assert(marker_exists(path));
	}
	ck_assert_uint_eq(check_rows(path, 10, NULL), 10);
	ck_assert(!marker_exists(path));
	zr_rmtree(dir);
}
END_TEST

/* Stops a compact after its last move, before it truncates. */
static void stop_at_end(void *ctx, uint64_t done, uint64_t total)
{
	(void)ctx;
	if (done == total)
		_exit(0);
}

static void compact_cut_short(const char *path)
{
	uint64_t idx[1000];
	zr_store *s;

	for (int i = 0; i < 1000; i++)
		idx[i] = (uint64_t)i * 2;
	if (zr_store_open(path, 0, &s) || zr_store_delete(s, idx, 1000))
		_exit(1);
	zr_store_compact(s, stop_at_end, NULL);
	_exit(1);
}

/* A recovered compact leaves what it had not truncated: stats shows it
 * and the note says how much and to compact again. */
START_TEST(test_recovered_compact_says_reclaimable)
{
	char dir[512], path[600], want[64];
	zr_store *s = NULL;
	zr_stats st;

	fresh_store(dir, sizeof(dir), path, sizeof(path), 10000);
	run_child(compact_cut_short, path);
	ck_assert(marker_exists(path));
	ck_assert_int_eq(zr_store_open(path, ZR_OPEN_RDONLY, &s), 0);
	ck_assert(!marker_exists(path));
	ck_assert_int_eq(zr_store_stats(s, &st), 0);
	ck_assert_uint_eq(st.records, 9000);
	ck_assert_uint_eq(st.reclaimable, 1000 * COLS * 4);
	snprintf(want, sizeof(want), "%" PRIu64 " bytes are still reclaimable",
		 st.reclaimable);
	ck_assert_ptr_nonnull(zr_store_recovered(s));
	ck_assert_ptr_nonnull(strstr(zr_store_recovered(s), want));
	ck_assert_ptr_nonnull(strstr(zr_store_recovered(s), "zrecord compact"));
	ck_assert_int_eq(zr_store_close(s), 0);
	ck_assert_uint_eq(check_rows(path, 10000, NULL), 9000);
	zr_rmtree(dir);
}
END_TEST

static void delete_some(const char *path)
{
	const uint64_t idx[] = { 5, 1, 3, 9 };
	zr_store *s;

	if (zr_store_open(path, 0, &s) || zr_store_delete(s, idx, 4))
		_exit(1);
}

START_TEST(test_delete_durable_at_return)
{
	char dir[512], path[600], seen[10] = { 0 };

	ck_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/s", dir);
	make_store(path, 10);
	run_child(delete_some, path);
	ck_assert(!marker_exists(path));
	ck_assert_uint_eq(check_rows(path, 10, seen), 6);
	ck_assert(!seen[1] && !seen[3] && !seen[5] && !seen[9]);
	zr_rmtree(dir);
}
END_TEST

static void delete_and_compact(const char *path)
{
	uint64_t idx[500];
	zr_store *s;

	for (int i = 0; i < 500; i++)
		idx[i] = (uint64_t)i * 2;
	if (zr_store_open(path, 0, &s) || zr_store_delete(s, idx, 500) ||
	    zr_store_compact(s, NULL, NULL))
		_exit(1);
}

START_TEST(test_compact_leaves_clean_store)
{
	char dir[512], path[600], seen[1000] = { 0 };
	zr_store *s;
	zr_stats st;

	ck_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/s", dir);
	make_store(path, 1000);
	run_child(delete_and_compact, path);
	ck_assert(!marker_exists(path));
	ck_assert_uint_eq(check_rows(path, 1000, seen), 500);
	for (int k = 0; k < 1000; k++)
		ck_assert_int_eq(seen[k], k % 2);
	ck_assert_int_eq(zr_store_open(path, ZR_OPEN_RDONLY, &s), 0);
	ck_assert_int_eq(zr_store_stats(s, &st), 0);
	ck_assert_uint_eq(st.reclaimable, 0);
	ck_assert_int_eq(zr_store_close(s), 0);
	zr_rmtree(dir);
}
END_TEST

#define CHURN_ROWS 20000u
#define CHURN_LIMIT (CHURN_ROWS * 64)

/* Row numbers the next churn appends from: above every live row, so rows
 * stay unique and a duplicate can only come from a broken table. */
static uint64_t next_row;

/* Appends, deletes and compacts until killed. */
static void churn(const char *path)
{
	uint64_t idx[4000];
	zr_store *s;
	unsigned seed = 7;

	if (zr_store_open(path, 0, &s))
		_exit(1);
	for (;;) {
		uint64_t n = zr_store_length(s);

		if (next_row >= CHURN_LIMIT - 4000)
			_exit(0);
		append_rows(s, next_row, 4000);
		next_row += 4000;
		for (int i = 0; i < 4000; i++)
			idx[i] = (uint64_t)rand_r(&seed) % (n + 4000);
		if (zr_store_delete(s, idx, 4000) ||
		    zr_store_compact(s, NULL, NULL))
			_exit(1);
	}
}

static uint64_t max_row(const char *seen, uint64_t limit)
{
	uint64_t k = limit;

	while (k > 0 && !seen[k - 1])
		k--;
	return k;
}

/* Kills the churning child after delay_us; returns whether the store
 * needed recovery (which the read-only open did) before it opened whole. */
static int kill_churn(const char *path, unsigned delay_us)
{
	pid_t pid = fork();
	zr_store *s = NULL;
	char *seen = calloc(CHURN_LIMIT, 1);
	int status, err, recovered;

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		churn(path);
		_exit(0);
	}
	usleep(delay_us);
	kill(pid, SIGKILL);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	err = zr_store_open(path, ZR_OPEN_RDONLY, &s);
	ck_assert_msg(err == 0, "%s", zr_errmsg());
	recovered = zr_store_recovered(s) != NULL;
	ck_assert_int_eq(zr_store_close(s), 0);
	ck_assert(!marker_exists(path) || !recovered);
	ck_assert_ptr_nonnull(seen);
	check_rows(path, CHURN_LIMIT, seen);
	next_row = max_row(seen, CHURN_LIMIT);
	free(seen);
	return recovered;
}

START_TEST(test_kill_during_maintenance)
{
	char dir[512], path[600];
	int recovered = 0;

	ck_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/s", dir);
	make_store(path, CHURN_ROWS);
	next_row = CHURN_ROWS;
	/* Whether a kill lands inside a delete or compact is up to the
	 * scheduler; every kill must leave a store that opens whole. */
	for (unsigned i = 0; i < 8; i++)
		recovered += kill_churn(path, i * 6000);
	fprintf(stderr, "store_crash: %d of 8 kills needed recovery\n",
		recovered);
	zr_rmtree(dir);
}
END_TEST

Suite *suite_store_crash(void)
{
	Suite *s = suite_create("store_crash");
	TCase *tc = tcase_create("crash");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_torn_journal_ignored);
	tcase_add_test(tc, test_interrupted_delete_rolls_back);
	tcase_add_test(tc, test_reader_busy_names_recover);
	tcase_add_test(tc, test_reader_without_permission_names_recover);
	tcase_add_test(tc, test_recovered_compact_says_reclaimable);
	tcase_add_test(tc, test_delete_durable_at_return);
	tcase_add_test(tc, test_compact_leaves_clean_store);
	tcase_add_test(tc, test_kill_during_maintenance);
	suite_add_tcase(s, tc);
	return s;
}
