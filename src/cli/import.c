/*
 * import.c - `zrecord import SOURCE... DEST`: parses the options into the
 * import layer's config (src/import, zrimport.h), finds the SOURCEs'
 * format in the layer's table, refuses the options that format does not
 * take, and calls the layer, which writes the dataset folder.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "zrimport.h"

enum {
	O_TYPE = 0x200, O_ENCODED, O_RGB, O_CHW, O_RESIZE, O_CROP, O_CODEC,
	O_THREADS, O_SKIP, O_DROP, O_PROGRESS, O_NOPROGRESS, O_KEYS, O_DATASET,
	O_PERFILE
};

#define MAX_THREADS 256

typedef struct import_args {
	zr_imp_config cfg;
	const zr_imp_format *type; /* NULL until --type or the SOURCEs */
	char **srcs;
	int nsrcs;
} import_args;

/* "S" or "H,W": positive sizes up to 65535. */
static int parse_size(const char *s, uint32_t *h, uint32_t *w)
{
	char *copy = strdup(s), *comma;
	uint64_t a, b = 0;
	int rc = -EINVAL;

	if (!copy)
		return -ENOMEM;
	comma = strchr(copy, ',');
	if (comma)
		*comma++ = 0;
	if (zr_cli_parse_u64(copy, &a) == 0 && a && a <= 65535 &&
	    (!comma || (zr_cli_parse_u64(comma, &b) == 0 && b && b <= 65535))) {
		*h = (uint32_t)a;
		*w = (uint32_t)b;
		rc = 0;
	}
	free(copy);
	return rc;
}

static unsigned default_threads(void)
{
	cpu_set_t set;
	int n;

	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return 2;
	n = CPU_COUNT(&set);
	return n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : (unsigned)n;
}

/* --type NAME that names no format: the table's names are the choice. */
static int type_usage(const char *arg)
{
	const zr_imp_format *f;
	char names[256];
	size_t o = 0;
	unsigned i;

	names[0] = 0;
	for (i = 0; (f = zr_imp_format_at(i)) && o < sizeof(names); i++)
		o += (size_t)snprintf(names + o, sizeof(names) - o, "%s%s",
				      i ? zr_imp_format_at(i + 1) ? ", " :
				      " or " : "", f->name);
	return zr_cli_usage(&zr_cli_import, "--type '%s': give %s", arg,
			    names);
}

static int option(import_args *a, int c, const char *arg)
{
	const zr_cli_cmd *cmd = &zr_cli_import;
	zr_imp_config *cfg = &a->cfg;
	uint64_t n;
	char **names;

	switch (c) {
	case O_TYPE:
		a->type = zr_imp_format_named(arg);
		if (!a->type)
			return type_usage(arg);
		return -1;
	case O_ENCODED: cfg->img.encoded = 1; return -1;
	case O_RGB: cfg->img.rgb = 1; return -1;
	case O_CHW: cfg->img.chw = 1; return -1;
	case O_RESIZE:
		if (parse_size(arg, &cfg->img.resize_h, &cfg->img.resize_w))
			return zr_cli_usage(cmd, "--resize '%s': give S (the "
					    "shorter side) or H,W", arg);
		return -1;
	case O_CROP:
		if (parse_size(arg, &cfg->img.crop_h, &cfg->img.crop_w))
			return zr_cli_usage(cmd, "--center-crop '%s': give S "
					    "or H,W", arg);
		if (!cfg->img.crop_w)
			cfg->img.crop_w = cfg->img.crop_h;
		return -1;
	case O_CODEC:
		if (zr_codec_parse(arg, &cfg->codec) < 0 ||
		    cfg->codec == ZR_CODEC_ZSTD_DICT)
			return zr_cli_usage(cmd, "--codec '%s': give raw or "
					    "zstd (train-dict and compact "
					    "make a zstd_dict store later)",
					    arg);
		return -1;
	case O_THREADS:
		if (zr_cli_parse_u64(arg, &n) || n < 1 || n > MAX_THREADS)
			return zr_cli_usage(cmd, "--threads '%s': give 1 to %d",
					    arg, MAX_THREADS);
		cfg->threads = (unsigned)n;
		return -1;
	case O_SKIP: cfg->skip_bad = 1; return -1;
	case O_DROP: cfg->drop_incomplete = 1; return -1;
	case O_PROGRESS: cfg->progress = 1; return -1;
	case O_NOPROGRESS: cfg->progress = 0; return -1;
	case O_KEYS: cfg->keys = 1; return -1;
	case O_PERFILE: cfg->per_file = 1; return -1;
	case O_DATASET:
		names = realloc(cfg->names, (cfg->nnames + 1) * sizeof(*names));
		if (!names)
			return ZR_CLI_FAIL;
		cfg->names = names;
		cfg->names[cfg->nnames++] = (char *)arg;
		return -1;
	default:
		return zr_cli_getopt_exit(c);
	}
}

/* An option of another kind of source is a mistake, not a no-op. */
static int check_options(const import_args *a)
{
	static const struct {
		unsigned opt;
		const char *what;
	} only[] = {
		{ ZR_IMP_O_IMAGE, "the image options go" },
		{ ZR_IMP_O_DROP, "--drop-incomplete goes" },
		{ ZR_IMP_O_KEYS, "--keys goes" },
		{ ZR_IMP_O_DATASET, "--dataset goes" },
		{ ZR_IMP_O_PERFILE, "--per-file goes" },
	};
	const zr_imp_config *c = &a->cfg;
	const zr_imp_image_opts *o = &c->img;
	unsigned given = 0, i;
	char takers[128];

	if (o->encoded || o->rgb || o->chw || o->resize_h || o->crop_h)
		given |= ZR_IMP_O_IMAGE;
	given |= (c->drop_incomplete ? ZR_IMP_O_DROP : 0) |
		 (c->keys ? ZR_IMP_O_KEYS : 0) |
		 (c->nnames ? ZR_IMP_O_DATASET : 0) |
		 (c->per_file ? ZR_IMP_O_PERFILE : 0);
	for (i = 0; i < sizeof(only) / sizeof(only[0]); i++)
		if ((given & only[i].opt) && !(a->type->opts & only[i].opt)) {
			zr_imp_format_takers(only[i].opt, takers,
					     sizeof(takers));
			return zr_cli_usage(&zr_cli_import, "%s with %s "
					    "sources, not %s", only[i].what,
					    takers, a->type->name);
		}
	return -1;
}

/* The SOURCEs' format: all of one, found from what they are. */
static int find_type(import_args *a)
{
	const zr_cli_cmd *cmd = &zr_cli_import;
	const zr_imp_format *f;
	int i, rc;

	for (i = 0; i < a->nsrcs; i++) {
		rc = zr_imp_format_of(a->srcs[i], &f);
		if (rc < 0)
			return zr_cli_error(a->srcs[i], "import", rc, NULL);
		if (!f)
			return zr_cli_usage(cmd, "cannot tell what '%s' is: "
					    "give --type", a->srcs[i]);
		if (i && f != a->type)
			return zr_cli_usage(cmd, "'%s' is not the same kind "
					    "of source as '%s'", a->srcs[i],
					    a->srcs[0]);
		a->type = f;
	}
	return -1;
}

static int parse_args(int argc, char **argv, import_args *a)
{
	static const struct option opts[] = {
		{ "type", required_argument, NULL, O_TYPE },
		{ "encoded", no_argument, NULL, O_ENCODED },
		{ "rgb", no_argument, NULL, O_RGB },
		{ "chw", no_argument, NULL, O_CHW },
		{ "resize", required_argument, NULL, O_RESIZE },
		{ "center-crop", required_argument, NULL, O_CROP },
		{ "codec", required_argument, NULL, O_CODEC },
		{ "threads", required_argument, NULL, O_THREADS },
		{ "skip-bad", no_argument, NULL, O_SKIP },
		{ "drop-incomplete", no_argument, NULL, O_DROP },
		{ "progress", no_argument, NULL, O_PROGRESS },
		{ "no-progress", no_argument, NULL, O_NOPROGRESS },
		{ "keys", no_argument, NULL, O_KEYS },
		{ "dataset", required_argument, NULL, O_DATASET },
		{ "per-file", no_argument, NULL, O_PERFILE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const zr_cli_cmd *cmd = &zr_cli_import;
	char *dest;
	int c, rc, i;

	memset(a, 0, sizeof(*a));
	a->cfg.progress = -1;
	a->cfg.codec = ZR_CODEC_RAW;
	a->cfg.threads = default_threads();
	while ((c = zr_cli_getopt(cmd, argc, argv, "h", opts)) != -1) {
		rc = option(a, c, optarg);
		if (rc >= 0)
			return rc;
	}
	if (argc - optind < 2)
		return zr_cli_usage(cmd, "expected SOURCE... DEST");
	a->srcs = argv + optind;
	a->nsrcs = argc - optind - 1;
	/* "out/" names the folder out: its temporary sibling is out.tmp-* */
	dest = argv[argc - 1];
	for (i = (int)strlen(dest) - 1; i > 0 && dest[i] == '/'; i--)
		dest[i] = 0;
	a->cfg.dest = dest;
	if (a->cfg.img.encoded && (a->cfg.img.rgb || a->cfg.img.chw ||
				   a->cfg.img.resize_h || a->cfg.img.crop_h))
		return zr_cli_usage(cmd, "--encoded keeps the file bytes: it "
				    "cannot go with --rgb, --chw, --resize or "
				    "--center-crop");
	if (!a->type && (rc = find_type(a)) >= 0)
		return rc;
	return check_options(a);
}

static int run(int argc, char **argv)
{
	import_args a;
	int rc = parse_args(argc, argv, &a);

	if (rc < 0)
		rc = zr_imp_import(&a.cfg, a.type, a.srcs, a.nsrcs) ?
		     ZR_CLI_FAIL : ZR_CLI_OK;
	free(a.cfg.names);
	return rc;
}

const zr_cli_cmd zr_cli_import = {
	.name = "import",
	.run = run,
	.synopsis = "[OPTIONS] SOURCE... DEST",
	.help =
	"Writes a new dataset folder DEST (which must not exist): one store\n"
	"per field, all of one length, record i of each store belonging to\n"
	"sample i.  DEST appears only when everything went in (it is built\n"
	"in DEST.tmp-XXXXXX beside it and renamed).  SOURCEs are of one kind,\n"
	"found from what they are, or named by --type:\n\n"
	"  images  a folder of .jpg/.jpeg/.png/.webp files, or of class\n"
	"          folders: stores image and label (int64), class names in\n"
	"          DEST/classes.json; order: names in byte order, depth first\n"
	"  wds     WebDataset tar shards (.tar, .tar.gz, .tgz): one store\n"
	"          per field (member name KEY.FIELD), in shard then member\n"
	"          order; images decode, .cls is int64, .npy its array,\n"
	"          anything else ragged bytes\n"
	"  hdf5    .h5/.hdf5 files: every dataset (or --dataset NAME) as a\n"
	"          dense store of its dtype and row shape\n"
	"  lmdb    an LMDB folder (holding data.mdb): values (and --keys)\n"
	"          as ragged uint8 stores, in key order\n"
	"  npy     .npy/.npz files, or folders of them (in name order):\n"
	"          rows of each array (dense), or one record per array\n"
	"          with --per-file (ragged)\n\n"
	"Images are decoded to uint8 HWC with the channels the file holds\n"
	"(1 grey, 2 grey+alpha, 3 RGB, 4 RGBA) into a ragged store.\n"
	"  --rgb              convert every image to 3 channels (PIL's rules)\n"
	"  --resize S|H,W     shorter side to S, or exactly H x W (bilinear)\n"
	"  --center-crop S|H,W  the centre S x S or H x W (a fixed size makes\n"
	"                     the store dense)\n"
	"  --chw              channels first\n"
	"  --encoded          keep the file bytes instead (ragged uint8)\n"
	"  --codec raw|zstd   the stores' codec (default raw)\n"
	"  --threads N        decode threads (default: the CPUs available)\n"
	"  --skip-bad         leave out unreadable inputs and list them\n"
	"  --drop-incomplete  wds: drop samples missing a field, and count\n"
	"  --keys             lmdb: also a store 'key' of the keys\n"
	"  --dataset NAME     hdf5: import only NAME (repeatable)\n"
	"  --per-file         npy: one ragged record per array\n"
	"  --progress, --no-progress  the progress line (default: when\n"
	"                     stderr is a terminal)\n\n"
	"A bad input stops the import, naming it and the reason; nothing is\n"
	"left behind.  See zrecord(1) for the details.\n",
};
