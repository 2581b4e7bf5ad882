/*
 * check_pool.c - placeholder until the pool suite is written.
 */
#include "check_suites.h"

Suite *suite_pool(void)
{
	return suite_create("pool");
}
