/*
 * batchmix.c - `zrecord batch MIX.mix.json`: a mixture's batch.  The file
 * names its sources (paths relative to its folder: stores, or aligned
 * dataset folders of the same fields) and weights; the library's mixture
 * stream picks (source, record) for each sample, and the encoder writes
 * the batch through the mixture's streams (src/files/npy_mix.h) in the
 * form a store or a dataset of those fields would take, planned by the
 * mount's planner (src/files/batch_file.h), so the bytes are those a
 * zrecordfs mount serves as NAME.mix/batch/... (--indices: int64 (B, 2),
 * source number in the file's order and record index in that source).
 * Here: opening the sources and the command's own checks and messages.
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

/* Opens the sources and checks --length against their records (the
 * planner draws at the lengths it finds again). */
static int open_sources(mix *m)
{
	const char *path = m->a->store;
	char src[PATH_MAX];

	m->src = calloc(m->file.k, sizeof(*m->src));
	if (!m->src)
		return zr_cli_error(path, "batch", -ENOMEM, NULL);
	for (uint32_t i = 0; i < m->file.k; i++) {
		uint64_t n = 0, len;
		int rc;

		if (source_path(path, m->file.path[i], src, sizeof(src)))
			return zr_cli_error(path, "batch", -ENAMETOOLONG,
					    m->file.path[i]);
		rc = open_source(m, i, src, &n);
		if (rc == ZR_CLI_OK)
			rc = zr_cli_batch_length(m->a, i, m->file.k, n, &len);
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

/* The fields the batch reads: source 0's (for --indices, those every
 * source has: the pairs need no fields). */
static int fields_of(const mix *m, uint32_t *nf)
{
	*nf = (uint32_t)m->src[0].nf;
	for (uint32_t s = 1; s < m->file.k; s++) {
		if (m->a->indices && m->src[s].nf < *nf)
			*nf = (uint32_t)m->src[s].nf;
		else if (!m->a->indices && m->src[s].nf != *nf)
			return zr_cli_error(m->a->store, "batch", -EINVAL,
					    "sources need the same fields "
					    "(a dataset's stores, by name)");
	}
	return ZR_CLI_OK;
}

/* --indices, --form (a mixture of ragged stores only) or the form a
 * store or dataset of the mixture's fields takes (source 0's, at
 * grid[0]), into *form. */
static int form_of(const mix *m, const zrfile_source *grid, uint32_t nf,
		   int *form)
{
	int flat;

	*form = zrfile_mix_form(grid, nf, &flat);
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

/* The batch, planned over the sources' stores as a mount plans its
 * NAME.mix/batch/ files (batch_file.h): the mixture stream's keys, read
 * through the encoder's mixture streams. */
static int draw(const mix *m)
{
	uint32_t k = m->file.k, nf;
	struct zrfile_batch_spec spec;
	struct zrfile_batch b;
	zrfile_source *grid;
	int form, rc = fields_of(m, &nf);

	if (rc != ZR_CLI_OK)
		return rc;
	grid = zrfile_batch_sources(&b, k, nf);
	if (!grid) {
		zrfile_batch_free(&b);
		return zr_cli_error(m->a->store, "batch", -ENOMEM, NULL);
	}
	for (uint32_t s = 0; s < k; s++)
		for (uint32_t f = 0; f < nf; f++)
			grid[(size_t)f * k + s] = (zrfile_source){
				.zs = m->src[s].zs[f],
				.name = m->src[s].name[f] };
	rc = form_of(m, grid, nf, &form);
	if (rc != ZR_CLI_OK) {
		zrfile_batch_free(&b);
		return rc;
	}
	zr_cli_batch_spec(m->a, form, &m->file, &spec);
	return zr_cli_batch_write(m->a, &spec, &b);
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
	zr_mixfile_free(&m.file);
	return rc;
}
