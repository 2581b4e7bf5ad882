/*
 * batchmix.c - `zrecord batch MIX.mix.json`: a mixture's batch.  The file
 * names its sources (paths relative to its folder: stores, or aligned
 * dataset folders of the same fields) and weights; the library's mixture
 * stream picks (source, record) for each sample, and the encoder writes
 * the batch through the mixture's streams (src/files/npy_mix.h) in the
 * form a store or a dataset of those fields would take, the bytes a
 * zrecordfs mount serves as NAME.mix/batch/... (--indices: int64 (B, 2),
 * source number in the file's order and record index in that source).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "batch.h"
#include "mixfile.h"
#include "npy_mix.h"

/* One source: a store (one field, no name) or a dataset folder (its
 * stores, by folder name in sorted order). */
typedef struct source {
	size_t nf;
	zr_store **zs;
	char **name;
} source;

typedef struct mix {
	const batch_args *a;
	zr_mixfile file;
	source *src;
	uint64_t *len, *have; /* at position 0; each source's records */
} mix;

/* Source path p relative to the mixture file's folder. */
static int source_path(const char *mixpath, const char *p, char *dst,
		       size_t cap)
{
	const char *slash = strrchr(mixpath, '/');
	int dir = slash ? (int)(slash - mixpath) + 1 : 0;
	int n = p[0] == '/' ? snprintf(dst, cap, "%s", p) :
		snprintf(dst, cap, "%.*s%s", dir, mixpath, p);

	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

static int is_store(const char *dir)
{
	char p[PATH_MAX];
	struct stat st;

	return snprintf(p, sizeof(p), "%s/meta.zr", dir) < (int)sizeof(p) &&
	       !stat(p, &st) && S_ISREG(st.st_mode);
}

/* The stores among dir's entries, as a mount shows a dataset: folders
 * (not symlinks) holding meta.zr, in sorted order. */
static int field_names(const char *dir, source *s)
{
	struct dirent **e = NULL;
	int n = scandir(dir, &e, NULL, alphasort), rc = 0;

	if (n < 0)
		return -errno;
	s->name = calloc(n ? n : 1, sizeof(*s->name));
	s->zs = calloc(n ? n : 1, sizeof(*s->zs));
	for (int i = 0; i < n; i++) {
		char p[PATH_MAX];
		struct stat st;

		if (!rc && (!s->name || !s->zs))
			rc = -ENOMEM;
		if (!rc && strcmp(e[i]->d_name, ".") &&
		    strcmp(e[i]->d_name, "..") &&
		    snprintf(p, sizeof(p), "%s/%s", dir, e[i]->d_name) <
			    (int)sizeof(p) &&
		    !lstat(p, &st) && S_ISDIR(st.st_mode) && is_store(p) &&
		    !(s->name[s->nf++] = strdup(e[i]->d_name)))
			rc = -ENOMEM;
		free(e[i]);
	}
	free(e);
	return rc;
}

/* Opens source k (at path) and its length: a dataset's shortest store's,
 * as a mount's @batch draws. */
static int open_source(mix *m, uint32_t k, const char *path, uint64_t *n)
{
	source *s = &m->src[k];
	char p[PATH_MAX];
	int rc = ZR_CLI_OK;

	if (is_store(path)) {
		s->zs = calloc(1, sizeof(*s->zs));
		s->name = calloc(1, sizeof(*s->name));
		if (!s->zs || !s->name)
			return zr_cli_error(path, "batch", -ENOMEM, NULL);
		s->nf = 1;
		rc = zr_cli_open(path, ZR_OPEN_RDONLY, "batch", &s->zs[0]);
	} else if ((rc = field_names(path, s)) < 0 || !s->nf) {
		char msg[PATH_MAX + 128];

		snprintf(msg, sizeof(msg), "source %u (%s): no store and no "
			 "folder of stores there (a source is a store or an "
			 "aligned dataset folder)", k, path);
		return zr_cli_error(m->a->store, "batch", rc < 0 ? rc : -ENOENT,
				    msg);
	}
	for (size_t f = 0; s->name[0] && rc == ZR_CLI_OK && f < s->nf; f++) {
		if (snprintf(p, sizeof(p), "%s/%s", path, s->name[f]) >=
		    (int)sizeof(p))
			return zr_cli_error(path, "batch", -ENAMETOOLONG,
					    s->name[f]);
		rc = zr_cli_open(p, ZR_OPEN_RDONLY, "batch", &s->zs[f]);
	}
	for (size_t f = 0; rc == ZR_CLI_OK && f < s->nf; f++)
		if (!f || zr_store_length(s->zs[f]) < *n)
			*n = zr_store_length(s->zs[f]);
	return rc;
}

static int open_sources(mix *m)
{
	const char *path = m->a->store;
	char src[PATH_MAX];

	m->src = calloc(m->file.k, sizeof(*m->src));
	m->len = calloc(m->file.k, sizeof(*m->len));
	m->have = calloc(m->file.k, sizeof(*m->have));
	if (!m->src || !m->len || !m->have)
		return zr_cli_error(path, "batch", -ENOMEM, NULL);
	for (uint32_t i = 0; i < m->file.k; i++) {
		uint64_t n = 0;
		int rc;

		if (source_path(path, m->file.path[i], src, sizeof(src)))
			return zr_cli_error(path, "batch", -ENAMETOOLONG,
					    m->file.path[i]);
		rc = open_source(m, i, src, &n);
		m->have[i] = n;
		if (rc == ZR_CLI_OK)
			rc = zr_cli_batch_length(m->a, i, m->file.k, n,
						 &m->len[i]);
		if (rc != ZR_CLI_OK)
			return rc;
	}
	return ZR_CLI_OK;
}

static int close_sources(mix *m, int rc)
{
	for (uint32_t i = 0; m->src && i < m->file.k; i++) {
		source *s = &m->src[i];

		for (size_t f = 0; f < s->nf; f++) {
			if (s->zs && s->zs[f])
				rc = zr_cli_close(s->zs[f], m->file.path[i],
						  "batch", rc);
			free(s->name ? s->name[f] : NULL);
		}
		free(s->zs);
		free(s->name);
	}
	free(m->src);
	return rc;
}

static int build(mix *m, zr_stream **st)
{
	const char *path = m->a->store;
	int rc = zr_stream_new_mixture(m->a->cfg.seed, m->file.k, m->len,
				       m->file.weight, st);

	if (rc < 0)
		return zr_cli_lib_error(path, "batch", rc);
	rc = zr_cli_batch_schedule(m->a, m->file.from, m->file.weights,
				   m->file.nsched, m->file.k, *st);
	if (rc == ZR_CLI_OK)
		rc = zr_cli_batch_check(m->a, *st, m->len, m->have);
	if (rc != ZR_CLI_OK) {
		zr_stream_free(*st);
		*st = NULL;
	}
	return rc;
}

/* The encoder's streams of the mixture's fields (for --indices, of any
 * sources: the pairs need no fields). */
static int streams_of(const mix *m, zrfile_source **out)
{
	uint32_t k = m->file.k, nf = m->a->indices ? 1 : m->src[0].nf;
	zrfile_source *grid, *st = zrfile_mix_alloc(k, nf, &grid);
	char msg[256];
	int rc;

	if (!st)
		return zr_cli_error(m->a->store, "batch", -ENOMEM, NULL);
	for (uint32_t s = 0; s < k; s++) {
		if (m->src[s].nf < nf || (m->src[s].nf > nf &&
					  !m->a->indices)) {
			free(st);
			return zr_cli_error(m->a->store, "batch", -EINVAL,
					    "sources need the same fields "
					    "(a dataset's stores, by name)");
		}
		for (uint32_t f = 0; f < nf; f++)
			grid[(size_t)f * k + s] = (zrfile_source){
				.zs = m->src[s].zs[f],
				.name = m->src[s].name[f] };
	}
	rc = zrfile_mix_check(st, k, nf, msg, sizeof(msg));
	if (rc < 0 && !m->a->indices) {
		free(st);
		return zr_cli_error(m->a->store, "batch", rc, msg);
	}
	*out = st;
	return ZR_CLI_OK;
}

/* --indices, --form (a mixture of ragged stores only) or the form a
 * store or dataset of the mixture's fields takes, into *form. */
static int form_of(const mix *m, const zrfile_source *st, int *form)
{
	int flat;

	*form = zrfile_mix_form(st, (uint32_t)m->src[0].nf, &flat);
	if (m->a->indices)
		*form = ZRFILE_INDICES;
	else if (m->a->form >= 0 && !flat)
		return zr_cli_usage(&zr_cli_batch, "--form: the mixture's "
				    "batch is one %s (--form takes a mixture "
				    "of ragged stores)",
				    *form == ZRFILE_STACK ? ".npy" : ".npz");
	else if (m->a->form >= 0)
		*form = m->a->form;
	return ZR_CLI_OK;
}

static int write_batch(const mix *m, const uint64_t *key)
{
	zrfile_source *st = NULL;
	int form, rc = streams_of(m, &st);

	if (rc == ZR_CLI_OK)
		rc = form_of(m, st, &form);
	if (rc == ZR_CLI_OK)
		rc = zr_cli_write_streams(st, m->a->indices ? 1 :
					  m->src[0].nf, form, key,
					  m->a->cfg.batch_size, m->a->out,
					  m->a->store, "batch");
	free(st);
	return rc;
}

static int draw(mix *m)
{
	const batch_args *a = m->a;
	uint64_t b = a->cfg.batch_size, *key = NULL;
	zr_stream *st = NULL;
	int rc = build(m, &st);

	if (rc != ZR_CLI_OK)
		return rc;
	if (b > SIZE_MAX / sizeof(*key))
		rc = zr_cli_error(a->store, "batch", ZR_E_TOOBIG, NULL);
	else if (!(key = malloc(b * sizeof(*key))))
		rc = zr_cli_error(a->store, "batch", -ENOMEM, NULL);
	else if ((rc = zrfile_mix_batch(st, a->start, a->step, a->cfg.rank,
					a->cfg.world, b, key)) < 0)
		rc = zr_cli_lib_error(a->store, "batch", rc);
	else
		rc = write_batch(m, key);
	free(key);
	zr_stream_free(st);
	return rc;
}

int zr_cli_batch_mix(const batch_args *a)
{
	mix m = { .a = a };
	char msg[256];
	int rc;

	if (a->granule)
		return zr_cli_usage(&zr_cli_batch, "--granule: a mixture's "
				    "sources cycle through all their records");
	rc = zr_mixfile_read(a->store, &m.file, msg, sizeof(msg));
	if (rc < 0) /* msg only repeats a system error */
		return zr_cli_error(a->store, "batch", rc, rc == -EINVAL ||
				    rc == -EFBIG ? msg : NULL);
	rc = open_sources(&m);
	if (rc == ZR_CLI_OK)
		rc = draw(&m);
	rc = close_sources(&m, rc);
	free(m.len);
	free(m.have);
	zr_mixfile_free(&m.file);
	return rc;
}
