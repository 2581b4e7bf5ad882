/*
 * check_store_malformed.c - placeholder until the store_malformed suite is written.
 */
#include "check_suites.h"

Suite *suite_store_malformed(void)
{
	return suite_create("store_malformed");
}
