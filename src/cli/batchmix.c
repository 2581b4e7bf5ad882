/*
 * batchmix.c - `zrecord batch MIX.mix.json`: a mixture's batch.  The file
 * names its stores (paths relative to its folder) and weights; the
 * library's mixture stream picks (source, record) for each sample; the
 * output is those pairs (--indices: int64 (B, 2)) or the records of
 * sources that share one dense schema, stacked in batch order.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "batch.h"
#include "mixfile.h"

#define MIX_MAX_BYTES (1u << 20)

typedef struct mix {
	const batch_args *a;
	zr_mixfile file;
	zr_store **zs;
	uint64_t *len;
	zr_cli_entry *ent;
} mix;

static int read_file(const char *path, char **buf, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char *b = NULL;
	ssize_t n;
	size_t got = 0;

	if (fd < 0)
		return zr_cli_error(path, "batch", -errno, NULL);
	b = malloc(MIX_MAX_BYTES + 1);
	while (b && (n = read(fd, b + got, MIX_MAX_BYTES + 1 - got)) > 0)
		got += (size_t)n;
	close(fd);
	if (!b)
		return zr_cli_error(path, "batch", -ENOMEM, NULL);
	if (got > MIX_MAX_BYTES) {
		free(b);
		return zr_cli_error(path, "batch", -EFBIG, "a mixture file "
				    "holds at most 1 MiB");
	}
	*buf = b;
	*len = got;
	return ZR_CLI_OK;
}

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

static int open_sources(mix *m)
{
	const char *path = m->a->store;
	char src[PATH_MAX];

	m->zs = calloc(m->file.k, sizeof(*m->zs));
	m->len = calloc(m->file.k, sizeof(*m->len));
	if (!m->zs || !m->len)
		return zr_cli_error(path, "batch", -ENOMEM, NULL);
	for (uint32_t i = 0; i < m->file.k; i++) {
		int rc;

		if (source_path(path, m->file.path[i], src, sizeof(src)))
			return zr_cli_error(path, "batch", -ENAMETOOLONG,
					    m->file.path[i]);
		rc = zr_cli_open(src, ZR_OPEN_RDONLY, "batch", &m->zs[i]);
		if (rc != ZR_CLI_OK)
			return rc;
		rc = zr_cli_batch_length(m->a, i, m->file.k,
					 zr_store_length(m->zs[i]), &m->len[i]);
		if (rc != ZR_CLI_OK)
			return rc;
	}
	return ZR_CLI_OK;
}

static int build(mix *m, zr_stream **st)
{
	const char *path = m->a->store;
	int rc = zr_stream_new_mixture(m->a->cfg.seed, m->file.k, m->len,
				       m->file.weight, st);

	if (rc < 0)
		return zr_cli_lib_error(path, "batch", rc);
	m->ent = calloc(m->file.nsched + 1, sizeof(*m->ent));
	if (!m->ent)
		rc = zr_cli_error(path, "batch", -ENOMEM, NULL);
	for (uint32_t i = 0; !rc && i < m->file.nsched; i++) {
		m->ent[i].kind = ZR_CLI_WEIGHTS;
		m->ent[i].at = m->file.from[i];
		m->ent[i].w = m->file.weights + (size_t)i * m->file.k;
	}
	if (!rc)
		rc = zr_cli_batch_schedule(m->a, m->ent, m->file.nsched, *st);
	if (rc != ZR_CLI_OK) {
		zr_stream_free(*st);
		*st = NULL;
	}
	return rc;
}

/* A .npy of a header and its data. */
static int write_two(const char *out, const void *head, size_t hl,
		     const void *data, size_t len, const char *store)
{
	zr_cli_out o;
	int rc = zr_cli_out_open(&o, out, store, "batch");

	if (rc != ZR_CLI_OK)
		return rc;
	rc = zr_cli_out_write(&o, head, hl, store, "batch");
	if (rc == ZR_CLI_OK)
		rc = zr_cli_out_write(&o, data, len, store, "batch");
	return zr_cli_out_close(&o, store, "batch", rc);
}

/* The pairs as an int64 (B, 2) .npy. */
static int write_pairs(const mix *m, const uint32_t *src, const uint64_t *idx)
{
	uint64_t b = m->a->cfg.batch_size, shape[2] = { b, 2 };
	zr_dtype i8;
	size_t hl;
	char head[128];
	int64_t *pairs = malloc(b * 2 * sizeof(*pairs));
	int rc;

	if (!pairs)
		return zr_cli_error(m->a->store, "batch", -ENOMEM, NULL);
	zr_dtype_parse("<i8", &i8);
	rc = zr_npy_write_header(&i8, 2, shape, head, sizeof(head), &hl);
	for (uint64_t i = 0; i < b; i++) {
		pairs[2 * i] = src[i];
		pairs[2 * i + 1] = (int64_t)idx[i];
	}
	if (rc < 0)
		rc = zr_cli_lib_error(m->a->store, "batch", rc);
	else
		rc = write_two(m->a->out, head, hl, pairs,
			       b * 2 * sizeof(*pairs), m->a->store);
	free(pairs);
	return rc;
}

/* Every source dense with source 0's dtype and item shape. */
static int same_dense(const mix *m)
{
	const zr_schema *s0 = zr_store_schema(m->zs[0]);

	for (uint32_t i = 0; i < m->file.k; i++) {
		const zr_schema *s = zr_store_schema(m->zs[i]);

		if (s->ragged || strcmp(s->dtype.str, s0->dtype.str) ||
		    s->ndim != s0->ndim ||
		    memcmp(s->shape, s0->shape, s->ndim * sizeof(*s->shape)))
			return zr_cli_error(m->a->store, "batch", ZR_E_SCHEMA,
					    "a mixture's records need dense "
					    "sources of one dtype and item "
					    "shape (else use --indices)");
	}
	return ZR_CLI_OK;
}

/* Gathers each source's records of the batch and puts them in place. */
static int gather_rows(const mix *m, const uint32_t *src, const uint64_t *idx,
		       char *rows, size_t row)
{
	uint64_t b = m->a->cfg.batch_size, *pick = malloc(b * sizeof(*pick));
	char *tmp = malloc(b * row + 1);
	int rc = 0;

	if (!pick || !tmp)
		rc = -ENOMEM;
	for (uint32_t k = 0; !rc && k < m->file.k; k++) {
		size_t n = 0;

		for (uint64_t i = 0; i < b; i++)
			if (src[i] == k)
				pick[n++] = idx[i];
		if (!n)
			continue;
		rc = zr_store_gather(m->zs[k], pick, n, tmp, n * row, NULL);
		for (uint64_t i = 0, j = 0; !rc && i < b; i++)
			if (src[i] == k)
				memcpy(rows + i * row, tmp + j++ * row, row);
	}
	free(pick);
	free(tmp);
	return rc;
}

static int write_records(const mix *m, const uint32_t *src,
			 const uint64_t *idx)
{
	const zr_schema *s0 = zr_store_schema(m->zs[0]);
	uint64_t b = m->a->cfg.batch_size, shape[ZR_MAX_NDIM + 1] = { b };
	size_t row = zr_store_row_bytes(m->zs[0]), hl;
	char head[4096], *rows;
	int rc = same_dense(m);

	if (rc != ZR_CLI_OK)
		return rc;
	if (s0->ndim >= ZR_MAX_NDIM || (row && b > SIZE_MAX / row))
		return zr_cli_error(m->a->store, "batch", ZR_E_TOOBIG, NULL);
	memcpy(shape + 1, s0->shape, s0->ndim * sizeof(*shape));
	rc = zr_npy_write_header(&s0->dtype, s0->ndim + 1, shape, head,
				 sizeof(head), &hl);
	if (rc < 0)
		return zr_cli_lib_error(m->a->store, "batch", rc);
	rows = malloc(b * row + 1);
	if (!rows)
		return zr_cli_error(m->a->store, "batch", -ENOMEM, NULL);
	rc = gather_rows(m, src, idx, rows, row);
	if (rc < 0)
		rc = zr_cli_lib_error(m->a->store, "batch", rc);
	else
		rc = write_two(m->a->out, head, hl, rows, b * row,
			       m->a->store);
	free(rows);
	return rc;
}

static int draw(mix *m)
{
	const batch_args *a = m->a;
	uint64_t b = a->cfg.batch_size, *idx = NULL;
	uint32_t *src = NULL;
	zr_stream *st = NULL;
	int rc = build(m, &st);

	if (rc != ZR_CLI_OK)
		return rc;
	if (b > SIZE_MAX / sizeof(*idx))
		rc = zr_cli_error(a->store, "batch", ZR_E_TOOBIG, NULL);
	else if (!(idx = malloc(b * sizeof(*idx))) ||
		 !(src = malloc(b * sizeof(*src))))
		rc = zr_cli_error(a->store, "batch", -ENOMEM, NULL);
	else if ((rc = zr_stream_batch(st, a->start, a->step, a->cfg.rank,
				       a->cfg.world, b, src, idx)) < 0)
		rc = zr_cli_lib_error(a->store, "batch", rc);
	else
		rc = a->indices ? write_pairs(m, src, idx) :
		     write_records(m, src, idx);
	free(idx);
	free(src);
	zr_stream_free(st);
	return rc;
}

int zr_cli_batch_mix(const batch_args *a)
{
	mix m = { .a = a };
	char *buf = NULL, msg[256];
	size_t len = 0;
	int rc;

	if (a->form >= 0)
		return zr_cli_usage(&zr_cli_batch, "--form: a mixture's batch "
				    "is one .npy (or --indices)");
	if (a->granule)
		return zr_cli_usage(&zr_cli_batch, "--granule: a mixture's "
				    "sources cycle through all their records");
	rc = read_file(a->store, &buf, &len);
	if (rc != ZR_CLI_OK)
		return rc;
	rc = zr_mixfile_parse(buf, len, &m.file, msg, sizeof(msg));
	free(buf);
	if (rc < 0)
		return zr_cli_error(a->store, "batch", rc, msg);
	rc = open_sources(&m);
	if (rc == ZR_CLI_OK)
		rc = draw(&m);
	for (uint32_t i = 0; m.zs && i < m.file.k; i++)
		if (m.zs[i])
			rc = zr_cli_close(m.zs[i], m.file.path[i], "batch", rc);
	free(m.zs);
	free(m.len);
	free(m.ent);
	zr_mixfile_free(&m.file);
	return rc;
}
