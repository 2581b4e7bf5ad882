/*
 * cat.c - `zrecord cat` and `zrecord ls`: the files and folders a
 * zrecordfs mount of SRC serves, read without a mount (a container with
 * no /dev/fuse).  SRC becomes the tree the daemon serves (src/tree), a
 * PATH is resolved name by name with the daemon's lookup, and a file's
 * bytes are made by the code that makes the mount's, so `zrecord cat SRC
 * PATH` writes what reading MNT/PATH gives under the same -o options.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "zrecord.h"
#include "open_file.h"
#include "run_opts.h"
#include "tree.h"

/* Dynamic folders below a static one: batch/MODE/B/, then a file. */
#define DYN_DEPTH 4
/* Bytes of a file gathered and written at a time: a batch's pieces are
 * about as large (batch_file.h). */
#define CAT_PIECE ((uint64_t)1 << 20)

/* Where a walk of PATH is: a static node, and below it the templates of
 * the dynamic nodes named since (zrtree_lookup). */
struct walk {
	struct zrtree_node *base;
	struct zrtree_node dyn[DYN_DEPTH];
	size_t ndyn;
};

static struct zrtree_node *walk_at(struct walk *w)
{
	return w->ndyn ? &w->dyn[w->ndyn - 1] : w->base;
}

static int is_folder(const struct zrtree_node *n)
{
	return n->kind <= ZRTREE_K_BATCHDIR;
}

static void walk_pop(struct walk *w)
{
	free(w->dyn[--w->ndyn].lens);
}

static void walk_end(struct walk *w)
{
	while (w->ndyn)
		walk_pop(w);
}

/* One name of a path, as the kernel walks it: every component before it
 * must be a folder. */
static int walk_step(struct zrtree *t, struct walk *w, const char *name)
{
	struct zrtree_node *at = walk_at(w), *kid;
	int err;

	if (!is_folder(at))
		return -ENOTDIR;
	if (!strcmp(name, "."))
		return 0;
	if (!strcmp(name, "..")) {
		if (w->ndyn)
			walk_pop(w);
		else if (w->base->parent)
			w->base = w->base->parent;
		return 0;
	}
	if (w->ndyn == DYN_DEPTH)
		return -ENOENT;
	err = zrtree_lookup(t, at, name, &kid, &w->dyn[w->ndyn]);
	if (!err && kid)
		w->base = kid; /* a static node is only below another */
	else if (!err)
		w->ndyn++;
	return err;
}

/* Walks path (relative to the mount root; "" or "." is the root) into w:
 * 0, or the lookup's failure (-ENOENT, -ENOTDIR, ZR_E_BUSY, ...). */
static int walk(struct zrtree *t, const char *path, struct walk *w)
{
	char *copy = strdup(path), *save = NULL, *name;
	int err = copy ? 0 : -ENOMEM;

	w->base = t->stat[0];
	w->ndyn = 0;
	for (name = copy ? strtok_r(copy, "/", &save) : NULL; name && !err;
	     name = strtok_r(NULL, "/", &save))
		err = walk_step(t, w, name);
	free(copy);
	if (err)
		walk_end(w);
	return err;
}

/* A library failure at path.  ZR_E_BUSY: a view met a delete or compact
 * another process runs (the stores here are read-only). */
static int lib_error(const char *path, const char *cmd, int err)
{
	if (err != ZR_E_BUSY)
		return zr_cli_lib_error(path, cmd, err);
	fprintf(stderr, "zrecord: %s: %s: a delete or compact of its store is "
		"running: try again once it ends\n", cmd, path);
	return ZR_CLI_FAIL;
}

/* A path that does not resolve, in the words of its failure. */
static int walk_error(const char *cmd, const char *src, const char *path,
		      int err)
{
	if (err == -ENOENT) {
		fprintf(stderr, "zrecord: %s: %s does not exist in %s (zrecord "
			"ls %s [FOLDER] lists what a folder holds)\n", cmd,
			path, src, src);
		return ZR_CLI_FAIL;
	}
	if (err == -ENOTDIR) {
		fprintf(stderr, "zrecord: %s: %s does not exist in %s: a file "
			"stands where it names a folder\n", cmd, path, src);
		return ZR_CLI_FAIL;
	}
	return lib_error(path, cmd, err);
}

/* -- cat ---------------------------------------------------------------- */

/* A record or batch file, through the read transaction a mount's open of
 * it takes (open_file.h): planned as the mount plans it at the first
 * read, from the records its lookup counted, gathered and written a
 * piece at a time (its buffer is the mount's: at most max_batch_bytes). */
static int cat_file(struct zrtree *t, const struct zrtree_node *n,
		    const char *path)
{
	struct zrtree_file *f;
	zr_cli_out o;
	uint64_t size, len;
	int rc, err = zrtree_file_open(t, n, &f);

	if (err) /* ESTALE: a delete since the lookup, as the mount's */
		return lib_error(path, "cat", err == -ESTALE ? -ENOENT : err);
	size = zrtree_file_size(f);
	rc = zr_cli_out_open(&o, NULL, path, "cat");
	for (uint64_t off = 0; rc == ZR_CLI_OK && off < size; off += len) {
		len = size - off < CAT_PIECE ? size - off : CAT_PIECE;
		err = zrtree_file_fill(f, off, off + len);
		rc = err ? lib_error(path, "cat", err)
			 : zr_cli_out_write(&o, zrtree_file_bytes(f) + off,
					    len, path, "cat");
	}
	rc = zr_cli_out_close(&o, path, "cat", rc);
	zrtree_file_close(f);
	return rc;
}

/* stats, schema, errors, an import's side files, and the usage line of
 * append, sync, compact and delete: text, which a terminal may show. */
static int cat_text(const struct zrtree_node *n, const char *path)
{
	zr_cli_out o = { .fd = STDOUT_FILENO, .path = NULL };
	char *text = NULL;
	size_t len;
	int rc, err = 0;

	if (n->kind == ZRTREE_K_STATS || n->kind == ZRTREE_K_SCHEMA ||
	    n->kind == ZRTREE_K_ERRORS || n->kind == ZRTREE_K_SIDE)
		err = zrtree_text(n, &text, &len);
	if (err)
		return lib_error(path, "cat", err);
	rc = text ? zr_cli_out_write(&o, text, len, path, "cat")
		  : zr_cli_out_write(&o, zrtree_usage(n->kind),
				     strlen(zrtree_usage(n->kind)), path, "cat");
	free(text);
	return rc;
}

static int cat_one(struct zrtree *t, const char *src, const char *path)
{
	struct walk w;
	struct zrtree_node *n;
	int rc, err = walk(t, path, &w);

	if (err)
		return walk_error("cat", src, path, err);
	n = walk_at(&w);
	if (is_folder(n)) {
		fprintf(stderr, "zrecord: cat: %s is a folder: zrecord ls "
			"lists it\n", path);
		rc = ZR_CLI_FAIL;
	} else if (n->kind == ZRTREE_K_RECORD || n->kind == ZRTREE_K_BATCH) {
		rc = cat_file(t, n, path);
	} else {
		rc = cat_text(n, path);
	}
	walk_end(&w);
	return rc;
}

/* -o OPT[,OPT...] into run: the run options only (run_opts.h). */
static int run_options(const zr_cli_cmd *cmd, char *list,
		       struct zrtree_run *run)
{
	char msg[160], *save = NULL;

	for (char *o = strtok_r(list, ",", &save); o;
	     o = strtok_r(NULL, ",", &save)) {
		int err = zrtree_run_parse(run, o, msg, sizeof(msg));

		if (err == -ENOENT)
			return zr_cli_usage(cmd, "unknown option '%s': -o takes "
					    "the mount's options that decide "
					    "what batch files hold (see "
					    "zrecord cat --help)", o);
		if (err)
			return zr_cli_usage(cmd, "bad option '%s' (%s)", o,
					    msg);
	}
	return ZR_CLI_OK;
}

/* SRC as the daemon's tree: an absolute path (or a store's URL, as
 * written), its stores opened read-only.  The tree prints why it
 * fails. */
static int tree_open(const char *cmd, const char *src, char **abs,
		     struct zrtree *t, const struct zrtree_run *run)
{
	*abs = zr_path_is_url(src) ? strdup(src) : realpath(src, NULL);
	if (!*abs)
		return zr_cli_error(src, cmd, -errno, "SRC");
	if (zrtree_build(t, *abs, ZR_OPEN_RDONLY, run)) {
		zrtree_free(t);
		free(*abs);
		return ZR_CLI_FAIL;
	}
	return ZR_CLI_OK;
}

static int tree_close(struct zrtree *t, char *abs, int rc)
{
	if (zrtree_free(t) && rc == ZR_CLI_OK)
		rc = ZR_CLI_FAIL;
	free(abs);
	return rc;
}

static int cat_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct zrtree_run run;
	struct zrtree t;
	char msg[96], *abs;
	int c, rc = ZR_CLI_OK;

	zrtree_run_defaults(&run);
	while (rc == ZR_CLI_OK &&
	       (c = zr_cli_getopt(&zr_cli_cat, argc, argv, "ho:", opts)) != -1) {
		if (c != 'o') {
			zrtree_run_free(&run);
			return zr_cli_getopt_exit(c);
		}
		rc = run_options(&zr_cli_cat, optarg, &run);
	}
	if (rc == ZR_CLI_OK && argc - optind < 2)
		rc = zr_cli_usage(&zr_cli_cat, "expected SRC and PATH...");
	if (rc == ZR_CLI_OK && zrtree_run_check(&run, msg, sizeof(msg)))
		rc = zr_cli_usage(&zr_cli_cat, "%s", msg);
	if (rc == ZR_CLI_OK)
		rc = tree_open("cat", argv[optind], &abs, &t, &run);
	if (rc != ZR_CLI_OK) {
		zrtree_run_free(&run);
		return rc;
	}
	/* as cat(1): every PATH, whatever failed before */
	for (int i = optind + 1; i < argc; i++) {
		int r = cat_one(&t, argv[optind], argv[i]);

		if (rc == ZR_CLI_OK)
			rc = r;
	}
	rc = tree_close(&t, abs, rc);
	zrtree_run_free(&run);
	return rc;
}

const zr_cli_cmd zr_cli_cat = {
	.name = "cat",
	.run = cat_run,
	.synopsis = "SRC PATH... [-o OPT[,OPT...]]",
	.help =
	"Writes the files a zrecordfs mount of SRC serves at PATH (relative\n"
	"to the mount's root: imgs/records/3.npy, imgs/batch/1-0.npy,\n"
	"ds/@batch/iid/8/1-2.npz, mix.mix/batch/0-5.npy, imgs/stats) to\n"
	"stdout, byte for byte what reading MNT/PATH gives under\n"
	"`zrecordfs SRC MNT -o ro` with the same -o options -- without\n"
	"FUSE.  Stores are opened read-only.  Record and batch files are\n"
	"binary and never written to a terminal.  A PATH that does not\n"
	"exist or is a folder is reported and skipped; the exit status is\n"
	"then 1.\n\n"
	"  -o OPT[,OPT...]    the mount's options that decide what batch\n"
	"                     files hold (repeatable):\n",
	.help_more = zrtree_run_help_all,
};

/* -- ls ----------------------------------------------------------------- */

static int ls_one(struct zrtree *t, const char *src, const char *path)
{
	char name[320];
	struct zrtree_node *n, *kid;
	struct walk w;
	int dir, err = walk(t, path, &w);

	if (err)
		return walk_error("ls", src, path, err);
	n = walk_at(&w);
	if (!is_folder(n)) {
		fprintf(stderr, "zrecord: ls: %s is a file: zrecord cat reads "
			"it\n", path);
		walk_end(&w);
		return ZR_CLI_FAIL;
	}
	for (uint64_t k = 0; !zrtree_entry(n, k, name, sizeof(name), &dir,
					   &kid); k++)
		printf("%s\n", name);
	walk_end(&w);
	return ZR_CLI_OK;
}

static int ls_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct zrtree_run run;
	struct zrtree t;
	char *abs;
	int c, rc;

	c = zr_cli_getopt(&zr_cli_ls, argc, argv, "h", opts);
	if (c != -1)
		return zr_cli_getopt_exit(c);
	if (argc - optind < 1 || argc - optind > 2)
		return zr_cli_usage(&zr_cli_ls, "expected SRC [PATH]");
	zrtree_run_defaults(&run);
	rc = tree_open("ls", argv[optind], &abs, &t, &run);
	if (rc != ZR_CLI_OK)
		return rc;
	rc = ls_one(&t, argv[optind], optind + 1 < argc ? argv[optind + 1] :
		    "");
	return tree_close(&t, abs, rc);
}

const zr_cli_cmd zr_cli_ls = {
	.name = "ls",
	.run = ls_run,
	.synopsis = "SRC [PATH]",
	.help =
	"Lists the folder a zrecordfs mount of SRC serves at PATH (default:\n"
	"the mount's root), one name a line, the names the mount lists:\n"
	"a folder's files and folders, records/ as 0.npy .. N-1.npy, and\n"
	"batch/ (and a dataset's @batch/) as its sampler mode folders --\n"
	"batch files are found by name: read them with zrecord cat.\n",
};
