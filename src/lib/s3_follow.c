/*
 * s3_follow.c - zr__s3_newer (s3_manifest.h): whether a published
 * store's newer version extends the version of a file a reader holds, so
 * that a follower (vfs_s3.c's fresh size) may take it up without mixing
 * two stores' bytes.  Push keeps every part of the old version that the
 * local file still holds and adds new ones after them, and a part's key
 * is the digest of its bytes, so a file that only grew keeps all its old
 * parts at their offsets: that is the test.  meta.zr is the exception:
 * its header page changes in place at every append, so it is taken up
 * when it did not shrink, and the engine's follow protocol judges its
 * header (a header that shrank is ZR_E_CHANGED) and reads its table
 * again, while data.zr's parts decide whether the records are the same.
 */
#include <errno.h>
#include <string.h>

#include "error.h"
#include "s3_manifest.h"

/* Whether f holds every byte of held where held has it. */
static int extends(const struct zr__mfile *held, const struct zr__mfile *f)
{
	if (f->size < held->size)
		return 0;
	if (!strcmp(held->name, "meta.zr"))
		return 1;
	if (f->n < held->n)
		return 0;
	for (size_t i = 0; i < held->n; i++)
		if (f->parts[i].off != held->parts[i].off ||
		    f->parts[i].len != held->parts[i].len ||
		    strcmp(f->parts[i].sha, held->parts[i].sha))
			return 0;
	return 1;
}

int zr__s3_newer(const struct zr__s3_conf *c, const char *prefix,
		 const struct zr__mfile *held, const char *version,
		 struct zr__mfile *out, char *out_version)
{
	struct zr__manifest m;
	const struct zr__mfile *f;
	int err = zr__manifest_fetch(c, prefix, &m);

	if (err == -ENOENT) {
		zr__cause("%s/manifest is gone: the store was removed; open "
			  "it again", prefix);
		return -ESTALE;
	}
	if (err)
		return err == ZR_E_CORRUPT ? -EIO : err;
	if (!strcmp(m.version, version)) {
		zr__manifest_free(&m);
		return 0;
	}
	f = zr__manifest_file(&m, held->name);
	if (!f || !extends(held, f)) {
		zr__cause("%s/%s: version %.12s of the store does not extend "
			  "version %.12s that this handle reads (compacted, or "
			  "another store pushed there): open it again", prefix,
			  held->name, m.version, version);
		err = -ESTALE;
	} else {
		err = zr__mfile_copy(f, out) ? -ENOMEM : 1;
		memcpy(out_version, m.version, sizeof(m.version));
	}
	zr__manifest_free(&m);
	return err;
}
