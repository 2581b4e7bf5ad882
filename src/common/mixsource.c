/*
 * mixsource.c - finds a mixture file's sources and their fields on disk
 * (mixsource.h): the one resolver of `zrecord batch MIX.mix.json` and a
 * mount's NAME.mix folders, so both take the same stores in the same
 * order and refuse the same sources with the same words.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mixsource.h"
#include "zrecord.h"

int zrcommon_mix_named(const char *name)
{
	size_t n = strlen(name), k = strlen(ZRCOMMON_MIX_SUFFIX);

	return n > k && !strcmp(name + n - k, ZRCOMMON_MIX_SUFFIX);
}

int zrcommon_is_store(const char *dir)
{
	char *p;
	struct stat st;
	int yes;

	if (asprintf(&p, "%s/meta.zr", dir) < 0)
		return 0;
	yes = !stat(p, &st) && S_ISREG(st.st_mode);
	free(p);
	return yes;
}

int zrcommon_is_field(const char *dir, const char *name)
{
	char *p;
	struct stat st;
	int yes;

	if (asprintf(&p, "%s/%s", dir, name) < 0)
		return 0;
	yes = !lstat(p, &st) && S_ISDIR(st.st_mode) && zrcommon_is_store(p);
	free(p);
	return yes;
}

/* why, cut to cap bytes; returns err. */
__attribute__((format(printf, 4, 5)))
static int say(int err, char *why, size_t cap, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (cap && vsnprintf(why, cap, fmt, ap) >= (int)cap)
		why[cap - 1] = 0;
	va_end(ap);
	return err;
}

int zrcommon_mix_source_dir(const char *mixpath, const char *p, char **abs,
			    char *why, size_t cap)
{
	const char *slash = strrchr(mixpath, '/');
	int dir = slash ? (int)(slash - mixpath) + 1 : 0, err = 0;
	char *path;

	if (zr_path_is_url(p)) /* the library's to read, as written */
		return (*abs = strdup(p)) ? 0 :
		       say(-ENOMEM, why, cap, "%s", strerror(ENOMEM));
	if (p[0] == '/' ? !(path = strdup(p)) :
	    asprintf(&path, "%.*s%s", dir, mixpath, p) < 0)
		return say(-ENOMEM, why, cap, "%s", strerror(ENOMEM));
	*abs = realpath(path, NULL);
	if (!*abs)
		err = say(-errno, why, cap, "%s: %s%s", path, strerror(errno),
			  errno == ENOENT || errno == ENOTDIR ?
			  " (no store there)" : "");
	free(path);
	return err;
}

void zrcommon_mix_source_free(zrcommon_mixsource *s)
{
	for (uint32_t f = 0; f < s->nf; f++) {
		free(s->store[f]);
		free(s->name ? s->name[f] : NULL);
	}
	free(s->store);
	free(s->name);
	*s = (zrcommon_mixsource){ 0 };
}

/* Adds dir's field name (NULL: dir is the store) to s. */
static int add_field(zrcommon_mixsource *s, const char *dir, const char *name,
		     char *why, size_t cap)
{
	char *store = NULL, *copy = NULL;

	if (s->nf == ZRCOMMON_MIX_FIELDS)
		return say(-E2BIG, why, cap, "more than %d stores",
			   ZRCOMMON_MIX_FIELDS);
	if (!name)
		store = strdup(dir);
	else if (!(copy = strdup(name)) ||
		 asprintf(&store, "%s/%s", dir, name) < 0)
		store = NULL;
	if (!store) {
		free(copy);
		return say(-ENOMEM, why, cap, "%s", strerror(ENOMEM));
	}
	s->store[s->nf] = store;
	s->name[s->nf++] = copy;
	return 0;
}

static int not_dot(const struct dirent *e)
{
	return strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
}

/* The store folders among dir's entries, in sorted order (but a
 * ZRCOMMON_DS_BATCH among two or more, which a mount hides). */
static int dataset_fields(const char *dir, zrcommon_mixsource *out, char *why,
			  size_t cap)
{
	struct dirent **e = NULL;
	int n = scandir(dir, &e, not_dot, alphasort), err = 0, stores = 0;

	if (n < 0 && errno != ENOTDIR)
		return say(-errno, why, cap, "%s: %s", dir, strerror(errno));
	for (int i = 0; i < n; i++)
		stores += zrcommon_is_field(dir, e[i]->d_name);
	for (int i = 0; i < n; i++) {
		if (!err && zrcommon_is_field(dir, e[i]->d_name) &&
		    (stores < 2 || strcmp(e[i]->d_name, ZRCOMMON_DS_BATCH)))
			err = add_field(out, dir, e[i]->d_name, why, cap);
		free(e[i]);
	}
	free(e);
	if (!err && !out->nf)
		err = say(-ENOENT, why, cap, "neither a store nor a folder of "
			  "stores");
	return err;
}

/* A URL source (s3://BUCKET/PREFIX) is one store, asked of the library;
 * a dataset of field stores is read from a folder only, since listing a
 * prefix's stores is the mount's step of issue 29, not done yet. */
static int url_store(zrcommon_mixsource *out, const char *url, char *why,
		     size_t cap)
{
	int r = zr_store_probe(url);

	if (r < 0)
		return say(r, why, cap, "%s", zr_errmsg());
	if (r == 0)
		return say(-ENOENT, why, cap, "%s: no store there (its "
			   "meta.zr is missing; a URL source is one store, "
			   "a dataset's field stores are named one by one "
			   "as sources or read from a folder)", url);
	return add_field(out, url, NULL, why, cap);
}

int zrcommon_mix_source_fields(const char *dir, zrcommon_mixsource *out,
			       char *why, size_t cap)
{
	int err;

	*out = (zrcommon_mixsource){ 0 };
	out->store = calloc(ZRCOMMON_MIX_FIELDS, sizeof(*out->store));
	out->name = calloc(ZRCOMMON_MIX_FIELDS, sizeof(*out->name));
	if (!out->store || !out->name)
		err = say(-ENOMEM, why, cap, "%s", strerror(ENOMEM));
	else if (zr_path_is_url(dir))
		err = url_store(out, dir, why, cap);
	else if (zrcommon_is_store(dir))
		err = add_field(out, dir, NULL, why, cap);
	else
		err = dataset_fields(dir, out, why, cap);
	if (err)
		zrcommon_mix_source_free(out);
	return err;
}

void zrcommon_mix_sources_free(zrcommon_mixsource *src, uint32_t k)
{
	for (uint32_t s = 0; src && s < k; s++)
		zrcommon_mix_source_free(&src[s]);
	free(src);
}

int zrcommon_mix_sources(const char *mixpath, const zrcommon_mixfile *f,
			 zrcommon_mixsource **out, char *why, size_t cap)
{
	zrcommon_mixsource *src = calloc(f->k, sizeof(*src));
	char reason[512];
	int err = src ? 0 : -ENOMEM;

	for (uint32_t s = 0; !err && s < f->k; s++) {
		char *dir = NULL;

		err = zrcommon_mix_source_dir(mixpath, f->path[s], &dir,
					      reason, sizeof(reason));
		if (!err)
			err = zrcommon_mix_source_fields(dir, &src[s], reason,
							 sizeof(reason));
		free(dir);
		if (err)
			say(err, why, cap, "source %u (\"%s\"): %s", s,
			    f->path[s], reason);
	}
	if (err == -ENOMEM && !src)
		say(err, why, cap, "%s", strerror(ENOMEM));
	if (err) {
		zrcommon_mix_sources_free(src, f->k);
		src = NULL;
	}
	*out = src;
	return err;
}

static int same_name(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* A field's name in a message: a store source's has none. */
static const char *or_none(const char *name)
{
	return name ? name : "(none: a store)";
}

int zrcommon_mix_same_fields(const zrcommon_mixsource *src, uint32_t k,
			     char *why, size_t cap)
{
	for (uint32_t s = 1; s < k; s++) {
		if (src[s].nf != src[0].nf)
			return say(-EINVAL, why, cap, "source %u has %u "
				   "stores, source 0 %u (sources need the same "
				   "fields)", s, src[s].nf, src[0].nf);
		for (uint32_t f = 0; f < src[0].nf; f++)
			if (!same_name(src[s].name[f], src[0].name[f]))
				return say(-EINVAL, why, cap, "source %u has a "
					   "field %s where source 0 has %s "
					   "(sources need the same fields)", s,
					   or_none(src[s].name[f]),
					   or_none(src[0].name[f]));
	}
	return 0;
}
