/*
 * command.c - `zrecord import SOURCE... DEST`: parses the options, finds
 * what kind of source it was given and runs that source into a new
 * dataset folder, which appears at DEST only when everything went in.
 */
#include <dirent.h>
#include <errno.h>
#include <malloc.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "import.h"

enum { T_AUTO, T_IMAGES, T_WDS, T_HDF5, T_LMDB, T_NPY };
static const char *const type_names[] = { "auto", "images", "wds", "hdf5",
					  "lmdb", "npy" };

enum {
	O_TYPE = 0x200, O_ENCODED, O_RGB, O_CHW, O_RESIZE, O_CROP, O_CODEC,
	O_THREADS, O_SKIP, O_DROP, O_PROGRESS, O_NOPROGRESS, O_KEYS, O_DATASET,
	O_PERFILE
};

#define MAX_THREADS 256

typedef struct import_args {
	zr_imp_config cfg;
	int type;
	char **srcs;
	int nsrcs;
} import_args;

static int ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), k = strlen(suf);

	return n >= k && !strcasecmp(s + n - k, suf);
}

/* 1 if the folder holds .npy/.npz files and no images: an npy source. */
static int npy_folder(const char *dir)
{
	struct dirent **list;
	int n, i, npy = 0, images = 0;

	n = zr_imp_list_dir(NULL, dir, &list);
	for (i = 0; i < n; i++) {
		npy |= ends_with(list[i]->d_name, ".npy") ||
		       ends_with(list[i]->d_name, ".npz");
		images |= zr_imp_is_image_name(list[i]->d_name);
		free(list[i]);
	}
	if (n >= 0)
		free(list);
	return npy && !images;
}

/* The kind of source src is, or -errno when it cannot be found. */
static int detect(const char *src)
{
	struct stat st;
	char *mdb;
	int lmdb;

	if (ends_with(src, ".tar") || ends_with(src, ".tar.gz") ||
	    ends_with(src, ".tgz"))
		return T_WDS;
	if (ends_with(src, ".h5") || ends_with(src, ".hdf5") ||
	    ends_with(src, ".hdf"))
		return T_HDF5;
	if (ends_with(src, ".npy") || ends_with(src, ".npz"))
		return T_NPY;
	if (ends_with(src, ".mdb"))
		return T_LMDB;
	if (stat(src, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return T_AUTO;
	if (asprintf(&mdb, "%s/data.mdb", src) < 0)
		return -ENOMEM;
	lmdb = access(mdb, F_OK) == 0;
	free(mdb);
	return lmdb ? T_LMDB : npy_folder(src) ? T_NPY : T_IMAGES;
}

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

static int option(import_args *a, int c, const char *arg)
{
	const zr_cli_cmd *cmd = &zr_cli_import;
	zr_imp_config *cfg = &a->cfg;
	uint64_t n;
	char **names;
	int i;

	switch (c) {
	case O_TYPE:
		for (i = 1; i < 6; i++)
			if (!strcmp(arg, type_names[i]))
				a->type = i;
		if (a->type == T_AUTO)
			return zr_cli_usage(cmd, "--type '%s': give images, "
					    "wds, hdf5, lmdb or npy", arg);
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
	const zr_cli_cmd *cmd = &zr_cli_import;
	const zr_imp_image_opts *o = &a->cfg.img;
	const char *t = type_names[a->type];

	if ((o->encoded || o->rgb || o->chw || o->resize_h || o->crop_h) &&
	    a->type != T_IMAGES && a->type != T_WDS)
		return zr_cli_usage(cmd, "the image options go with images "
				    "and wds sources, not %s", t);
	if (a->cfg.drop_incomplete && a->type != T_WDS)
		return zr_cli_usage(cmd, "--drop-incomplete goes with wds "
				    "sources, not %s", t);
	if (a->cfg.keys && a->type != T_LMDB)
		return zr_cli_usage(cmd, "--keys goes with lmdb sources, not %s",
				    t);
	if (a->cfg.nnames && a->type != T_HDF5)
		return zr_cli_usage(cmd, "--dataset goes with hdf5 sources, "
				    "not %s", t);
	if (a->cfg.per_file && a->type != T_NPY)
		return zr_cli_usage(cmd, "--per-file goes with npy sources, "
				    "not %s", t);
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
	for (i = 0; i < a->nsrcs && a->type == T_AUTO; i++) {
		int t = detect(a->srcs[i]);

		if (t < 0)
			return zr_imp_error(a->srcs[i], t, NULL);
		if (t == T_AUTO)
			return zr_cli_usage(cmd, "cannot tell what '%s' is: "
					    "give --type", a->srcs[i]);
		if (i && t != detect(a->srcs[0]))
			return zr_cli_usage(cmd, "'%s' is not the same kind "
					    "of source as '%s'", a->srcs[i],
					    a->srcs[0]);
	}
	if (a->type == T_AUTO)
		a->type = detect(a->srcs[0]);
	return check_options(a);
}

static int run_source(import_args *a, zr_imp_dataset *d)
{
	switch (a->type) {
	case T_IMAGES:
		return zr_imp_folder(&a->cfg, a->srcs, a->nsrcs, d);
	case T_WDS:
		return zr_imp_wds(&a->cfg, a->srcs, a->nsrcs, d);
	case T_HDF5:
		return zr_imp_hdf5(&a->cfg, a->srcs, a->nsrcs, d);
	case T_LMDB:
		return zr_imp_lmdb(&a->cfg, a->srcs, a->nsrcs, d);
	default:
		return zr_imp_npy(&a->cfg, a->srcs, a->nsrcs, d);
	}
}

static int run(int argc, char **argv)
{
	import_args a;
	zr_imp_dataset *d = NULL;
	int rc;

	rc = parse_args(argc, argv, &a);
	if (rc >= 0) {
		free(a.cfg.names);
		return rc;
	}
	/* The library's pool places records in data.zr in the order its
	 * lanes finish; one lane keeps the layout a function of the input
	 * (byte-identical stores).  Decoding, the real work, fans out over
	 * our own threads.  The pool reads this at its first use, below. */
	setenv("ZR_THREADS", "0", 1);
	zr_imp_catch_signals();
	/* Every decoded image is a buffer of ~150 KiB that lives one batch:
	 * from the heap it is reused, from mmap (glibc's default above 128
	 * KiB) each one costs fresh page faults on every thread. */
	mallopt(M_MMAP_THRESHOLD, 64 << 20);
	mallopt(M_TRIM_THRESHOLD, 256 << 20);
	rc = zr_imp_dataset_new(&a.cfg, &d);
	if (rc == 0)
		rc = run_source(&a, d);
	if (rc == 0)
		rc = zr_imp_dataset_commit(d);
	if (rc == 0)
		fprintf(stderr, "zrecord: import: %s: %llu records\n",
			a.cfg.dest,
			(unsigned long long)zr_imp_dataset_length(d));
	zr_imp_dataset_free(d);
	free(a.cfg.names);
	return rc ? ZR_CLI_FAIL : ZR_CLI_OK;
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
