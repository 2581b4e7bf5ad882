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
 * Here: the command's own checks and messages; the sources are found
 * and opened as mixopen.h says.
 */
#include <errno.h>
#include <stdlib.h>

#include "batchmix.h"
#include "form_table.h"
#include "mixfile.h"
#include "mixopen.h"
#include "npy_mix.h"

/* One source, opened (mixopen.h). */
typedef zr_cli_mixsrc source;

typedef struct mix {
	const batch_args *a;
	zrcommon_mixfile file;
	source *src;
	uint64_t *len, *have; /* at position 0; each source's records */
} mix;

/* The sources (mixopen.h: found as a mount finds them), opened, and
 * the lengths the batch starts with. */
static int open_sources(mix *m)
{
	const char *path = m->a->store;
	char why[256];
	int rc;

	m->len = calloc(m->file.k, sizeof(*m->len));
	m->have = calloc(m->file.k, sizeof(*m->have));
	if (!m->len || !m->have)
		return zr_cli_error(path, "batch", -ENOMEM, NULL);
	rc = zr_cli_mix_open(path, &m->file, "batch", &m->src, m->have, why,
			     sizeof(why));
	if (rc == ZR_CLI_OK && !m->a->indices && *why)
		rc = zr_cli_error(path, "batch", -EINVAL, why);
	for (uint32_t i = 0; rc == ZR_CLI_OK && i < m->file.k; i++)
		rc = zr_cli_batch_length(m->a, i, m->file.k, m->have[i],
					 &m->len[i]);
	return rc;
}

/* The fields the batch reads: source 0's, which every source must have
 * but for --indices (the pairs need no fields; a source's length is then
 * drawn over the grid a mount lays out, see zr_cli_mix_grid). */
static int fields_of(const mix *m, uint32_t *nf)
{
	*nf = (uint32_t)m->src[0].nf;
	for (uint32_t s = 1; !m->a->indices && s < m->file.k; s++)
		if (m->src[s].nf != *nf)
			return zr_cli_error(m->a->store, "batch", -EINVAL,
					    "sources need the same fields "
					    "(a dataset's stores, by name)");
	return ZR_CLI_OK;
}

/* --indices, --form (a mixture of ragged stores only) or the form a
 * store or dataset of the mixture's fields takes (source 0's, at
 * grid[0]), into *form. */
static int form_of(const mix *m, const zrfile_source *grid, uint32_t nf,
		   int *form)
{
	unsigned on = zrfile_form_on(grid, nf);

	*form = zrfile_form_default(on);
	if (m->a->indices)
		*form = ZRFILE_INDICES;
	else if (m->a->form >= 0 && on != ZRFILE_ON_RAGGED)
		return zr_cli_usage(m->a->cmd, "--form: the mixture's "
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
	zr_cli_mix_grid(m->src, m->file.k, nf, grid);
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
	int rc;

	if (a->granule)
		return zr_cli_usage(a->cmd, "--granule, --start P@G: a "
				    "mixture's sources cycle through all their "
				    "records");
	rc = zr_cli_mix_read(a->store, "batch", &m.file);
	if (rc != ZR_CLI_OK)
		return rc;
	rc = open_sources(&m);
	if (rc == ZR_CLI_OK)
		rc = draw(&m);
	rc = zr_cli_mix_close(m.src, &m.file, "batch", rc);
	free(m.len);
	free(m.have);
	zrcommon_mixfile_free(&m.file);
	return rc;
}
