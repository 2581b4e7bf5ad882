/*
 * batch.c - `zrecord batch`: the sampler's batch for (seed, step) of a run
 * that began at position start, as NumPy data: the bytes of the zrecordfs
 * batch file of the same batch, and the records the Python binding draws.
 * A mixture file goes to batchmix.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "batch_stream.h"
#include "npy_file.h"

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

/* "A:B" (n == 2) or "A:B:C" (n == 3) into v. */
static int numbers(const char *opt, const char *val, int n, uint64_t *v)
{
	char buf[96], *save = NULL, *tok;
	int i = 0;

	if (strlen(val) >= sizeof(buf))
		goto bad;
	strcpy(buf, val);
	for (tok = strtok_r(buf, ":", &save); tok && i < n;
	     tok = strtok_r(NULL, ":", &save))
		if (zr_cli_parse_u64(tok, &v[i++]) < 0)
			goto bad;
	if (i == n && !tok)
		return -1;
bad:
	return zr_cli_usage(&zr_cli_batch, "bad %s '%s': want %s", opt, val,
			    n == 2 ? "FROM:UNTIL" : "POSITION:LENGTH or "
			    "POSITION:SOURCE:LENGTH");
}

static int entry(batch_args *a, int kind, const char *val)
{
	zr_cli_entry *e = &a->ent[a->nent];
	uint64_t v[3];
	int rc;

	if (a->nent == ZR_CLI_MAX_ENTRIES)
		return zr_cli_usage(&zr_cli_batch, "more than %d --skip and "
				    "--grow", ZR_CLI_MAX_ENTRIES);
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	if (kind == ZR_CLI_SKIP) {
		rc = numbers("--skip", val, 2, v);
		e->at = v[0];
		e->until = v[1];
	} else if (strchr(val, ':') != strrchr(val, ':')) {
		rc = numbers("--grow", val, 3, v);
		e->at = v[0];
		e->source = v[1];
		e->length = v[2];
	} else {
		rc = numbers("--grow", val, 2, v);
		e->at = v[0];
		e->length = v[1];
	}
	a->nent += rc < 0;
	return rc;
}

/* --length N[,N...] */
static int lengths(batch_args *a, const char *val)
{
	char buf[16384], *save = NULL, *tok;

	if (strlen(val) >= sizeof(buf))
		return zr_cli_usage(&zr_cli_batch, "--length: too long");
	strcpy(buf, val);
	a->nlen = 0;
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save))
		if (a->nlen == ZR_CLI_MAX_LENGTHS ||
		    zr_cli_parse_u64(tok, &a->len[a->nlen++]) < 0)
			return zr_cli_usage(&zr_cli_batch, "bad --length '%s': "
					    "want N or N,N,... (one per "
					    "source)", val);
	return -1;
}

int zr_cli_batch_length(const batch_args *a, size_t k, size_t sources,
			uint64_t n, uint64_t *out)
{
	if (!a->nlen) {
		*out = n;
		return ZR_CLI_OK;
	}
	if (a->nlen != sources)
		return zr_cli_usage(&zr_cli_batch, "--length gives %zu lengths, "
				    "want one per source (%zu)", a->nlen,
				    sources);
	if (a->len[k] > n) {
		fprintf(stderr, "zrecord: %s: batch: --length %llu of source "
			"%zu is above its %llu records\n", a->store,
			(unsigned long long)a->len[k], k,
			(unsigned long long)n);
		return ZR_CLI_FAIL;
	}
	*out = a->len[k];
	return ZR_CLI_OK;
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
		rc = number("--start", optarg, 0, &a->start);
		break;
	case 'G':
		rc = number("--granule", optarg, 0, &a->granule);
		if (rc < 0 && !a->granule)
			rc = zr_cli_usage(&zr_cli_batch, "--granule must be "
					  "at least 1");
		break;
	case 'L':
		rc = lengths(a, optarg);
		break;
	case 'S':
		rc = entry(a, ZR_CLI_SKIP, optarg);
		break;
	case 'g':
		rc = entry(a, ZR_CLI_GROW, optarg);
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
		{ "start", required_argument, NULL, 'P' },
		{ "granule", required_argument, NULL, 'G' },
		{ "length", required_argument, NULL, 'L' },
		{ "skip", required_argument, NULL, 'S' },
		{ "grow", required_argument, NULL, 'g' },
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
				    "expected exactly one STORE or MIX");
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

typedef struct ordered {
	const zr_cli_entry *e;
	size_t i;
} ordered;

static int cmp_entry(const void *x, const void *y)
{
	const ordered *a = x, *b = y;

	if (a->e->at != b->e->at)
		return a->e->at < b->e->at ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i; /* stable: as given */
}

static int apply(zr_stream *st, const zr_cli_entry *e)
{
	if (e->kind == ZR_CLI_SKIP)
		return zr_stream_skip(st, e->at, e->until);
	if (e->kind == ZR_CLI_WEIGHTS)
		return zr_stream_weights(st, e->at, e->w);
	if (e->source > UINT32_MAX)
		return zr_stream_grow(st, e->at, UINT32_MAX, e->length);
	return zr_stream_grow(st, e->at, (uint32_t)e->source, e->length);
}

int zr_cli_batch_schedule(const batch_args *a, const zr_cli_entry *extra,
			  size_t nextra, zr_stream *st)
{
	size_t n = a->nent + nextra;
	ordered *all = malloc((n ? n : 1) * sizeof(*all));
	int rc = 0;

	if (!all)
		return zr_cli_error(a->store, "batch", -ENOMEM, NULL);
	for (size_t i = 0; i < n; i++) {
		all[i].e = i < nextra ? &extra[i] : &a->ent[i - nextra];
		all[i].i = i;
	}
	qsort(all, n, sizeof(*all), cmp_entry);
	for (size_t i = 0; i < n && !rc; i++)
		rc = apply(st, all[i].e);
	free(all);
	return rc < 0 ? zr_cli_lib_error(a->store, "batch", rc) : ZR_CLI_OK;
}

/* The store's stream: granule --granule, else world * batch size, built
 * and checked as a mount's batch files are (batch_stream.h). */
static int plain_stream(const batch_args *a, uint64_t length, zr_stream **st)
{
	zr_sampler cfg = a->cfg;
	int rc;

	cfg.length = length;
	rc = zrcommon_batch_stream(&cfg, a->granule, st);
	if (rc < 0)
		return zr_cli_lib_error(a->store, "batch", rc);
	rc = zr_cli_batch_schedule(a, NULL, 0, *st);
	if (rc != ZR_CLI_OK)
		zr_stream_free(*st);
	return rc;
}

static int draw(const batch_args *a, zr_store *s)
{
	uint64_t *idx = NULL, b = a->cfg.batch_size, n;
	zr_stream *st;
	int rc, form = form_of(a, s);

	if (form < 0)
		return zr_cli_usage(&zr_cli_batch, "--form: '%s' is a dense "
				    "store (its batch is one .npy)", a->store);
	rc = zr_cli_batch_length(a, 0, 1, zr_store_length(s), &n);
	if (rc == ZR_CLI_OK)
		rc = plain_stream(a, n, &st);
	if (rc != ZR_CLI_OK)
		return rc;
	if (b > SIZE_MAX / sizeof(*idx))
		rc = zr_cli_error(a->store, "batch", ZR_E_TOOBIG, NULL);
	else if (!(idx = malloc(b * sizeof(*idx))))
		rc = zr_cli_error(a->store, "batch", -ENOMEM, NULL);
	else if ((rc = zr_stream_batch(st, a->start, a->step, a->cfg.rank,
				       a->cfg.world, b, NULL, idx)) < 0)
		rc = zr_cli_lib_error(a->store, "batch", rc);
	else
		rc = zr_cli_write_records(s, form, idx, b, a->out, a->store,
					  "batch");
	free(idx);
	zr_stream_free(st);
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
	if (rc >= 0)
		return rc;
	if (is_mix(a.store))
		return zr_cli_batch_mix(&a);
	rc = zr_cli_open(a.store, ZR_OPEN_RDONLY, "batch", &s);
	if (rc != ZR_CLI_OK)
		return rc;
	rc = draw(&a, s);
	return zr_cli_close(s, a.store, "batch", rc);
}

const zr_cli_cmd zr_cli_batch = {
	.name = "batch",
	.run = run,
	.synopsis = "STORE|MIX.mix.json --seed S --step T [--start P]\n"
		    "           [--mode sequential|iid|cyclic] "
		    "[--batch-size B]\n"
		    "           [--rank R --world W] [--granule G] "
		    "[--length N[,N...]]\n"
		    "           [--skip A:B]... [--grow P[:K]:N]...\n"
		    "           [--indices | --form F] [-o OUT]",
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
	"  --start P         the run's first position (default 0)\n"
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
	"  -o, --output OUT  write to the file OUT (\"-\": stdout)\n",
};
