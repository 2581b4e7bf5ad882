/*
 * mixture.c - a mixture file's folder (mixture.h): reading the file at
 * mount, finding its sources among the mount's stores and dataset
 * folders, and its stats and errors; the grid of its sources' stores its
 * batches are planned over (src/files/batch_mix.c draws them).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch_node.h"
#include "mixture.h"
#include "npy_mix.h"

int zrfs_mix_named(const char *name)
{
	size_t n = strlen(name), k = strlen(ZRFS_MIX_SUFFIX);

	return n > k && !strcmp(name + n - k, ZRFS_MIX_SUFFIX);
}

struct zrfs_mix *zrfs_mix_new(const char *abs, const char *rel)
{
	struct zrfs_mix *m = calloc(1, sizeof(*m));
	char msg[256];

	if (!m || !(m->path = strdup(rel))) {
		free(m);
		return NULL;
	}
	if (zr_mixfile_read(abs, &m->file, msg, sizeof(msg)))
		zrfs_elog_add(&m->log, m->path, "not served: %s", msg);
	else
		m->parsed = 1;
	return m;
}

void zrfs_mix_free(struct zrfs_mix *m)
{
	if (!m)
		return;
	zr_mixfile_free(&m->file);
	free(m->grid);
	free(m->slot);
	free(m->names);
	free(m->st);
	free(m->path);
	free(m);
}

struct zrfs_elog *zrfs_mix_elog(struct zrfs_mix *m)
{
	return &m->log;
}

/* -- finding the sources ------------------------------------------------ */

/* The node of path rel (relative to SRC, "" for SRC itself). */
static struct zrfs_node *walk(struct zrfs_fs *fs, const char *rel)
{
	struct zrfs_node *n = fs->stat[0];
	char buf[PATH_MAX], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", rel);
	for (char *c = strtok_r(buf, "/", &save); c && n;
	     c = strtok_r(NULL, "/", &save)) {
		struct zrfs_node *next = NULL;

		for (size_t i = 0; !next && i < n->nkids; i++)
			if (!strcmp(n->kids[i]->name, c))
				next = n->kids[i];
		n = next;
	}
	return n;
}

/* Source s's folder as a path relative to SRC, or NULL (a reason in
 * why): resolved, so "..", symlinks and absolute paths inside SRC all
 * name the folder the mount shows. */
static const char *inside_src(struct zrfs_fs *fs, const struct zrfs_mix *m,
			      uint32_t s, char *abs, char *why, size_t cap)
{
	char src[PATH_MAX], file[PATH_MAX * 2];
	const char *p = m->file.path[s], *slash = strrchr(m->path, '/');
	size_t r;

	snprintf(file, sizeof(file), "%s/%.*s%s", fs->opts.src,
		 slash ? (int)(slash - m->path) + 1 : 0, m->path, p);
	if (!realpath(fs->opts.src, src) ||
	    !realpath(p[0] == '/' ? p : file, abs)) {
		if (snprintf(why, cap, "%s: %s", p[0] == '/' ? p : file,
			     strerror(errno)) >= (int)cap)
			why[cap - 1] = 0;
		return NULL;
	}
	r = strlen(src);
	if (!strcmp(abs, src))
		return "";
	if (!strncmp(abs, src, r) && abs[r] == '/')
		return abs + r + 1;
	if (snprintf(why, cap, "%s is outside this mount's SRC (%s)", abs,
		     src) >= (int)cap)
		why[cap - 1] = 0;
	return NULL;
}

/* Source s's stores: a store folder's one, or a folder's stores (in the
 * order the folder lists them); their count, 0 if none (a reason in
 * why). */
static size_t source_stores(const struct zrfs_node *n, struct zrfs_fstore **out,
			    const char **names, size_t cap, char *why,
			    size_t wcap)
{
	size_t nf = 0;

	if (n->kind == ZRFS_K_STORE) {
		out[0] = n->st;
		names[0] = NULL;
		return 1;
	}
	for (size_t i = 0; n->kind == ZRFS_K_DIR && !n->mix && i < n->nkids;
	     i++) {
		if (n->kids[i]->kind != ZRFS_K_STORE)
			continue;
		if (nf == cap) {
			snprintf(why, wcap, "more than %zu stores", cap);
			return 0;
		}
		out[nf] = n->kids[i]->st;
		names[nf++] = n->kids[i]->name;
	}
	if (!nf)
		snprintf(why, wcap, "neither a store nor a folder of stores");
	return nf;
}

#define MAX_FIELDS 64

/* Finds source s's stores: *nf and f[], names[] (MAX_FIELDS), or -1
 * with the reason logged. */
static int find_source(struct zrfs_fs *fs, struct zrfs_mix *m, uint32_t s,
		       struct zrfs_fstore **f, const char **names, size_t *nf)
{
	char abs[PATH_MAX], why[PATH_MAX + 64] = "";
	const char *rel = inside_src(fs, m, s, abs, why, sizeof(why));
	struct zrfs_node *n = rel ? walk(fs, rel) : NULL;

	if (rel && !n && snprintf(why, sizeof(why), "%s is not served by "
				  "this mount (a store or dataset folder "
				  "under SRC is)", abs) >= (int)sizeof(why))
		why[sizeof(why) - 1] = 0;
	*nf = n ? source_stores(n, f, names, MAX_FIELDS, why, sizeof(why))
		: 0;
	if (*nf)
		return 0;
	zrfs_elog_add(&m->log, m->path, "not served: source %u (\"%s\"): %s",
		      s, m->file.path[s], why);
	return -1;
}

/* The stores, each once, ascending id; slot[] their places. */
static int unique_stores(struct zrfs_mix *m)
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

void zrfs_mix_grid(const struct zrfs_mix *m, zr_view *const *views,
		   zrfile_source *grid)
{
	for (size_t c = 0; c < (size_t)m->k * m->nf; c++)
		grid[c] = (zrfile_source){
			.zs = m->grid[c]->zs, .name = m->names[c / m->k],
			.view = views ? views[m->slot[c]] : NULL };
}

int zrfs_mix_forms(const struct zrfs_mix *m, int *npz, int *flat)
{
	zrfile_source s = { .zs = m->grid[0]->zs, .name = m->names[0] };

	if (!m->records)
		return -1;
	*npz = zrfile_mix_form(&s, m->nf, flat) == ZRFILE_NPZ;
	return 0;
}

/* Whether the sources can make files of records (else only indices):
 * the same fields, of one schema each. */
static int check_records(struct zrfs_mix *m, const size_t *nf)
{
	zrfile_source *streams, *grid;
	char msg[256];
	int err;

	for (uint32_t s = 1; s < m->k; s++)
		if (nf[s] != m->nf) {
			zrfs_elog_add(&m->log, m->path, "batch files of "
				      "records not served: source %u has %zu "
				      "stores, source 0 %u (sources need the "
				      "same fields); .indices.npy is", s,
				      nf[s], m->nf);
			return 0;
		}
	streams = zrfile_mix_alloc(m->k, m->nf, &grid);
	if (!streams)
		return 0;
	zrfs_mix_grid(m, NULL, grid);
	err = zrfile_mix_check(streams, m->k, m->nf, msg, sizeof(msg));
	if (err)
		zrfs_elog_add(&m->log, m->path, "batch files of records not "
			      "served: %s", msg);
	free(streams);
	return !err;
}

/* Copies source s's stores into the grid (nf columns; names per field
 * from source 0, compared by check_records). */
static void place(struct zrfs_mix *m, uint32_t s, struct zrfs_fstore **f,
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

static int resolve(struct zrfs_fs *fs, struct zrfs_mix *m, size_t *nf)
{
	struct zrfs_fstore *f[MAX_FIELDS];
	const char *names[MAX_FIELDS];
	int bad = 0;

	for (uint32_t s = 0; s < m->k; s++) {
		if (find_source(fs, m, s, f, names, &nf[s])) {
			bad = 1;
			continue;
		}
		if (!s) {
			m->nf = (uint32_t)nf[0];
			m->grid = calloc((size_t)m->k * m->nf,
					 sizeof(*m->grid));
			m->names = calloc(m->nf, sizeof(*m->names));
			if (!m->grid || !m->names)
				return -ENOMEM;
		}
		if (m->grid)
			place(m, s, f, names, nf[s]);
	}
	return bad ? -1 : unique_stores(m);
}

int zrfs_mix_resolve(struct zrfs_fs *fs, struct zrfs_mix *m)
{
	size_t *nf;

	if (!m->parsed)
		return 0;
	m->k = m->file.k;
	nf = calloc(m->k, sizeof(*nf));
	if (!nf || resolve(fs, m, nf)) {
		free(nf);
		return 0;
	}
	m->records = check_records(m, nf);
	m->ok = 1;
	free(nf);
	return 1;
}

/* -- stats -------------------------------------------------------------- */

/* s as a JSON string. */
static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* Source s's records now: its shortest store's, which a dataset draws
 * over. */
static uint64_t source_length(const struct zrfs_mix *m, uint32_t s)
{
	uint64_t n = UINT64_MAX;

	for (uint32_t f = 0; f < m->nf; f++) {
		uint64_t l = zr_store_length(m->grid[(size_t)f * m->k + s]->zs);

		n = l < n ? l : n;
	}
	return n;
}

static void source_json(FILE *f, const struct zrfs_mix *m, uint32_t s,
			uint64_t sum)
{
	uint64_t w = m->file.weight[s], n = source_length(m, s);

	fprintf(f, "%s\n  {\"source\": %u, \"path\": ", s ? "," : "", s);
	json_str(f, m->file.path[s]);
	fprintf(f, ", \"records\": %llu, \"weight\": %llu, \"share\": %.6f, "
		"\"positions_per_cycle\": ", (unsigned long long)n,
		(unsigned long long)w, (double)w / (double)sum);
	/* positions over which the source serves each record once */
	if (w && n)
		fprintf(f, "%llu}",
			(unsigned long long)((n * sum + w - 1) / w));
	else
		fprintf(f, "null}");
}

int zrfs_mix_stats(struct zrfs_mix *m, char **out, size_t *len)
{
	uint64_t sum = 0;
	FILE *f = open_memstream(out, len);

	if (!f)
		return -ENOMEM;
	for (uint32_t s = 0; s < m->k; s++)
		sum += m->file.weight[s];
	fprintf(f, "{\"mixture\": ");
	json_str(f, m->path);
	/* null: the sources are stores, not datasets */
	fprintf(f, ", \"fields\": %s", m->names[0] ? "" : "null");
	for (uint32_t i = 0; m->names[0] && i < m->nf; i++) {
		fprintf(f, "%s", i ? ", " : "[");
		json_str(f, m->names[i]);
	}
	fprintf(f, "%s, \"batch_files\": \"%s\", \"sources\": [",
		m->names[0] ? "]" : "", m->records ? "records and indices"
		: "indices only");
	for (uint32_t s = 0; s < m->k; s++)
		source_json(f, m, s, sum);
	fprintf(f, "],\n \"schedule\": [");
	for (uint32_t i = 0; i < m->file.nsched; i++) {
		fprintf(f, "%s{\"from\": %llu, \"weights\": [", i ? ", " : "",
			(unsigned long long)m->file.from[i]);
		for (uint32_t s = 0; s < m->k; s++)
			fprintf(f, "%s%llu", s ? ", " : "", (unsigned long long)
				m->file.weights[(size_t)i * m->k + s]);
		fprintf(f, "]}");
	}
	fprintf(f, "]}\n");
	return fclose(f) ? -ENOMEM : 0;
}
