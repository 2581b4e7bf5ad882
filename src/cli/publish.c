/*
 * publish.c - `zrecord push` and `zrecord pull`: a local store published
 * to S3 as a version readers see whole, and a store copied back from S3
 * (zr_store_push, zr_store_pull: the library does the work, so loaderx
 * and the command give the same guarantees).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static int push_args(int argc, char **argv, uint64_t *part_size)
{
	static const struct option opts[] = {
		{ "part-size", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const zr_cli_cmd *cmd = &zr_cli_push;
	int c;

	*part_size = 0;
	while ((c = zr_cli_getopt(cmd, argc, argv, "h", opts)) != -1) {
		if (c != 'p')
			return zr_cli_getopt_exit(c);
		if (zr_cli_parse_u64(optarg, part_size) ||
		    *part_size < ZR_PUSH_PART_MIN ||
		    *part_size > ZR_PUSH_PART_MAX)
			return zr_cli_usage(cmd, "bad --part-size '%s': bytes "
					    "from %u to %" PRIu64, optarg,
					    ZR_PUSH_PART_MIN,
					    (uint64_t)ZR_PUSH_PART_MAX);
	}
	if (optind + 2 != argc)
		return zr_cli_usage(cmd, "expected STORE and "
				    "s3://BUCKET/PREFIX/NAME");
	return -1;
}

static int push(int argc, char **argv)
{
	zr_transfer t;
	uint64_t part_size;
	int rc = push_args(argc, argv, &part_size), err;

	if (rc >= 0)
		return rc;
	err = zr_store_push(argv[optind], argv[optind + 1], part_size, &t);
	if (err)
		return zr_cli_lib_error(argv[optind], "push", err);
	printf("%s version %s: %" PRIu64 " bytes in %" PRIu64 " parts, %"
	       PRIu64 " parts (%" PRIu64 " bytes) uploaded\n",
	       t.published ? "published" : "up to date:", t.version, t.bytes,
	       t.parts, t.parts_sent, t.bytes_sent);
	return ZR_CLI_OK;
}

static int pull(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	zr_transfer t;
	int c = zr_cli_getopt(&zr_cli_pull, argc, argv, "h", opts), err;

	if (c != -1)
		return zr_cli_getopt_exit(c);
	if (optind + 2 != argc)
		return zr_cli_usage(&zr_cli_pull, "expected s3://BUCKET/PREFIX "
				    "and DEST");
	err = zr_store_pull(argv[optind], argv[optind + 1], &t);
	if (err)
		return zr_cli_lib_error(argv[optind], "pull", err);
	printf("pulled %" PRIu64 " files (%" PRIu64 " bytes) into %s\n",
	       t.files, t.bytes, argv[optind + 1]);
	return ZR_CLI_OK;
}

const zr_cli_cmd zr_cli_push = {
	.name = "push",
	.run = push,
	.synopsis = "STORE s3://BUCKET/PREFIX/NAME [--part-size BYTES]",
	.help =
	"Publishes the local STORE at s3://BUCKET/PREFIX/NAME: its files as\n"
	"part objects NAME/parts/SHA256 of at most --part-size bytes (default\n"
	"67108864, 64 MiB; from 4096 to 5 GiB), then NAME/manifest, written\n"
	"last, listing them.  Readers of s3://BUCKET/PREFIX/NAME see the\n"
	"version before or the new one, never a mix.  Parts already there\n"
	"are not uploaded again: a newer version of the same store uploads\n"
	"what changed (data.zr's new tail), and a push that was killed is\n"
	"completed by the next push with the same --part-size.  Old parts\n"
	"are never deleted (a reader of an older version keeps reading it).\n"
	"The store is opened read-only meanwhile (writers are busy).  Prints\n"
	"the version's id and what was uploaded.  Credentials and endpoint:\n"
	"AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_PROFILE,\n"
	"AWS_ENDPOINT_URL, AWS_REGION (zrecord(1), S3 STORES).\n",
};

const zr_cli_cmd zr_cli_pull = {
	.name = "pull",
	.run = pull,
	.synopsis = "s3://BUCKET/PREFIX DEST",
	.help =
	"Copies the store at s3://BUCKET/PREFIX (published by push, or its\n"
	"files uploaded as they are) into DEST, a new local store folder\n"
	"(DEST must not exist).  One published version, whole: the files go\n"
	"into DEST.pull-XXXXXX, which becomes DEST once it opens as a store;\n"
	"a failed pull leaves nothing at DEST.\n",
};
