/*
 * check_version.c - the version macros, configure's version (PACKAGE_VERSION
 * from AC_INIT) and the library's zr_version() all say the same, and
 * zr_struct_size() knows the public structs.
 */
#include <stdio.h>

#include "check_suites.h"
#include "zrecord.h"

START_TEST(test_versions_agree)
{
	char parts[32];

	/* A header bumped without rerunning autoreconf fails here. */
	ck_assert_str_eq(ZR_VERSION_STRING, PACKAGE_VERSION);
	snprintf(parts, sizeof(parts), "%d.%d.%d", ZR_VERSION_MAJOR,
		 ZR_VERSION_MINOR, ZR_VERSION_PATCH);
	ck_assert_str_eq(parts, ZR_VERSION_STRING);
	ck_assert_uint_eq(zr_version(), ZR_VERSION_NUMBER);
	ck_assert_uint_eq(zr_version(), ZR_VERSION_MAJOR * 10000u +
				       ZR_VERSION_MINOR * 100u +
				       ZR_VERSION_PATCH);
	ck_assert_str_eq(zr_version_string(), ZR_VERSION_STRING);
}
END_TEST

START_TEST(test_struct_sizes)
{
	ck_assert_uint_eq(zr_struct_size("zr_dtype"), sizeof(zr_dtype));
	ck_assert_uint_eq(zr_struct_size("zr_schema"), sizeof(zr_schema));
	ck_assert_uint_eq(zr_struct_size("zr_npy_header"),
			  sizeof(zr_npy_header));
	ck_assert_uint_eq(zr_struct_size("zr_store"), 0); /* opaque */
	ck_assert_uint_eq(zr_struct_size("zr_dtyp"), 0);
	ck_assert_uint_eq(zr_struct_size(NULL), 0);
}
END_TEST

Suite *suite_version(void)
{
	Suite *s = suite_create("version");
	TCase *tc = tcase_create("version");

	tcase_add_test(tc, test_versions_agree);
	tcase_add_test(tc, test_struct_sizes);
	suite_add_tcase(s, tc);
	return s;
}
