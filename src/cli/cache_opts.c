/*
 * cache_opts.c - the host cache's options, which every command takes
 * (--cache DIR, --cache-size N; zr_cache_set in zrecord.h): offered by
 * zr_cli_getopt beside each command's own, applied once its options are
 * parsed, and the warning a command prints when the default cache it
 * fell back on could not be used.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "run_opts.h"

static const char *dir;
static uint64_t size;
static int given;

static const struct option common[] = {
	{ "cache", required_argument, NULL, ZR_CLI_OPT_CACHE },
	{ "cache-size", required_argument, NULL, ZR_CLI_OPT_CACHE_SIZE },
};
#define NCOMMON (sizeof(common) / sizeof(*common))

const struct option *zr_cli_common_opts(const struct option *longopts)
{
	/* Every command's table is short; a longer one goes without. */
	static struct option all[48];
	size_t n = 0;

	while (longopts[n].name)
		n++;
	if (n + NCOMMON + 1 > sizeof(all) / sizeof(*all))
		return longopts;
	memcpy(all, longopts, n * sizeof(*all));
	memcpy(all + n, common, sizeof(common));
	memset(&all[n + NCOMMON], 0, sizeof(*all));
	return all;
}

int zr_cli_cache_opt(int c, const char *arg)
{
	given = 1;
	if (c == ZR_CLI_OPT_CACHE) {
		dir = arg;
		return 0;
	}
	return zrtree_run_size(arg, ZR_CACHE_SIZE_MIN, &size) ? -EINVAL : 0;
}

int zr_cli_cache_apply(const zr_cli_cmd *cmd)
{
	if (!given)
		return 0;
	given = 0;
	if (zr_cache_set(dir, size) == 0)
		return 0;
	fprintf(stderr, "zrecord: %s: %s\n", cmd->name, zr_errmsg());
	return -3;
}

void zr_cli_cache_warn(void)
{
	zr_cache_info info;

	if (zr_cache_status(&info) == 0 && info.why_off[0])
		fprintf(stderr, "zrecord: warning: S3 reads were not cached: "
			"%s\n", info.why_off);
}
