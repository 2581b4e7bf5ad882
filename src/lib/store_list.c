/*
 * store_list.c - zr_store_list (zrecord.h): the stores at and under an
 * s3:// prefix, found by listing it one folder level at a time
 * (s3_list.c) the way a mount scans a local folder: a folder holding
 * meta.zr (plain layout) or manifest (published layout) is a store and
 * is not searched further; a published store's parts/ is never listed.
 * The bucket's names are untrusted: one budget of ZR_STORE_LIST_MAX keys
 * and folders bounds the requests, the memory and the answer.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "s3.h"
#include "s3_manifest.h"

/* Deeper folders are passed over: a bound on the recursion. */
#define DEPTH_MAX 32

struct walk {
	struct zr__s3_conf conf;
	struct zr__s3_obj obj; /* the URL's: its bucket and key */
	size_t budget;
	struct zr__s3_names found;
};

/* Whether a level's keys make its folder a store. */
static int is_store(const struct zr__s3_names *keys)
{
	for (size_t i = 0; i < keys->n; i++)
		if (!strcmp(keys->v[i], "meta.zr") ||
		    !strcmp(keys->v[i], ZR__MANIFEST_KEY))
			return 1;
	return 0;
}

/* rel joined to base with '/' (either may be ""), then tail. */
static char *join(const char *base, const char *rel, const char *tail)
{
	char *p;

	return asprintf(&p, "%s%s%s%s", base, *base && *rel ? "/" : "", rel,
			tail) < 0 ? NULL : p;
}

static int level(struct walk *w, const char *rel, unsigned depth);

/* The folders of a level that is no store, each searched. */
static int descend(struct walk *w, const char *rel, unsigned depth,
		   const struct zr__s3_names *dirs)
{
	int err = 0;

	for (size_t i = 0; i < dirs->n && !err; i++) {
		char *child;

		/* a folder of parts whose manifest is not written yet */
		if (!strcmp(dirs->v[i], "parts"))
			continue;
		child = join(rel, dirs->v[i], "");
		err = child ? level(w, child, depth + 1) : -ENOMEM;
		free(child);
	}
	return err;
}

/* The folder rel (relative to the URL): a store, or searched. */
static int level(struct walk *w, const char *rel, unsigned depth)
{
	struct zr__s3_list l = { 0 };
	char *url = join(w->obj.url, rel, "");
	char *prefix = join(w->obj.key, rel, *w->obj.key || *rel ? "/" : "");
	int err = url && prefix ? 0 : -ENOMEM;

	if (!err)
		err = zr__s3_list_level(&w->conf, &w->obj, url, prefix,
					&w->budget, &l);
	if (!err && is_store(&l.keys))
		err = zr__s3_names_add(&w->found, rel, strlen(rel));
	else if (!err && depth < DEPTH_MAX)
		err = descend(w, rel, depth, &l.dirs);
	zr__s3_names_free(&l.keys);
	zr__s3_names_free(&l.dirs);
	free(url);
	free(prefix);
	return err;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The walk of url (no trailing '/'), its stores into w->found. */
static int walk(struct walk *w, const char *url)
{
	int err = zr__s3_conf_load(&w->conf);

	if (!err)
		err = zr__s3_obj_parse(&w->conf, url, &w->obj);
	if (!err)
		err = level(w, "", 0);
	if (!err && !w->found.n)
		return zr__fail(ZR_E_NOSTORE, "%s: no store at or under this "
				"prefix (no meta.zr or manifest in any folder "
				"below it): check the URL", url);
	if (err)
		return zr__fail(err, "%s: listing the stores under it: %s", url,
				zr_strerror(err));
	qsort(w->found.v, w->found.n, sizeof(*w->found.v), by_name);
	return 0;
}

/* url without its trailing '/'s, or NULL without memory. */
static char *trimmed(const char *url)
{
	size_t n = strlen(url);

	while (n > strlen("s3://") && url[n - 1] == '/')
		n--;
	return strndup(url, n);
}

/* url itself is a store: the one path "". */
static int just_itself(char ***paths, size_t *n)
{
	*paths = calloc(1, sizeof(**paths));
	if (!*paths || !((*paths)[0] = strdup(""))) {
		free(*paths);
		return zr__fail(-ENOMEM, "zr_store_list: no memory");
	}
	*n = 1;
	return 0;
}

/* The stores under url (no trailing '/') found by listing it. */
static int listed(const char *url, char ***paths, size_t *n)
{
	struct walk w = { .budget = ZR_STORE_LIST_MAX };
	int err = walk(&w, url);

	zr__s3_obj_free(&w.obj);
	zr__s3_conf_free(&w.conf);
	if (err) {
		zr__s3_names_free(&w.found);
		return err;
	}
	*paths = w.found.v;
	*n = w.found.n;
	return 0;
}

int zr_store_list(const char *url, char ***paths, size_t *n)
{
	char *u;
	int err;

	zr__clear();
	if (!url || !paths || !n)
		return zr__fail(-EINVAL, "zr_store_list: bad arguments");
	*paths = NULL;
	*n = 0;
	if (strncmp(url, "s3://", strlen("s3://")))
		return zr__fail(-EPROTONOSUPPORT, "zr_store_list: %s is not "
				"an s3:// URL (a local folder is scanned with "
				"readdir)", url);
	u = trimmed(url);
	if (!u)
		return zr__fail(-ENOMEM, "zr_store_list: no memory");
	/* A store's URL needs no listing (nor the right to list). */
	err = zr_store_probe(u);
	if (err > 0)
		err = just_itself(paths, n);
	else if (!err)
		err = listed(u, paths, n);
	free(u);
	return err;
}

void zr_store_list_free(char **paths, size_t n)
{
	for (size_t i = 0; paths && i < n; i++)
		free(paths[i]);
	free(paths);
}
