/*
 * tree_build.c - builds the static tree once (tree.h): the scan of SRC's
 * folders for stores, datasets, side files and mixture folders (mixture.h,
 * whose files are read now too); the stores and datasets are added as
 * tree_node.c makes them, and a URL SRC's come from tree_url.c.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The program the messages are from: zrecordfs, zrecord. */
#define PROG program_invocation_short_name

#include "mixsource.h"
#include "mixture.h"
#include "tree.h"
#include "errors_log.h"
#include "tree_node.h"
#include "tree_url.h"

static int scan(struct zrtree *t, struct zrtree_node *dir, const char *abs,
		const char *rel);

/* NAME.mix.json's folder NAME.mix (mixture.h); its files come once the
 * whole tree is there (mix_files). */
static int mix_folder(struct zrtree *t, struct zrtree_node *dir,
		      const char *name, const char *abs, const char *rel)
{
	char *folder = strndup(name, strlen(name) - strlen(".json"));
	struct zrtree_node *n = folder ? zrtree_node_new(t, ZRTREE_K_DIR, folder, dir)
				     : NULL;

	free(folder);
	if (!n || !(n->mix = zrtree_mix_new(abs, rel)))
		return -ENOMEM;
	n->st = NULL;
	n->ds = NULL;
	return 0;
}

/* Every mixture folder's files: errors, and batch/ and stats if it
 * serves its sources. */
static int mix_files(struct zrtree *t)
{
	static const struct {
		const char *name;
		enum zrtree_kind kind;
	} files[] = {
		{ "batch", ZRTREE_K_BATCHDIR },
		{ "stats", ZRTREE_K_STATS },
		{ "errors", ZRTREE_K_ERRORS },
	};

	for (size_t i = 0, n = t->nstat; i < n; i++) {
		struct zrtree_node *d = t->stat[i];
		int ok;

		if (d->kind != ZRTREE_K_DIR || !d->mix)
			continue;
		ok = zrtree_mix_resolve(t, d->mix);
		for (size_t f = ok ? 0 : 2; f < 3; f++) {
			struct zrtree_node *k = zrtree_node_new(t, files[f].kind,
						      files[f].name, d);

			if (!k)
				return -ENOMEM;
			k->mix = d->mix;
		}
	}
	return 0;
}

/* The files zrecord import writes beside a dataset's stores, served so
 * that a copy through the mount keeps them; larger ones are left out
 * (a handle holds the whole file). */
#define SIDE_MAX (256u << 20)

static int side_named(const char *name)
{
	return !strcmp(name, "classes.json") || !strcmp(name, "files.txt");
}

static int side_file(struct zrtree *t, struct zrtree_node *dir,
		     const char *name, const char *abs, const struct stat *st)
{
	struct zrtree_node *n;

	if ((uint64_t)st->st_size > SIDE_MAX) {
		fprintf(stderr, "%s: %s: over %u MiB, not served\n", PROG, abs,
			SIDE_MAX >> 20);
		return 0;
	}
	n = zrtree_node_new(t, ZRTREE_K_SIDE, name, dir);
	if (!n || !(n->file = strdup(abs)))
		return -ENOMEM;
	n->size = (uint64_t)st->st_size;
	return 0;
}

/* One directory entry: a store, a plain folder (recursed), an import's
 * side file, or nothing (other files, symlinks and other entries are not
 * shown). */
static int scan_entry(struct zrtree *t, struct zrtree_node *dir,
		      const char *abs, const char *rel, const char *name,
		      struct zrtree_store **store)
{
	char *cabs = NULL, *crel = NULL;
	struct stat st;
	int err = 0;

	*store = NULL;
	if (asprintf(&cabs, "%s/%s", abs, name) < 0 ||
	    asprintf(&crel, "%s%s%s", rel, *rel ? "/" : "", name) < 0) {
		err = -ENOMEM;
		goto out;
	}
	if (lstat(cabs, &st))
		goto out;
	if (S_ISREG(st.st_mode) && zrcommon_mix_named(name))
		err = mix_folder(t, dir, name, cabs, crel);
	else if (S_ISREG(st.st_mode) && side_named(name))
		err = side_file(t, dir, name, cabs, &st);
	if (!S_ISDIR(st.st_mode))
		goto out;
	if (zrcommon_is_store(cabs)) {
		err = zrtree_mount_store(t, dir, name, cabs, crel, store);
	} else {
		struct zrtree_node *n = zrtree_node_new(t, ZRTREE_K_DIR, name, dir);

		err = n ? scan(t, n, cabs, crel) : -ENOMEM;
	}
out:
	free(cabs);
	free(crel);
	return err;
}


/* Counts the stores among dir's direct children (to know, before adding
 * them, whether an "@batch" entry must be hidden). */
static size_t count_stores(const char *abs, struct dirent **ents, int n)
{
	size_t count = 0;

	for (int i = 0; i < n; i++)
		count += zrcommon_is_field(abs, ents[i]->d_name) ? 1 : 0;
	return count;
}

static int not_dot(const struct dirent *e)
{
	return strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
}

static int scan(struct zrtree *t, struct zrtree_node *dir, const char *abs,
		const char *rel)
{
	struct dirent **ents = NULL;
	struct zrtree_dataset *ds = NULL;
	int n = scandir(abs, &ents, not_dot, alphasort), err = 0;
	size_t nstores;

	if (n < 0) {
		fprintf(stderr, "%s: %s: %s\n", PROG, abs, strerror(errno));
		return -errno;
	}
	nstores = count_stores(abs, ents, n);
	if (nstores >= 2 && !(ds = zrtree_dataset_new(nstores))) {
		err = -ENOMEM;
		goto out;
	}
	for (int i = 0; i < n && !err; i++) {
		struct zrtree_store *st;

		if (ds && !strcmp(ents[i]->d_name, ZRCOMMON_DS_BATCH))
			continue;
		err = scan_entry(t, dir, abs, rel, ents[i]->d_name, &st);
		if (!err && st && ds && ds->n < nstores) {
			ds->names[ds->n] = dir->kids[dir->nkids - 1]->name;
			ds->st[ds->n++] = st;
		}
	}
	if (!err && ds && ds->n >= 2) {
		err = zrtree_add_dataset(t, dir, ds);
		ds = NULL; /* t's now, even on failure */
	}
out:
	zrtree_dataset_free(ds);
	for (int i = 0; i < n; i++)
		free(ents[i]);
	free(ents);
	return err;
}


int zrtree_build(struct zrtree *t, const char *src, unsigned flags,
		 const struct zrtree_run *run)
{
	struct zrtree_node *root;
	int err;

	*t = (struct zrtree){ .src = src, .flags = flags, .run = run };
	root = zrtree_node_new(t, ZRTREE_K_DIR, "", NULL);
	if (!root)
		return -ENOMEM;
	if (zr_path_is_url(t->src))
		return zrtree_build_url(t, root);
	if (zrcommon_is_store(t->src))
		return zrtree_root_store(t, root, t->src);
	err = scan(t, root, t->src, "");
	if (!err)
		err = mix_files(t);
	if (err == -ENOMEM)
		fprintf(stderr, "%s: out of memory\n", PROG);
	return err;
}

int zrtree_add_info(struct zrtree *t, const char *name, zrtree_info_fn *info,
		    void *ctx)
{
	struct zrtree_node *root = t->stat[0], *n;

	for (size_t i = 0; i < root->nkids; i++)
		if (!strcmp(root->kids[i]->name, name))
			return -EEXIST;
	n = zrtree_node_new(t, ZRTREE_K_INFO, name, root);
	if (!n)
		return -ENOMEM;
	n->info = info;
	n->info_ctx = ctx;
	return 0;
}
