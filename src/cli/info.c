/*
 * info.c - `zrecord stats` and `zrecord schema`: read-only JSON reports on
 * stdout, one object per line so scripts can parse them (a mixture's
 * stats, a few lines: mixstats.c).
 */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "mixopen.h"
#include "mixsource.h"
#include "statsjson.h"

/* schema's front: STORE alone, opened read-only.
 * Returns ZR_CLI_OK with *s NULL after --help. */
static int open_only_store(const zr_cli_cmd *cmd, int argc, char **argv,
			   zr_store **s)
{
	int rc = zr_cli_store_args(cmd, argc, argv, 0);

	if (rc >= 0)
		return rc;
	return zr_cli_open(argv[optind], ZR_OPEN_RDONLY, cmd->name, s);
}

/* Prints the report the mount's stats file holds (statsjson.h). */
static int print_stats(const char *path, zr_store *s)
{
	zr_stats st;
	char *json;
	size_t len;
	int rc = zr_store_stats(s, &st);

	if (!rc)
		rc = zrcommon_stats_json(s, &st, &json, &len);
	if (rc < 0)
		return zr_cli_lib_error(path, "stats", rc);
	fwrite(json, 1, len, stdout);
	free(json);
	return ZR_CLI_OK;
}

static int stats(int argc, char **argv)
{
	zr_store *s = NULL;
	int rc = zr_cli_store_args(&zr_cli_stats, argc, argv, 0);

	if (rc >= 0)
		return rc;
	if (zrcommon_mix_named(argv[optind]))
		return zr_cli_mix_stats(argv[optind]);
	rc = zr_cli_open(argv[optind], ZR_OPEN_RDONLY, "stats", &s);
	if (rc != ZR_CLI_OK)
		return rc;
	rc = print_stats(argv[optind], s);
	return zr_cli_close(s, argv[optind], "stats", rc);
}

static int schema(int argc, char **argv)
{
	char json[ZR_SCHEMA_MAX * 2];
	zr_store *s = NULL;
	int rc;

	rc = open_only_store(&zr_cli_schema, argc, argv, &s);
	if (rc != ZR_CLI_OK || !s)
		return rc;
	rc = zr_schema_json(zr_store_schema(s), json, sizeof(json));
	if (rc < 0) {
		rc = zr_cli_lib_error(argv[optind], "schema", rc);
	} else {
		printf("%s\n", json);
		rc = ZR_CLI_OK;
	}
	return zr_cli_close(s, argv[optind], "schema", rc);
}

const zr_cli_cmd zr_cli_stats = {
	.name = "stats",
	.run = stats,
	.synopsis = "STORE | MIX.mix.json",
	.help =
	"Prints one JSON object on one line, keys in this order: records,\n"
	"live_bytes (stored bytes of live records), data_bytes (size of\n"
	"data.zr in use), reclaimable (what compact would free), codec,\n"
	"ragged (true or false), dtype, and item_shape for dense stores.  A\n"
	"zrecordfs mount's STORE/stats file holds the same bytes.\n"
	"\n"
	"For a mixture file, prints its report: mixture (the path as given),\n"
	"fields (a dataset's field names, or null), batch_files (\"records\n"
	"and indices\" or \"indices only\"), sources (each one's path,\n"
	"records, weight, share and positions_per_cycle) and schedule.  Run\n"
	"from a mount's SRC with the path as the mount names the file, it\n"
	"prints the bytes of the mount's NAME.mix/stats.\n",
};

const zr_cli_cmd zr_cli_schema = {
	.name = "schema",
	.run = schema,
	.synopsis = "STORE",
	.help = "Prints the store's schema as one JSON object.\n",
};
