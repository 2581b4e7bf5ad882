/*
 * tree_url.c - a URL SRC's tree (tree_url.h): the stores the library
 * finds at and under s3://BUCKET/PREFIX (zr_store_list: the listing and
 * its bounds are the library's), each a store folder inside the folders
 * of its path, and every folder's stores a dataset as a local scan makes
 * one (tree_node.c), so a mount of the URL serves what a mount of the
 * folder that was uploaded serves (but mixture and side files, which a
 * listing does not read).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG program_invocation_short_name

#include "mixsource.h"
#include "tree_node.h"
#include "tree_url.h"

/* dir's folder name, made if it is not there yet. */
static struct zrtree_node *subdir(struct zrtree *t, struct zrtree_node *dir,
				  const char *name)
{
	for (size_t i = 0; i < dir->nkids; i++)
		if (dir->kids[i]->kind == ZRTREE_K_DIR &&
		    !strcmp(dir->kids[i]->name, name))
			return dir->kids[i];
	return zrtree_node_new(t, ZRTREE_K_DIR, name, dir);
}

/* The store at rel (below base, the URL) in the folders of its path. */
static int add_store(struct zrtree *t, const char *base, const char *rel)
{
	struct zrtree_node *dir = t->stat[0];
	char *path = strdup(rel), *name, *slash, *abs = NULL;
	struct zrtree_store *st;
	int err;

	if (!path)
		return -ENOMEM;
	for (name = path; dir && (slash = strchr(name, '/')); name = slash + 1) {
		*slash = '\0';
		dir = subdir(t, dir, name);
	}
	if (!dir || asprintf(&abs, "%s/%s", base, rel) < 0)
		err = -ENOMEM;
	else
		err = zrtree_mount_store(t, dir, name, abs, rel, &st);
	free(abs);
	free(path);
	return err;
}

/* d's stores as a dataset if it has two or more (and no store takes the
 * name of the dataset's folder). */
static int dataset_of(struct zrtree *t, struct zrtree_node *d)
{
	struct zrtree_dataset *ds;
	size_t n = 0;

	for (size_t i = 0; i < d->nkids; i++) {
		if (!strcmp(d->kids[i]->name, ZRCOMMON_DS_BATCH))
			return 0;
		n += d->kids[i]->kind == ZRTREE_K_STORE;
	}
	if (n < 2)
		return 0;
	ds = zrtree_dataset_new(n);
	if (!ds)
		return -ENOMEM;
	for (size_t i = 0; i < d->nkids; i++)
		if (d->kids[i]->kind == ZRTREE_K_STORE) {
			ds->names[ds->n] = d->kids[i]->name;
			ds->st[ds->n++] = d->kids[i]->st;
		}
	return zrtree_add_dataset(t, d, ds);
}

/* Every folder's dataset (the folders are all there by now). */
static int datasets(struct zrtree *t)
{
	int err = 0;

	for (size_t i = 0, n = t->nstat; i < n && !err; i++)
		if (t->stat[i]->kind == ZRTREE_K_DIR)
			err = dataset_of(t, t->stat[i]);
	return err;
}

/* The stores at paths[0..n) below base. */
static int add_all(struct zrtree *t, const char *base, char **paths,
		   size_t n)
{
	int err = 0;

	for (size_t i = 0; i < n && !err; i++)
		err = add_store(t, base, paths[i]);
	if (!err)
		err = datasets(t);
	if (err == -ENOMEM)
		fprintf(stderr, "%s: out of memory\n", PROG);
	return err;
}

/* The stores zr_store_list found at paths[0..n) below base: the root
 * itself, or each in its folders. */
static int add_found(struct zrtree *t, struct zrtree_node *root,
		     const char *base, char **paths, size_t n)
{
	if (n == 1 && !*paths[0])
		return zrtree_root_store(t, root, base);
	return add_all(t, base, paths, n);
}

int zrtree_build_url(struct zrtree *t, struct zrtree_node *root)
{
	size_t n, len = strlen(t->src);
	char **paths, *base;
	int err = zr_store_list(t->src, &paths, &n);

	if (err) {
		fprintf(stderr, "%s: %s\n", PROG, *zr_errmsg() ? zr_errmsg() :
			zr_strerror(err));
		return err;
	}
	/* "s3://b/p/" names what "s3://b/p" does (zr_store_list's paths
	 * are below the URL without its '/') */
	while (len > strlen("s3://") && t->src[len - 1] == '/')
		len--;
	base = strndup(t->src, len);
	err = base ? add_found(t, root, base, paths, n) : -ENOMEM;
	if (err == -ENOMEM && !base)
		fprintf(stderr, "%s: out of memory\n", PROG);
	free(base);
	zr_store_list_free(paths, n);
	return err;
}
