/*
 * check_tree_opts.c - the run options' table (src/tree/run_opts.c): every
 * option's good and bad values and the message a bad one gets, the checks
 * across options, the --help rows, and what each option does to the
 * bytes of a batch file, compared with `zrecord batch` given the same
 * option.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_suites.h"
#include "check_util.h"
#include "encoder.h"
#include "run_opts.h"
#include "tree_util.h"

/* arg parsed into r: 0 or -EINVAL with exactly msg, -ENOENT. */
static void parse(struct zrtree_run *r, const char *arg, int err,
		  const char *msg)
{
	char got[160] = "";
	int rc = zrtree_run_parse(r, arg, got, sizeof(got));

	ck_assert_msg(rc == err, "%s: %d, expected %d", arg, rc, err);
	if (msg)
		ck_assert_msg(!strcmp(got, msg), "%s: \"%s\", expected \"%s\"",
			      arg, got, msg);
}

START_TEST(test_defaults)
{
	struct zrtree_run r;
	char msg[160];

	zrtree_run_defaults(&r);
	ck_assert_int_eq(r.mode, ZR_SAMPLER_IID);
	ck_assert_uint_eq(r.bsize, 256);
	ck_assert_uint_eq(r.rank, 0);
	ck_assert_uint_eq(r.world, 1);
	ck_assert_uint_eq(r.start, 0);
	ck_assert_uint_eq(r.granule, 0);
	ck_assert_uint_eq(r.max_batch, zrfile_npy_default_max());
	ck_assert_uint_le(r.max_batch, 1u << 30);
	ck_assert_int_eq(zrtree_run_check(&r, msg, sizeof(msg)), 0);
	zrtree_run_free(&r);
}
END_TEST

START_TEST(test_good_values)
{
	struct zrtree_run r;

	zrtree_run_defaults(&r);
	parse(&r, "sampler=sequential", 0, NULL);
	ck_assert_int_eq(r.mode, ZR_SAMPLER_SEQUENTIAL);
	parse(&r, "sampler=cyclic", 0, NULL);
	ck_assert_int_eq(r.mode, ZR_SAMPLER_CYCLIC);
	parse(&r, "batch_size=1", 0, NULL);
	ck_assert_uint_eq(r.bsize, 1);
	parse(&r, "batch_size=16777216", 0, NULL);
	ck_assert_uint_eq(r.bsize, 16777216);
	parse(&r, "world=4294967295", 0, NULL);
	ck_assert_uint_eq(r.world, UINT32_MAX);
	parse(&r, "rank=4294967294", 0, NULL);
	ck_assert_uint_eq(r.rank, UINT32_MAX - 1);
	parse(&r, "start=18446744073709551615", 0, NULL);
	ck_assert_uint_eq(r.start, UINT64_MAX);
	parse(&r, "granule=1", 0, NULL);
	ck_assert_uint_eq(r.granule, 1);
	parse(&r, "max_batch_bytes=4096", 0, NULL);
	ck_assert_uint_eq(r.max_batch, 4096);
	parse(&r, "max_batch_bytes=4K", 0, NULL);
	ck_assert_uint_eq(r.max_batch, 4096);
	parse(&r, "max_batch_bytes=64M", 0, NULL);
	ck_assert_uint_eq(r.max_batch, 64u << 20);
	parse(&r, "max_batch_bytes=2G", 0, NULL);
	ck_assert_uint_eq(r.max_batch, 2ull << 30);
	parse(&r, "skip=3:5", 0, NULL);
	parse(&r, "skip=7:9", 0, NULL);
	parse(&r, "grow=10:20", 0, NULL);
	parse(&r, "grow=10:1:30", 0, NULL);
	parse(&r, "length=6", 0, NULL);
	parse(&r, "length=6:7:8", 0, NULL);
	parse(&r, "decode=4096", 0, NULL);
	ck_assert_uint_eq(r.image.size, 4096);
	parse(&r, "augment=rrc:0.25:1+flip", 0, NULL);
	ck_assert_uint_eq(r.image.flags, ZR_IMAGE_RRC | ZR_IMAGE_FLIP);
	ck_assert(r.image.scale_min == 0.25 && r.image.scale_max == 1);
	ck_assert_uint_eq(r.image.size, 4096); /* each sets its own part */
	parse(&r, "decode=1", 0, NULL);
	ck_assert_uint_eq(r.image.flags, ZR_IMAGE_RRC | ZR_IMAGE_FLIP);
	zrtree_run_free(&r);
}
END_TEST

START_TEST(test_bad_values)
{
	static const struct {
		const char *arg, *msg;
	} c[] = {
		{ "sampler=random", "sampler=MODE takes sequential, iid or "
				    "cyclic" },
		{ "sampler=", "sampler=MODE takes sequential, iid or cyclic" },
		{ "batch_size=0", "batch_size=B takes 1 to 16777216" },
		{ "batch_size=16777217", "batch_size=B takes 1 to 16777216" },
		{ "batch_size=", "batch_size=B takes 1 to 16777216" },
		{ "batch_size=+5", "batch_size=B takes 1 to 16777216" },
		{ "batch_size=-5", "batch_size=B takes 1 to 16777216" },
		{ "batch_size= 5", "batch_size=B takes 1 to 16777216" },
		{ "batch_size=5x", "batch_size=B takes 1 to 16777216" },
		{ "batch_size=0x10", "batch_size=B takes 1 to 16777216" },
		{ "rank=4294967295", "rank=R takes 0 to 4294967294, below "
				     "world" },
		{ "rank=-1", "rank=R takes 0 to 4294967294, below world" },
		{ "world=0", "world=W takes 1 to 4294967295" },
		{ "world=4294967296", "world=W takes 1 to 4294967295" },
		{ "start=18446744073709551616", "start=P[@G] takes a position P (0 to "
		  "2^64-1), then optionally @ and the granule G (1 to 2^64-1)" },
		{ "start=99999999999999999999999", "start=P[@G] takes a position P (0 to "
		  "2^64-1), then optionally @ and the granule G (1 to 2^64-1)" },
		{ "start=3@0", "start=P[@G] takes a position P (0 to "
		  "2^64-1), then optionally @ and the granule G (1 to 2^64-1)" },
		{ "granule=0", "granule=G takes 1 to 18446744073709551615" },
		{ "skip=5:3", "skip=A:B takes positions A < B, at most 65536 "
			      "entries" },
		{ "skip=5", "skip=A:B takes positions A < B, at most 65536 "
			    "entries" },
		{ "skip=a:b", "skip=A:B takes positions A < B, at most 65536 "
			      "entries" },
		{ "grow=a", "grow=P:N or grow=P:K:N takes decimals, K below "
			    "1024, at most 65536 entries" },
		{ "grow=1:1024:5", "grow=P:N or grow=P:K:N takes decimals, K "
				   "below 1024, at most 65536 entries" },
		{ "length=", "length=N[:N...] takes up to 1024 decimals, one "
			     "per source" },
		{ "length=5:x", "length=N[:N...] takes up to 1024 decimals, "
				"one per source" },
		{ "max_batch_bytes=4095", "max_batch_bytes=N takes a byte count "
		  "of 4096 or more, with an optional K, M or G: 4K, 64M, 2G" },
		{ "max_batch_bytes=0K", "max_batch_bytes=N takes a byte count "
		  "of 4096 or more, with an optional K, M or G: 4K, 64M, 2G" },
		{ "max_batch_bytes=K", "max_batch_bytes=N takes a byte count "
		  "of 4096 or more, with an optional K, M or G: 4K, 64M, 2G" },
		{ "max_batch_bytes=5T", "max_batch_bytes=N takes a byte count "
		  "of 4096 or more, with an optional K, M or G: 4K, 64M, 2G" },
		{ "max_batch_bytes=18014398509481984K", "max_batch_bytes=N "
		  "takes a byte count of 4096 or more, with an optional K, M "
		  "or G: 4K, 64M, 2G" },
		{ "max_batch_bytes=4k", "max_batch_bytes=N takes a byte count "
		  "of 4096 or more, with an optional K, M or G: 4K, 64M, 2G" },
		{ "decode=0", "decode=SIZE takes 1 to 4096" },
		{ "decode=", "decode=SIZE takes 1 to 4096" },
		{ "decode=4097", "decode=SIZE takes 1 to 4096" },
		{ "augment=rotate", "augment=A takes rrc, rrc:MIN:MAX (0 < MIN "
		  "<= MAX <= 1) and flip, joined by + (a comma ends the "
		  "option)" },
		{ "augment=rrc:0:1", "augment=A takes rrc, rrc:MIN:MAX (0 < "
		  "MIN <= MAX <= 1) and flip, joined by + (a comma ends the "
		  "option)" },
	};
	struct zrtree_run r, before;

	zrtree_run_defaults(&r);
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		before = r;
		parse(&r, c[i].arg, -EINVAL, c[i].msg);
		/* a refused value changes nothing */
		ck_assert_msg(!memcmp(&before, &r, sizeof(r)), "%s changed "
			      "the run", c[i].arg);
	}
	/* no run option: the host's own, or none at all */
	parse(&r, "foo=1", -ENOENT, NULL);
	parse(&r, "sampler", -ENOENT, NULL);
	parse(&r, "", -ENOENT, NULL);
	parse(&r, "prefetch=4", -ENOENT, NULL);
	zrtree_run_free(&r);
}
END_TEST

START_TEST(test_check_across)
{
	struct zrtree_run r;
	char msg[160];

	zrtree_run_defaults(&r);
	parse(&r, "rank=3", 0, NULL);
	ck_assert_int_eq(zrtree_run_check(&r, msg, sizeof(msg)), -EINVAL);
	ck_assert_str_eq(msg, "rank=3 needs world > 3");
	parse(&r, "world=4", 0, NULL);
	ck_assert_int_eq(zrtree_run_check(&r, msg, sizeof(msg)), 0);
	/* flip alone has no output size to flip (the library's own rule) */
	parse(&r, "augment=flip", 0, NULL);
	ck_assert_int_eq(zrtree_run_check(&r, msg, sizeof(msg)), -EINVAL);
	ck_assert_str_eq(msg, "augment=flip needs decode=SIZE or rrc");
	parse(&r, "decode=64", 0, NULL);
	ck_assert_int_eq(zrtree_run_check(&r, msg, sizeof(msg)), 0);
	zrtree_run_free(&r);
}
END_TEST

START_TEST(test_value_parsers)
{
	uint64_t v = 7;

	ck_assert_int_eq(zrtree_run_u64("0", 0, 5, &v), 0);
	ck_assert_uint_eq(v, 0);
	ck_assert_int_eq(zrtree_run_u64("5", 0, 5, &v), 0);
	ck_assert_int_eq(zrtree_run_u64("6", 0, 5, &v), -EINVAL);
	ck_assert_int_eq(zrtree_run_u64("1", 2, 5, &v), -EINVAL);
	ck_assert_int_eq(zrtree_run_u64("", 0, 5, &v), -EINVAL);
	ck_assert_uint_eq(v, 5); /* written only on success */
	ck_assert_int_eq(zrtree_run_size("1M", 1, &v), 0);
	ck_assert_uint_eq(v, 1u << 20);
	ck_assert_int_eq(zrtree_run_size("17179869183G", 1, &v), 0);
	ck_assert_int_eq(zrtree_run_size("17179869184G", 1, &v), -EINVAL);
	ck_assert_int_eq(zrtree_run_size("", 1, &v), -EINVAL);
	ck_assert_int_eq(zrtree_run_size("123456789012345678901234", 1, &v),
			 -EINVAL);
}
END_TEST

/* What f prints on stdout, in a malloc'd string. */
static char *printed(void (*f)(void))
{
	char path[4200], *buf;
	int fd, saved = dup(STDOUT_FILENO);
	FILE *in;
	long n;

	snprintf(path, sizeof(path), "%s/out", ck_dir);
	fflush(stdout);
	fd = creat(path, 0644);
	ck_assert_int_ge(fd, 0);
	dup2(fd, STDOUT_FILENO);
	close(fd);
	f();
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	in = fopen(path, "r");
	ck_assert_ptr_nonnull(in);
	fseek(in, 0, SEEK_END);
	n = ftell(in);
	rewind(in);
	buf = calloc(1, (size_t)n + 1);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, in), (size_t)n);
	fclose(in);
	return buf;
}

static void help_sampler(void)
{
	zrtree_run_help("sampler=");
	zrtree_run_help("nope=");
}

static void help_long(void)
{
	zrtree_run_help_row("a_very_long_option_name=N", "one\ntwo");
}

START_TEST(test_help_rows)
{
	static const char *const args[] = {
		"sampler=MODE", "batch_size=B", "rank=R", "world=W", "start=P[@G]",
		"granule=G", "skip=A:B", "grow=P[:K]:N", "length=N[:N...]",
		"max_batch_bytes=N[K|M|G]", "decode=SIZE",
		"augment=rrc[:MIN:MAX][+flip]",
	};
	char *all = printed(zrtree_run_help_all), *at = all, *one;

	/* every option, in table order, each as "    -o ARG" */
	for (size_t i = 0; i < sizeof(args) / sizeof(args[0]); i++) {
		char row[64];

		snprintf(row, sizeof(row), "    -o %s", args[i]);
		at = strstr(at, row);
		ck_assert_msg(at != NULL, "no row %s, in order", args[i]);
	}
	free(all);
	one = printed(help_sampler);
	ck_assert_str_eq(one, "    -o sampler=MODE        sequential|iid|"
			      "cyclic (default iid)\n");
	free(one);
	/* help at column 28; a long ARG on a line of its own */
	one = printed(help_long);
	ck_assert_str_eq(one, "    -o a_very_long_option_name=N\n"
			      "                           one\n"
			      "                           two\n");
	free(one);
}
END_TEST

/* -- what the options do to a batch ---------------------------------------- */

static const struct opt_case {
	const char *opts, *path, *zrecord;
} runs[] = {
	{ "rank=1,world=2", "img/batch/sequential/2/0-1.npy",
	  "batch img --mode sequential --batch-size 2 --rank 1 --world 2 "
	  "--seed 0 --step 1" },
	{ "start=3@3", "img/batch/cyclic/3/4-2.npy", "batch img --start 3@3 "
	  "--mode cyclic --batch-size 3 --seed 4 --step 2" },
	{ "granule=5,world=2", "img/batch/cyclic/2/4-3.indices.npy",
	  "batch img --granule 5 --world 2 --mode cyclic --batch-size 2 "
	  "--seed 4 --step 3 --indices" },
	{ "skip=2:5", "img/batch/sequential/4/0-0.indices.npy",
	  "batch img --skip 2:5 --mode sequential --batch-size 4 --seed 0 "
	  "--step 0 --indices" },
	{ "length=6", "img/batch/sequential/3/1-2.npy", "batch img --length 6 "
	  "--mode sequential --batch-size 3 --seed 1 --step 2" },
	{ "length=6,grow=12:10", "img/batch/sequential/4/0-5.indices.npy",
	  "batch img --length 6 --grow 12:10 --mode sequential "
	  "--batch-size 4 --seed 0 --step 5 --indices" },
	{ "sampler=cyclic,batch_size=5", "img/batch/2-3.npy",
	  "batch img --mode cyclic --batch-size 5 --seed 2 --step 3" },
	{ "sampler=sequential,batch_size=3", "rag/batch/0-2.packed.npz",
	  "batch rag --mode sequential --batch-size 3 --seed 0 --step 2 "
	  "--form packed" },
	{ "length=5:4", "mix.mix/batch/iid/4/1-1.indices.npy",
	  "batch mix.mix.json --length 5,4 --batch-size 4 --seed 1 "
	  "--step 1 --indices" },
	{ "max_batch_bytes=64K", "img/batch/iid/8/3-3.npy",
	  "batch img --batch-size 8 --seed 3 --step 3" },
};

START_TEST(test_run_bytes)
{
	const struct opt_case *c = &runs[_i];
	struct ckt_tree t;
	uint64_t alen, blen, dlen;
	char *a, *b = ckt_zrecord(c->zrecord, &blen), *d;

	ckt_build(&t, ZR_OPEN_RDONLY, c->opts);
	a = ckt_read(&t.t, c->path, &alen);
	ckt_same(c->opts, a, alen, b, blen);
	ckt_free(&t);
	/* and the option made a difference, but for the byte cap */
	ckt_build(&t, ZR_OPEN_RDONLY, NULL);
	d = ckt_read(&t.t, c->path, &dlen);
	if (strncmp(c->opts, "max_batch_bytes=", 16))
		ck_assert_msg(dlen != alen || memcmp(a, d, alen), "%s changed "
			      "nothing in %s", c->opts, c->path);
	ckt_free(&t);
	free(a);
	free(b);
	free(d);
}
END_TEST

Suite *suite_tree_opts(void)
{
	Suite *s = suite_create("tree_opts");
	TCase *table = tcase_create("table"), *bytes = tcase_create("bytes");

	tcase_add_checked_fixture(table, ck_dir_setup, ck_dir_teardown);
	tcase_add_test(table, test_defaults);
	tcase_add_test(table, test_good_values);
	tcase_add_test(table, test_bad_values);
	tcase_add_test(table, test_check_across);
	tcase_add_test(table, test_value_parsers);
	tcase_add_test(table, test_help_rows);
	suite_add_tcase(s, table);
	tcase_add_unchecked_fixture(bytes, ckt_src_make, ckt_src_remove);
	tcase_set_timeout(bytes, 60);
	tcase_add_loop_test(bytes, test_run_bytes, 0,
			    sizeof(runs) / sizeof(runs[0]));
	suite_add_tcase(s, bytes);
	return s;
}
