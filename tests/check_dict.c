/*
 * check_dict.c - placeholder until the dict suite is written.
 */
#include "check_suites.h"

Suite *suite_dict(void)
{
	return suite_create("dict");
}
