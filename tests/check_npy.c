/*
 * check_npy.c - placeholder until the npy suite is written.
 */
#include "check_suites.h"

Suite *suite_npy(void)
{
	return suite_create("npy");
}
