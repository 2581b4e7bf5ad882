/*
 * check_store_maint.c - delete, compact, stats, sync, verify and the
 * store lock across processes.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_suites.h"
#include "check_util.h"
#include "zrecord.h"

/* Ragged |u1 records whose first 8 bytes name them: record id has
 * 40 + id % 50 bytes. */
static void append_ids(zr_store *s, uint64_t first, uint64_t n)
{
	zr_ragged_in *in = calloc(n, sizeof(*in));
	uint64_t *lens = calloc(n, sizeof(*lens));
	uint8_t **bufs = calloc(n, sizeof(*bufs));

	for (uint64_t k = 0; k < n; k++) {
		uint64_t id = first + k;

		lens[k] = 40 + id % 50;
		bufs[k] = malloc(lens[k]);
		ck_fill(bufs[k], lens[k], id);
		memcpy(bufs[k], &id, 8);
		in[k] = (zr_ragged_in){ bufs[k], 1, &lens[k] };
	}
	ck_assert_int_eq(zr_store_append_ragged(s, in, n), 0);
	for (uint64_t k = 0; k < n; k++)
		free(bufs[k]);
	free(bufs);
	free(lens);
	free(in);
}

/* Reads every record, checks its bytes against its id, returns the ids. */
static uint64_t *read_ids(zr_store *s)
{
	uint64_t n = zr_store_length(s), total;
	uint64_t *idx = malloc((n + 1) * sizeof(*idx));
	uint64_t *off = malloc((n + 1) * sizeof(*off));
	uint8_t *dst, want[128];

	for (uint64_t i = 0; i < n; i++)
		idx[i] = i;
	ck_assert_int_eq(zr_store_gather_size(s, idx, n, &total), 0);
	dst = malloc(total + 1);
	ck_assert_int_eq(zr_store_gather(s, idx, n, dst, total, off), 0);
	for (uint64_t i = 0; i < n; i++) {
		const uint8_t *p = dst + off[i] + 16;
		uint64_t id;

		memcpy(&id, p, 8);
		ck_assert_uint_eq(off[i + 1] - off[i], 16 + 40 + id % 50);
		ck_fill(want, 40 + id % 50, id);
		ck_assert_mem_eq(p + 8, want + 8, 40 + id % 50 - 8);
		idx[i] = id;
	}
	free(dst);
	free(off);
	return idx;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The live ids are exactly 0..n-1 minus the deleted ones. */
static void expect_ids(zr_store *s, uint64_t n, const uint64_t *del,
		       size_t ndel)
{
	uint64_t *ids = read_ids(s), len = zr_store_length(s), j = 0;

	qsort(ids, len, sizeof(*ids), cmp_u64);
	for (uint64_t id = 0; id < n; id++) {
		int gone = 0;

		for (size_t d = 0; d < ndel; d++)
			gone |= del[d] == id;
		if (gone)
			continue;
		ck_assert_uint_lt(j, len);
		ck_assert_uint_eq(ids[j++], id);
	}
	ck_assert_uint_eq(j, len);
	free(ids);
}

static uint64_t progress_done, progress_total;

static void on_progress(void *ctx, uint64_t done, uint64_t total)
{
	(void)ctx;
	ck_assert_uint_ge(done, progress_done);
	progress_done = done;
	progress_total = total;
}

/* stats keeps live_bytes up to date after its first scan: across appends,
 * deletes (with repeats) and compact it equals a fresh handle's scan. */
START_TEST(test_stats_follow_changes)
{
	static const uint64_t del[] = { 7, 3, 7, 40 };
	zr_schema sc = ck_schema("|u1", -1, NULL);
	zr_store *s = ck_store(ck_dir, "s", &sc, ck_codecs[_i]);
	zr_stats kept, fresh;
	char p[4096];

	append_ids(s, 0, 50);
	ck_assert_int_eq(zr_store_stats(s, &kept), 0); /* the one scan */
	append_ids(s, 50, 20);
	ck_assert_int_eq(zr_store_delete(s, del, 4), 0);
	ck_assert_int_eq(zr_store_stats(s, &kept), 0);
	ck_assert_int_eq(zr_store_close(s), 0);
	ck_path(p, sizeof(p), ck_dir, "s");
	ck_assert_int_eq(zr_store_open(p, 0, &s), 0);
	ck_assert_int_eq(zr_store_stats(s, &fresh), 0);
	ck_assert_uint_eq(kept.records, 67);
	ck_assert_uint_eq(kept.live_bytes, fresh.live_bytes);
	ck_assert_uint_eq(kept.data_bytes, fresh.data_bytes);
	ck_assert_uint_gt(kept.reclaimable, 0);
	ck_assert_int_eq(zr_store_compact(s, NULL, NULL), 0);
	ck_assert_int_eq(zr_store_stats(s, &kept), 0);
	ck_assert_uint_eq(kept.live_bytes, fresh.live_bytes);
	ck_assert_uint_eq(kept.reclaimable, 0);
	ck_assert_int_eq(zr_store_close(s), 0);
}
END_TEST

START_TEST(test_delete_compact)
{
	static const uint64_t del[] = { 5, 99, 0, 5, 50, 98, 51 };
	zr_schema sc = ck_schema("|u1", -1, NULL);
	zr_store *s = ck_store(ck_dir, "s", &sc, ck_codecs[_i]);
	uint64_t bad[] = { 3, 100 }, extra[] = { 93, 92 }, gone[9], *ids;
	zr_stats st, st2;
	char p[4096];

	append_ids(s, 0, 100);
	ck_assert_int_eq(zr_store_delete(s, bad, 2), ZR_E_RANGE);
	ck_assert_uint_eq(zr_store_length(s), 100);
	expect_ids(s, 100, NULL, 0);
	memcpy(gone, del, sizeof(del));
	ck_assert_int_eq(zr_store_delete(s, del, 7), 0);
	ck_assert_uint_eq(zr_store_length(s), 94);
	expect_ids(s, 100, del, 7);
	/* Swap-last in descending order: 97 fills 51, 96 fills 50, ... */
	ids = read_ids(s);
	ck_assert_uint_eq(ids[51], 97);
	ck_assert_uint_eq(ids[50], 96);
	ck_assert_uint_eq(ids[5], 95);
	ck_assert_uint_eq(ids[0], 94);
	free(ids);
	ck_assert_int_eq(zr_store_stats(s, &st), 0);
	ck_assert_uint_eq(st.records, 94);
	ck_assert_uint_gt(st.reclaimable, 0);
	ck_assert_uint_eq(st.data_bytes - st.live_bytes, st.reclaimable);

	progress_done = 0;
	ck_assert_int_eq(zr_store_compact(s, on_progress, NULL), 0);
	ck_assert_uint_eq(progress_done, 94);
	ck_assert_uint_eq(progress_total, 94);
	ck_assert_int_eq(zr_store_stats(s, &st2), 0);
	ck_assert_uint_eq(st2.reclaimable, 0);
	ck_assert_uint_eq(st2.live_bytes, st.live_bytes);
	ck_assert_uint_eq(st2.data_bytes, st.live_bytes);
	ck_assert_uint_eq(ck_file_size(ck_dir, "s/data.zr"), st.live_bytes);
	ck_assert_uint_eq(ck_file_size(ck_dir, "s/meta.zr"), 4096 + 16 * 94);
	expect_ids(s, 100, del, 7);

	/* Appends after a compact land past the new frontier. */
	append_ids(s, 100, 2);
	ids = read_ids(s);
	gone[7] = ids[93];
	gone[8] = ids[92];
	free(ids);
	ck_assert_int_eq(zr_store_delete(s, extra, 2), 0);
	ck_assert_int_eq(zr_store_close(s), 0);
	ck_path(p, sizeof(p), ck_dir, "s");
	ck_assert_int_eq(zr_store_open(p, 0, &s), 0);
	ck_assert_uint_eq(zr_store_length(s), 94);
	ck_assert_int_eq(zr_store_compact(s, NULL, NULL), 0);
	ck_assert_int_eq(zr_store_close(s), 0);
	ck_assert_int_eq(zr_store_open(p, ZR_OPEN_RDONLY, &s), 0);
	expect_ids(s, 102, gone, 9);
	ck_assert_int_eq(zr_store_stats(s, &st), 0);
	ck_assert_uint_eq(st.reclaimable, 0);
	ck_assert_int_eq(zr_store_close(s), 0);
}
END_TEST

START_TEST(test_delete_everything)
{
	zr_schema sc = ck_schema("|u1", -1, NULL);
	zr_store *s = ck_store(ck_dir, "s", &sc, ck_codecs[_i]);
	uint64_t all[10];
	zr_stats st;

	for (int i = 0; i < 10; i++)
		all[i] = (uint64_t)(9 - i / 2);
	append_ids(s, 0, 10);
	ck_assert_int_eq(zr_store_delete(s, all, 10), 0); /* 5 distinct */
	ck_assert_uint_eq(zr_store_length(s), 5);
	expect_ids(s, 5, NULL, 0);
	for (int i = 0; i < 5; i++)
		all[i] = (uint64_t)i;
	ck_assert_int_eq(zr_store_delete(s, all, 5), 0);
	ck_assert_uint_eq(zr_store_length(s), 0);
	ck_assert_int_eq(zr_store_compact(s, NULL, NULL), 0);
	ck_assert_int_eq(zr_store_stats(s, &st), 0);
	ck_assert_uint_eq(st.records, 0);
	ck_assert_uint_eq(st.data_bytes, 0);
	ck_assert_uint_eq(ck_file_size(ck_dir, "s/data.zr"), 0);
	ck_assert_uint_eq(ck_file_size(ck_dir, "s/meta.zr"), 4096);
	append_ids(s, 0, 3);
	expect_ids(s, 3, NULL, 0);
	ck_assert_int_eq(zr_store_close(s), 0);
}
END_TEST

static uint64_t header_length(const char *name)
{
	uint8_t b[8];
	uint64_t v = 0;
	char p[4096];

	ck_path(p, sizeof(p), name, "meta.zr");
	ck_file_read(ck_dir, p, 0, b, 8);
	for (int i = 7; i >= 0; i--)
		v = v << 8 | b[i];
	return v;
}

START_TEST(test_sync_writes_header)
{
	static const uint64_t shape[] = { 2, 3 };
	zr_schema sc = ck_schema("<i8", 2, shape);
	zr_store *s = ck_store(ck_dir, "s", &sc, ZR_CODEC_ZSTD);
	int64_t rows[6 * 4];

	ck_fill(rows, sizeof(rows), 4);
	ck_assert_int_eq(zr_store_append_dense(s, rows, 4), 0);
	ck_assert_uint_eq(header_length("s"), 0); /* header is lazy */
	ck_assert_int_eq(zr_store_sync(s), 0);
	ck_assert_uint_eq(header_length("s"), 4);
	ck_assert_int_eq(zr_store_append_dense(s, rows, 2), 0);
	ck_assert_uint_eq(header_length("s"), 4);
	ck_assert_int_eq(zr_store_close(s), 0);
	ck_assert_uint_eq(header_length("s"), 6);
}
END_TEST

static uint64_t bad_seen[8];
static int nbad_seen;

static void on_bad(void *ctx, uint64_t idx, int err)
{
	(void)ctx;
	ck_assert_int_ne(err, 0);
	if (nbad_seen < 8)
		bad_seen[nbad_seen++] = idx;
}

START_TEST(test_verify)
{
	zr_schema sc = ck_schema("|u1", -1, NULL);
	zr_store *s = ck_store(ck_dir, "s", &sc, ck_codecs[_i]);
	uint8_t junk[8] = { 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 1 };
	zr_loc loc;
	char p[4096];

	append_ids(s, 0, 5000); /* more than one verify window */
	nbad_seen = 0;
	ck_assert_int_eq(zr_store_verify(s, on_bad, NULL, NULL, NULL), 0);
	ck_assert_int_eq(nbad_seen, 0);
	ck_assert_int_eq(zr_store_loc(s, 4321, &loc), 0);
	ck_assert_int_eq(zr_store_close(s), 0);
	/* Ruin one record: a frame with a bad magic, or (raw) a prefix
	 * with an impossible rank. */
	ck_file_write(ck_dir, "s/data.zr", loc.offset, junk, sizeof(junk));
	ck_path(p, sizeof(p), ck_dir, "s");
	ck_assert_int_eq(zr_store_open(p, ZR_OPEN_RDONLY, &s), 0);
	progress_done = 0;
	ck_assert_int_eq(zr_store_verify(s, on_bad, NULL, on_progress, NULL),
			 1);
	ck_assert_int_eq(nbad_seen, 1);
	ck_assert_uint_eq(bad_seen[0], 4321);
	ck_assert_uint_eq(progress_done, 5000);
	ck_assert_int_eq(zr_store_close(s), 0);
}
END_TEST

/* Gathers racing deletes and compacts: each record a reader gets must be
 * one whole record (its bytes match the id it carries). */
struct maint_race {
	zr_store *s;
	atomic_int done;
	atomic_long checked;
};

static void check_record(const uint8_t *rec, uint64_t len)
{
	uint8_t want[128];
	uint64_t id;

	ck_assert_uint_ge(len, 16 + 40);
	memcpy(&id, rec + 16, 8);
	ck_assert_uint_eq(len, 16 + 40 + id % 50);
	ck_fill(want, 40 + id % 50, id);
	ck_assert_mem_eq(rec + 24, want + 8, 40 + id % 50 - 8);
}

static void *maint_reader(void *arg)
{
	struct maint_race *r = arg;
	uint64_t idx[16], off[17], seed = (uint64_t)(uintptr_t)&idx;
	uint8_t dst[16 * 128];

	while (!atomic_load(&r->done)) {
		uint64_t len = zr_store_length(r->s);
		int err;

		if (len == 0)
			continue;
		for (int k = 0; k < 16; k++) {
			seed = seed * 6364136223846793005ull + 1;
			idx[k] = (seed >> 33) % len;
		}
		err = zr_store_gather(r->s, idx, 16, dst, sizeof(dst), off);
		if (err == ZR_E_RANGE) /* a delete shrank the store */
			continue;
		ck_assert_msg(err == 0, "gather: %s", zr_errmsg());
		for (int k = 0; k < 16; k++)
			check_record(dst + off[k], off[k + 1] - off[k]);
		atomic_fetch_add(&r->checked, 16);
	}
	return NULL;
}

START_TEST(test_gathers_race_maintenance)
{
	zr_schema sc = ck_schema("|u1", -1, NULL);
	struct maint_race r = { .s = ck_store(ck_dir, "s", &sc, ck_codecs[_i]) };
	pthread_t t[3];

	append_ids(r.s, 0, 2000);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, maint_reader, &r),
				 0);
	for (uint64_t round = 0; round < 20; round++) {
		uint64_t del[25];
		long seen = atomic_load(&r.checked);

		for (int k = 0; k < 25; k++)
			del[k] = (round * 977 + (uint64_t)k * 31) %
				 zr_store_length(r.s);
		ck_assert_int_eq(zr_store_delete(r.s, del, 25), 0);
		if (round % 4 == 3)
			ck_assert_int_eq(zr_store_compact(r.s, NULL, NULL), 0);
		while (atomic_load(&r.checked) < seen + 32)
			sched_yield();
	}
	atomic_store(&r.done, 1);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(pthread_join(t[i], NULL), 0);
	ck_assert_int_eq(zr_store_close(r.s), 0);
}
END_TEST

/* A child process holds the store until the parent writes to the pipe. */
static pid_t hold_in_child(const char *path, unsigned flags, int *release)
{
	int ready[2], go[2];
	pid_t pid;
	char c;

	ck_assert_int_eq(pipe(ready), 0);
	ck_assert_int_eq(pipe(go), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		zr_store *s;

		if (zr_store_open(path, flags, &s))
			_exit(1);
		if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(2);
		_exit(zr_store_close(s) ? 3 : 0);
	}
	ck_assert_int_eq(read(ready[0], &c, 1), 1);
	close(ready[0]);
	close(ready[1]);
	close(go[0]);
	*release = go[1];
	return pid;
}

static void release_child(pid_t pid, int fd)
{
	int status;

	ck_assert_int_eq(write(fd, "g", 1), 1);
	close(fd);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
}

START_TEST(test_busy_across_processes)
{
	zr_schema sc = ck_schema("<f8", -1, NULL);
	zr_store *s = ck_store(ck_dir, "s", &sc, ZR_CODEC_RAW), *r, *r2;
	char p[4096];
	int fd;
	pid_t pid;

	ck_assert_int_eq(zr_store_close(s), 0);
	ck_path(p, sizeof(p), ck_dir, "s");
	pid = hold_in_child(p, 0, &fd);
	ck_assert_int_eq(zr_store_open(p, 0, &s), ZR_E_BUSY);
	ck_assert_int_eq(zr_store_open(p, ZR_OPEN_RDONLY, &s), ZR_E_BUSY);
	release_child(pid, fd);

	pid = hold_in_child(p, ZR_OPEN_RDONLY, &fd);
	ck_assert_int_eq(zr_store_open(p, 0, &s), ZR_E_BUSY);
	ck_assert_int_eq(zr_store_open(p, ZR_OPEN_RDONLY, &r), 0);
	ck_assert_int_eq(zr_store_open(p, ZR_OPEN_RDONLY, &r2), 0);
	ck_assert_int_eq(zr_store_close(r), 0);
	ck_assert_int_eq(zr_store_close(r2), 0);
	release_child(pid, fd);
	ck_assert_int_eq(zr_store_open(p, 0, &s), 0);
	ck_assert_int_eq(zr_store_close(s), 0);
}
END_TEST

/* A record whose new place overlaps its old bytes and spans several
 * journal chunks (1 MiB each) moves whole, and the journal is gone. */
START_TEST(test_compact_big_overlapping_move)
{
	zr_schema sc = ck_schema("|u1", -1, NULL);
	zr_store *s = ck_store(ck_dir, "s", &sc, ZR_CODEC_RAW);
	uint64_t lens[3] = { 4096, (3u << 20) + 5, 7 }, zero = 0, one = 1;
	uint64_t total, off[2];
	uint8_t *bufs[3], *got;
	zr_ragged_in in[3];
	zr_stats st;
	char p[4096];

	for (int k = 0; k < 3; k++) {
		bufs[k] = malloc(lens[k]);
		ck_fill(bufs[k], lens[k], (uint64_t)k + 11);
		in[k] = (zr_ragged_in){ bufs[k], 1, &lens[k] };
	}
	ck_assert_int_eq(zr_store_append_ragged(s, in, 3), 0);
	/* Swap-last: record 2 takes index 0, record 1 keeps index 1 and
	 * must move down by 4 KiB over its own 3 MiB. */
	ck_assert_int_eq(zr_store_delete(s, &zero, 1), 0);
	ck_assert_int_eq(zr_store_compact(s, NULL, NULL), 0);
	ck_path(p, sizeof(p), ck_dir, "s/maintenance.zr");
	ck_assert_int_eq(access(p, F_OK), -1);
	ck_assert_int_eq(zr_store_stats(s, &st), 0);
	ck_assert_uint_eq(st.reclaimable, 0);
	ck_assert_int_eq(zr_store_gather_size(s, &one, 1, &total), 0);
	got = malloc(total);
	ck_assert_int_eq(zr_store_gather(s, &one, 1, got, total, off), 0);
	ck_assert_uint_eq(total, 16 + lens[1]);
	ck_assert_mem_eq(got + 16, bufs[1], lens[1]);
	ck_assert_int_eq(zr_store_close(s), 0);
	for (int k = 0; k < 3; k++)
		free(bufs[k]);
	free(got);
}
END_TEST

Suite *suite_store_maint(void)
{
	Suite *s = suite_create("store_maint");
	TCase *tc = tcase_create("store_maint");

	tcase_add_checked_fixture(tc, ck_dir_setup, ck_dir_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_delete_compact, 0, 3);
	tcase_add_loop_test(tc, test_stats_follow_changes, 0, 3);
	tcase_add_loop_test(tc, test_delete_everything, 0, 3);
	tcase_add_test(tc, test_sync_writes_header);
	tcase_add_test(tc, test_compact_big_overlapping_move);
	tcase_add_loop_test(tc, test_verify, 0, 3);
	tcase_add_test(tc, test_busy_across_processes);
	tcase_add_loop_test(tc, test_gathers_race_maintenance, 0, 3);
	suite_add_tcase(s, tc);
	return s;
}
