/*
 * check_error.c - the error table: names, messages, errno mapping and the
 * thread-local message.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "check_suites.h"
#include "error.h"

START_TEST(test_names_and_errno)
{
	ck_assert_str_eq(zr_errname(ZR_E_BUSY), "ZR_E_BUSY");
	ck_assert_str_eq(zr_errname(-EIO), "EIO");
	ck_assert_str_eq(zr_errname(0), "OK");
	ck_assert_int_eq(zr_errno(ZR_E_BUSY), EBUSY);
	ck_assert_int_eq(zr_errno(ZR_E_NOSTORE), ENOENT);
	ck_assert_int_eq(zr_errno(-ENOSPC), ENOSPC);
	ck_assert_int_eq(zr_errno(-99999), EIO);
	ck_assert_str_eq(zr_strerror(-ENOSPC), strerror(ENOSPC));
	ck_assert_ptr_nonnull(strstr(zr_strerror(ZR_E_BUSY), "busy"));
}
END_TEST

static int logged_err;
static char logged_msg[64];

static void sink(void *ctx, int err, const char *msg)
{
	(void)ctx;
	logged_err = err;
	snprintf(logged_msg, sizeof(logged_msg), "%s", msg);
}

START_TEST(test_message_and_log)
{
	zr__error e = { 0 };

	zr_set_log(sink, NULL);
	ck_assert_int_eq(zr__fail(ZR_E_CORRUPT, "record %d bad", 7),
			 ZR_E_CORRUPT);
	zr_set_log(NULL, NULL);
	ck_assert_str_eq(zr_errmsg(), "record 7 bad");
	ck_assert_int_eq(logged_err, ZR_E_CORRUPT);
	ck_assert_str_eq(logged_msg, "record 7 bad");
	zr__error_capture(&e, ZR_E_CORRUPT);
	zr__error_capture(&e, ZR_E_RANGE); /* first failure wins */
	zr__clear();
	ck_assert_str_eq(zr_errmsg(), "");
	ck_assert_int_eq(zr__error_replay(&e), ZR_E_CORRUPT);
	ck_assert_str_eq(zr_errmsg(), "record 7 bad");
}
END_TEST

Suite *suite_error(void)
{
	Suite *s = suite_create("error");
	TCase *tc = tcase_create("error");

	tcase_add_test(tc, test_names_and_errno);
	tcase_add_test(tc, test_message_and_log);
	suite_add_tcase(s, tc);
	return s;
}
