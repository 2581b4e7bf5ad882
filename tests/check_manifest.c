/*
 * check_manifest.c - what push and the S3 backend agree on without an S3
 * engine: SHA-256 against FIPS 180-4's vectors (a part's key is its
 * digest), and the manifest's text: format then parse gives the same
 * files and parts, offsets map onto parts, and a damaged or truncated
 * manifest is refused.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check_suites.h"
#include "error.h"
#include "s3_manifest.h"
#include "sha256.h"

static void digest(const void *p, size_t len, size_t step, char hex[65])
{
	struct zr__sha256 c;
	const char *b = p;

	zr__sha256_init(&c);
	for (size_t at = 0; at < len; at += step) /* any chunking */
		zr__sha256_update(&c, b + at, len - at < step ? len - at
							      : step);
	zr__sha256_hex(&c, hex);
}

START_TEST(test_sha256_vectors)
{
	static const char two_blocks[] =
		"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	char hex[65];
	char *million = malloc(1000000);

	digest("", 0, 1, hex);
	ck_assert_str_eq(hex, "e3b0c44298fc1c149afbf4c8996fb924"
			      "27ae41e4649b934ca495991b7852b855");
	digest("abc", 3, 1, hex);
	ck_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223"
			      "b00361a396177a9cb410ff61f20015ad");
	for (size_t step = 1; step <= 64; step += 7) {
		digest(two_blocks, strlen(two_blocks), step, hex);
		ck_assert_str_eq(hex, "248d6a61d20638b8e5c026930c3e6039"
				      "a33ce45964ff2167f6ecedd419db06c1");
	}
	ck_assert_ptr_nonnull(million);
	memset(million, 'a', 1000000);
	digest(million, 1000000, 65536, hex);
	ck_assert_str_eq(hex, "cdc76e5c9914fb9281a1c7e284d73e67"
			      "f1809a48a497200e046d39ccc7112cd0");
	free(million);
}
END_TEST

/* A manifest of data.zr in three parts and meta.zr in one. */
static void sample(struct zr__manifest *m)
{
	static const uint64_t lens[] = { 100, 100, 7 };
	struct zr__part p = { .etag = "\"e\"" };

	memset(m, 0, sizeof(*m));
	strcpy(m->files[0].name, "meta.zr");
	memset(p.sha, 'a', 64);
	p.len = 40;
	ck_assert_int_eq(zr__mfile_add(&m->files[0], &p), 0);
	strcpy(m->files[1].name, "data.zr");
	for (int i = 0; i < 3; i++) {
		memset(p.sha, 'b' + i, 64);
		p.off = m->files[1].size;
		p.len = lens[i];
		ck_assert_int_eq(zr__mfile_add(&m->files[1], &p), 0);
	}
	m->nfiles = 2;
}

START_TEST(test_manifest_round_trip)
{
	struct zr__manifest m, back;
	const struct zr__mfile *f;
	char *text;

	sample(&m);
	text = zr__manifest_format(&m);
	ck_assert_ptr_nonnull(text);
	ck_assert_int_eq(zr__manifest_parse(text, strlen(text), "t", &back), 0);
	ck_assert_str_eq(back.version, m.version);
	f = zr__manifest_file(&back, "data.zr");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(f->size, 207);
	ck_assert_uint_eq(f->n, 3);
	ck_assert_str_eq(f->parts[2].etag, "\"e\"");
	ck_assert_uint_eq(zr__mfile_find(f, 0), 0);
	ck_assert_uint_eq(zr__mfile_find(f, 99), 0);
	ck_assert_uint_eq(zr__mfile_find(f, 100), 1);
	ck_assert_uint_eq(zr__mfile_find(f, 206), 2);
	ck_assert_ptr_null(zr__manifest_file(&back, "dict.zr"));
	/* the same files and digests: the same version, whatever the ETags */
	strcpy(m.files[1].parts[0].etag, "\"other\"");
	free(text);
	text = zr__manifest_format(&m);
	ck_assert_str_eq(m.version, back.version);
	free(text);
	zr__manifest_free(&m);
	zr__manifest_free(&back);
}
END_TEST

/* text with its first occurrence of from replaced by to is refused. */
static void refused(const char *text, const char *from, const char *to)
{
	struct zr__manifest m;
	const char *at = strstr(text, from);
	char *bad = malloc(strlen(text) + strlen(to) + 1);
	size_t k = (size_t)(at - text);

	ck_assert_ptr_nonnull(at);
	memcpy(bad, text, k);
	strcpy(bad + k, to);
	strcat(bad, at + strlen(from));
	ck_assert_int_eq(zr__manifest_parse(bad, strlen(bad), "t", &m),
			 ZR_E_CORRUPT);
	zr__clear();
	free(bad);
}

START_TEST(test_manifest_refuses_damage)
{
	struct zr__manifest m;
	char *text;

	sample(&m);
	text = zr__manifest_format(&m);
	refused(text, "zrecord-manifest 1", "zrecord-manifest 2");
	refused(text, "end\n", "");                 /* cut short */
	refused(text, "data.zr 207 3", "data.zr 207 4"); /* a part missing */
	refused(text, "data.zr 207", "data.zr 208");  /* sizes disagree */
	refused(text, " 100 100 ", " 101 100 ");      /* a gap */
	refused(text, " 0 40 ", " 0 0 ");             /* an empty part */
	refused(text, "aaaaaaaaaaaaaaaa", "aa");      /* a short digest */
	free(text);
	zr__manifest_free(&m);
}
END_TEST

Suite *suite_manifest(void)
{
	Suite *s = suite_create("manifest");
	TCase *tc = tcase_create("manifest");

	tcase_add_test(tc, test_sha256_vectors);
	tcase_add_test(tc, test_manifest_round_trip);
	tcase_add_test(tc, test_manifest_refuses_damage);
	suite_add_tcase(s, tc);
	return s;
}
