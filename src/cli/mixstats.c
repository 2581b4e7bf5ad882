/*
 * mixstats.c - `zrecord stats MIX.mix.json`: a mixture's report
 * (statsjson.h), the bytes a mount's NAME.mix/stats holds when the file
 * is named as the mount names it (relative to SRC): the same sources
 * (mixsource.h), the same lengths and the same test for batch files of
 * records.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "mixopen.h"
#include "npy_mix.h"
#include "statsjson.h"

/* Whether sources of the same fields have one schema per field, as
 * batch files of records need (zrfile_mix_check): 1, 0, or -ENOMEM. */
static int one_schema(const zr_cli_mixsrc *src, uint32_t k)
{
	uint32_t nf = (uint32_t)src[0].nf;
	zrfile_source *grid, *st = zrfile_mix_alloc(k, nf, &grid);
	char msg[256];
	int ok;

	if (!st)
		return -ENOMEM;
	zr_cli_mix_grid(src, k, nf, grid);
	ok = !zrfile_mix_check(st, k, nf, msg, sizeof(msg));
	free(st);
	return ok;
}

static int print(const char *path, const zrcommon_mixfile *f,
		 const zr_cli_mixsrc *src, const uint64_t *have, int fields)
{
	int ok = fields ? one_schema(src, f->k) : 0, rc = ok < 0 ? ok : 0;
	zrcommon_mix_figures fig = {
		.path = path, .file = f, .records = have,
		.fields = src[0].name[0] ? (const char *const *)src[0].name
					 : NULL,
		.nf = (uint32_t)src[0].nf, .records_served = ok > 0 };
	char *json = NULL;
	size_t len;

	if (!rc)
		rc = zrcommon_mix_stats_json(&fig, &json, &len);
	if (rc < 0)
		return zr_cli_error(path, "stats", rc, NULL);
	fwrite(json, 1, len, stdout);
	free(json);
	return ZR_CLI_OK;
}

int zr_cli_mix_stats(const char *path)
{
	zrcommon_mixfile f;
	zr_cli_mixsrc *src = NULL;
	uint64_t *have = NULL;
	char fields[256];
	int rc = zr_cli_mix_read(path, "stats", &f);

	if (rc != ZR_CLI_OK)
		return rc;
	if (!(have = calloc(f.k, sizeof(*have))))
		rc = zr_cli_error(path, "stats", -ENOMEM, NULL);
	else
		rc = zr_cli_mix_open(path, &f, "stats", &src, have, fields,
				     sizeof(fields));
	if (rc == ZR_CLI_OK)
		rc = print(path, &f, src, have, !*fields);
	rc = zr_cli_mix_close(src, &f, "stats", rc);
	free(have);
	zrcommon_mixfile_free(&f);
	return rc;
}
