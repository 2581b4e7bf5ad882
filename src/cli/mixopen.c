/*
 * mixopen.c - reads a mixture file and opens its sources (mixopen.h):
 * the resolver shared with the mount finds them, this opens their stores
 * read-only.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>

#include "mixopen.h"
#include "mixsource.h"

int zr_cli_mix_read(const char *path, const char *cmd, zr_mixfile *f)
{
	char msg[256];
	int rc = zr_mixfile_read(path, f, msg, sizeof(msg));

	if (rc < 0) /* msg only repeats a system error */
		return zr_cli_error(path, cmd, rc, rc == -EINVAL ||
				    rc == -EFBIG ? msg : NULL);
	return ZR_CLI_OK;
}

/* Opens source s's stores (their paths and names in at, whose names s
 * takes) and its length: that of its shortest store among the first nf0
 * (source 0's count of fields), as a mount's grid holds a source's
 * fields (a source of fewer repeats its last, which the minimum already
 * counts; one of more is cut). */
static int open_source(zr_cli_mixsrc *s, zrcommon_mixsource *at,
		       size_t nf0, const char *cmd, uint64_t *n)
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
	for (size_t f = 0; rc == ZR_CLI_OK && f < s->nf && f < nf0; f++)
		if (!f || zr_store_length(s->zs[f]) < *n)
			*n = zr_store_length(s->zs[f]);
	return rc;
}

int zr_cli_mix_open(const char *path, const zr_mixfile *f, const char *cmd,
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
		rc = open_source(&(*out)[i], &at[i], at[0].nf, cmd, &have[i]);
	zrcommon_mix_sources_free(at, f->k);
	return rc;
}

int zr_cli_mix_close(zr_cli_mixsrc *src, const zr_mixfile *f,
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
