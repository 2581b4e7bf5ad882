/*
 * mixopen.c - reads a mixture file and opens its sources (mixopen.h):
 * the resolver shared with the mount finds them, this opens their stores
 * read-only and lays them out in the grid a mount's mixture folder has.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>

#include "mixopen.h"
#include "mixsource.h"
#include "npy_mix.h"

int zr_cli_mix_read(const char *path, const char *cmd, zrcommon_mixfile *f)
{
	char msg[256];
	int rc = zrcommon_mixfile_read(path, f, msg, sizeof(msg));

	if (rc < 0) /* msg only repeats a system error */
		return zr_cli_error(path, cmd, rc, rc == -EINVAL ||
				    rc == -EFBIG || rc == -ELOOP ? msg : NULL);
	return ZR_CLI_OK;
}

/* Opens source s's stores (their paths and names in at, whose names s
 * takes). */
static int open_source(zr_cli_mixsrc *s, zrcommon_mixsource *at,
		       const char *cmd)
{
	int rc = ZR_CLI_OK;

	s->zs = calloc(at->nf, sizeof(*s->zs));
	if (!s->zs)
		return zr_cli_error(at->store[0], cmd, -ENOMEM, NULL);
	s->name = at->name;
	at->name = NULL;
	s->nf = at->nf;
	for (size_t f = 0; rc == ZR_CLI_OK && f < s->nf; f++)
		rc = zr_cli_open(at->store[f], ZR_OPEN_RDONLY, cmd, &s->zs[f]);
	return rc;
}

void zr_cli_mix_grid(const zr_cli_mixsrc *src, uint32_t k, uint32_t nf,
		     zrfile_source *grid)
{
	for (uint32_t s = 0; s < k; s++)
		for (uint32_t f = 0; f < nf; f++) {
			size_t g = f < src[s].nf ? f : src[s].nf - 1;

			grid[(size_t)f * k + s] = (zrfile_source){
				.zs = src[s].zs[g], .name = src[s].name[g] };
		}
}

/* Each opened source's records into have: its shortest field's in the
 * grid of source 0's fields. */
static int lengths_of(const char *path, const zr_cli_mixsrc *src,
		      uint32_t k, const char *cmd, uint64_t *have)
{
	uint32_t nf = (uint32_t)src[0].nf;
	zrfile_source *grid = calloc((size_t)k * nf, sizeof(*grid));

	if (!grid)
		return zr_cli_error(path, cmd, -ENOMEM, NULL);
	zr_cli_mix_grid(src, k, nf, grid);
	for (uint32_t s = 0; s < k; s++)
		have[s] = zrfile_mix_source_length(grid, k, nf, s);
	free(grid);
	return ZR_CLI_OK;
}

int zr_cli_mix_open(const char *path, const zrcommon_mixfile *f,
		    const char *cmd,
		    zr_cli_mixsrc **out, uint64_t *have, char *fields,
		    size_t cap)
{
	zrcommon_mixsource *at;
	char why[PATH_MAX + 128];
	int rc = zrcommon_mix_sources(path, f, &at, why, sizeof(why));

	*out = NULL;
	if (rc < 0)
		return zr_cli_error(path, cmd, rc, why);
	if (!zrcommon_mix_same_fields(at, f->k, fields, cap) && cap)
		fields[0] = 0;
	*out = calloc(f->k, sizeof(**out));
	rc = *out ? ZR_CLI_OK : zr_cli_error(path, cmd, -ENOMEM, NULL);
	for (uint32_t i = 0; rc == ZR_CLI_OK && i < f->k; i++)
		rc = open_source(&(*out)[i], &at[i], cmd);
	zrcommon_mix_sources_free(at, f->k);
	if (rc == ZR_CLI_OK)
		rc = lengths_of(path, *out, f->k, cmd, have);
	return rc;
}

int zr_cli_mix_close(zr_cli_mixsrc *src, const zrcommon_mixfile *f,
		     const char *cmd, int rc)
{
	for (uint32_t i = 0; src && i < f->k; i++) {
		zr_cli_mixsrc *s = &src[i];

		for (size_t n = 0; n < s->nf; n++) {
			if (s->zs && s->zs[n])
				rc = zr_cli_close(s->zs[n], f->path[i], cmd,
						  rc);
			free(s->name ? s->name[n] : NULL);
		}
		free(s->zs);
		free(s->name);
	}
	free(src);
	return rc;
}
