/*
 * check_store.c - placeholder until the store suite is written.
 */
#include "check_suites.h"

Suite *suite_store(void)
{
	return suite_create("store");
}
