/*
 * check_main.c - the one Check runner: collects every suite so that
 * `CK_RUN_SUITE=npy tests/check_zrecord` runs one of them.
 */
#include <stdlib.h>

#include "check_suites.h"

int main(void)
{
	Suite *(*const suites[])(void) = {
		suite_error,	   suite_dtype,	     suite_schema,
		suite_npy,	   suite_sampler,    suite_stream,
		suite_pool,
		suite_iopool,
		suite_cache,
		suite_store,	   suite_store_maint, suite_store_malformed,
		suite_dict,	   suite_store_crash, suite_store_sigbus,
		suite_npyfile,
		suite_npymix,
		suite_version,
		suite_store_guard,
		suite_store_follow,
		suite_ragged_pack,
		suite_store_view,
		suite_store_reserve,
		suite_prefetch,
		suite_schedule,
		suite_idxlist,
		suite_mixsource,
		suite_batchfile,
		suite_tree,
		suite_tree_files,
		suite_tree_opts,
		suite_store_vfs,
		suite_resample,
		suite_manifest,
	};
	SRunner *sr = srunner_create(NULL);
	int failed;

	for (size_t i = 0; i < sizeof(suites) / sizeof(suites[0]); i++)
		srunner_add_suite(sr, suites[i]());
	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
