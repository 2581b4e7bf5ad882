/*
 * info.c - `zrecord stats` and `zrecord schema`: read-only JSON reports on
 * stdout, one object per line so scripts can parse them.
 */
#include <inttypes.h>
#include <stdio.h>

#include "cli.h"

/* The shared front of both commands: STORE alone, opened read-only.
 * Returns ZR_CLI_OK with *s NULL after --help. */
static int open_only_store(const zr_cli_cmd *cmd, int argc, char **argv,
			   zr_store **s)
{
	int rc = zr_cli_store_args(cmd, argc, argv, 0);

	if (rc >= 0)
		return rc;
	return zr_cli_open(argv[optind], ZR_OPEN_RDONLY, cmd->name, s);
}

static void print_shape(const zr_schema *sc)
{
	uint32_t i;

	if (sc->ragged) {
		printf("\"ragged\": true");
		return;
	}
	printf("\"item_shape\": [");
	for (i = 0; i < sc->ndim; i++)
		printf("%s%" PRIu64, i ? ", " : "", sc->shape[i]);
	printf("]");
}

static int stats(int argc, char **argv)
{
	const zr_schema *sc;
	zr_stats st;
	zr_store *s = NULL;
	int rc;

	rc = open_only_store(&zr_cli_stats, argc, argv, &s);
	if (rc != ZR_CLI_OK || !s)
		return rc;
	rc = zr_store_stats(s, &st);
	if (rc < 0) {
		rc = zr_cli_lib_error(argv[optind], "stats", rc);
		return zr_cli_close(s, argv[optind], "stats", rc);
	}
	sc = zr_store_schema(s);
	printf("{\"records\": %" PRIu64 ", \"live_bytes\": %" PRIu64
	       ", \"data_bytes\": %" PRIu64 ", \"reclaimable\": %" PRIu64
	       ", \"codec\": \"%s\", \"dtype\": \"%s\", ", st.records,
	       st.live_bytes, st.data_bytes, st.reclaimable,
	       zr_codec_name(zr_store_codec(s)), sc->dtype.str);
	print_shape(sc);
	printf("}\n");
	return zr_cli_close(s, argv[optind], "stats", ZR_CLI_OK);
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
	.synopsis = "STORE",
	.help =
	"Prints one JSON object: records, live_bytes (stored bytes of live\n"
	"records), data_bytes (size of data.zr in use), reclaimable (what\n"
	"compact would free), codec, dtype, and item_shape (dense) or\n"
	"\"ragged\": true.\n",
};

const zr_cli_cmd zr_cli_schema = {
	.name = "schema",
	.run = schema,
	.synopsis = "STORE",
	.help = "Prints the store's schema as one JSON object.\n",
};
