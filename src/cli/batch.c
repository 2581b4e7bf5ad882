/*
 * batch.c - `zrecord batch`: the sampler's batch for (seed, step) of a run
 * that began at position start, as NumPy data: the bytes of the zrecordfs
 * batch file of the same batch, and the records the Python binding draws.
 * The batch is planned by the mount's planner (src/files/batch_file.h),
 * so the two agree by construction.  A mixture file goes to batchmix.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batchmix.h"
#include "form_table.h"

#define DEFAULT_BATCH 256
#define MIX_SUFFIX ".mix.json"

/* Numeric option values: u64, or u32 when narrow is set. */
static int number(const char *opt, const char *val, int narrow,
		  uint64_t *out)
{
	if (zr_cli_parse_u64(val, out) < 0 || (narrow && *out > UINT32_MAX))
		return zr_cli_usage(&zr_cli_batch, "bad %s '%s': want a "
				    "decimal number", opt, val);
	return -1;
}

/* --skip, --grow (kind) and --length (kind -1) into a's schedule. */
static int schedule(batch_args *a, int kind, const char *val)
{
	char msg[160];
	int bad = kind < 0 ? zrcommon_schedule_lengths(&a->sched, val, ',',
						       msg, sizeof(msg))
			   : zrcommon_schedule_add(&a->sched, kind, val, msg,
						   sizeof(msg));

	if (bad)
		return zr_cli_usage(&zr_cli_batch, "bad %s %s", kind < 0 ?
				    "--length" : kind == ZRCOMMON_SKIP ?
				    "--skip" : "--grow", msg);
	return -1;
}

/* --form NAME: a form's name in the table of forms (form_table.h). */
static int form_option(batch_args *a, const char *name)
{
	char names[256];

	a->form = zrfile_form_named(name);
	if (a->form >= 0)
		return -1;
	zrfile_form_names(names, sizeof(names));
	return zr_cli_usage(&zr_cli_batch, "unknown form '%s': want one of "
			    "%s", name, names);
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
	case 'P':
		if (zrcommon_schedule_start(optarg, &a->start, &a->at_granule))
			rc = zr_cli_usage(&zr_cli_batch, "bad --start '%s': want "
					  "P or P@G (decimals, G at least 1)",
					  optarg);
		break;
	case 'G':
		rc = number("--granule", optarg, 0, &a->granule);
		if (rc < 0 && !a->granule)
			rc = zr_cli_usage(&zr_cli_batch, "--granule must be "
					  "at least 1");
		break;
	case 'L':
		rc = schedule(a, -1, optarg);
		break;
	case 'S':
		rc = schedule(a, ZRCOMMON_SKIP, optarg);
		break;
	case 'g':
		rc = schedule(a, ZRCOMMON_GROW, optarg);
		break;
	case 'o':
		a->out = optarg;
		break;
	case 'd':
		a->images = 1;
		a->decode = optarg;
		break;
	case 'A':
		a->images = 1;
		a->augment = optarg;
		break;
	case 'f':
		rc = form_option(a, optarg);
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
		{ "start", required_argument, NULL, 'P' },
		{ "granule", required_argument, NULL, 'G' },
		{ "length", required_argument, NULL, 'L' },
		{ "skip", required_argument, NULL, 'S' },
		{ "grow", required_argument, NULL, 'g' },
		{ "output", required_argument, NULL, 'o' },
		{ "form", required_argument, NULL, 'f' },
		{ "decode", optional_argument, NULL, 'd' },
		{ "augment", required_argument, NULL, 'A' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c, rc;

	memset(a, 0, sizeof(*a));
	a->cmd = &zr_cli_batch;
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
				    "expected exactly one STORE or MIX");
	a->store = argv[optind];
	if (!a->have_seed || !a->have_step)
		return zr_cli_usage(&zr_cli_batch, "--seed and --step are "
				    "required");
	if (a->form >= 0 && a->indices)
		return zr_cli_usage(&zr_cli_batch, "--form and --indices "
				    "exclude each other");
	if (a->images && (a->form >= 0 || a->indices))
		return zr_cli_usage(&zr_cli_batch, "--decode/--augment give "
				    "the decoded images: no --form or "
				    "--indices with them");
	if (a->at_granule && a->granule && a->at_granule != a->granule)
		return zr_cli_usage(&zr_cli_batch, "--start's granule %llu and "
				    "--granule %llu differ",
				    (unsigned long long)a->at_granule,
				    (unsigned long long)a->granule);
	if (a->at_granule)
		a->granule = a->at_granule;
	return -1;
}

/* The file's form: --indices, the decoded images, --form (ragged stores
 * only) or the store's default. */
static int form_of(const batch_args *a, zr_store *s)
{
	if (a->indices || a->images)
		return a->images ? ZRFILE_IMAGES : ZRFILE_INDICES;
	if (a->form < 0)
		return zr_cli_several_form(s);
	if (!zr_store_schema(s)->ragged)
		return -1;
	return a->form;
}

/* The batch's records decoded (spec's form ZRFILE_IMAGES, form_image.c):
 * the planner's file a mount serves as batch/SEED-STEP.npy under -o
 * decode=, augment=, written piece by piece.  Frees b. */
static int decoded(const batch_args *a, zr_store *s,
		   const struct zrfile_batch_spec *spec, struct zrfile_batch *b)
{
	struct zrfile_batch_spec sp = *spec;
	zr_image_opts io;
	int rc = zr_cli_image_check(s, a->store, "batch");

	if (rc == ZR_CLI_OK)
		rc = zr_cli_image_opts(&zr_cli_batch, a->decode, a->augment,
				       &io);
	if (rc < 0)
		rc = zr_cli_image_sized(&io, a->store, "batch");
	if (rc != ZR_CLI_OK) {
		zrfile_batch_free(b);
		return rc;
	}
	sp.images = &io;
	return zr_cli_batch_write(a, &sp, b);
}

/* The store's batch, planned as a mount plans its batch files
 * (batch_file.h) through one read view. */
static int draw(const batch_args *a, zr_store *s)
{
	struct zrfile_batch_spec spec;
	struct zrfile_batch b;
	zrfile_source *src;
	zr_view *v;
	uint64_t n;
	int rc, err, form = form_of(a, s);

	if (form < 0)
		return zr_cli_usage(&zr_cli_batch, "--form: '%s' is a dense "
				    "store (its batch is one .npy)", a->store);
	rc = zr_cli_batch_length(a, 0, 1, zr_store_length(s), &n);
	if (rc != ZR_CLI_OK)
		return rc;
	if (!n) { /* the planner's ENOENT (not yet) is the mount's answer */
		zr_sampler empty = a->cfg;

		empty.length = 0;
		err = zr_sampler_check(&empty);
		return zr_cli_lib_error(a->store, "batch", err ? err : -ENOENT);
	}
	src = zrfile_batch_sources(&b, 0, 1);
	err = src ? zr_view_begin(s, ZR_VIEW_WAIT, &v) : -ENOMEM;
	if (err) {
		zrfile_batch_free(&b);
		return zr_cli_lib_error(a->store, "batch", err);
	}
	*src = (zrfile_source){ .zs = s, .view = v };
	zr_cli_batch_spec(a, form, NULL, &spec);
	if (a->images) /* frees b, src with it */
		rc = decoded(a, s, &spec, &b);
	else
		rc = zr_cli_batch_write(a, &spec, &b);
	zr_view_end(v);
	return rc;
}

static int is_mix(const char *path)
{
	size_t n = strlen(path), k = strlen(MIX_SUFFIX);

	return n > k && !strcmp(path + n - k, MIX_SUFFIX);
}

static int run(int argc, char **argv)
{
	batch_args a;
	zr_store *s;
	int rc;

	rc = parse_args(argc, argv, &a);
	if (rc >= 0) {
		zrcommon_schedule_free(&a.sched);
		return rc;
	}
	if (is_mix(a.store) && a.images) {
		rc = zr_cli_usage(&zr_cli_batch, "--decode/--augment take a "
				  "store, not a mixture");
	} else if (is_mix(a.store)) {
		rc = zr_cli_batch_mix(&a);
	} else if ((rc = zr_cli_open(a.store, ZR_OPEN_RDONLY, "batch", &s)) ==
		   ZR_CLI_OK) {
		rc = draw(&a, s);
		rc = zr_cli_close(s, a.store, "batch", rc);
	}
	zrcommon_schedule_free(&a.sched);
	return rc;
}

const zr_cli_cmd zr_cli_batch = {
	.name = "batch",
	.run = run,
	.synopsis = "STORE|MIX.mix.json --seed S --step T [--start P[@G]]\n"
		    "           [--mode sequential|iid|cyclic] "
		    "[--batch-size B]\n"
		    "           [--rank R --world W] [--granule G] "
		    "[--length N[,N...]]\n"
		    "           [--skip A:B]... [--grow P[:K]:N]...\n"
		    "           [--indices | --form F |\n"
		    "            --decode[=SIZE] [--augment A]] [-o OUT]",
	.help =
	"Writes the batch the sampler draws for (seed, step): a dense store\n"
	"gives one .npy of shape (B, *item_shape), a ragged store an .npz\n"
	"(arr_0.npy ... in batch order).  Output goes to OUT (default stdout,\n"
	"never a terminal).  The same arguments always give the same bytes,\n"
	"those of a zrecordfs mount's STORE/batch/MODE/B/SEED-STEP.npy (.npz,\n"
	".indices.npy) for a mount of the same rank and world.\n\n"
	"A run reads the global sample stream from position P (samples\n"
	"consumed before it): step T of rank R reads positions\n"
	"P + T*W*B + R*B ... + B - 1 (zrecord(1), \"Positions\").  A MIX file\n"
	"(NAME.mix.json: {\"sources\": [{\"path\": PATH, \"weight\": N}, ...]})\n"
	"draws its sources (stores, or dataset folders of the same fields) in\n"
	"their weights' shares, as a store's or a dataset's batch.\n\n"
	"  --seed S          sampler seed (required; unused by sequential)\n"
	"  --step T          step number (required)\n"
	"  --start P[@G]     the run's first position (default 0); P@G: of a\n"
	"                    stream of granule G (cyclic, iid: needed past 0)\n"
	"  --granule G       cycle multiple of the stream (default W*B; keep\n"
	"                    the first run's W*B when W or B change)\n"
	"  --length N        the stream's length at position 0 (default: the\n"
	"                    store's; a MIX: one per source, N,N,...)\n"
	"  --skip A:B        positions A..B-1 are not served (repeatable)\n"
	"  --grow P:N        the store has N records from the first cycle\n"
	"                    boundary at or after position P (P:K:N: source K\n"
	"                    of a MIX; repeatable)\n"
	"  --mode MODE       sequential, iid (default; with replacement) or\n"
	"                    cyclic (a fresh permutation per cycle)\n"
	"  --batch-size B    records per rank per step (default 256)\n"
	"  --rank R          this rank (default 0)\n"
	"  --world W         number of ranks (default 1)\n"
	"  --indices         write the batch's record indices as an int64\n"
	"                    .npy of shape (B,) instead of the records (a MIX:\n"
	"                    (B, 2), source number and record index)\n"
	"  --form F          a ragged store's batch as npz (default: one\n"
	"                    member per record), packed (data, offsets,\n"
	"                    shapes) or padded (data, lengths): the mount's\n"
	"                    SEED-STEP.npz, .packed.npz, .padded.npz; or one\n"
	"                    member of those as a .npy of its own: packed.npy,\n"
	"                    offsets.npy, shapes.npy, padded.npy, lengths.npy\n"
	"  --decode[=SIZE]   an encoded-image store's batch decoded: a uint8\n"
	"                    .npy of (B, SIZE, SIZE, 3), RGB, shorter side\n"
	"                    to SIZE and centre-cropped\n"
	"  --augment A       the training transform instead: A is\n"
	"                    rrc[:SMIN:SMAX] and/or flip, comma-separated\n"
	"                    (SIZE 224 unless --decode=SIZE says); the k-th\n"
	"                    record's crop and flip are drawn from (S, its\n"
	"                    position P + T*W*B + R*B + k), zrecord.h\n"
	"  -o, --output OUT  write to the file OUT (\"-\": stdout)\n",
};
