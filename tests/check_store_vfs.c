/*
 * check_store_vfs.c - the storage seam (src/lib/vfs.h): a store read
 * through a backend without map or any write (the POSIX files served as a
 * read-only medium, as an object store will be) gives every byte, shape,
 * table entry and count the mapped POSIX backend gives, for every codec,
 * dense and ragged, records above and below the pread threshold, in a view
 * and as a follower; it refuses writing opens; and a path with a URL
 * scheme no backend serves fails, naming the way to a local folder of
 * that name, while such a local folder still works.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_suites.h"
#include "check_util.h"
#include "store.h"

#define NREC 40u

/* Record i's elements: small ones, and every seventh above 64 KiB (the
 * engine's pread threshold for raw records). */
static uint64_t rec_elems(uint64_t i)
{
	return i % 7 == 3 ? (80u << 10) / 4 + i : 1 + (i * 37) % 300;
}

static zr_store *ragged_store(const char *name, zr_codec codec)
{
	zr_schema sc = ck_schema("<u4", -1, NULL);
	zr_store *s = ck_store(ck_dir, name, &sc, codec);

	for (uint64_t i = 0; i < NREC; i++) {
		uint64_t n = rec_elems(i);
		uint32_t *d = malloc(n * 4);
		zr_ragged_in in = { d, 1, &n };

		ck_fill(d, n * 4, i);
		ck_assert_int_eq(zr_store_append_ragged(s, &in, 1), 0);
		free(d);
	}
	return s;
}

static zr_store *dense_store(const char *name, zr_codec codec)
{
	zr_schema sc = ck_schema("<u4", 1, (const uint64_t[]){ 20000 });
	zr_store *s = ck_store(ck_dir, name, &sc, codec);
	size_t row = zr_store_row_bytes(s);
	uint8_t *r = malloc(row * NREC);

	ck_fill(r, row * NREC, 7);
	ck_assert_int_eq(zr_store_append_dense(s, r, NREC), 0);
	free(r);
	return s;
}

/* A gather of every record, in a shuffled order, through s (or v). */
static uint8_t *gather_all(zr_store *s, zr_view *v, uint64_t *off,
			   uint64_t *size)
{
	uint64_t idx[NREC];
	uint8_t *dst;

	for (uint64_t k = 0; k < NREC; k++)
		idx[k] = (k * 17 + 5) % NREC;
	ck_assert_int_eq(v ? zr_view_gather_size(v, idx, NREC, size)
			   : zr_store_gather_size(s, idx, NREC, size), 0);
	dst = malloc(*size);
	ck_assert_int_eq(v ? zr_view_gather(v, idx, NREC, dst, *size, off)
			   : zr_store_gather(s, idx, NREC, dst, *size, off),
			 0);
	return dst;
}

/* Everything a reader can ask of the two handles agrees. */
static void same_reads(zr_store *a, zr_store *b)
{
	uint64_t oa[NREC + 1], ob[NREC + 1], na, nb;
	uint8_t *ga = gather_all(a, NULL, oa, &na);
	uint8_t *gb = gather_all(b, NULL, ob, &nb);
	zr_stats sa, sb;
	zr_view *v;

	ck_assert_uint_eq(na, nb);
	ck_assert_int_eq(memcmp(ga, gb, na), 0);
	if (zr_store_schema(a)->ragged)
		ck_assert_int_eq(memcmp(oa, ob, sizeof(oa)), 0);
	free(gb);
	ck_assert_int_eq(zr_view_begin(b, 0, &v), 0);
	gb = gather_all(b, v, ob, &nb);
	ck_assert_int_eq(memcmp(ga, gb, na), 0);
	zr_view_end(v);
	for (uint64_t i = 0; i < NREC; i++) {
		zr_loc la, lb;
		uint64_t da[ZR_MAX_NDIM], db[ZR_MAX_NDIM];
		uint32_t ka, kb;

		ck_assert_int_eq(zr_store_loc(a, i, &la), 0);
		ck_assert_int_eq(zr_store_loc(b, i, &lb), 0);
		ck_assert_int_eq(memcmp(&la, &lb, sizeof(la)), 0);
		if (!zr_store_schema(a)->ragged)
			continue;
		ck_assert_int_eq(zr_ragged_shape(a, i, &ka, da), 0);
		ck_assert_int_eq(zr_ragged_shape(b, i, &kb, db), 0);
		ck_assert_uint_eq(ka, kb);
		ck_assert_uint_eq(da[0], db[0]);
		ck_assert_uint_eq(db[0], rec_elems(i));
	}
	ck_assert_int_eq(zr_store_stats(a, &sa), 0);
	ck_assert_int_eq(zr_store_stats(b, &sb), 0);
	ck_assert_int_eq(memcmp(&sa, &sb, sizeof(sa)), 0);
	ck_assert_int_eq(zr_store_verify(b, NULL, NULL, NULL, NULL), 0);
	free(ga);
	free(gb);
}

static void check_readonly_backend(zr_store *(*make)(const char *, zr_codec))
{
	for (int c = 0; c < 3; c++) {
		char name[16], p[4096];
		zr_store *w, *a, *b;

		snprintf(name, sizeof(name), "s%d", c);
		w = make(name, ck_codecs[c]);
		ck_assert_int_eq(zr_store_close(w), 0);
		ck_path(p, sizeof(p), ck_dir, name);
		ck_assert_int_eq(zr_store_open(p, ZR_OPEN_RDONLY, &a), 0);
		ck_assert_int_eq(zr__store_open_vfs(p, &zr__vfs_posix_readonly,
						    ZR_OPEN_RDONLY, &b), 0);
		/* The engine's own reads: a table copy, no data mapping. */
		ck_assert_int_eq(zr__map_of(b, ZR__META)->copy, 1);
		ck_assert_ptr_null(zr__map_of(b, ZR__DATA)->base);
		ck_assert_ptr_nonnull(zr__map_of(a, ZR__DATA)->base);
		same_reads(a, b);
		ck_assert_int_eq(zr_store_close(b), 0);
		ck_assert_int_eq(zr_store_close(a), 0);
	}
}

START_TEST(readonly_backend_reads_ragged)
{
	check_readonly_backend(ragged_store);
}
END_TEST

START_TEST(readonly_backend_reads_dense)
{
	check_readonly_backend(dense_store);
}
END_TEST

START_TEST(readonly_backend_refuses_writing_opens)
{
	char p[4096];
	zr_store *w = dense_store("w", ZR_CODEC_RAW), *s = NULL;

	ck_assert_int_eq(zr_store_close(w), 0);
	ck_path(p, sizeof(p), ck_dir, "w");
	ck_assert_int_eq(zr__store_open_vfs(p, &zr__vfs_posix_readonly, 0,
					    &s), -EROFS);
	ck_assert_ptr_nonnull(strstr(zr_errmsg(), "meta.zr"));
	ck_assert_ptr_null(s);
}
END_TEST

/* A follower on the read-only backend takes up a writer's synced appends:
 * its table copy is read again as it grows. */
START_TEST(readonly_backend_follows)
{
	char p[4096];
	zr_store *w = dense_store("f", ZR_CODEC_ZSTD), *f;
	size_t row = zr_store_row_bytes(w);
	uint8_t *r = malloc(row * 3), *got = malloc(row * 3);
	uint64_t idx[3] = { NREC, NREC + 1, NREC + 2 };

	ck_assert_int_eq(zr_store_sync(w), 0);
	ck_path(p, sizeof(p), ck_dir, "f");
	ck_assert_int_eq(zr__store_open_vfs(p, &zr__vfs_posix_readonly,
					    ZR_OPEN_RDONLY | ZR_OPEN_FOLLOW,
					    &f), 0);
	ck_assert_uint_eq(zr_store_length(f), NREC);
	ck_fill(r, row * 3, 99);
	ck_assert_int_eq(zr_store_append_dense(w, r, 3), 0);
	ck_assert_int_eq(zr_store_sync(w), 0);
	ck_assert_int_eq(zr_store_refresh(f), 0);
	ck_assert_uint_eq(zr_store_length(f), NREC + 3);
	ck_assert_int_eq(zr_store_gather(f, idx, 3, got, row * 3, NULL), 0);
	ck_assert_int_eq(memcmp(r, got, row * 3), 0);
	ck_assert_int_eq(zr_store_close(f), 0);
	ck_assert_int_eq(zr_store_close(w), 0);
	free(r);
	free(got);
}
END_TEST

/* zr_path_is_url is the rule the opens above follow: a scheme at the
 * start, served by this build or not; anything else is a local path. */
START_TEST(path_is_url_is_the_open_rule)
{
	ck_assert_int_eq(zr_path_is_url("s3://bucket/prefix"), 1);
	ck_assert_int_eq(zr_path_is_url("gs://bucket"), 1);
	ck_assert_int_eq(zr_path_is_url("a+b-c.d://x"), 1);
	ck_assert_int_eq(zr_path_is_url("./gs://bucket/prefix"), 0);
	ck_assert_int_eq(zr_path_is_url("data/s3://b"), 0);
	ck_assert_int_eq(zr_path_is_url("1s3://b"), 0);
	ck_assert_int_eq(zr_path_is_url("a:b"), 0);
	ck_assert_int_eq(zr_path_is_url("://b"), 0);
	ck_assert_int_eq(zr_path_is_url(""), 0);
	ck_assert_int_eq(zr_path_is_url(NULL), 0);
}
END_TEST

/* No backend serves gs://: open and create fail with EPROTONOSUPPORT and
 * make nothing (before the seam, create made a local folder "gs:" and
 * open said "no store"). */
START_TEST(unknown_scheme_fails_and_makes_nothing)
{
	zr_schema sc = ck_schema("<u4", 1, (const uint64_t[]){ 4 });
	char cwd[4096], p[4200];
	zr_store *s = NULL;

	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	ck_assert_int_eq(chdir(ck_dir), 0);
	ck_assert_int_eq(zr_store_open("gs://bucket/prefix", ZR_OPEN_RDONLY,
				       &s), -EPROTONOSUPPORT);
	ck_assert_ptr_nonnull(strstr(zr_errmsg(), "\"gs://\""));
	ck_assert_ptr_nonnull(strstr(zr_errmsg(), "./gs://bucket/prefix"));
	ck_assert_int_eq(zr_store_create("gs://bucket/prefix", &sc,
					 ZR_CODEC_RAW, NULL, 0, &s),
			 -EPROTONOSUPPORT);
	ck_assert_ptr_null(s);
	ck_assert_int_ne(access("gs:", F_OK), 0);
	/* The way out the message names: a local folder of that name. */
	ck_assert_int_eq(zr_store_create("./gs://bucket/prefix", &sc,
					 ZR_CODEC_RAW, NULL, 0, &s), 0);
	ck_assert_int_eq(zr_store_close(s), 0);
	ck_assert_int_eq(zr_store_open("./gs://bucket/prefix", ZR_OPEN_RDONLY,
				       &s), 0);
	ck_assert_int_eq(zr_store_close(s), 0);
	ck_assert_int_eq(chdir(cwd), 0);
	/* A colon without "//" is no scheme. */
	snprintf(p, sizeof(p), "%s/a:b", ck_dir);
	ck_assert_int_eq(zr_store_create(p, &sc, ZR_CODEC_RAW, NULL, 0, &s),
			 0);
	ck_assert_int_eq(zr_store_close(s), 0);
}
END_TEST

/* zr_store_probe: a store is 1, a folder without meta.zr, a file or a
 * missing path 0 (with no message left), a scheme no backend serves an
 * error. */
START_TEST(probe_tells_a_store)
{
	zr_schema sc = ck_schema("<u4", 1, (const uint64_t[]){ 4 });
	char p[4200];
	zr_store *s;

	snprintf(p, sizeof(p), "%s/st", ck_dir);
	ck_assert_int_eq(zr_store_probe(p), 0);
	ck_assert_str_eq(zr_errmsg(), "");
	ck_assert_int_eq(zr_store_create(p, &sc, ZR_CODEC_RAW, NULL, 0, &s),
			 0);
	ck_assert_int_eq(zr_store_probe(p), 1);
	ck_assert_int_eq(zr_store_close(s), 0);
	ck_assert_int_eq(zr_store_probe(ck_dir), 0);
	snprintf(p, sizeof(p), "%s/st/data.zr", ck_dir);
	ck_assert_int_eq(zr_store_probe(p), 0);
	ck_assert_int_eq(zr_store_probe("gs://bucket/prefix"),
			 -EPROTONOSUPPORT);
	ck_assert_int_eq(zr_store_probe(""), -EINVAL);
}
END_TEST

/* s3:// is served, read-only, and what can be told without a request is:
 * no create, no read-write open, no credentials (tests/rgw has the rest,
 * against a real engine).  The endpoint is a closed port: nothing here
 * may reach the network. */
START_TEST(s3_refuses_writes_and_wants_credentials)
{
	zr_schema sc = ck_schema("<u4", 1, (const uint64_t[]){ 4 });
	zr_store *s = NULL;

	setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1", 1);
	setenv("AWS_ACCESS_KEY_ID", "id", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "secret", 1);
	ck_assert_int_eq(zr_store_create("s3://bucket/prefix", &sc,
					 ZR_CODEC_RAW, NULL, 0, &s), -EROFS);
	ck_assert_ptr_nonnull(strstr(zr_errmsg(), "read-only"));
	ck_assert_ptr_null(s);
	ck_assert_int_eq(zr_store_open("s3://bucket/prefix", 0, &s), -EROFS);
	ck_assert_ptr_nonnull(strstr(zr_errmsg(), "s3://bucket/prefix/meta.zr"));
	unsetenv("AWS_ACCESS_KEY_ID");
	unsetenv("AWS_PROFILE");
	setenv("HOME", ck_dir, 1);
	ck_assert_int_eq(zr_store_open("s3://bucket/prefix", ZR_OPEN_RDONLY,
				       &s), -EACCES);
	ck_assert_ptr_nonnull(strstr(zr_errmsg(), "AWS_ACCESS_KEY_ID"));
	ck_assert_int_eq(zr_store_open("s3:///prefix", ZR_OPEN_RDONLY, &s),
			 -EACCES);
	setenv("AWS_ACCESS_KEY_ID", "id", 1);
	ck_assert_int_eq(zr_store_open("s3:///prefix", ZR_OPEN_RDONLY, &s),
			 -EINVAL);
	ck_assert_ptr_nonnull(strstr(zr_errmsg(), "no bucket"));
}
END_TEST

/* zr_store_list: what can be told without an answer -- bad arguments, a
 * path that is no s3:// URL, a URL without a bucket, an endpoint that
 * does not answer (a closed port) -- fails naming it, with nothing to
 * free (tests/rgw has the listing, against a real engine and a fake). */
START_TEST(store_list_refuses_what_it_cannot_list)
{
	char **paths = (char **)1;
	size_t n = 7;

	ck_assert_int_eq(zr_store_list(NULL, &paths, &n), -EINVAL);
	ck_assert_int_eq(zr_store_list(ck_dir, &paths, &n), -EPROTONOSUPPORT);
	ck_assert_ptr_null(paths);
	ck_assert_uint_eq(n, 0);
	ck_assert_ptr_nonnull(strstr(zr_errmsg(), ck_dir));
	setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1", 1);
	setenv("AWS_ACCESS_KEY_ID", "id", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "secret", 1);
	ck_assert_int_eq(zr_store_list("s3:///prefix", &paths, &n), -EINVAL);
	ck_assert_ptr_nonnull(strstr(zr_errmsg(), "no bucket"));
	ck_assert_int_eq(zr_store_list("s3://bucket/p", &paths, &n), -EIO);
	ck_assert_ptr_nonnull(strstr(zr_errmsg(), "s3://bucket/p"));
	ck_assert_ptr_null(paths);
	zr_store_list_free(NULL, 0);
}
END_TEST

Suite *suite_store_vfs(void)
{
	Suite *su = suite_create("store_vfs");
	TCase *tc = tcase_create("vfs");

	tcase_add_checked_fixture(tc, ck_dir_setup, ck_dir_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, readonly_backend_reads_ragged);
	tcase_add_test(tc, readonly_backend_reads_dense);
	tcase_add_test(tc, readonly_backend_refuses_writing_opens);
	tcase_add_test(tc, readonly_backend_follows);
	tcase_add_test(tc, path_is_url_is_the_open_rule);
	tcase_add_test(tc, unknown_scheme_fails_and_makes_nothing);
	tcase_add_test(tc, s3_refuses_writes_and_wants_credentials);
	tcase_add_test(tc, probe_tells_a_store);
	tcase_add_test(tc, store_list_refuses_what_it_cannot_list);
	suite_add_tcase(su, tc);
	return su;
}
