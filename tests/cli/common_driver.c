/*
 * common_driver.c - drives src/common from the pytest suite, where numpy
 * checks the results:
 *
 *   common-driver feed STORE SIZES FILE   feeds FILE to a zrfile_npystream in
 *                                         chunks of the comma-separated
 *                                         SIZES (cycled), then finishes
 *   common-driver npz OUT FILE...         stores each FILE as member
 *                                         arr_I.npy of the .npz OUT
 *   common-driver layout SIZE...          prints the .npz total for
 *                                         members of these sizes
 *
 * Prints "records N" / "total N" on success; on failure prints the code's
 * name and message and exits 1.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npy_stream.h"
#include "npz.h"

static int fail(int rc, const char *msg)
{
	printf("error %s: %s\n", zr_errname(rc), msg);
	return 1;
}

static int slurp(const char *path, unsigned char **buf, size_t *len)
{
	FILE *f = fopen(path, "rb");
	long n;

	if (!f)
		return -errno;
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return -EIO;
	}
	*buf = malloc((size_t)n + 1);
	*len = (size_t)n;
	if (!*buf || fread(*buf, 1, *len, f) != *len) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	return 0;
}

/* Chunk sizes cycle so splits land inside magic, header, rows, records. */
static int feed(const char *store, const char *sizes, const char *file)
{
	size_t len, at = 0, nsz = 0, i = 0, sz[64];
	unsigned char *buf;
	zrfile_npystream *p = NULL;
	zr_store *s = NULL;
	uint64_t records = 0;
	char *end;
	int rc;

	while (*sizes && nsz < 64) {
		sz[nsz++] = strtoul(sizes, &end, 10);
		sizes = *end ? end + 1 : end;
	}
	if (nsz == 0 || slurp(file, &buf, &len) < 0)
		return fail(-EINVAL, "bad arguments");
	rc = zr_store_open(store, 0, &s);
	if (rc < 0)
		return fail(rc, zr_errmsg());
	rc = zrfile_npystream_new(s, &p);
	if (rc < 0)
		return fail(rc, zr_errmsg());
	while (at < len && rc == 0) {
		size_t n = sz[i++ % nsz];

		if (n > len - at)
			n = len - at;
		rc = zrfile_npystream_feed(p, buf + at, n);
		at += n;
	}
	if (rc == 0 && zrfile_npystream_offset(p) != len)
		rc = fail(-EIO, "offset does not count every byte fed");
	if (rc == 0)
		rc = zrfile_npystream_finish(p, &records);
	if (rc < 0)
		rc = fail(rc, zrfile_npystream_message(p));
	else
		printf("records %llu\n", (unsigned long long)records);
	zrfile_npystream_free(p);
	if (zr_store_close(s) < 0 && rc == 0)
		rc = fail(-EIO, "close");
	free(buf);
	return rc;
}

static int npz(const char *out, char **files, int n)
{
	zrfile_npz_member m[64];
	unsigned char *data[64], *buf;
	char names[64][32];
	size_t len;
	uint64_t total;
	FILE *f;
	int i, rc;

	if (n > 64)
		return fail(-EINVAL, "too many members");
	for (i = 0; i < n; i++) {
		if (slurp(files[i], &data[i], &len) < 0)
			return fail(-EIO, files[i]);
		snprintf(names[i], sizeof(names[i]), "arr_%d.npy", i);
		m[i].name = names[i];
		m[i].size = len;
	}
	rc = zrfile_npz_layout(m, (size_t)n, &total);
	if (rc < 0)
		return fail(rc, "layout");
	buf = calloc(1, total);
	for (i = 0; i < n; i++) {
		memcpy(buf + m[i].offset, data[i], m[i].size);
		free(data[i]);
	}
	rc = zrfile_npz_finish(buf, total, m, (size_t)n);
	if (rc < 0)
		return fail(rc, "finish");
	f = fopen(out, "wb");
	if (!f || fwrite(buf, 1, total, f) != total || fclose(f))
		return fail(-EIO, out);
	free(buf);
	printf("total %llu\n", (unsigned long long)total);
	return 0;
}

static int layout(char **sizes, int n)
{
	zrfile_npz_member *m = calloc((size_t)n + 1, sizeof(*m));
	uint64_t total;
	int i, rc;

	for (i = 0; i < n; i++) {
		m[i].name = "arr_0.npy";
		m[i].size = strtoull(sizes[i], NULL, 10);
	}
	rc = zrfile_npz_layout(m, (size_t)n, &total);
	free(m);
	if (rc < 0)
		return fail(rc, "layout");
	printf("total %llu\n", (unsigned long long)total);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "feed"))
		return feed(argv[2], argv[3], argv[4]);
	if (argc >= 3 && !strcmp(argv[1], "npz"))
		return npz(argv[2], argv + 3, argc - 3);
	if (argc >= 2 && !strcmp(argv[1], "layout"))
		return layout(argv + 2, argc - 2);
	fprintf(stderr, "usage: common-driver feed|npz|layout ...\n");
	return 2;
}
