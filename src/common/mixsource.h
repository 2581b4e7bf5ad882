/*
 * mixsource.h - a mixture file's sources as fields, found on disk one way
 * for `zrecord batch MIX.mix.json` and a zrecordfs mount: each source path
 * (relative to the file's folder) names a store folder (one field, no
 * name) or a dataset folder, whose direct children that are store folders
 * (not symlinks) are its fields, named by folder name in sorted order, as
 * a mount shows them.  A source that starts with a URL scheme
 * (zr_path_is_url: s3://BUCKET/PREFIX) is taken as written and asked of
 * the library: one store, opened read-only by the command.  The command
 * opens the stores' paths; the mount maps each to the store it already
 * serves.
 */
#ifndef ZRCOMMON_MIXSOURCE_H
#define ZRCOMMON_MIXSOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "mixfile.h"

/* The most stores one source may have. */
#define ZRCOMMON_MIX_FIELDS 64
/* How a mixture file's name ends. */
#define ZRCOMMON_MIX_SUFFIX ".mix.json"
/* A mount's dataset folder (two or more stores) serves its aligned
 * batches under this name and hides an entry of the same name, so such an
 * entry is no field of a dataset source either. */
#define ZRCOMMON_DS_BATCH "@batch"

/* One source's fields: nf absolute store paths (resolved: no "..", no
 * symlink) and their names (NULL entries for a store source). */
typedef struct zrcommon_mixsource {
	uint32_t nf;
	char **store;
	char **name;
} zrcommon_mixsource;

/* Whether name (a file name, not a path) is a mixture file's. */
int zrcommon_mix_named(const char *name);
/* Whether dir is a store's folder: it holds a regular file meta.zr. */
int zrcommon_is_store(const char *dir);
/* Whether dir's entry name is a store folder itself (lstat: a symlink to
 * one is not): what a dataset folder's fields are. */
int zrcommon_is_field(const char *dir, const char *name);

/* Source path p of the mixture file at mixpath, resolved against the
 * file's folder (realpath) into a malloc'ed *abs.  0, or -errno with why
 * ("PATH: reason", cap bytes). */
int zrcommon_mix_source_dir(const char *mixpath, const char *p, char **abs,
			    char *why, size_t cap);
/* The fields of the source at the resolved folder dir, into *out (a
 * dataset's ZRCOMMON_DS_BATCH entry left out, as a mount hides it).  0, or
 * -ENOENT ("neither a store nor a folder of stores"), -E2BIG (more than
 * ZRCOMMON_MIX_FIELDS stores), another -errno, with why; *out is empty
 * then. */
int zrcommon_mix_source_fields(const char *dir, zrcommon_mixsource *out,
			       char *why, size_t cap);
void zrcommon_mix_source_free(zrcommon_mixsource *s);

/* Every source of mixture file f (read from mixpath) into a calloc'ed
 * *out of f->k.  0, or the first source's error with why as
 * "source S (\"PATH\"): reason" (*out NULL then). */
int zrcommon_mix_sources(const char *mixpath, const zrcommon_mixfile *f,
			 zrcommon_mixsource **out, char *why, size_t cap);
void zrcommon_mix_sources_free(zrcommon_mixsource *src, uint32_t k);

/* The rule for batch files of records (else only indices): every source
 * has source 0's fields, by number and name.  0, or -EINVAL with why.
 * (Their schemas must match too: zrfile_mix_check, on open stores.) */
int zrcommon_mix_same_fields(const zrcommon_mixsource *src, uint32_t k,
			     char *why, size_t cap);

#endif
