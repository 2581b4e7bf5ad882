/*
 * batch.c - `zrecord batch`: the sampler's batch for (seed, step) as NumPy
 * data: the bytes of the zrecordfs batch file of the same batch, and the
 * records the Python binding draws.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "npy_file.h"

#define DEFAULT_BATCH 256

typedef struct batch_args {
	const char *store, *out;
	zr_sampler cfg;
	uint64_t step;
	int have_seed, have_step, indices;
	int form; /* --form: an enum zrfile_npy_form, or -1 */
} batch_args;

/* Numeric option values: u64, or u32 when narrow is set. */
static int number(const char *opt, const char *val, int narrow,
		  uint64_t *out)
{
	if (zr_cli_parse_u64(val, out) < 0 || (narrow && *out > UINT32_MAX))
		return zr_cli_usage(&zr_cli_batch, "bad %s '%s': want a "
				    "decimal number", opt, val);
	return -1;
}

/* --form's names: npz, packed and padded for the .npz files, else a
 * mount's suffix (zrfile_npy_ragged_form); -1 for none. */
static int form_named(const char *name)
{
	if (!strcmp(name, "npz"))
		return ZRFILE_NPZ;
	if (!strcmp(name, "packed"))
		return ZRFILE_PACKED;
	if (!strcmp(name, "padded"))
		return ZRFILE_PADDED;
	return zrfile_npy_ragged_form(name, strlen(name));
}

static int option(batch_args *a, int c)
{
	uint64_t v;
	int rc = -1;

	switch (c) {
	case 's':
		rc = number("--seed", optarg, 0, &a->cfg.seed);
		a->have_seed = 1;
		break;
	case 't':
		rc = number("--step", optarg, 0, &a->step);
		a->have_step = 1;
		break;
	case 'm':
		if (zr_sampler_mode_parse(optarg, &a->cfg.mode) < 0)
			rc = zr_cli_usage(&zr_cli_batch, "unknown mode '%s'",
					  optarg);
		break;
	case 'b':
		rc = number("--batch-size", optarg, 0, &a->cfg.batch_size);
		break;
	case 'r':
		rc = number("--rank", optarg, 1, &v);
		a->cfg.rank = (uint32_t)v;
		break;
	case 'w':
		rc = number("--world", optarg, 1, &v);
		a->cfg.world = (uint32_t)v;
		break;
	case 'i':
		a->indices = 1;
		break;
	case 'o':
		a->out = optarg;
		break;
	case 'f':
		a->form = form_named(optarg);
		if (a->form < 0)
			rc = zr_cli_usage(&zr_cli_batch, "unknown form '%s': "
					  "want npz, packed, padded or a part: "
					  "packed.npy, offsets.npy, shapes.npy, "
					  "padded.npy, lengths.npy", optarg);
		break;
	default:
		rc = zr_cli_getopt_exit(c);
	}
	return rc;
}

static int parse_args(int argc, char **argv, batch_args *a)
{
	static const struct option opts[] = {
		{ "seed", required_argument, NULL, 's' },
		{ "step", required_argument, NULL, 't' },
		{ "mode", required_argument, NULL, 'm' },
		{ "batch-size", required_argument, NULL, 'b' },
		{ "rank", required_argument, NULL, 'r' },
		{ "world", required_argument, NULL, 'w' },
		{ "indices", no_argument, NULL, 'i' },
		{ "output", required_argument, NULL, 'o' },
		{ "form", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c, rc;

	memset(a, 0, sizeof(*a));
	a->cfg.mode = ZR_SAMPLER_IID;
	a->form = -1;
	a->cfg.batch_size = DEFAULT_BATCH;
	while ((c = zr_cli_getopt(&zr_cli_batch, argc, argv, "ho:", opts)) !=
	       -1) {
		rc = option(a, c);
		if (rc >= 0)
			return rc;
	}
	if (optind + 1 != argc)
		return zr_cli_usage(&zr_cli_batch,
				    "expected exactly one STORE");
	a->store = argv[optind];
	if (!a->have_seed || !a->have_step)
		return zr_cli_usage(&zr_cli_batch, "--seed and --step are "
				    "required");
	if (a->form >= 0 && a->indices)
		return zr_cli_usage(&zr_cli_batch, "--form and --indices "
				    "exclude each other");
	return -1;
}

/* The file's form: --indices, --form (ragged stores only) or the
 * store's default. */
static int form_of(const batch_args *a, zr_store *s)
{
	if (a->indices)
		return ZRFILE_INDICES;
	if (a->form < 0)
		return zr_cli_several_form(s);
	if (!zr_store_schema(s)->ragged)
		return -1;
	return a->form;
}

static int draw(const batch_args *a, zr_store *s)
{
	zr_sampler cfg = a->cfg;
	uint64_t *idx = NULL;
	int rc, form = form_of(a, s);

	if (form < 0)
		return zr_cli_usage(&zr_cli_batch, "--form: '%s' is a dense "
				    "store (its batch is one .npy)", a->store);
	cfg.length = zr_store_length(s);
	rc = zr_sampler_check(&cfg);
	if (rc < 0)
		return zr_cli_lib_error(a->store, "batch", rc);
	if (cfg.batch_size > SIZE_MAX / sizeof(*idx))
		return zr_cli_error(a->store, "batch", ZR_E_TOOBIG, NULL);
	idx = malloc(cfg.batch_size * sizeof(*idx));
	if (!idx)
		return zr_cli_error(a->store, "batch", -ENOMEM, NULL);
	rc = zr_sampler_batch(&cfg, a->step, idx);
	if (rc < 0)
		rc = zr_cli_lib_error(a->store, "batch", rc);
	else
		rc = zr_cli_write_records(s, form, idx, cfg.batch_size, a->out,
					  a->store, "batch");
	free(idx);
	return rc;
}

static int run(int argc, char **argv)
{
	batch_args a;
	zr_store *s;
	int rc;

	rc = parse_args(argc, argv, &a);
	if (rc >= 0)
		return rc;
	rc = zr_cli_open(a.store, ZR_OPEN_RDONLY, "batch", &s);
	if (rc != ZR_CLI_OK)
		return rc;
	rc = draw(&a, s);
	return zr_cli_close(s, a.store, "batch", rc);
}

const zr_cli_cmd zr_cli_batch = {
	.name = "batch",
	.run = run,
	.synopsis = "STORE --seed S --step T\n"
		    "           [--mode sequential|iid|cyclic] "
		    "[--batch-size B]\n"
		    "           [--rank R --world W] [--indices | --form F]"
		    " [-o OUT]",
	.help =
	"Writes the batch the sampler draws for (seed, step): a dense store\n"
	"gives one .npy of shape (B, *item_shape), a ragged store an .npz\n"
	"(arr_0.npy ... in batch order).  Output goes to OUT (default stdout,\n"
	"never a terminal).  The same arguments always give the same bytes,\n"
	"those of a zrecordfs mount's STORE/batch/MODE/B/SEED-STEP.npy (.npz,\n"
	".indices.npy) for a mount of the same rank and world.\n\n"
	"  --seed S          sampler seed (required; unused by sequential)\n"
	"  --step T          step number (required)\n"
	"  --mode MODE       sequential, iid (default; with replacement) or\n"
	"                    cyclic (a fresh permutation per cycle)\n"
	"  --batch-size B    records per rank per step (default 256)\n"
	"  --rank R          this rank (default 0)\n"
	"  --world W         number of ranks (default 1)\n"
	"  --indices         write the batch's record indices as an int64\n"
	"                    .npy of shape (B,) instead of the records\n"
	"  --form F          a ragged store's batch as npz (default: one\n"
	"                    member per record), packed (data, offsets,\n"
	"                    shapes) or padded (data, lengths): the mount's\n"
	"                    SEED-STEP.npz, .packed.npz, .padded.npz; or one\n"
	"                    member of those as a .npy of its own: packed.npy,\n"
	"                    offsets.npy, shapes.npy, padded.npy, lengths.npy\n"
	"  -o, --output OUT  write to the file OUT (\"-\": stdout)\n",
};
