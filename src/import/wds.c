/*
 * wds.c - the WebDataset source: opens each tar shard (.tar, .tar.gz,
 * .tgz) with libarchive, streamed, shards in argument order, and feeds
 * the samples wds_read.c makes into the pipeline, mapping its fields to
 * the dataset's stores (one per field, named after it).
 */
#include <archive.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "import.h"

typedef struct wds_run {
	zr_imp_run *r;
	zr_imp_dataset *d;
	zr_imp_wds_reader *w;
	int store[ZR_IMP_MAX_FIELDS]; /* field index -> store, -1 unknown */
} wds_run;

static int to_pipeline(void *ctx, zr_imp_sample *s, uint64_t bytes)
{
	wds_run *c = ctx;
	zr_imp_sample *slot;
	unsigned k;
	int rc, *st;

	for (k = 0; k < s->nfields; k++) {
		st = &c->store[s->f[k].store];
		if (*st < 0 && zr_imp_dataset_field(
			    c->d, zr_imp_wds_field_name(c->w, s->f[k].store),
			    st) < 0) {
			rc = zr_imp_error(s->where, ZR_IMP_ETEXT, "a field name "
					  "that cannot name a store");
			zr_imp_sample_clear(s);
			return rc;
		}
		s->f[k].store = *st;
	}
	rc = zr_imp_run_next(c->r, &slot);
	if (rc) {
		zr_imp_sample_clear(s);
		return rc;
	}
	*slot = *s;
	zr_imp_run_bytes(c->r, bytes);
	return 0;
}

static void to_skipped(void *ctx, const char *where, const char *why)
{
	wds_run *c = ctx;

	zr_imp_run_drop(c->r, where, why);
}

/* An uncompressed tar cut at a member boundary reads as a shorter
 * archive; POSIX tar ends with two zero blocks, so their absence is the
 * cut.  (Compressed shards carry their own length and checksum.) */
static int tar_ends(struct archive *a, const char *path)
{
	unsigned char tail[1024];
	struct stat st;
	int fd, ok = 0;
	size_t i;

	if (archive_filter_code(a, 0) != ARCHIVE_FILTER_NONE)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && fstat(fd, &st) == 0 && st.st_size >= 1024 &&
	    pread(fd, tail, sizeof(tail), st.st_size - 1024) == 1024) {
		ok = 1;
		for (i = 0; i < sizeof(tail) && ok; i++)
			ok = tail[i] == 0;
	}
	if (fd >= 0)
		close(fd);
	return ok ? 0 : zr_imp_error(path, ZR_IMP_EBAD, "no end-of-archive "
				     "blocks: the tar file is cut short");
}

static int shard(wds_run *c, const char *path)
{
	struct archive *a = archive_read_new();
	struct stat before;
	int rc;

	if (!a)
		return zr_imp_error(path, -ENOMEM, NULL);
	archive_read_support_filter_all(a);
	archive_read_support_format_tar(a);
	if (stat(path, &before) < 0)
		rc = zr_imp_error(path, -errno, "cannot stat");
	else if (archive_read_open_filename(a, path, 1 << 16) != ARCHIVE_OK)
		rc = zr_imp_error(path, ZR_IMP_EBAD, archive_error_string(a));
	else
		rc = zr_imp_wds_shard(c->w, a, path);
	if (rc == 0)
		rc = tar_ends(a, path);
	archive_read_free(a);
	return rc ? rc : zr_imp_unchanged(path, &before);
}

int zr_imp_wds(const zr_imp_config *cfg, char **srcs, int n,
	       zr_imp_dataset *d)
{
	const zr_imp_wds_sink sink = { to_pipeline, to_skipped, NULL };
	zr_imp_wds_sink mine = sink;
	wds_run c = { .d = d };
	int i, rc;

	memset(c.store, -1, sizeof(c.store));
	mine.ctx = &c;
	rc = zr_imp_run_new(cfg, d, 0, zr_imp_files_size(srcs, n), &c.r);
	if (rc)
		return rc;
	if (zr_imp_wds_new(cfg->drop_incomplete, &mine, &c.w) < 0)
		rc = zr_imp_error(cfg->dest, -ENOMEM, NULL);
	for (i = 0; i < n && rc == 0; i++) {
		/* A broken shard under --skip-bad: its samples so far stay,
		 * the rest of it is left out (a tar cannot be resynced). */
		rc = zr_imp_skip_rest(c.r, cfg, srcs[i], shard(&c, srcs[i]));
	}
	if (rc == 0 && zr_imp_wds_ignored(c.w))
		fprintf(stderr, "zrecord: import: ignored %llu member%s without "
			"a KEY.FIELD name\n",
			(unsigned long long)zr_imp_wds_ignored(c.w),
			zr_imp_wds_ignored(c.w) == 1 ? "" : "s");
	rc = zr_imp_run_end(c.r, rc);
	zr_imp_wds_free(c.w);
	return rc;
}
