/*
 * static_tree.c - builds the static namespace at mount.  Stores created
 * under SRC after the mount are not picked up (remount to serve them): the
 * tree, and the store locks it holds, are fixed for the mount's lifetime;
 * so are the mixture files' folders (mixture.h), read at mount.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mixsource.h"
#include "mixture.h"
#include "store_park.h"
#include "static_tree.h"
#include "errors_log.h"

static struct zrfs_node *node_new(struct zrfs_fs *fs, enum zrfs_kind kind,
				 const char *name, struct zrfs_node *parent)
{
	struct zrfs_node *n;

	if (fs->nstat == fs->capstat) {
		size_t cap = fs->capstat ? 2 * fs->capstat : 64;
		void *p = realloc(fs->stat, cap * sizeof(*fs->stat));

		if (!p)
			return NULL;
		fs->stat = p;
		fs->capstat = cap;
	}
	n = calloc(1, sizeof(*n));
	if (!n || !(n->name = strdup(name))) {
		free(n);
		return NULL;
	}
	n->kind = kind;
	n->parent = parent;
	n->ino = fs->nstat + 1;
	fs->stat[fs->nstat++] = n;
	if (parent) {
		void *p = realloc(parent->kids,
				  (parent->nkids + 1) * sizeof(*parent->kids));

		if (!p)
			return NULL; /* n is owned by fs->stat already */
		parent->kids = p;
		parent->kids[parent->nkids++] = n;
		n->st = parent->st;
		n->ds = parent->ds;
	}
	return n;
}

static void fstore_free(struct zrfs_fstore *st)
{
	if (!st)
		return;
	zrfs_elog_free(st->log);
	free(st->path);
	free(st);
}

static int open_store(struct zrfs_fs *fs, const char *abs, const char *rel,
		      struct zrfs_fstore **out)
{
	struct zrfs_fstore *st = calloc(1, sizeof(*st));
	int err;

	if (!st || !(st->path = strdup(*rel ? rel : ".")) ||
	    !(st->log = zrfs_elog_new()))
		goto nomem;
	err = zr_store_open(abs, (fs->opts.ro ? ZR_OPEN_RDONLY : 0) |
			    (fs->opts.follow_ms ? ZR_OPEN_FOLLOW : 0), &st->zs);
	if (err) {
		if (err == ZR_E_BUSY)
			fprintf(stderr, "zrecordfs: store busy: %s (%s)\n", abs,
				fs->opts.ro && !fs->opts.follow_ms ?
				"a writer holds its lock; -o follow reads "
				"beside it" : "another mount or writer holds "
				"its lock");
		else
			fprintf(stderr, "zrecordfs: cannot open store %s: %s\n",
				abs, *zr_errmsg() ? zr_errmsg() :
				zr_strerror(err));
		fstore_free(st);
		return err;
	}
	if (zr_store_lock_warning(st->zs))
		fprintf(stderr, "zrecordfs: warning: %s\n",
			zr_store_lock_warning(st->zs));
	/* A recovered journal (SQLite's hot-journal rule, even under -o ro):
	 * the user learns what is left to do where they look. */
	if (zr_store_recovered(st->zs))
		zrfs_elog_add(st->log, st->path, "%s",
			      zr_store_recovered(st->zs));
	st->id = fs->nstores;
	*out = st;
	return 0;
nomem:
	fstore_free(st);
	fprintf(stderr, "zrecordfs: out of memory\n");
	return -ENOMEM;
}

static int add_stores(struct zrfs_fs *fs, struct zrfs_fstore *st)
{
	void *p = realloc(fs->stores, (fs->nstores + 1) * sizeof(*fs->stores));

	if (!p)
		return -ENOMEM;
	fs->stores = p;
	fs->stores[fs->nstores++] = st;
	return 0;
}

/* The fixed files of a store folder. */
static int store_kids(struct zrfs_fs *fs, struct zrfs_node *n)
{
	static const struct {
		const char *name;
		enum zrfs_kind kind;
	} files[] = {
		{ "records", ZRFS_K_RECDIR },
		{ "batch", ZRFS_K_BATCHDIR },
		{ "append", ZRFS_K_APPEND },
		{ "stats", ZRFS_K_STATS },
		{ "schema", ZRFS_K_SCHEMA },
		{ "errors", ZRFS_K_ERRORS },
		{ "sync", ZRFS_K_SYNC },
		{ "compact", ZRFS_K_COMPACT },
		{ "delete", ZRFS_K_DELETE },
	};

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		struct zrfs_node *k = node_new(fs, files[i].kind, files[i].name,
					      n);

		if (!k)
			return -ENOMEM;
		if (k->kind == ZRFS_K_RECDIR)
			n->st->records_ino = k->ino;
	}
	return 0;
}

static int mount_store(struct zrfs_fs *fs, struct zrfs_node *parent,
		       const char *name, const char *abs, const char *rel,
		       struct zrfs_fstore **out)
{
	struct zrfs_node *n;
	struct zrfs_fstore *st;
	int err = open_store(fs, abs, rel, &st);

	if (err)
		return err;
	if (add_stores(fs, st)) {
		zr_store_close(st->zs);
		fstore_free(st);
		return -ENOMEM;
	}
	n = node_new(fs, ZRFS_K_STORE, name, parent);
	if (!n)
		return -ENOMEM;
	n->st = st;
	n->ds = NULL;
	*out = st;
	return store_kids(fs, n);
}

static int scan(struct zrfs_fs *fs, struct zrfs_node *dir, const char *abs,
		const char *rel);

/* NAME.mix.json's folder NAME.mix (mixture.h); its files come once the
 * whole tree is there (mix_files). */
static int mix_folder(struct zrfs_fs *fs, struct zrfs_node *dir,
		      const char *name, const char *abs, const char *rel)
{
	char *folder = strndup(name, strlen(name) - strlen(".json"));
	struct zrfs_node *n = folder ? node_new(fs, ZRFS_K_DIR, folder, dir)
				     : NULL;

	free(folder);
	if (!n || !(n->mix = zrfs_mix_new(abs, rel)))
		return -ENOMEM;
	n->st = NULL;
	n->ds = NULL;
	return 0;
}

/* Every mixture folder's files: errors, and batch/ and stats if it
 * serves its sources. */
static int mix_files(struct zrfs_fs *fs)
{
	static const struct {
		const char *name;
		enum zrfs_kind kind;
	} files[] = {
		{ "batch", ZRFS_K_BATCHDIR },
		{ "stats", ZRFS_K_STATS },
		{ "errors", ZRFS_K_ERRORS },
	};

	for (size_t i = 0, n = fs->nstat; i < n; i++) {
		struct zrfs_node *d = fs->stat[i];
		int ok;

		if (d->kind != ZRFS_K_DIR || !d->mix)
			continue;
		ok = zrfs_mix_resolve(fs, d->mix);
		for (size_t f = ok ? 0 : 2; f < 3; f++) {
			struct zrfs_node *k = node_new(fs, files[f].kind,
						      files[f].name, d);

			if (!k)
				return -ENOMEM;
			k->mix = d->mix;
		}
	}
	return 0;
}

/* One directory entry: a store, a plain folder (recursed), or nothing
 * (files, symlinks and other entries are not shown). */
static int scan_entry(struct zrfs_fs *fs, struct zrfs_node *dir,
		      const char *abs, const char *rel, const char *name,
		      struct zrfs_fstore **store)
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
		err = mix_folder(fs, dir, name, cabs, crel);
	if (!S_ISDIR(st.st_mode))
		goto out;
	if (zrcommon_is_store(cabs)) {
		err = mount_store(fs, dir, name, cabs, crel, store);
	} else {
		struct zrfs_node *n = node_new(fs, ZRFS_K_DIR, name, dir);

		err = n ? scan(fs, n, cabs, crel) : -ENOMEM;
	}
out:
	free(cabs);
	free(crel);
	return err;
}

static int add_dataset(struct zrfs_fs *fs, struct zrfs_node *dir,
		       struct zrfs_dataset *ds)
{
	struct zrfs_node *b;
	void *p = realloc(fs->ds, (fs->nds + 1) * sizeof(*fs->ds));

	if (!p)
		return -ENOMEM;
	fs->ds = p;
	fs->ds[fs->nds++] = ds;
	b = node_new(fs, ZRFS_K_BATCHDIR, ZRFS_DS_BATCH, dir);
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

static int scan(struct zrfs_fs *fs, struct zrfs_node *dir, const char *abs,
		const char *rel)
{
	struct dirent **ents = NULL;
	struct zrfs_dataset *ds = NULL;
	int n = scandir(abs, &ents, not_dot, alphasort), err = 0;
	size_t nstores;

	if (n < 0) {
		fprintf(stderr, "zrecordfs: %s: %s\n", abs, strerror(errno));
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
		struct zrfs_fstore *st;

		if (ds && !strcmp(ents[i]->d_name, ZRFS_DS_BATCH))
			continue;
		err = scan_entry(fs, dir, abs, rel, ents[i]->d_name, &st);
		if (!err && st && ds && ds->n < nstores) {
			ds->names[ds->n] = dir->kids[dir->nkids - 1]->name;
			ds->st[ds->n++] = st;
		}
	}
	if (!err && ds && ds->n >= 2) {
		err = add_dataset(fs, dir, ds);
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

int zrfs_tree_build(struct zrfs_fs *fs)
{
	struct zrfs_node *root = node_new(fs, ZRFS_K_DIR, "", NULL);
	int err;

	if (!root)
		return -ENOMEM;
	if (zrcommon_is_store(fs->opts.src)) {
		/* SRC itself is a store: the mount root is its folder. */
		root->kind = ZRFS_K_STORE;
		err = open_store(fs, fs->opts.src, "", &root->st);
		if (!err)
			err = add_stores(fs, root->st);
		return err ? err : store_kids(fs, root);
	}
	err = scan(fs, root, fs->opts.src, "");
	if (!err)
		err = mix_files(fs);
	if (err == -ENOMEM)
		fprintf(stderr, "zrecordfs: out of memory\n");
	return err;
}

int zrfs_tree_free(struct zrfs_fs *fs)
{
	int first = 0;

	zrfs_park_destroy(&fs->park);
	for (size_t i = 0; i < fs->nstores; i++) {
		struct zrfs_fstore *st = fs->stores[i];
		int err = zr_store_close(st->zs);

		if (err && !first) {
			fprintf(stderr, "zrecordfs: closing %s: %s\n",
				st->path, zr_strerror(err));
			first = err;
		}
		fstore_free(st);
	}
	for (size_t i = 0; i < fs->nds; i++) {
		free(fs->ds[i]->st);
		free(fs->ds[i]->names);
		free(fs->ds[i]);
	}
	for (size_t i = 0; i < fs->nstat; i++) {
		if (fs->stat[i]->kind == ZRFS_K_DIR)
			zrfs_mix_free(fs->stat[i]->mix);
		free((char *)fs->stat[i]->name);
		free(fs->stat[i]->kids);
		free(fs->stat[i]);
	}
	free(fs->stat);
	free(fs->stores);
	free(fs->ds);
	fs->stat = NULL;
	fs->stores = NULL;
	fs->ds = NULL;
	fs->nstat = fs->nstores = fs->nds = 0;
	return first;
}
