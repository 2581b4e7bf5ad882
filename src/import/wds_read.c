/*
 * wds_read.c - WebDataset's sample rule over an open libarchive reader:
 * a member's key is its path up to the first dot of its basename and its
 * field the rest, lower-cased ("a/b.seg.PNG" is field "seg.png" of key
 * "a/b"); consecutive members of one key are one sample; members without
 * that form, and webdataset's top-level "__name__" metadata, are skipped
 * and counted.  The first sample's
 * fields are the dataset's; a sample without one of them, or with
 * another, is an error, or dropped under --drop-incomplete.  A key met
 * again later in a shard (its members not consecutive: a broken shard)
 * gets a warning; the sample is kept.  No files and no stores here
 * (wds.c has those), so the fuzz harness drives it over a buffer.
 */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import.h"

#define MEMBER_MAX (1u << 30)
/* The keys of one shard remembered to find repeated ones (8 bytes
 * each, the table at most twice that): past this, no more are checked. */
#define KEYS_MAX (1u << 22)
#define SHOW_REPEATS 20

/* The hashes of a shard's keys so far, open addressing (0: empty). */
typedef struct key_set {
	uint64_t *h;
	size_t cap, n;
} key_set;

struct zr_imp_wds_reader {
	int drop_incomplete;
	const zr_imp_wds_sink *sink;
	const char *shard;
	char names[ZR_IMP_MAX_FIELDS][ZR_IMP_NAME_MAX]; /* field table */
	unsigned nnames;
	unsigned nfirst;               /* 0 until the first sample  */
	/* the sample being collected */
	char *key;
	zr_imp_field cur[ZR_IMP_MAX_FIELDS];
	int have[ZR_IMP_MAX_FIELDS];   /* by field index */
	unsigned ncur;
	uint64_t bytes, ignored;
	key_set keys;
	uint64_t repeats;              /* keys met again, all shards */
};

int zr_imp_wds_new(int drop_incomplete, const zr_imp_wds_sink *sink,
		   zr_imp_wds_reader **out)
{
	zr_imp_wds_reader *w = calloc(1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	w->drop_incomplete = drop_incomplete;
	w->sink = sink;
	*out = w;
	return 0;
}

static void drop_cur(zr_imp_wds_reader *w)
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

void zr_imp_wds_free(zr_imp_wds_reader *w)
{
	if (!w)
		return;
	drop_cur(w);
	free(w->keys.h);
	free(w);
}

uint64_t zr_imp_wds_ignored(const zr_imp_wds_reader *w)
{
	return w->ignored;
}

const char *zr_imp_wds_field_name(const zr_imp_wds_reader *w, int field)
{
	return w->names[field];
}

/* Reports about a member or key of the shard: "SHARD: WHAT: DETAIL". */
static int fail(zr_imp_wds_reader *w, const char *what, int err,
		const char *msg)
{
	char where[1024];

	snprintf(where, sizeof(where), "%s: %s", w->shard, what);
	return zr_imp_error(where, err, msg);
}

/* 1 if the sample has exactly the first sample's fields. */
static int complete(const zr_imp_wds_reader *w)
{
	unsigned i;

	if (w->ncur != w->nfirst)
		return 0;
	for (i = 0; i < w->nfirst; i++)
		if (!w->have[i])
			return 0;
	return 1;
}

/* How an incomplete sample differs from the first: the first field it
 * lacks, or one it has that the first sample lacks. */
static void describe(const zr_imp_wds_reader *w, char *buf, size_t cap)
{
	unsigned i;

	for (i = 0; i < w->nfirst; i++)
		if (!w->have[i]) {
			snprintf(buf, cap, "lacks the field '%s' of the first "
				 "sample", w->names[i]);
			return;
		}
	for (i = w->nfirst; i < w->nnames; i++)
		if (w->have[i]) {
			snprintf(buf, cap, "has the field '%s', which the first "
				 "sample lacks", w->names[i]);
			return;
		}
	snprintf(buf, cap, "its fields differ from the first sample's");
}

/* Hands the collected sample to the sink, fields in field order. */
static int emit(zr_imp_wds_reader *w)
{
	zr_imp_sample s;
	char where[1024], why[ZR_IMP_NAME_MAX + 100];
	unsigned i, j;
	int rc;

	if (!w->ncur)
		return 0;
	if (w->nfirst == 0)
		w->nfirst = w->nnames;
	if (!complete(w)) {
		describe(w, why, sizeof(why) - 48);
		if (!w->drop_incomplete) {
			strcat(why, " (--drop-incomplete drops such samples)");
			rc = fail(w, w->key, ZR_IMP_ETEXT, why);
			drop_cur(w);
			return rc;
		}
		snprintf(where, sizeof(where), "%s: %s", w->shard, w->key);
		w->sink->skip(w->sink->ctx, where, why);
		drop_cur(w);
		return 0;
	}
	memset(&s, 0, sizeof(s));
	if (asprintf(&s.where, "%s: %s", w->shard, w->key) < 0)
		s.where = NULL;
	for (i = 0; i < w->nfirst; i++)
		for (j = 0; j < w->ncur; j++)
			if (w->cur[j].store == (int)i)
				s.f[i] = w->cur[j];
	s.nfields = w->nfirst;
	memset(w->cur, 0, sizeof(w->cur));
	rc = s.where ? w->sink->sample(w->sink->ctx, &s, w->bytes) :
		       zr_imp_error(w->shard, -ENOMEM, NULL);
	if (!s.where)
		zr_imp_sample_clear(&s);
	drop_cur(w);
	return rc;
}

/* Splits "dir/base.ext.more" into key "dir/base" and field "ext.more";
 * -EINVAL for a name webdataset skips. */
static int split(const char *name, char **key, const char **ext)
{
	const char *base = strrchr(name, '/'), *dot;
	size_t n = strlen(name);

	if (!strchr(name, '/') && n >= 4 && !strncmp(name, "__", 2) &&
	    !strcmp(name + n - 2, "__"))
		return -EINVAL;
	base = base ? base + 1 : name;
	dot = strchr(base, '.');
	if (!dot || dot == base || !dot[1])
		return -EINVAL;
	*key = strndup(name, (size_t)(dot - name));
	*ext = dot + 1;
	return *key ? 0 : -ENOMEM;
}

static int field_index(zr_imp_wds_reader *w, const char *raw, int *idx)
{
	char ext[ZR_IMP_NAME_MAX];
	unsigned i;

	if (strlen(raw) >= ZR_IMP_NAME_MAX)
		return -ENAMETOOLONG;
	for (i = 0; raw[i]; i++)
		ext[i] = raw[i] >= 'A' && raw[i] <= 'Z' ? raw[i] - 'A' + 'a' :
			 raw[i];
	ext[i] = 0;
	for (i = 0; i < w->nnames; i++)
		if (!strcmp(w->names[i], ext)) {
			*idx = (int)i;
			return 0;
		}
	if (w->nnames == ZR_IMP_MAX_FIELDS)
		return -E2BIG;
	strcpy(w->names[w->nnames], ext);
	*idx = (int)w->nnames++;
	return 0;
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
			snprintf(msg, cap, "%s", n < 0 && archive_error_string(
				 a) ? archive_error_string(a) :
				 "member ends early");
			return ZR_IMP_EBAD;
		}
		got += (size_t)n;
	}
	f->nbytes = got;
	return 0;
}

static uint64_t key_hash(const char *key)
{
	uint64_t h = 14695981039346656037ull; /* FNV-1a */

	for (; *key; key++)
		h = (h ^ (unsigned char)*key) * 1099511628211ull;
	return h ? h : 1;
}

static int set_grow(key_set *k)
{
	size_t cap = k->cap ? k->cap * 2 : 1024, i, j;
	uint64_t *h = calloc(cap, sizeof(*h));

	if (!h)
		return -ENOMEM;
	for (i = 0; i < k->cap; i++)
		if (k->h[i]) {
			for (j = k->h[i] & (cap - 1); h[j];
			     j = (j + 1) & (cap - 1))
				;
			h[j] = k->h[i];
		}
	free(k->h);
	k->h = h;
	k->cap = cap;
	return 0;
}

/* 1 if key was met in this shard before (then, most likely, it was:
 * a 64-bit hash), 0 after adding it; 0 too past KEYS_MAX keys. */
static int seen_before(key_set *k, const char *key)
{
	uint64_t h = key_hash(key);
	size_t j;

	if (k->n >= KEYS_MAX || (2 * (k->n + 1) > k->cap && set_grow(k)))
		return 0;
	for (j = h & (k->cap - 1); k->h[j]; j = (j + 1) & (k->cap - 1))
		if (k->h[j] == h)
			return 1;
	k->h[j] = h;
	k->n++;
	return 0;
}

/* A key met again: its members are not consecutive. */
static void warn_repeat(zr_imp_wds_reader *w, const char *key)
{
	char where[1024];

	if (++w->repeats > SHOW_REPEATS)
		return;
	snprintf(where, sizeof(where), "%s: %s", w->shard, key);
	zr_imp_warn(where, w->repeats < SHOW_REPEATS ?
		    "a second sample with this key: its members are not "
		    "consecutive (a broken or merged shard?)" :
		    "a second sample with this key (further ones are not "
		    "listed)");
}

/* Starts a new sample when the key changes. */
static int next_key(zr_imp_wds_reader *w, char *key)
{
	int rc;

	if (w->key && !strcmp(w->key, key)) {
		free(key);
		return 0;
	}
	rc = emit(w);
	if (rc) {
		free(key);
		return rc;
	}
	if (seen_before(&w->keys, key))
		warn_repeat(w, key);
	w->key = key;
	return 0;
}

static int member(zr_imp_wds_reader *w, struct archive *a, struct archive_entry *e)
{
	const char *name = archive_entry_pathname(e), *ext;
	char *key, msg[256] = "";
	zr_imp_field *f;
	int idx, rc;

	if (!name || archive_entry_filetype(e) != AE_IFREG)
		return 0;
	rc = split(name, &key, &ext);
	if (rc == -EINVAL) {
		w->ignored++;
		return 0;
	}
	if (rc < 0)
		return fail(w, name, rc, NULL);
	rc = next_key(w, key);
	if (rc)
		return rc;
	rc = field_index(w, ext, &idx);
	if (rc < 0)
		return fail(w, name, ZR_IMP_EBAD, "too many fields, or a field "
			    "name over 63 bytes");
	if (w->have[idx])
		return fail(w, name, ZR_IMP_EBAD, "a second member of one "
			    "field in one sample");
	if (w->nfirst && (unsigned)idx >= w->nfirst && !w->drop_incomplete)
		return fail(w, name, ZR_IMP_ETEXT, "a field the first sample "
			    "lacks (--drop-incomplete drops such samples)");
	f = &w->cur[w->ncur++];
	memset(f, 0, sizeof(*f));
	f->store = idx;
	f->kind = zr_imp_kind_of_ext(ext);
	w->have[idx] = 1;
	rc = read_member(a, e, f, msg, sizeof(msg));
	w->bytes += f->nbytes;
	return rc < 0 ? fail(w, name, rc, msg) : 0;
}

int zr_imp_wds_shard(zr_imp_wds_reader *w, struct archive *a, const char *shard)
{
	struct archive_entry *e;
	int rc, r;

	w->shard = shard;
	/* keys may repeat across shards (each counting from 0): a repeat
	 * within one is the sign of a broken shard */
	if (w->keys.h)
		memset(w->keys.h, 0, w->keys.cap * sizeof(*w->keys.h));
	w->keys.n = 0;
	while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK ||
	       r == ARCHIVE_WARN) {
		rc = member(w, a, e);
		if (rc) {
			drop_cur(w);
			return rc;
		}
	}
	if (r != ARCHIVE_EOF) {
		drop_cur(w);
		return zr_imp_error(shard, ZR_IMP_EBAD, archive_error_string(a)
				    ? archive_error_string(a) :
				    "not a tar file");
	}
	return emit(w);
}
