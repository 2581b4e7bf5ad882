/*
 * check_dtype.c - placeholder until the dtype suite is written.
 */
#include "check_suites.h"

Suite *suite_dtype(void)
{
	return suite_create("dtype");
}
