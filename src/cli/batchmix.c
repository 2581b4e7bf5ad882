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
#include <errno.h>
#include <stdlib.h>

#include "batch.h"
#include "mixfile.h"
#include "mixopen.h"
#include "npy_mix.h"

/* One source, opened (mixopen.h). */
typedef zr_cli_mixsrc source;

typedef struct mix {
	const batch_args *a;
	zr_mixfile file;
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
	int rc;

	if (a->granule)
		return zr_cli_usage(&zr_cli_batch, "--granule: a mixture's "
				    "sources cycle through all their records");
	rc = zr_cli_mix_read(a->store, "batch", &m.file);
	if (rc != ZR_CLI_OK)
		return rc;
	rc = open_sources(&m);
	if (rc == ZR_CLI_OK)
		rc = draw(&m);
	rc = zr_cli_mix_close(m.src, &m.file, "batch", rc);
	free(m.len);
	free(m.have);
	zr_mixfile_free(&m.file);
	return rc;
}
