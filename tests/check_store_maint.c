/*
 * check_store_maint.c - placeholder until the store_maint suite is written.
 */
#include "check_suites.h"

Suite *suite_store_maint(void)
{
	return suite_create("store_maint");
}
