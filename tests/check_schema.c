/*
 * check_schema.c - placeholder until the schema suite is written.
 */
#include "check_suites.h"

Suite *suite_schema(void)
{
	return suite_create("schema");
}
