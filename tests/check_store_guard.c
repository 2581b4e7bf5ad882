/*
 * check_store_guard.c - the writer's guard: a handle whose store was
 * changed behind its back (another host's writer when flock does not reach
 * across hosts, simulated here by writing the files directly) refuses to
 * append, sync, delete or compact with ZR_E_CHANGED and writes nothing;
 * its own concurrent append and sync are never taken for another writer.
 */
#include <check.h>
#include <string.h>

#include "check_suites.h"
#include "check_util.h"
#include "zrecord.h"

static const uint32_t rows[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };

static zr_store *two_rows(void)
{
	zr_schema sc = ck_schema("<u4", 1, (const uint64_t[]){ 4 });
	zr_store *s = ck_store(ck_dir, "s", &sc, ZR_CODEC_RAW);

	ck_assert_int_eq(zr_store_append_dense(s, rows, 2), 0);
	ck_assert_int_eq(zr_store_sync(s), 0);
	return s;
}

static void assert_changed(int rc)
{
	ck_assert_int_eq(rc, ZR_E_CHANGED);
	ck_assert_ptr_nonnull(strstr(zr_errmsg(), "changed by another "
				     "writer"));
}

START_TEST(header_moved_behind_the_handle)
{
	zr_store *s = two_rows();
	uint8_t mine[16], other[16], now[16];
	uint64_t idx = 0;
	zr_append *a;

	ck_file_read(ck_dir, "s/meta.zr", 0, mine, sizeof(mine));
	memcpy(other, mine, sizeof(other));
	other[0]++; /* another writer published one more record */
	ck_file_write(ck_dir, "s/meta.zr", 0, other, sizeof(other));
	assert_changed(zr_append_begin(s, &a));
	assert_changed(zr_store_append_dense(s, rows, 1));
	assert_changed(zr_store_delete(s, &idx, 1));
	assert_changed(zr_store_compact(s, NULL, NULL));
	/* nothing of this handle's to publish: its header is not written */
	ck_assert_int_eq(zr_store_sync(s), 0);
	ck_assert_int_eq(zr_store_close(s), 0);
	ck_file_read(ck_dir, "s/meta.zr", 0, now, sizeof(now));
	ck_assert_mem_eq(now, other, sizeof(now));
	ck_assert_uint_eq(ck_file_size(ck_dir, "s/data.zr"), 32);
}
END_TEST

START_TEST(data_grew_behind_the_handle)
{
	zr_store *s = two_rows();

	/* another writer's payloads, not yet published */
	ck_file_write(ck_dir, "s/data.zr", 32, rows, 16);
	assert_changed(zr_store_append_dense(s, rows, 1));
	ck_assert_uint_eq(ck_file_size(ck_dir, "s/data.zr"), 48);
	ck_assert_int_eq(zr_store_close(s), 0);
}
END_TEST

/* A session committed after the other writer's header landed: its sync
 * would publish over that header, so it refuses. */
START_TEST(sync_over_another_header)
{
	zr_store *s = two_rows();
	uint8_t other[16];
	zr_append *a;

	ck_assert_int_eq(zr_append_begin(s, &a), 0);
	ck_assert_int_eq(zr_append_dense(a, rows, 1), 0);
	ck_file_read(ck_dir, "s/meta.zr", 0, other, sizeof(other));
	other[0] += 5;
	ck_file_write(ck_dir, "s/meta.zr", 0, other, sizeof(other));
	ck_assert_int_eq(zr_append_commit(a), 0);
	assert_changed(zr_store_sync(s));
	assert_changed(zr_store_close(s));
}
END_TEST

START_TEST(own_session_and_sync_pass)
{
	zr_store *s = two_rows();
	char p[4096];
	zr_append *a;

	ck_assert_int_eq(zr_append_begin(s, &a), 0);
	ck_assert_int_eq(zr_append_dense(a, rows, 2), 0);
	/* the session's payloads are past the synced tail meanwhile */
	ck_assert_int_eq(zr_store_sync(s), 0);
	ck_assert_int_eq(zr_append_commit(a), 0);
	ck_assert_int_eq(zr_store_append_dense(s, rows, 1), 0);
	ck_assert_int_eq(zr_store_close(s), 0);
	ck_path(p, sizeof(p), ck_dir, "s");
	ck_assert_int_eq(zr_store_open(p, ZR_OPEN_RDONLY, &s), 0);
	ck_assert_uint_eq(zr_store_length(s), 5);
	zr_store_close(s);
}
END_TEST

Suite *suite_store_guard(void)
{
	Suite *su = suite_create("store_guard");
	TCase *tc = tcase_create("guard");

	tcase_add_checked_fixture(tc, ck_dir_setup, ck_dir_teardown);
	tcase_add_test(tc, header_moved_behind_the_handle);
	tcase_add_test(tc, data_grew_behind_the_handle);
	tcase_add_test(tc, sync_over_another_header);
	tcase_add_test(tc, own_session_and_sync_pass);
	suite_add_tcase(su, tc);
	return su;
}
