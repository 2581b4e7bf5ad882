/*
 * tree_build.c - builds the static tree once (tree.h): SRC's folders, its
 * stores and their fixed files, datasets and mixture folders (mixture.h,
 * whose files are read now too); a URL SRC's come from tree_url.c.
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
#include "tree_build.h"

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

static int add_stores(struct zrtree *t, struct zrtree_store *st)
{
	void *p = realloc(t->stores, (t->nstores + 1) * sizeof(*t->stores));

	if (!p)
		return -ENOMEM;
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
	if (add_stores(t, st)) {
		zr_store_close(st->zs);
		fstore_free(st);
		return -ENOMEM;
	}
	n = zrtree_node_new(t, ZRTREE_K_STORE, name, parent);
	if (!n)
		return -ENOMEM;
	n->st = st;
	n->ds = NULL;
	*out = st;
	return store_kids(t, n);
}

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

int zrtree_add_dataset(struct zrtree *t, struct zrtree_node *dir,
		       struct zrtree_dataset *ds)
{
	struct zrtree_node *b;
	void *p = realloc(t->ds, (t->nds + 1) * sizeof(*t->ds));

	if (!p)
		return -ENOMEM;
	t->ds = p;
	t->ds[t->nds++] = ds;
	b = zrtree_node_new(t, ZRTREE_K_BATCHDIR, ZRCOMMON_DS_BATCH, dir);
	if (!b)
		return -ENOMEM;
	b->ds = ds;
	b->st = NULL;
	return 0;
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
	if (nstores >= 2) {
		ds = calloc(1, sizeof(*ds));
		if (!ds || !(ds->st = calloc(nstores, sizeof(*ds->st))) ||
		    !(ds->names = calloc(nstores, sizeof(*ds->names)))) {
			err = -ENOMEM;
			goto out;
		}
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
		if (!err)
			ds = NULL;
	}
out:
	if (ds) {
		free(ds->st);
		free(ds->names);
		free(ds);
	}
	for (int i = 0; i < n; i++)
		free(ents[i]);
	free(ents);
	return err;
}

int zrtree_root_store(struct zrtree *t, struct zrtree_node *root,
		      const char *path)
{
	int err;

	root->kind = ZRTREE_K_STORE;
	err = open_store(t, path, "", &root->st);
	if (!err)
		err = add_stores(t, root->st);
	return err ? err : store_kids(t, root);
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
	if (zrcommon_is_url(t->src))
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
	for (size_t i = 0; i < t->nds; i++) {
		free(t->ds[i]->st);
		free(t->ds[i]->names);
		free(t->ds[i]);
	}
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
