/*
 * names.c - the grammar of the names under a store's, a dataset's and a
 * mixture's folders (tree.h, zrtree_lookup): records/I.npy and I.png
 * (an encoded-image store's also I.jpg, I.orig.png, I.webp),
 * batch/[MODE/B/]SEED-STEP with the suffix of each form the folder
 * serves, and the fixed files.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "file_bytes.h"
#include "form_table.h"
#include "mixture.h"
#include "u64.h"

/* The form of name[0..len): the one whose suffix is the name from its
 * first dot on, among those that apply to on (form_table.h); -1 if none.
 * *stem: the bytes before the dot. */
static int form_named(const char *name, size_t len, unsigned on,
		      int mixture, size_t *stem)
{
	const char *dot = memchr(name, '.', len);

	if (!dot)
		return -1;
	*stem = dot - name;
	return zrfile_form_by_suffix(dot, len - *stem, on, mixture);
}

/* An encoded-image store's records have files of their own (form_table.h,
 * ZRFILE_ON_IMAGE): decoded, and their stored bytes. */
static int lookup_record(const struct zrtree_node *dir, const char *name,
			 struct zrtree_node *t)
{
	unsigned on = zr_store_images(dir->st->zs) ? ZRFILE_ON_IMAGE
						   : ZRFILE_ON_RECORD;
	size_t stem;
	int err;

	*t = (struct zrtree_node){ .kind = ZRTREE_K_RECORD, .st = dir->st };
	t->form = form_named(name, strlen(name), on, 0, &stem);
	if (t->form < 0 || zrtree_parse_u64(name, stem, &t->idx) ||
	    t->idx >= zr_store_length(dir->st->zs))
		return -ENOENT;
	err = zrtree_rec_version(dir->st, t->idx, t->form, &t->size,
				 &t->ver[0]);
	if (err == ZR_E_IMAGE) /* its header does not decode: say why */
		zrtree_rec_log(t, zr_errmsg());
	/* only the records that are images have a .png, and a stored
	 * image only the suffix of its format */
	return err == ZR_E_DTYPE || err == ZR_E_SHAPE ? -ENOENT : err;
}

/* SEED-STEP followed by the suffix of a form this folder serves: those
 * of its kind, a store's, a dataset's (named fields) or a mixture's
 * (mixture.h). */
static int parse_batch_name(const struct zrtree_node *dir, const char *name,
			    struct zrtree_node *t)
{
	size_t len = strlen(name), stem;
	const char *dash;
	unsigned on = !dir->st ? ZRFILE_ON_FIELDS :
		      zr_store_schema(dir->st->zs)->ragged ? ZRFILE_ON_RAGGED :
		      ZRFILE_ON_DENSE;

	if (dir->mix)
		on = zrtree_mix_on(dir->mix);
	else if (dir->st && zr_store_images(dir->st->zs))
		on |= ZRFILE_ON_IMAGES; /* .npy: decoded (-o decode=) */
	t->form = form_named(name, len, on, dir->mix != NULL, &stem);
	if (t->form < 0)
		return -ENOENT;
	dash = memchr(name, '-', stem);
	if (!dash || zrtree_parse_u64(name, dash - name, &t->seed) ||
	    zrtree_parse_u64(dash + 1, stem - (dash + 1 - name), &t->step))
		return -ENOENT;
	return 0;
}

static int lookup_batch(struct zrtree *tree, const struct zrtree_node *dir,
			const char *name, struct zrtree_node *t)
{
	/* Only what the folder's name fixed: the host's fields of a
	 * dynamic folder may change meanwhile. */
	uint64_t v;
	int err;

	*t = (struct zrtree_node){
		.kind = dir->kind, .st = dir->st, .ds = dir->ds,
		.mix = dir->mix,
		.depth = dir->depth, .mode = dir->mode, .bsize = dir->bsize,
	};
	if (dir->depth == 0) {
		t->mode = tree->run->mode;
		t->bsize = tree->run->bsize;
		if (zr_sampler_mode_parse(name, &t->mode) == 0) {
			t->depth = 1;
			return 0;
		}
	} else if (dir->depth == 1) {
		if (zrtree_parse_u64(name, strlen(name), &v) || !v ||
		    v > (1u << 24))
			return -ENOENT;
		t->bsize = v;
		t->depth = 2;
		return 0;
	}
	err = parse_batch_name(dir, name, t);
	if (err)
		return err;
	t->kind = ZRTREE_K_BATCH;
	return zrtree_batch_lookup(tree, t);
}

static int lookup_static(const struct zrtree_node *dir, const char *name,
			 struct zrtree_node **out)
{
	for (size_t i = 0; i < dir->nkids; i++) {
		if (!strcmp(dir->kids[i]->name, name)) {
			*out = dir->kids[i];
			return 0;
		}
	}
	return -ENOENT;
}

int zrtree_lookup(struct zrtree *t, const struct zrtree_node *dir,
		  const char *name, struct zrtree_node **kid,
		  struct zrtree_node *tmpl)
{
	*kid = NULL;
	switch (dir->kind) {
	case ZRTREE_K_DIR:
	case ZRTREE_K_STORE:
		return lookup_static(dir, name, kid);
	case ZRTREE_K_RECDIR:
		return lookup_record(dir, name, tmpl);
	case ZRTREE_K_BATCHDIR:
		return lookup_batch(t, dir, name, tmpl);
	default:
		return -ENOTDIR;
	}
}
