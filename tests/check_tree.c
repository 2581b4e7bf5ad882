/*
 * check_tree.c - src/tree over a real source folder (tree_util.h): every
 * name form zrtree_lookup resolves and the hostile ones it refuses, what
 * each folder lists (zrtree_entry), and the sizes and bytes of every file
 * form, compared with what `zrecord` writes for the same records and,
 * for the dense forms, with the library's own sampler, gather and .npy
 * header.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_suites.h"
#include "check_util.h"
#include "encoder.h"
#include "tree_util.h"

/* -- names ---------------------------------------------------------------- */

struct name_case {
	const char *path;
	int err;
};

static void check_names(const char *opts, const struct name_case *c,
			size_t n)
{
	struct ckt_tree t;

	ckt_build(&t, ZR_OPEN_RDONLY, opts);
	for (size_t i = 0; i < n; i++) {
		struct ckt_walk w;
		int err = ckt_walk(&t.t, c[i].path, &w);

		ck_assert_msg(err == c[i].err, "%s: %s, expected %s",
			      c[i].path, zr_errname(err),
			      zr_errname(c[i].err));
		if (!err)
			ckt_walk_end(&w);
	}
	ckt_free(&t);
}

#define CASES(a) (a), sizeof(a) / sizeof((a)[0])

START_TEST(test_static_names)
{
	static const struct name_case c[] = {
		{ "img", 0 }, { "img2", 0 }, { "rag", 0 }, { "ds", 0 },
		{ "ds/a", 0 }, { "ds/b", 0 }, { "ds/@batch", 0 },
		{ "plain", 0 }, { "plain/inner/records/2.npy", 0 },
		{ "plain/@batch", -ENOENT }, /* one store: no dataset */
		{ "mix.mix", 0 }, { "mix.mix/batch", 0 }, { "mix.mix/stats", 0 },
		{ "mix.mix/errors", 0 }, { "@batch", 0 },
		{ "mix.mix.json", -ENOENT }, { "notes.txt", -ENOENT },
		{ "img/records", 0 }, { "img/batch", 0 }, { "img/append", 0 },
		{ "img/stats", 0 }, { "img/schema", 0 }, { "img/errors", 0 },
		{ "img/sync", 0 }, { "img/compact", 0 }, { "img/delete", 0 },
		{ "img/data.zr", -ENOENT }, { "img/meta.zr", -ENOENT },
		{ "IMG", -ENOENT }, { "img/Records", -ENOENT },
		{ "img/stats/x", -ENOTDIR }, { "img/append/0.npy", -ENOTDIR },
	};

	check_names(NULL, CASES(c));
}
END_TEST

START_TEST(test_record_names)
{
	static const struct name_case c[] = {
		{ "img/records/0.npy", 0 }, { "img/records/9.npy", 0 },
		{ "img/records/10.npy", -ENOENT }, { "img/records/3.png", 0 },
		{ "rag/records/8.npy", 0 }, { "rag/records/9.npy", -ENOENT },
		/* a ragged <u2 record is no image */
		{ "rag/records/0.png", -ENOENT },
		{ "img/records/00.npy", -ENOENT }, { "img/records/01.npy", -ENOENT },
		{ "img/records/-1.npy", -ENOENT }, { "img/records/+1.npy", -ENOENT },
		{ "img/records/ 1.npy", -ENOENT }, { "img/records/1 .npy", -ENOENT },
		{ "img/records/1.npy ", -ENOENT }, { "img/records/0x1.npy", -ENOENT },
		{ "img/records/1.NPY", -ENOENT }, { "img/records/1.npz", -ENOENT },
		{ "img/records/.npy", -ENOENT }, { "img/records/1.npy.npy", -ENOENT },
		{ "img/records/1npy", -ENOENT }, { "img/records/1", -ENOENT },
		{ "img/records/1.", -ENOENT }, { "img/records/1.indices.npy", -ENOENT },
		{ "img/records/18446744073709551615.npy", -ENOENT },
		{ "img/records/18446744073709551616.npy", -ENOENT },
		{ "img/records/99999999999999999999999.npy", -ENOENT },
		{ "img/records/1.npy/x", -ENOTDIR },
	};
	struct ckt_tree t;
	struct ckt_walk w;
	struct zrtree_node *n;
	char *big = malloc(65536 + 5);

	check_names(NULL, CASES(c));
	/* a name of 64 KiB of digits: refused before any work */
	ck_assert_ptr_nonnull(big);
	memset(big, '9', 65536);
	memcpy(big + 65536, ".npy", 5);
	ckt_build(&t, ZR_OPEN_RDONLY, NULL);
	ck_assert_int_eq(ckt_walk(&t.t, "img/records", &w), 0);
	ck_assert_int_eq(zrtree_lookup(&t.t, ckt_at(&w), big, &n, &w.dyn[0]),
			 -ENOENT);
	/* what a record's name fixes in its node */
	ck_assert_int_eq(ckt_walk(&t.t, "img/records/7.png", &w), 0);
	n = ckt_at(&w);
	ck_assert_int_eq(n->kind, ZRTREE_K_RECORD);
	ck_assert_int_eq(n->form, ZRFILE_PNG);
	ck_assert_uint_eq(n->idx, 7);
	ck_assert_uint_gt(n->size, 60);
	ckt_walk_end(&w);
	ckt_free(&t);
	free(big);
}
END_TEST

START_TEST(test_batch_names)
{
	static const struct name_case c[] = {
		{ "img/batch/iid", 0 }, { "img/batch/sequential", 0 },
		{ "img/batch/cyclic", 0 }, { "img/batch/IID", -ENOENT },
		{ "img/batch/random", -ENOENT }, { "img/batch/iid/1", 0 },
		{ "img/batch/iid/16777216", 0 },
		{ "img/batch/iid/16777217", -ENOENT },
		{ "img/batch/iid/0", -ENOENT }, { "img/batch/iid/08", -ENOENT },
		{ "img/batch/iid/-8", -ENOENT }, { "img/batch/iid/iid", -ENOENT },
		{ "img/batch/iid/8/1-2.npy", 0 }, { "img/batch/1-2.npy", 0 },
		{ "img/batch/iid/8/1-2.indices.npy", 0 },
		{ "img/batch/iid/8/0-0.npy", 0 },
		{ "img/batch/iid/8/1-2.npz", -ENOENT },
		{ "img/batch/iid/8/1-2.packed.npz", -ENOENT },
		{ "img/batch/iid/8/1-2.png", -ENOENT },
		{ "img/batch/iid/8/1-.npy", -ENOENT },
		{ "img/batch/iid/8/-2.npy", -ENOENT },
		{ "img/batch/iid/8/1-2-3.npy", -ENOENT },
		{ "img/batch/iid/8/1--2.npy", -ENOENT },
		{ "img/batch/iid/8/01-2.npy", -ENOENT },
		{ "img/batch/iid/8/1-02.npy", -ENOENT },
		{ "img/batch/iid/8/12.npy", -ENOENT },
		{ "img/batch/iid/8/a-b.npy", -ENOENT },
		{ "img/batch/iid/8/1-2", -ENOENT },
		{ "img/batch/iid/8/1-2.", -ENOENT },
		{ "img/batch/iid/8/.npy", -ENOENT },
		{ "img/batch/iid/8/18446744073709551616-1.npy", -ENOENT },
		{ "img/batch/iid/8/1-18446744073709551616.npy", -ENOENT },
		{ "img/batch/iid/8/18446744073709551615-7.npy", 0 },
		{ "img/batch/iid/8/1-2.npy/x", -ENOTDIR },
		{ "img/batch/iid/8/x", -ENOENT },
		{ "rag/batch/1-2.npz", 0 }, { "rag/batch/1-2.npy", -ENOENT },
		{ "rag/batch/1-2.indices.npy", 0 },
		{ "rag/batch/1-2.packed.npz", 0 }, { "rag/batch/1-2.padded.npz", 0 },
		{ "rag/batch/1-2.packed.npy", 0 }, { "rag/batch/1-2.offsets.npy", 0 },
		{ "rag/batch/1-2.shapes.npy", 0 }, { "rag/batch/1-2.padded.npy", 0 },
		{ "rag/batch/1-2.lengths.npy", 0 },
		{ "rag/batch/1-2.packed", -ENOENT },
		{ "rag/batch/1-2.Packed.npz", -ENOENT },
		{ "rag/batch/1-2.packed.npz.npz", -ENOENT },
		{ "rag/batch/1-2.data.npy", -ENOENT },
		{ "ds/@batch/1-2.npz", 0 }, { "ds/@batch/1-2.npy", -ENOENT },
		{ "ds/@batch/1-2.indices.npy", 0 },
		{ "ds/@batch/cyclic/4/1-2.npz", 0 },
		{ "ds/@batch/1-2.packed.npz", -ENOENT },
		{ "mix.mix/batch/1-2.npy", 0 }, { "mix.mix/batch/1-2.npz", -ENOENT },
		{ "mix.mix/batch/iid/4/1-2.indices.npy", 0 },
	};
	struct ckt_tree t;
	struct ckt_walk w;
	struct zrtree_node *n;

	check_names(NULL, CASES(c));
	ckt_build(&t, ZR_OPEN_RDONLY, NULL);
	/* what the folders and the name fix in a batch node */
	ck_assert_int_eq(ckt_walk(&t.t, "img/batch/cyclic/8/5-6.indices.npy",
				  &w), 0);
	n = ckt_at(&w);
	ck_assert_int_eq(n->kind, ZRTREE_K_BATCH);
	ck_assert_int_eq(n->form, ZRFILE_INDICES);
	ck_assert_int_eq(n->mode, ZR_SAMPLER_CYCLIC);
	ck_assert_uint_eq(n->bsize, 8);
	ck_assert_uint_eq(n->seed, 5);
	ck_assert_uint_eq(n->step, 6);
	ckt_walk_end(&w);
	/* batch/ itself draws with the run's sampler and batch size */
	ck_assert_int_eq(ckt_walk(&t.t, "img/batch/3-4.npy", &w), 0);
	n = ckt_at(&w);
	ck_assert_int_eq(n->mode, ZR_SAMPLER_IID);
	ck_assert_uint_eq(n->bsize, 256);
	ckt_walk_end(&w);
	ckt_free(&t);
}
END_TEST

/* max_batch_bytes refuses at lookup, before any view or gather. */
START_TEST(test_batch_cap)
{
	static const struct name_case c[] = {
		/* 256 records of 60 bytes */
		{ "img/batch/1-0.npy", -EFBIG },
		/* the bound before any read counts 8 bytes of index a
		 * record besides its row: 56 * 68 <= 4096 < 61 * 68 */
		{ "img/batch/iid/56/1-0.npy", 0 },
		{ "img/batch/iid/61/1-0.npy", -EFBIG },
		{ "img/batch/iid/16777216/1-0.indices.npy", -EFBIG },
		{ "img/records/3.npy", 0 },
	};

	static const struct name_case b64[] = {
		{ "img/batch/1-0.npy", 0 }, { "img/batch/2-0.npz", -ENOENT },
	};
	static const struct name_case b61[] = {
		{ "img/batch/1-0.npy", -EFBIG },
	};

	check_names("max_batch_bytes=4K", CASES(c));
	check_names("max_batch_bytes=4K,batch_size=56", CASES(b64));
	check_names("max_batch_bytes=4K,batch_size=61", CASES(b61));
}
END_TEST

/* -- listings ------------------------------------------------------------- */

/* The names folder path lists, joined by spaces, '/' after a folder. */
static void listing(struct zrtree *t, const char *path, char *out,
		    size_t cap)
{
	struct ckt_walk w;
	struct zrtree_node *kid, *found;
	char name[320];
	int dir, err;
	uint64_t k;

	ck_assert_int_eq(ckt_walk(t, path, &w), 0);
	out[0] = '\0';
	for (k = 0; !(err = zrtree_entry(ckt_at(&w), k, name, sizeof(name),
					 &dir, &kid)); k++) {
		struct zrtree_node tmpl = { 0 };

		snprintf(out + strlen(out), cap - strlen(out), "%s%s%s",
			 k ? " " : "", name, dir ? "/" : "");
		/* every entry looks up, to its own static node */
		ck_assert_int_eq(zrtree_lookup(t, ckt_at(&w), name, &found,
					       &tmpl), 0);
		ck_assert_ptr_eq(found, kid);
		free(tmpl.lens);
	}
	ck_assert_int_eq(err, -ENOENT);
	ckt_walk_end(&w);
}

START_TEST(test_listings)
{
	static const struct {
		const char *path, *names;
	} c[] = {
		{ "", "ds/ img/ img2/ mix.mix/ plain/ rag/ @batch/" },
		{ "img", "records/ batch/ append stats schema errors sync "
			 "compact delete" },
		{ "img/records", "0.npy 1.npy 2.npy 3.npy 4.npy 5.npy 6.npy "
				 "7.npy 8.npy 9.npy" },
		{ "plain/inner/records", "0.npy 1.npy 2.npy" },
		{ "img/batch", "sequential/ iid/ cyclic/" },
		{ "ds/@batch", "sequential/ iid/ cyclic/" },
		{ "img/batch/iid", "" },
		{ "img/batch/iid/8", "" },
		{ "ds", "a/ b/ @batch/" },
		{ "plain", "inner/" },
		{ "mix.mix", "batch/ stats errors" },
	};
	struct ckt_tree t;
	struct ckt_walk w;
	struct zrtree_node *kid;
	char got[1024], name[8];
	int dir;

	ckt_build(&t, ZR_OPEN_RDONLY, NULL);
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		listing(&t.t, c[i].path, got, sizeof(got));
		ck_assert_msg(!strcmp(got, c[i].names), "%s lists \"%s\", "
			      "expected \"%s\"", c[i].path, got, c[i].names);
	}
	/* a file is no folder; a short buffer truncates as snprintf */
	ck_assert_int_eq(ckt_walk(&t.t, "img/stats", &w), 0);
	ck_assert_int_eq(zrtree_entry(ckt_at(&w), 0, name, sizeof(name), &dir,
				      &kid), -ENOTDIR);
	ck_assert_int_eq(ckt_walk(&t.t, "img", &w), 0);
	ck_assert_int_eq(zrtree_entry(ckt_at(&w), 0, name, 4, &dir, &kid), 0);
	ck_assert_str_eq(name, "rec");
	ck_assert_int_eq(zrtree_entry(ckt_at(&w), UINT64_MAX, name,
				      sizeof(name), &dir, &kid), -ENOENT);
	ck_assert_int_eq(ckt_walk(&t.t, "img/records", &w), 0);
	ck_assert_int_eq(zrtree_entry(ckt_at(&w), UINT64_MAX, name,
				      sizeof(name), &dir, &kid), -ENOENT);
	ckt_free(&t);
}
END_TEST

/* -- sizes and bytes -------------------------------------------------------- */

/* A file of the tree and the `zrecord` command that writes its bytes. */
static const struct form_case {
	const char *path, *zrecord;
} forms[] = {
	{ "img/records/3.npy", "get img 3" },
	{ "img/records/9.png", "get img 9 --png" },
	{ "rag/records/4.npy", "get rag 4" },
	{ "plain/inner/records/2.npy", "get plain/inner 2" },
	{ "img/batch/7-2.npy", "batch img --seed 7 --step 2" },
	{ "img/batch/7-2.indices.npy", "batch img --seed 7 --step 2 "
				       "--indices" },
	{ "img/batch/sequential/4/0-3.npy", "batch img --seed 0 --step 3 "
					    "--mode sequential --batch-size 4" },
	{ "img/batch/cyclic/3/5-4.npy", "batch img --seed 5 --step 4 "
					"--mode cyclic --batch-size 3" },
	{ "rag/batch/iid/5/1-1.npz", "batch rag --seed 1 --step 1 "
				     "--batch-size 5" },
	{ "rag/batch/cyclic/4/2-3.indices.npy", "batch rag --seed 2 --step 3 "
		"--mode cyclic --batch-size 4 --indices" },
	{ "rag/batch/iid/5/1-1.packed.npz", "batch rag --seed 1 --step 1 "
		"--batch-size 5 --form packed" },
	{ "rag/batch/iid/5/1-1.padded.npz", "batch rag --seed 1 --step 1 "
		"--batch-size 5 --form padded" },
	{ "rag/batch/iid/5/1-1.packed.npy", "batch rag --seed 1 --step 1 "
		"--batch-size 5 --form packed.npy" },
	{ "rag/batch/iid/5/1-1.offsets.npy", "batch rag --seed 1 --step 1 "
		"--batch-size 5 --form offsets.npy" },
	{ "rag/batch/iid/5/1-1.shapes.npy", "batch rag --seed 1 --step 1 "
		"--batch-size 5 --form shapes.npy" },
	{ "rag/batch/iid/5/1-1.padded.npy", "batch rag --seed 1 --step 1 "
		"--batch-size 5 --form padded.npy" },
	{ "rag/batch/iid/5/1-1.lengths.npy", "batch rag --seed 1 --step 1 "
		"--batch-size 5 --form lengths.npy" },
	/* a dataset draws as each of its stores of the same length */
	{ "ds/@batch/iid/4/1-2.indices.npy", "batch ds/a --seed 1 --step 2 "
		"--batch-size 4 --indices" },
	{ "mix.mix/batch/iid/6/3-1.npy", "batch mix.mix.json --seed 3 "
		"--step 1 --batch-size 6" },
	{ "mix.mix/batch/cyclic/6/3-1.indices.npy", "batch mix.mix.json "
		"--seed 3 --step 1 --batch-size 6 --mode cyclic --indices" },
	{ "img/stats", "stats img" },
	{ "rag/stats", "stats rag" },
	{ "img/schema", "schema img" },
	{ "rag/schema", "schema rag" },
	{ "mix.mix/stats", "stats mix.mix.json" },
};

START_TEST(test_form_bytes)
{
	const struct form_case *c = &forms[_i];
	struct ckt_tree t;
	uint64_t alen, blen;
	char *a, *b = ckt_zrecord(c->zrecord, &blen);

	ckt_build(&t, ZR_OPEN_RDONLY, NULL);
	a = ckt_read(&t.t, c->path, &alen);
	ckt_same(c->path, a, alen, b, blen);
	free(a);
	free(b);
	ckt_free(&t);
}
END_TEST

/* A dense batch and its indices as the library draws and gathers them,
 * under np.save's header: what the mount serves without the encoder. */
START_TEST(test_dense_batch_from_library)
{
	zr_sampler cfg = { .mode = ZR_SAMPLER_IID, .seed = 9, .length = 10,
			   .batch_size = 4 };
	uint64_t idx[4], shape[] = { 4, 4, 5, 3 }, one = 4, alen;
	char want[4096];
	size_t hlen;
	struct ckt_tree t;
	struct ckt_walk w;
	zr_store *img;
	zr_dtype i8;
	char *a;

	ckt_build(&t, ZR_OPEN_RDONLY, NULL);
	ck_assert_int_eq(ckt_walk(&t.t, "img", &w), 0);
	img = w.base->st->zs;
	ck_assert_int_eq(zr_sampler_batch(&cfg, 9, idx), 0);
	ck_assert_int_eq(zr_npy_write_header(&zr_store_schema(img)->dtype, 4,
					     shape, want, sizeof(want), &hlen),
			 0);
	ck_assert_int_eq(zr_store_gather(img, idx, 4, want + hlen,
					 sizeof(want) - hlen, NULL), 0);
	a = ckt_read(&t.t, "img/batch/iid/4/9-9.npy", &alen);
	ckt_same("img/batch/iid/4/9-9.npy", a, alen, want, hlen + 4 * 60);
	free(a);
	ck_assert_int_eq(zr_dtype_parse("<i8", &i8), 0);
	ck_assert_int_eq(zr_npy_write_header(&i8, 1, &one, want, sizeof(want),
					     &hlen), 0);
	memcpy(want + hlen, idx, sizeof(idx));
	a = ckt_read(&t.t, "img/batch/iid/4/9-9.indices.npy", &alen);
	ckt_same("9-9.indices.npy", a, alen, want, hlen + sizeof(idx));
	free(a);
	ckt_free(&t);
}
END_TEST

/* The text files and the usage lines. */
START_TEST(test_texts)
{
	static const enum zrtree_kind usage[] = {
		ZRTREE_K_APPEND, ZRTREE_K_SYNC, ZRTREE_K_COMPACT,
		ZRTREE_K_DELETE
	};
	static const char *const names[] = { "append:", "sync:", "compact:",
					     "delete:" };
	struct ckt_tree t;
	uint64_t len;
	char *text;

	ckt_build(&t, ZR_OPEN_RDONLY, NULL);
	text = ckt_read(&t.t, "img/errors", &len);
	ck_assert_uint_eq(len, 0);
	free(text);
	for (size_t i = 0; i < 4; i++)
		ck_assert_msg(!strncmp(zrtree_usage(usage[i]), names[i],
				       strlen(names[i])), "%s", names[i]);
	ck_assert_str_eq(zrtree_usage(ZRTREE_K_STATS), "");
	ckt_free(&t);
}
END_TEST

/* A mixture file that does not parse: a folder of its errors alone,
 * which say why (its own source folder: the tree says so on stderr). */
START_TEST(test_bad_mixture)
{
	static const struct name_case c[] = {
		{ "bad.mix/errors", 0 }, { "bad.mix/batch", -ENOENT },
		{ "bad.mix/stats", -ENOENT }, { "bad.mix.json", -ENOENT },
	};
	struct ckt_tree t;
	uint64_t len;
	char got[256], *text;

	ckt_text_file("bad.mix.json", "{not json\n");
	check_names(NULL, CASES(c));
	ckt_build(&t, ZR_OPEN_RDONLY, NULL);
	listing(&t.t, "", got, sizeof(got));
	ck_assert_str_eq(got, "bad.mix/ ds/ img/ img2/ mix.mix/ plain/ rag/ "
			      "@batch/");
	listing(&t.t, "bad.mix", got, sizeof(got));
	ck_assert_str_eq(got, "errors");
	text = ckt_read(&t.t, "bad.mix/errors", &len);
	ck_assert_msg(strstr(text, " not served: "), "errors: "
		      "%.*s", (int)len, text);
	free(text);
	ckt_free(&t);
}
END_TEST

Suite *suite_tree(void)
{
	Suite *s = suite_create("tree");
	TCase *names = tcase_create("names"), *bytes = tcase_create("bytes");
	TCase *mix = tcase_create("bad_mixture");

	tcase_add_unchecked_fixture(names, ckt_src_make, ckt_src_remove);
	tcase_add_test(names, test_static_names);
	tcase_add_test(names, test_record_names);
	tcase_add_test(names, test_batch_names);
	tcase_add_test(names, test_batch_cap);
	tcase_add_test(names, test_listings);
	tcase_add_test(names, test_texts);
	suite_add_tcase(s, names);
	tcase_add_checked_fixture(mix, ckt_src_make, ckt_src_remove);
	tcase_add_test(mix, test_bad_mixture);
	suite_add_tcase(s, mix);
	tcase_add_unchecked_fixture(bytes, ckt_src_make, ckt_src_remove);
	tcase_set_timeout(bytes, 60);
	tcase_add_loop_test(bytes, test_form_bytes, 0,
			    sizeof(forms) / sizeof(forms[0]));
	tcase_add_test(bytes, test_dense_batch_from_library);
	suite_add_tcase(s, bytes);
	return s;
}
