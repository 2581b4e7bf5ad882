/*
 * names.c - the grammar of the names under a store's, a dataset's and a
 * mixture's folders (tree.h, zrtree_lookup): records/I.npy and I.png,
 * batch/[MODE/B/]SEED-STEP with the suffix of each form the folder
 * serves, and the fixed files.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "file_bytes.h"
#include "mixture.h"
#include "u64.h"

static int ends_with(const char *s, size_t len, const char *suf, size_t *stem)
{
	size_t k = strlen(suf);

	if (len <= k || memcmp(s + len - k, suf, k))
		return 0;
	*stem = len - k;
	return 1;
}

static int lookup_record(const struct zrtree_node *dir, const char *name,
			 struct zrtree_node *t)
{
	size_t stem;
	int err;

	*t = (struct zrtree_node){ .kind = ZRTREE_K_RECORD, .st = dir->st };
	if (ends_with(name, strlen(name), ".png", &stem))
		t->form = ZRTREE_F_PNG;
	else if (!ends_with(name, strlen(name), ".npy", &stem))
		return -ENOENT;
	if (zrtree_parse_u64(name, stem, &t->idx) ||
	    t->idx >= zr_store_length(dir->st->zs))
		return -ENOENT;
	err = zrtree_rec_version(dir->st, t->idx, t->form, &t->size,
				 &t->ver[0]);
	/* only the records that are images have a .png */
	return err == ZR_E_DTYPE || err == ZR_E_SHAPE ? -ENOENT : err;
}

/* A ragged store's packed or padded form: SEED-STEP.SUFFIX, where SUFFIX
 * (which holds a dot) names a form (zrfile_npy_ragged_form). */
static int flat_form(const char *name, size_t len, size_t *stem)
{
	const char *dot = memchr(name, '.', len);
	int form;

	if (!dot)
		return 0;
	form = zrfile_npy_ragged_form(dot + 1, len - (dot + 1 - name));
	if (form < 0)
		return 0;
	*stem = dot - name;
	return ZRTREE_F_FLAT + form;
}

/* SEED-STEP followed by the suffix of a form this folder serves. */
static int parse_batch_name(const struct zrtree_node *dir, const char *name,
			    struct zrtree_node *t)
{
	size_t len = strlen(name), stem;
	const char *dash;
	int npz = !dir->st || zr_store_schema(dir->st->zs)->ragged, flat;
	int flats = npz && dir->st, recs = 1;

	if (dir->mix) /* as a store's or a dataset's (mixture.h) */
		recs = !zrtree_mix_forms(dir->mix, &npz, &flats);
	if (ends_with(name, len, ".indices.npy", &stem))
		t->form = ZRTREE_F_IDX;
	else if (!recs)
		return -ENOENT;
	else if (flats && (flat = flat_form(name, len, &stem)))
		t->form = flat;
	else if (!npz && ends_with(name, len, ".npy", &stem))
		t->form = ZRTREE_F_NPY;
	else if (npz && ends_with(name, len, ".npz", &stem))
		t->form = ZRTREE_F_NPZ;
	else
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
