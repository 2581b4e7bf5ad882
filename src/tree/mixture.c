/*
 * mixture.c - a mixture file's folder (mixture.h): reading the file at
 * mount, mapping its sources (found on disk by src/common/mixsource.h)
 * to the mount's stores, and its stats and errors; the grid of its
 * sources' stores its batches are planned over (src/files/batch_mix.c
 * draws them).
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "form_table.h"
#include "mixsource.h"
#include "mixture.h"
#include "npy_mix.h"
#include "errors_log.h"
#include "statsjson.h"

struct zrtree_mix *zrtree_mix_new(const char *abs, const char *rel)
{
	struct zrtree_mix *m = calloc(1, sizeof(*m));
	char msg[256];

	if (!m || !(m->path = strdup(rel)) || !(m->log = zrtree_elog_new())) {
		zrtree_mix_free(m);
		return NULL;
	}
	if (zrcommon_mixfile_read(abs, &m->file, msg, sizeof(msg)))
		zrtree_elog_add(m->log, m->path, "not served: %s", msg);
	else
		m->parsed = 1;
	return m;
}

void zrtree_mix_free(struct zrtree_mix *m)
{
	if (!m)
		return;
	zrcommon_mixfile_free(&m->file);
	free(m->grid);
	free(m->slot);
	free(m->names);
	free(m->st);
	free(m->path);
	zrtree_elog_free(m->log);
	free(m);
}

struct zrtree_elog *zrtree_mix_elog(struct zrtree_mix *m)
{
	return m->log;
}

/* -- finding the sources ------------------------------------------------ */

/* The node of path rel (relative to SRC, "" for SRC itself). */
static struct zrtree_node *walk(struct zrtree *t, const char *rel)
{
	struct zrtree_node *n = t->stat[0];
	char buf[PATH_MAX], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", rel);
	for (char *c = strtok_r(buf, "/", &save); c && n;
	     c = strtok_r(NULL, "/", &save)) {
		struct zrtree_node *next = NULL;

		for (size_t i = 0; !next && i < n->nkids; i++)
			if (!strcmp(n->kids[i]->name, c))
				next = n->kids[i];
		n = next;
	}
	return n;
}

/* why: the message of fmt, cut to cap bytes. */
__attribute__((format(printf, 3, 4)))
static void say(char *why, size_t cap, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, cap, fmt, ap);
	va_end(ap);
}

/* The node the mount shows for abs (resolved, mixsource.h), or NULL (a
 * reason in why): abs must be inside SRC, so "..", symlinks and absolute
 * paths inside SRC all name the folder the mount shows. */
static struct zrtree_node *served(struct zrtree *t, const char *abs,
				char *why, size_t cap)
{
	char src[PATH_MAX];
	struct zrtree_node *n;
	size_t r;

	if (zr_path_is_url(abs)) {
		say(why, cap, "%s is a URL: a mount serves the stores under "
		    "its SRC only (zrecord batch and loaderx read URL "
		    "sources)", abs);
		return NULL;
	}
	if (!realpath(t->src, src)) {
		say(why, cap, "%s: %s", t->src, strerror(errno));
		return NULL;
	}
	r = strlen(src);
	if (strncmp(abs, src, r) || (abs[r] && abs[r] != '/')) {
		say(why, cap, "%s is outside this mount's SRC (%s)", abs, src);
		return NULL;
	}
	n = walk(t, abs[r] ? abs + r + 1 : "");
	if (!n)
		say(why, cap, "%s is not served by this mount (a store or "
		    "dataset folder under SRC is)", abs);
	return n;
}

/* Source src's stores as this mount serves them: f[], names[]. */
static int map_fields(struct zrtree *t, const zrcommon_mixsource *src,
		      struct zrtree_store **f, const char **names, char *why,
		      size_t cap)
{
	for (uint32_t i = 0; i < src->nf; i++) {
		struct zrtree_node *n = served(t, src->store[i], why, cap);

		if (n && n->kind != ZRTREE_K_STORE)
			say(why, cap, "%s is not served by this mount as a "
			    "store", src->store[i]);
		if (!n || n->kind != ZRTREE_K_STORE)
			return -ENOENT;
		f[i] = n->st;
		names[i] = src->name[i] ? n->name : NULL;
	}
	return 0;
}

/* Source s's fields on disk (*src) and the stores this mount serves for
 * them (f[], names[]: ZRCOMMON_MIX_FIELDS), or -1 with the reason
 * logged. */
static int find_source(struct zrtree *t, struct zrtree_mix *m, uint32_t s,
		       zrcommon_mixsource *src, struct zrtree_store **f,
		       const char **names)
{
	char *file = NULL, *dir = NULL, why[PATH_MAX + 64] = "";
	int err = asprintf(&file, "%s/%s", t->src, m->path) < 0 ?
		  -ENOMEM : 0;

	if (!err)
		err = zrcommon_mix_source_dir(file, m->file.path[s], &dir, why,
					      sizeof(why));
	if (!err && !served(t, dir, why, sizeof(why)))
		err = -ENOENT;
	if (!err)
		err = zrcommon_mix_source_fields(dir, src, why, sizeof(why));
	if (!err)
		err = map_fields(t, src, f, names, why, sizeof(why));
	free(file);
	free(dir);
	if (!err)
		return 0;
	if (err == -ENOMEM && !*why)
		say(why, sizeof(why), "%s", strerror(ENOMEM));
	zrtree_elog_add(m->log, m->path, "not served: source %u (\"%s\"): %s",
		      s, m->file.path[s], why);
	return -1;
}

/* The stores, each once, ascending id; slot[] their places. */
static int unique_stores(struct zrtree_mix *m)
{
	size_t cells = (size_t)m->k * m->nf;

	m->st = calloc(cells, sizeof(*m->st));
	m->slot = calloc(cells, sizeof(*m->slot));
	if (!m->st || !m->slot)
		return -ENOMEM;
	for (size_t c = 0; c < cells; c++) {
		size_t at = 0;

		while (at < m->nst && m->st[at]->id < m->grid[c]->id)
			at++;
		if (at < m->nst && m->st[at] == m->grid[c])
			continue;
		memmove(m->st + at + 1, m->st + at,
			(m->nst - at) * sizeof(*m->st));
		m->st[at] = m->grid[c];
		m->nst++;
	}
	for (size_t c = 0; c < cells; c++)
		for (uint32_t i = 0; i < m->nst; i++)
			if (m->st[i] == m->grid[c])
				m->slot[c] = i;
	return 0;
}

void zrtree_mix_grid(const struct zrtree_mix *m, zr_view *const *views,
		   zrfile_source *grid)
{
	for (size_t c = 0; c < (size_t)m->k * m->nf; c++)
		grid[c] = (zrfile_source){
			.zs = m->grid[c]->zs, .name = m->names[c / m->k],
			.view = views ? views[m->slot[c]] : NULL };
}

unsigned zrtree_mix_on(const struct zrtree_mix *m)
{
	zrfile_source s = { .zs = m->grid[0]->zs, .name = m->names[0] };

	return m->records ? zrfile_form_on(&s, m->nf) : ZRFILE_ON_MIXED;
}

/* Whether the sources can make files of records (else only indices):
 * the same fields, of one schema each. */
static int check_records(struct zrtree_mix *m, const zrcommon_mixsource *src)
{
	zrfile_source *streams, *grid;
	char msg[256];
	int err = zrcommon_mix_same_fields(src, m->k, msg, sizeof(msg));

	if (err) {
		zrtree_elog_add(m->log, m->path, "batch files of records not "
			      "served: %s; .indices.npy is", msg);
		return 0;
	}
	streams = zrfile_mix_alloc(m->k, m->nf, &grid);
	if (!streams)
		return 0;
	zrtree_mix_grid(m, NULL, grid);
	err = zrfile_mix_check(streams, m->k, m->nf, msg, sizeof(msg));
	if (err)
		zrtree_elog_add(m->log, m->path, "batch files of records not "
			      "served: %s", msg);
	free(streams);
	return !err;
}

/* Copies source s's stores into the grid (nf columns; names per field
 * from source 0, compared by check_records). */
static void place(struct zrtree_mix *m, uint32_t s, struct zrtree_store **f,
		  const char **names, size_t nf)
{
	for (size_t i = 0; i < nf && i < m->nf; i++) {
		m->grid[i * m->k + s] = f[i];
		if (!s)
			m->names[i] = names[i];
	}
	/* a source of fewer fields repeats its last: only its indices are
	 * served then (check_records), which read field 0 */
	for (size_t i = nf; i < m->nf; i++)
		m->grid[i * m->k + s] = f[nf - 1];
}

static int resolve(struct zrtree *t, struct zrtree_mix *m,
		   zrcommon_mixsource *src)
{
	struct zrtree_store *f[ZRCOMMON_MIX_FIELDS];
	const char *names[ZRCOMMON_MIX_FIELDS];
	int bad = 0;

	for (uint32_t s = 0; s < m->k; s++) {
		if (find_source(t, m, s, &src[s], f, names)) {
			bad = 1;
			continue;
		}
		if (!s) {
			m->nf = src[0].nf;
			m->grid = calloc((size_t)m->k * m->nf,
					 sizeof(*m->grid));
			m->names = calloc(m->nf, sizeof(*m->names));
			if (!m->grid || !m->names)
				return -ENOMEM;
		}
		if (m->grid)
			place(m, s, f, names, src[s].nf);
	}
	return bad ? -1 : unique_stores(m);
}

int zrtree_mix_resolve(struct zrtree *t, struct zrtree_mix *m)
{
	zrcommon_mixsource *src;
	int ok = 0;

	if (!m->parsed)
		return 0;
	m->k = m->file.k;
	src = calloc(m->k, sizeof(*src));
	if (!src)
		zrtree_elog_add(m->log, m->path, "not served: out of memory");
	else if (!resolve(t, m, src)) {
		m->records = check_records(m, src);
		m->ok = ok = 1;
	}
	zrcommon_mix_sources_free(src, m->k);
	return ok;
}

/* -- stats -------------------------------------------------------------- */

/* Each source's records now (the stores as the stats read finds them). */
int zrtree_mix_stats(struct zrtree_mix *m, char **out, size_t *len)
{
	uint64_t *n = calloc(m->k, sizeof(*n));
	zrfile_source *grid = calloc((size_t)m->k * m->nf, sizeof(*grid));
	zrcommon_mix_figures fig = {
		.path = m->path, .file = &m->file, .records = n,
		.fields = m->names[0] ? m->names : NULL, .nf = m->nf,
		.records_served = m->records };
	int err;

	if (!n || !grid) {
		free(n);
		free(grid);
		return -ENOMEM;
	}
	zrtree_mix_grid(m, NULL, grid);
	for (uint32_t s = 0; s < m->k; s++)
		n[s] = zrfile_mix_source_length(grid, m->k, m->nf, s);
	err = zrcommon_mix_stats_json(&fig, out, len);
	free(grid);
	free(n);
	return err;
}
