/*
 * create.c - `zrecord create`: a new empty store from a dtype, a dense
 * item shape or --ragged, a codec and (for zstd_dict) a dictionary file.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* A dictionary larger than the biggest tier is not one we trained. */
#define DICT_FILE_MAX (64u << 20)

typedef struct create_args {
	const char *store, *dtype, *shape, *codec, *dict;
	int ragged;
} create_args;

/* "3,224,224" -> dims; "" -> a scalar record (ndim 0). */
static int parse_shape(const char *text, zr_schema *sc)
{
	char *copy = strdup(text), *tok, *save = NULL;
	int rc = 0;

	if (!copy)
		return -ENOMEM;
	sc->ndim = 0;
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (sc->ndim == ZR_MAX_NDIM) {
			rc = -E2BIG;
			break;
		}
		rc = zr_cli_parse_u64(tok, &sc->shape[sc->ndim]);
		if (rc < 0 || sc->shape[sc->ndim] == 0) {
			rc = -EINVAL;
			break;
		}
		sc->ndim++;
	}
	/* strtok_r skips empty fields, so check the separators by hand. */
	if (rc == 0 && *text && (text[0] == ',' || strstr(text, ",,") ||
				 text[strlen(text) - 1] == ','))
		rc = -EINVAL;
	free(copy);
	return rc;
}

static int parse_args(int argc, char **argv, create_args *a)
{
	static const struct option opts[] = {
		{ "dtype", required_argument, NULL, 'd' },
		{ "shape", required_argument, NULL, 's' },
		{ "ragged", no_argument, NULL, 'r' },
		{ "codec", required_argument, NULL, 'c' },
		{ "dict", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const zr_cli_cmd *cmd = &zr_cli_create;
	int c;

	memset(a, 0, sizeof(*a));
	while ((c = zr_cli_getopt(cmd, argc, argv, "h", opts)) != -1) {
		switch (c) {
		case 'd': a->dtype = optarg; break;
		case 's': a->shape = optarg; break;
		case 'r': a->ragged = 1; break;
		case 'c': a->codec = optarg; break;
		case 'D': a->dict = optarg; break;
		default: return zr_cli_getopt_exit(c);
		}
	}
	if (optind + 1 != argc)
		return zr_cli_usage(cmd, "expected exactly one STORE");
	a->store = argv[optind];
	if (!a->dtype)
		return zr_cli_usage(cmd, "--dtype is required");
	if (!!a->shape + a->ragged != 1)
		return zr_cli_usage(cmd, "give exactly one of --shape and "
				    "--ragged");
	return -1;
}

/* Fills the schema and codec, reporting bad values as usage errors. */
static int build_schema(const create_args *a, zr_schema *sc,
			zr_codec *codec)
{
	const zr_cli_cmd *cmd = &zr_cli_create;

	memset(sc, 0, sizeof(*sc));
	if (zr_dtype_parse(a->dtype, &sc->dtype) < 0)
		return zr_cli_usage(cmd, "unsupported dtype '%s'", a->dtype);
	sc->ragged = a->ragged;
	if (a->shape && parse_shape(a->shape, sc) < 0)
		return zr_cli_usage(cmd, "bad --shape '%s': want positive "
				    "dimensions like 3,224,224 (or nothing "
				    "for scalars)", a->shape);
	*codec = ZR_CODEC_RAW;
	if (a->codec && zr_codec_parse(a->codec, codec) < 0)
		return zr_cli_usage(cmd, "unknown codec '%s'", a->codec);
	if ((*codec == ZR_CODEC_ZSTD_DICT) != !!a->dict)
		return zr_cli_usage(cmd, "--dict FILE goes with (and only "
				    "with) --codec zstd_dict");
	return -1;
}

static int run(int argc, char **argv)
{
	create_args a;
	zr_schema sc;
	zr_codec codec;
	zr_store *s = NULL;
	void *dict = NULL;
	size_t dict_len = 0;
	int rc;

	rc = parse_args(argc, argv, &a);
	if (rc >= 0)
		return rc;
	rc = build_schema(&a, &sc, &codec);
	if (rc >= 0)
		return rc;
	if (a.dict) {
		rc = zr_cli_read_file(a.dict, DICT_FILE_MAX, &dict, &dict_len);
		if (rc < 0)
			return zr_cli_error(a.store, "create", rc, a.dict);
	}
	rc = zr_store_create(a.store, &sc, codec, dict, dict_len, &s);
	free(dict);
	if (rc < 0)
		return zr_cli_lib_error(a.store, "create", rc);
	zr_cli_warn_lock(s);
	return zr_cli_close(s, a.store, "create", ZR_CLI_OK);
}

const zr_cli_cmd zr_cli_create = {
	.name = "create",
	.run = run,
	.synopsis = "STORE --dtype DTYPE\n"
		    "           (--shape D0,D1,... | --shape= | --ragged)\n"
		    "           [--codec raw|zstd|zstd_dict] [--dict FILE]",
	.help =
	"Creates a new, empty store at STORE (which must not exist).\n\n"
	"  --dtype DTYPE    element type: a NumPy dtype.str (<f4, |u1, >i8)\n"
	"                   or a name (float32, uint8, bool, complex64)\n"
	"  --shape D0,D1..  dense store: every record has this shape\n"
	"  --shape=         dense store of scalar records\n"
	"  --ragged         every record is an array of its own shape\n"
	"  --codec CODEC    raw (default), zstd, or zstd_dict\n"
	"  --dict FILE      the dictionary for zstd_dict (see train-dict)\n",
};
