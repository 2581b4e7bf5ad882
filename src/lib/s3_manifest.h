/*
 * s3_manifest.h - a published store's manifest (docs/many-hosts.md,
 * zrecord(5) "Published stores"): the object PREFIX/manifest names, for
 * each store file, the immutable part objects PREFIX/parts/SHA256 whose
 * bytes, one after the other, are the file.  Push writes it last (one PUT
 * is atomic), so a reader sees one whole version or the one before.
 */
#ifndef ZR_S3_MANIFEST_H
#define ZR_S3_MANIFEST_H

#include <stddef.h>
#include <stdint.h>

#include "s3.h"

#define ZR__MANIFEST_KEY "manifest"
#define ZR__PARTS_DIR "parts/"

struct zr__part {
	char sha[65];    /* of its bytes: its key is parts/SHA */
	uint64_t off;    /* where its bytes start in the file */
	uint64_t len;
	char etag[128];  /* the object's, as the PUT or HEAD answered */
};

struct zr__mfile {
	char name[32];   /* "meta.zr" */
	uint64_t size;   /* the sum of its parts */
	struct zr__part *parts;
	size_t n;
};

#define ZR__MANIFEST_FILES 4 /* meta.zr, data.zr, dict.zr, content.zr */

struct zr__manifest {
	char version[65]; /* SHA-256 of the file and part lines */
	struct zr__mfile files[ZR__MANIFEST_FILES];
	size_t nfiles;
};

void zr__manifest_free(struct zr__manifest *m);
/* The entry of file name, NULL if m has none. */
const struct zr__mfile *zr__manifest_file(const struct zr__manifest *m,
					  const char *name);
/* A deep copy of f into out; -ENOMEM. */
int zr__mfile_copy(const struct zr__mfile *f, struct zr__mfile *out);
void zr__mfile_free(struct zr__mfile *f);
/* The index of the part holding byte off of f (off < f->size). */
size_t zr__mfile_find(const struct zr__mfile *f, uint64_t off);
/* Appends part p to f; -ENOMEM. */
int zr__mfile_add(struct zr__mfile *f, const struct zr__part *p);

/* m as the manifest's text (malloc'ed, NUL-terminated), its version set
 * from its contents; NULL without memory. */
char *zr__manifest_format(struct zr__manifest *m);
/* The manifest at url (for messages) from text[0..len): 0, or
 * ZR_E_CORRUPT with a cause. */
int zr__manifest_parse(const char *text, size_t len, const char *url,
		       struct zr__manifest *m);

/* The manifest of the store at prefix ("s3://BUCKET/PREFIX"): 0 with m,
 * -ENOENT (no cause) when the prefix has none, else -errno with a
 * cause. */
int zr__manifest_fetch(const struct zr__s3_conf *c, const char *prefix,
		       struct zr__manifest *m);

/* Whether the store at prefix has a version newer than version whose file
 * held->name extends held (s3_follow.c): 1 with that entry copied into
 * out and its version into out_version[65], 0 if the manifest is still
 * version, -ESTALE with a cause if the newer one does not extend it (or
 * the manifest is gone), else -errno with a cause. */
int zr__s3_newer(const struct zr__s3_conf *c, const char *prefix,
		 const struct zr__mfile *held, const char *version,
		 struct zr__mfile *out, char *out_version);

#endif
