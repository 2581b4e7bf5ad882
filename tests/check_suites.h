/*
 * check_suites.h - every Check suite of the unit-test runner.  Each suite
 * lives in its own check_*.c file; check_main.c runs them all.
 */
#ifndef ZR_CHECK_SUITES_H
#define ZR_CHECK_SUITES_H

#include <check.h>

Suite *suite_error(void);
Suite *suite_dtype(void);
Suite *suite_schema(void);
Suite *suite_npy(void);
Suite *suite_sampler(void);
Suite *suite_stream(void);
Suite *suite_pool(void);
Suite *suite_iopool(void);
Suite *suite_cache(void);
Suite *suite_store(void);
Suite *suite_store_maint(void);
Suite *suite_store_malformed(void);
Suite *suite_dict(void);
Suite *suite_store_crash(void);
Suite *suite_store_sigbus(void);
Suite *suite_npyfile(void);
Suite *suite_npymix(void);
Suite *suite_version(void);
Suite *suite_store_guard(void);
Suite *suite_store_follow(void);
Suite *suite_ragged_pack(void);
Suite *suite_store_view(void);
Suite *suite_store_reserve(void);
Suite *suite_prefetch(void);
Suite *suite_schedule(void);
Suite *suite_idxlist(void);
Suite *suite_mixsource(void);
Suite *suite_batchfile(void);
Suite *suite_tree(void);
Suite *suite_tree_files(void);
Suite *suite_tree_opts(void);
Suite *suite_store_vfs(void);
Suite *suite_resample(void);
Suite *suite_manifest(void);

#endif
