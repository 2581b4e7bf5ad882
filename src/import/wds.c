/*
 * wds.c - the WebDataset source: tar shards (.tar, .tar.gz, .tgz; read
 * with libarchive, streamed), shards in argument order, members in tar
 * order.  webdataset's rule makes the samples: a member's key is its path
 * up to the first dot of its basename, its field the rest ("a/b.seg.png"
 * is field "seg.png" of key "a/b"), and consecutive members of one key
 * are one sample.  The first sample's fields name the stores; a sample
 * without one of them is an error, or dropped under --drop-incomplete.
 */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "import.h"

#define MEMBER_MAX (1u << 30)

typedef struct wds {
	const zr_imp_config *cfg;
	zr_imp_dataset *d;
	zr_imp_run *r;
	const char *shard;
	int fields[ZR_IMP_MAX_FIELDS]; /* the first sample's stores */
	unsigned nfields;              /* 0 until the first sample   */
	/* the sample being collected */
	char *key;
	zr_imp_field cur[ZR_IMP_MAX_FIELDS];
	int have[ZR_IMP_MAX_FIELDS];   /* by store index */
	unsigned ncur;
	uint64_t bytes, dropped;
	int input_err; /* the last error was about the shard's bytes */
} wds;

static void drop_cur(wds *w)
{
	unsigned i;

	for (i = 0; i < w->ncur; i++)
		free(w->cur[i].bytes);
	memset(w->cur, 0, sizeof(w->cur));
	memset(w->have, 0, sizeof(w->have));
	w->ncur = 0;
	free(w->key);
	w->key = NULL;
	w->bytes = 0;
}

static char *where(const wds *w, const char *what)
{
	char *s;

	return asprintf(&s, "%s: %s", w->shard, what) < 0 ? NULL : s;
}

/* The fields of the sample that is complete; names what is missing. */
static int complete(wds *w, char *miss, size_t cap)
{
	unsigned i;

	if (w->ncur != w->nfields) {
		snprintf(miss, cap, "has %u fields where the first sample has "
			 "%u (--drop-incomplete drops such samples)", w->ncur,
			 w->nfields);
		return 0;
	}
	for (i = 0; i < w->nfields; i++)
		if (!w->have[w->fields[i]]) {
			snprintf(miss, cap, "lacks a field the first sample "
				 "has (--drop-incomplete drops such samples)");
			return 0;
		}
	return 1;
}

/* Hands the collected sample to the pipeline (fields in store order). */
static int emit(wds *w)
{
	zr_imp_sample *s;
	char miss[160], *wh;
	unsigned i, j;
	int rc;

	if (!w->ncur)
		return 0;
	if (w->nfields == 0) {
		for (i = 0; i < w->ncur; i++)
			w->fields[i] = w->cur[i].store;
		w->nfields = w->ncur;
	}
	if (!complete(w, miss, sizeof(miss))) {
		wh = where(w, w->key);
		if (!w->cfg->drop_incomplete) {
			rc = zr_imp_error(wh ? wh : w->shard, -EINVAL, miss);
			free(wh);
			drop_cur(w);
			return rc ? rc : ZR_IMP_FAIL;
		}
		zr_imp_run_skip(w->r, wh ? wh : w->shard, "incomplete sample "
				"dropped (--drop-incomplete)");
		free(wh);
		w->dropped++;
		drop_cur(w);
		return 0;
	}
	rc = zr_imp_run_next(w->r, &s);
	if (rc) {
		drop_cur(w);
		return rc;
	}
	s->where = where(w, w->key);
	for (i = 0; i < w->nfields; i++)
		for (j = 0; j < w->ncur; j++)
			if (w->cur[j].store == w->fields[i])
				s->f[i] = w->cur[j];
	s->nfields = w->nfields;
	memset(w->cur, 0, sizeof(w->cur));
	zr_imp_run_bytes(w->r, w->bytes);
	w->ncur = 0;
	drop_cur(w);
	return s->where ? 0 : zr_imp_error(w->shard, -ENOMEM, NULL);
}

/* Splits "dir/base.ext.more" into key "dir/base" and field "ext.more". */
static int split(const char *name, char **key, const char **ext)
{
	const char *base = strrchr(name, '/'), *dot;

	base = base ? base + 1 : name;
	dot = strchr(base, '.');
	if (!dot || dot == base || !dot[1])
		return -1;
	*key = strndup(name, (size_t)(dot - name));
	*ext = dot + 1;
	return *key ? 0 : -ENOMEM;
}

static int read_member(struct archive *a, struct archive_entry *e,
		       zr_imp_field *f, char *msg, size_t cap)
{
	la_int64_t size = archive_entry_size(e);
	size_t got = 0;
	la_ssize_t n;

	if (size < 0 || size > MEMBER_MAX) {
		snprintf(msg, cap, "member size unknown or over 1 GiB");
		return ZR_IMP_EBAD;
	}
	f->bytes = malloc(size ? (size_t)size : 1);
	if (!f->bytes)
		return -ENOMEM;
	while (got < (size_t)size) {
		n = archive_read_data(a, (char *)f->bytes + got,
				      (size_t)size - got);
		if (n <= 0) {
			snprintf(msg, cap, "%s", n < 0 ?
				 archive_error_string(a) : "member ends early");
			return ZR_IMP_EBAD;
		}
		got += (size_t)n;
	}
	f->nbytes = got;
	return 0;
}

/* One member: starts a new sample when its key changes. */
static int member(wds *w, struct archive *a, struct archive_entry *e)
{
	const char *name = archive_entry_pathname(e), *ext;
	char *key, msg[256] = "", *wh;
	zr_imp_field *f;
	int st, rc;

	if (!name || archive_entry_filetype(e) != AE_IFREG)
		return 0;
	if (split(name, &key, &ext) < 0) {
		wh = where(w, name);
		w->input_err = 1;
		rc = zr_imp_error(wh ? wh : name, -EINVAL, "member name has no "
				  "KEY.FIELD form (webdataset's rule)");
		free(wh);
		return rc;
	}
	if (!w->key || strcmp(w->key, key)) {
		rc = emit(w);
		if (rc) {
			free(key);
			return rc;
		}
		w->key = key;
	} else {
		free(key);
	}
	rc = zr_imp_dataset_field(w->d, ext, &st);
	if (rc < 0 || (w->have[st] && (rc = -EEXIST))) {
		wh = where(w, name);
		w->input_err = 1;
		rc = zr_imp_error(wh ? wh : name, rc, rc == -EEXIST ?
				  "a second member of one field in one sample" :
				  "field name cannot be a store name");
		free(wh);
		return rc;
	}
	f = &w->cur[w->ncur];
	memset(f, 0, sizeof(*f));
	f->store = st;
	f->kind = zr_imp_kind_of_ext(ext);
	w->have[st] = 1;
	w->ncur++;
	rc = read_member(a, e, f, msg, sizeof(msg));
	w->bytes += f->nbytes;
	if (rc < 0) {
		wh = where(w, name);
		w->input_err = rc != -ENOMEM;
		rc = zr_imp_error(wh ? wh : name, rc, msg);
		free(wh);
	}
	return rc;
}

static int shard(wds *w, const char *path)
{
	struct archive *a = archive_read_new();
	struct archive_entry *e;
	struct stat before, after;
	int rc = 0, r;

	w->shard = path;
	if (!a)
		return zr_imp_error(path, -ENOMEM, NULL);
	archive_read_support_filter_all(a);
	archive_read_support_format_tar(a);
	if (stat(path, &before) < 0) {
		rc = zr_imp_error(path, -errno, "cannot stat");
		goto out;
	}
	w->input_err = 1;
	if (archive_read_open_filename(a, path, 1 << 16) != ARCHIVE_OK) {
		rc = zr_imp_error(path, ZR_IMP_EBAD, archive_error_string(a));
		goto out;
	}
	w->input_err = 0;
	while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK ||
	       r == ARCHIVE_WARN) {
		rc = member(w, a, e);
		if (rc)
			goto out;
	}
	w->input_err = 1;
	if (r != ARCHIVE_EOF) {
		rc = zr_imp_error(path, ZR_IMP_EBAD, archive_error_string(a));
		goto out;
	}
	w->input_err = 0;
	rc = emit(w);
	w->input_err = 1;
	if (rc == 0 && (stat(path, &after) < 0 ||
			after.st_size != before.st_size ||
			after.st_mtime != before.st_mtime))
		rc = zr_imp_error(path, ZR_IMP_ECHANGED, "the shard changed "
				  "while being imported");
out:
	archive_read_free(a);
	return rc;
}

int zr_imp_wds(const zr_imp_config *cfg, char **srcs, int n,
	       zr_imp_dataset *d)
{
	wds w = { .cfg = cfg, .d = d };
	int i, rc;

	rc = zr_imp_run_new(cfg, d, 0, 0, &w.r);
	if (rc)
		return rc;
	for (i = 0; i < n && rc == 0; i++) {
		rc = shard(&w, srcs[i]);
		/* A broken shard under --skip-bad: its samples so far stay,
		 * the rest of it is left out (a tar cannot be resynced). */
		if (rc && cfg->skip_bad && w.input_err) {
			zr_imp_run_skip(w.r, srcs[i], "the rest of this shard "
					"(unreadable from here on)");
					rc = 0;
		}
		drop_cur(&w);
	}
	if (rc == 0)
		rc = zr_imp_run_flush(w.r);
	if (rc == 0 && w.dropped)
		fprintf(stderr, "zrecord: import: dropped %llu incomplete "
			"sample%s\n", (unsigned long long)w.dropped,
			w.dropped == 1 ? "" : "s");
	zr_imp_run_report(w.r);
	zr_imp_run_free(w.r);
	drop_cur(&w);
	return rc;
}
