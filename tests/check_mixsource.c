/*
 * check_mixsource.c - a mixture file's sources found on real folders
 * (src/common/mixsource.h), as both `zrecord batch MIX.mix.json` and a
 * mount take them: a store, a dataset folder's stores in sorted order
 * (symlinks, plain folders and files left out), the same folder however
 * its path is spelt, and the refusals (no such path, a folder without
 * stores, more than 64 stores, sources of other fields by number or
 * name); and the mixture stats JSON written from plain data
 * (statsjson.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_suites.h"
#include "check_util.h"
#include "mixsource.h"
#include "statsjson.h"

static void make_store(const char *dir, const char *name)
{
	static const uint64_t shape[] = { 2 };
	zr_schema sc = ck_schema("<i4", 1, shape);

	ck_assert_int_eq(zr_store_close(ck_store(dir, name, &sc,
						 ZR_CODEC_RAW)), 0);
}

static void make_dir(const char *name)
{
	char p[PATH_MAX];

	ck_path(p, sizeof(p), ck_dir, name);
	ck_assert_int_eq(mkdir(p, 0755), 0);
}

/* The sources of a mixture file at ck_dir/m.mix.json naming doc's. */
static int sources(const char *doc, zrcommon_mixfile *f,
		   zrcommon_mixsource **src,
		   char *why, size_t cap)
{
	char mix[PATH_MAX], msg[256];

	ck_assert_int_eq(zrcommon_mixfile_parse(doc, strlen(doc), f, msg,
						sizeof(msg)), 0);
	ck_path(mix, sizeof(mix), ck_dir, "m.mix.json");
	return zrcommon_mix_sources(mix, f, src, why, cap);
}

/* ck_dir resolved, then "/" and name. */
static void real(char *dst, size_t cap, const char *name)
{
	char *dir = realpath(ck_dir, NULL);

	ck_assert_ptr_nonnull(dir);
	ck_assert_int_lt(snprintf(dst, cap, "%s/%s", dir, name), (int)cap);
	free(dir);
}

START_TEST(test_store_and_dataset)
{
	zrcommon_mixfile f;
	zrcommon_mixsource *src;
	char p[PATH_MAX], q[PATH_MAX], doc[PATH_MAX + 256], why[512] = "";

	make_store(ck_dir, "a");
	make_dir("ds");
	ck_path(p, sizeof(p), ck_dir, "ds");
	make_store(p, "y");
	make_store(p, "x");
	make_dir("ds/plain");
	ck_file_write(p, "notes", 0, "x", 1);
	ck_path(q, sizeof(q), p, "link");
	ck_assert_int_eq(symlink("../a", q), 0);
	ck_assert(zrcommon_is_store(q) && !zrcommon_is_field(p, "link"));
	ck_assert(zrcommon_is_field(p, "x") && !zrcommon_is_field(p, "plain"));
	real(q, sizeof(q), "a");
	snprintf(doc, sizeof(doc), "{\"sources\": [{\"path\": \"a\", "
		 "\"weight\": 1}, {\"path\": \"ds\", \"weight\": 1}, "
		 "{\"path\": \"ds/../ds/link\", \"weight\": 1}, "
		 "{\"path\": \"%s\", \"weight\": 1}]}", q);
	ck_assert_int_eq(sources(doc, &f, &src, why, sizeof(why)), 0);
	/* the store as named, through a symlink, and absolute: one path */
	for (int i = 0; i < 3; i++) {
		const zrcommon_mixsource *a = &src[i ? i + 1 : 0];

		ck_assert_uint_eq(a->nf, 1);
		ck_assert_str_eq(a->store[0], q);
		ck_assert_ptr_null(a->name[0]);
	}
	ck_assert_uint_eq(src[1].nf, 2);
	ck_assert_str_eq(src[1].name[0], "x");
	ck_assert_str_eq(src[1].name[1], "y");
	real(q, sizeof(q), "ds/y");
	ck_assert_str_eq(src[1].store[1], q);
	/* a store beside a dataset: not the same fields */
	ck_assert_int_eq(zrcommon_mix_same_fields(src, 4, why, sizeof(why)),
			 -EINVAL);
	ck_assert_str_eq(why, "source 1 has 2 stores, source 0 1 (sources "
			 "need the same fields)");
	ck_assert_int_eq(zrcommon_mix_same_fields(src + 1, 1, why,
						  sizeof(why)), 0);
	zrcommon_mix_sources_free(src, f.k);
	zrcommon_mixfile_free(&f);
}
END_TEST

START_TEST(test_fields_by_name)
{
	zrcommon_mixfile f;
	zrcommon_mixsource *src;
	char p[PATH_MAX], why[512] = "";

	for (int d = 0; d < 3; d++) {
		static const char *const dirs[] = { "d0", "d1", "xz" };

		make_dir(dirs[d]);
		ck_path(p, sizeof(p), ck_dir, dirs[d]);
		make_store(p, "x");
		make_store(p, d < 2 ? "y" : "z");
	}
	ck_assert_int_eq(sources("{\"sources\": [{\"path\": \"d0\", "
				 "\"weight\": 1}, {\"path\": \"d1\", "
				 "\"weight\": 1}, {\"path\": \"xz\", "
				 "\"weight\": 1}]}", &f, &src, why,
				 sizeof(why)), 0);
	ck_assert_int_eq(zrcommon_mix_same_fields(src, 2, why, sizeof(why)),
			 0);
	ck_assert_int_eq(zrcommon_mix_same_fields(src, 3, why, sizeof(why)),
			 -EINVAL);
	ck_assert_str_eq(why, "source 2 has a field z where source 0 has y "
			 "(sources need the same fields)");
	zrcommon_mix_sources_free(src, f.k);
	zrcommon_mixfile_free(&f);
}
END_TEST

/* A source refused, and why. */
static void refused(const char *path, int err, const char *msg)
{
	zrcommon_mixfile f;
	zrcommon_mixsource *src = (zrcommon_mixsource *)&f;
	char doc[256], why[512] = "";

	snprintf(doc, sizeof(doc), "{\"sources\": [{\"path\": \"a\", "
		 "\"weight\": 1}, {\"path\": \"%s\", \"weight\": 1}]}", path);
	ck_assert_int_eq(sources(doc, &f, &src, why, sizeof(why)), err);
	ck_assert_ptr_null(src);
	ck_assert_msg(strstr(why, msg) && !strncmp(why, "source 1 (\"", 11),
		      "%s", why);
	zrcommon_mixfile_free(&f);
}

START_TEST(test_refusals)
{
	char p[PATH_MAX];

	make_store(ck_dir, "a");
	make_dir("empty");
	make_dir("empty/sub");
	ck_file_write(ck_dir, "file", 0, "x", 1);
	refused("nope", -ENOENT, "nope: No such file or directory");
	refused("empty", -ENOENT, "neither a store nor a folder of stores");
	refused("file", -ENOENT, "neither a store nor a folder of stores");
	/* 65 folders with a meta.zr: what makes a store folder a field */
	make_dir("big");
	for (int i = 0; i <= ZRCOMMON_MIX_FIELDS; i++) {
		char name[32];

		snprintf(name, sizeof(name), "big/f%02d", i);
		make_dir(name);
		ck_path(p, sizeof(p), ck_dir, name);
		ck_file_write(p, "meta.zr", 0, "", 0);
	}
	refused("big", -E2BIG, "more than 64 stores");
}
END_TEST

START_TEST(test_64_stores)
{
	zrcommon_mixfile f;
	zrcommon_mixsource *src;
	char p[PATH_MAX], why[512] = "";

	make_dir("big");
	for (int i = 0; i < ZRCOMMON_MIX_FIELDS; i++) {
		char name[32];

		snprintf(name, sizeof(name), "big/f%02d", i);
		make_dir(name);
		ck_path(p, sizeof(p), ck_dir, name);
		ck_file_write(p, "meta.zr", 0, "", 0);
	}
	ck_assert_int_eq(sources("{\"sources\": [{\"path\": \"big\", "
				 "\"weight\": 1}]}", &f, &src, why,
				 sizeof(why)), 0);
	ck_assert_uint_eq(src[0].nf, ZRCOMMON_MIX_FIELDS);
	ck_assert_str_eq(src[0].name[63], "f63");
	zrcommon_mix_sources_free(src, f.k);
	zrcommon_mixfile_free(&f);
}
END_TEST

START_TEST(test_named)
{
	ck_assert(zrcommon_mix_named("a.mix.json"));
	ck_assert(!zrcommon_mix_named(".mix.json"));
	ck_assert(!zrcommon_mix_named("a.mix.json.txt"));
}
END_TEST

START_TEST(test_stats_json)
{
	static const char doc[] = "{\"sources\": [{\"path\": \"d\\\"1\", "
		"\"weight\": 3}, {\"path\": \"e\", \"weight\": 1}], "
		"\"schedule\": [{\"from\": 9, \"weights\": [0, 2]}]}";
	static const uint64_t records[] = { 10, 0 };
	static const char *const fields[] = { "x", "y" };
	zrcommon_mixfile f;
	char msg[256], *out;
	size_t len;

	ck_assert_int_eq(zrcommon_mixfile_parse(doc, strlen(doc), &f, msg,
						sizeof(msg)), 0);
	ck_assert_int_eq(zrcommon_mix_stats_json(&(zrcommon_mix_figures){
		.path = "sub/m.mix.json", .file = &f, .records = records,
		.fields = fields, .nf = 2, .records_served = 1 }, &out, &len),
			 0);
	ck_assert_str_eq(out, "{\"mixture\": \"sub/m.mix.json\", \"fields\": "
			 "[\"x\", \"y\"], \"batch_files\": \"records and "
			 "indices\", \"sources\": [\n"
			 "  {\"source\": 0, \"path\": \"d\\\"1\", \"records\": "
			 "10, \"weight\": 3, \"share\": 0.750000, "
			 "\"positions_per_cycle\": 14},\n"
			 "  {\"source\": 1, \"path\": \"e\", \"records\": 0, "
			 "\"weight\": 1, \"share\": 0.250000, "
			 "\"positions_per_cycle\": null}],\n"
			 " \"schedule\": [{\"from\": 9, \"weights\": [0, 2]}]}"
			 "\n");
	ck_assert_uint_eq(len, strlen(out));
	free(out);
	zrcommon_mixfile_free(&f);
}
END_TEST

Suite *suite_mixsource(void)
{
	Suite *s = suite_create("mixsource");
	TCase *tc = tcase_create("mixsource");

	tcase_add_checked_fixture(tc, ck_dir_setup, ck_dir_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_store_and_dataset);
	tcase_add_test(tc, test_fields_by_name);
	tcase_add_test(tc, test_refusals);
	tcase_add_test(tc, test_64_stores);
	tcase_add_test(tc, test_named);
	tcase_add_test(tc, test_stats_json);
	suite_add_tcase(s, tc);
	return s;
}
