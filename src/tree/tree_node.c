/*
 * tree_node.c - the parts both builds of the tree (tree.h) add: a node,
 * a store shown as its folder of fixed files, a dataset's @batch folder,
 * and their freeing.  Shared here so that the scan of a local folder
 * (tree_build.c) and of a URL (tree_url.c) make stores and datasets one
 * way, and each build only calls down into this file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The program the messages are from: zrecordfs, zrecord. */
#define PROG program_invocation_short_name

#include "mixsource.h"
#include "mixture.h"
#include "errors_log.h"
#include "tree_node.h"

struct zrtree_node *zrtree_node_new(struct zrtree *t, enum zrtree_kind kind,
				    const char *name,
				    struct zrtree_node *parent)
{
	struct zrtree_node *n;

	if (t->nstat == t->capstat) {
		size_t cap = t->capstat ? 2 * t->capstat : 64;
		void *p = realloc(t->stat, cap * sizeof(*t->stat));

		if (!p)
			return NULL;
		t->stat = p;
		t->capstat = cap;
	}
	n = calloc(1, sizeof(*n));
	if (!n || !(n->name = strdup(name))) {
		free(n);
		return NULL;
	}
	n->kind = kind;
	n->parent = parent;
	n->ino = t->nstat + 1;
	t->stat[t->nstat++] = n;
	if (parent) {
		void *p = realloc(parent->kids,
				  (parent->nkids + 1) * sizeof(*parent->kids));

		if (!p)
			return NULL; /* n is owned by t->stat already */
		parent->kids = p;
		parent->kids[parent->nkids++] = n;
		n->st = parent->st;
		n->ds = parent->ds;
	}
	return n;
}

static void fstore_free(struct zrtree_store *st)
{
	if (!st)
		return;
	zrtree_elog_free(st->log);
	free(st->path);
	free(st);
}

static int open_store(struct zrtree *t, const char *abs, const char *rel,
		      struct zrtree_store **out)
{
	struct zrtree_store *st = calloc(1, sizeof(*st));
	int err;

	if (!st || !(st->path = strdup(*rel ? rel : ".")) ||
	    !(st->log = zrtree_elog_new()))
		goto nomem;
	err = zr_store_open(abs, t->flags, &st->zs);
	if (err) {
		if (err == ZR_E_BUSY)
			fprintf(stderr, "%s: store busy: %s (%s)\n", PROG, abs,
				(t->flags & (ZR_OPEN_RDONLY | ZR_OPEN_FOLLOW)) ==
				ZR_OPEN_RDONLY ?
				"a writer holds its lock; -o follow reads "
				"beside it" : "another mount or writer holds "
				"its lock");
		else
			fprintf(stderr, "%s: cannot open store %s: %s\n", PROG,
				abs, *zr_errmsg() ? zr_errmsg() :
				zr_strerror(err));
		fstore_free(st);
		return err;
	}
	if (zr_store_lock_warning(st->zs))
		fprintf(stderr, "%s: warning: %s\n", PROG,
			zr_store_lock_warning(st->zs));
	/* A recovered journal (SQLite's hot-journal rule, even under -o ro):
	 * the user learns what is left to do where they look. */
	if (zr_store_recovered(st->zs))
		zrtree_elog_add(st->log, st->path, "%s",
			      zr_store_recovered(st->zs));
	st->id = t->nstores;
	*out = st;
	return 0;
nomem:
	fstore_free(st);
	fprintf(stderr, "%s: out of memory\n", PROG);
	return -ENOMEM;
}

/* st held by t (which closes it in zrtree_free); closed and freed here
 * if it cannot be. */
static int add_stores(struct zrtree *t, struct zrtree_store *st)
{
	void *p = realloc(t->stores, (t->nstores + 1) * sizeof(*t->stores));

	if (!p) {
		zr_store_close(st->zs);
		fstore_free(st);
		return -ENOMEM;
	}
	t->stores = p;
	t->stores[t->nstores++] = st;
	return 0;
}

/* The fixed files of a store folder. */
static int store_kids(struct zrtree *t, struct zrtree_node *n)
{
	static const struct {
		const char *name;
		enum zrtree_kind kind;
	} files[] = {
		{ "records", ZRTREE_K_RECDIR },
		{ "batch", ZRTREE_K_BATCHDIR },
		{ "append", ZRTREE_K_APPEND },
		{ "stats", ZRTREE_K_STATS },
		{ "schema", ZRTREE_K_SCHEMA },
		{ "errors", ZRTREE_K_ERRORS },
		{ "sync", ZRTREE_K_SYNC },
		{ "compact", ZRTREE_K_COMPACT },
		{ "delete", ZRTREE_K_DELETE },
	};

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		struct zrtree_node *k = zrtree_node_new(t, files[i].kind, files[i].name,
					      n);

		if (!k)
			return -ENOMEM;
		if (k->kind == ZRTREE_K_RECDIR)
			n->st->records_ino = k->ino;
	}
	return 0;
}

int zrtree_mount_store(struct zrtree *t, struct zrtree_node *parent,
		       const char *name, const char *abs, const char *rel,
		       struct zrtree_store **out)
{
	struct zrtree_node *n;
	struct zrtree_store *st;
	int err = open_store(t, abs, rel, &st);

	if (err)
		return err;
	if (add_stores(t, st))
		return -ENOMEM;
	n = zrtree_node_new(t, ZRTREE_K_STORE, name, parent);
	if (!n)
		return -ENOMEM;
	n->st = st;
	n->ds = NULL;
	*out = st;
	return store_kids(t, n);
}

struct zrtree_dataset *zrtree_dataset_new(size_t n)
{
	struct zrtree_dataset *ds = calloc(1, sizeof(*ds));

	if (!ds || !(ds->st = calloc(n, sizeof(*ds->st))) ||
	    !(ds->names = calloc(n, sizeof(*ds->names)))) {
		zrtree_dataset_free(ds);
		return NULL;
	}
	return ds;
}

void zrtree_dataset_free(struct zrtree_dataset *ds)
{
	if (!ds)
		return;
	free(ds->st);
	free(ds->names);
	free(ds);
}

int zrtree_add_dataset(struct zrtree *t, struct zrtree_node *dir,
		       struct zrtree_dataset *ds)
{
	struct zrtree_node *b;
	void *p = realloc(t->ds, (t->nds + 1) * sizeof(*t->ds));

	if (!p) {
		zrtree_dataset_free(ds);
		return -ENOMEM;
	}
	t->ds = p;
	t->ds[t->nds++] = ds;
	b = zrtree_node_new(t, ZRTREE_K_BATCHDIR, ZRCOMMON_DS_BATCH, dir);
	if (!b)
		return -ENOMEM;
	b->ds = ds;
	b->st = NULL;
	return 0;
}

int zrtree_root_store(struct zrtree *t, struct zrtree_node *root,
		      const char *path)
{
	int err;

	root->kind = ZRTREE_K_STORE;
	err = open_store(t, path, "", &root->st);
	if (!err && (err = add_stores(t, root->st)))
		root->st = NULL;
	return err ? err : store_kids(t, root);
}

int zrtree_free(struct zrtree *t)
{
	int first = 0;

	for (size_t i = 0; i < t->nstores; i++) {
		struct zrtree_store *st = t->stores[i];
		int err = zr_store_close(st->zs);

		if (err && !first) {
			fprintf(stderr, "%s: closing %s: %s\n", PROG,
				st->path, zr_strerror(err));
			first = err;
		}
		fstore_free(st);
	}
	for (size_t i = 0; i < t->nds; i++)
		zrtree_dataset_free(t->ds[i]);
	for (size_t i = 0; i < t->nstat; i++) {
		if (t->stat[i]->kind == ZRTREE_K_DIR)
			zrtree_mix_free(t->stat[i]->mix);
		free((char *)t->stat[i]->name);
		free(t->stat[i]->file);
		free(t->stat[i]->kids);
		free(t->stat[i]);
	}
	free(t->stat);
	free(t->stores);
	free(t->ds);
	t->stat = NULL;
	t->stores = NULL;
	t->ds = NULL;
	t->nstat = t->nstores = t->nds = 0;
	return first;
}
