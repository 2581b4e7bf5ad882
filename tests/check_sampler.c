/*
 * check_sampler.c - placeholder until the sampler suite is written.
 */
#include "check_suites.h"

Suite *suite_sampler(void)
{
	return suite_create("sampler");
}
