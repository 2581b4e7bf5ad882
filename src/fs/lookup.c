/*
 * lookup.c - inode numbers and names: the static tree's arrays, the dynamic
 * node tables (records, batch files, batch folders; by inode and by name
 * and content version), and the grammar of the virtual names
 * (records/I.npy, batch/[MODE/B/]SEED-STEP.{npy,npz}, ...).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "file_bytes.h"
#include "lookup.h"
#include "mixture.h"
#include "u64.h"

#define DYN_FIRST (1ull << 32)

static uint64_t hash(uint64_t z)
{
	z ^= z >> 30;
	z *= 0xBF58476D1CE4E5B9ull;
	z ^= z >> 27;
	z *= 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

int zrfs_ns_init(struct zrfs_fs *fs)
{
	fs->capdyn = 1024;
	fs->ndyn = 0;
	fs->next_ino = DYN_FIRST;
	fs->dyn = calloc(fs->capdyn, sizeof(*fs->dyn));
	fs->kdyn = calloc(fs->capdyn, sizeof(*fs->kdyn));
	if (!fs->dyn || !fs->kdyn)
		return -ENOMEM;
	pthread_mutex_init(&fs->tables_mu, NULL);
	return 0;
}

void zrfs_ns_free(struct zrfs_fs *fs)
{
	for (size_t i = 0; fs->dyn && i < fs->capdyn; i++) {
		struct zrfs_node *n = fs->dyn[i], *next;

		for (; n; n = next) {
			next = n->next;
			free(n->lens);
			free(n);
		}
	}
	free(fs->dyn);
	free(fs->kdyn);
	fs->dyn = fs->kdyn = NULL;
	pthread_mutex_destroy(&fs->tables_mu);
}

/* What a dynamic node's name means: equal for two lookups of one name. */
static int same_name(const struct zrfs_node *a, const struct zrfs_node *b)
{
	return a->kind == b->kind && a->st == b->st && a->ds == b->ds &&
	       a->mix == b->mix &&
	       a->depth == b->depth && a->mode == b->mode &&
	       a->bsize == b->bsize && a->seed == b->seed &&
	       a->step == b->step && a->form == b->form && a->idx == b->idx;
}

static uint64_t name_hash(const struct zrfs_node *n)
{
	uint64_t h = hash((uintptr_t)n->st ^ (uintptr_t)n->ds ^
			  (uintptr_t)n->mix ^
			  ((uint64_t)n->kind << 56 | (uint64_t)n->depth << 48 |
			   (uint64_t)n->mode << 40 | (uint64_t)n->form << 32));

	h = hash(h ^ n->idx ^ n->bsize);
	return hash(h ^ n->seed ^ hash(n->step));
}

/* Caller holds tables_mu. */
static struct zrfs_node **slot(struct zrfs_fs *fs, fuse_ino_t ino)
{
	struct zrfs_node **p = &fs->dyn[hash(ino) & (fs->capdyn - 1)];

	while (*p && (*p)->ino != ino)
		p = &(*p)->next;
	return p;
}

/* Caller holds tables_mu.  Where n is (or goes) in the by-name table. */
static struct zrfs_node **kslot(struct zrfs_fs *fs, const struct zrfs_node *n)
{
	struct zrfs_node **p = &fs->kdyn[name_hash(n) & (fs->capdyn - 1)];

	while (*p && *p != n)
		p = &(*p)->knext;
	return p;
}

/* Caller holds tables_mu.  The node named as tmpl that still shows what a
 * node made from tmpl would, or NULL. */
static struct zrfs_node *kfind(struct zrfs_fs *fs, const struct zrfs_node *tmpl)
{
	struct zrfs_node *n = fs->kdyn[name_hash(tmpl) & (fs->capdyn - 1)];

	for (; n; n = n->knext)
		if (same_name(n, tmpl) && (tmpl->kind == ZRFS_K_RECORD ?
					   zrfs_rec_same(n, tmpl->ver[0]) :
					   !memcmp(n->ver, tmpl->ver,
						   sizeof(tmpl->ver))))
			return n;
	return NULL;
}

/* Caller holds tables_mu.  Doubling keeps chains short; failure to grow only
 * costs speed. */
static void grow(struct zrfs_fs *fs)
{
	size_t cap = fs->capdyn * 2;
	struct zrfs_node **t = calloc(cap, sizeof(*t));
	struct zrfs_node **k = calloc(cap, sizeof(*k));

	if (!t || !k) {
		free(t);
		free(k);
		return;
	}
	for (size_t i = 0; i < fs->capdyn; i++) {
		struct zrfs_node *n = fs->dyn[i], *next;

		for (; n; n = next) {
			size_t b = hash(n->ino) & (cap - 1);
			size_t kb = name_hash(n) & (cap - 1);

			next = n->next;
			n->next = t[b];
			t[b] = n;
			n->knext = k[kb];
			k[kb] = n;
		}
	}
	free(fs->dyn);
	free(fs->kdyn);
	fs->dyn = t;
	fs->kdyn = k;
	fs->capdyn = cap;
}

struct zrfs_node *zrfs_ns_get(struct zrfs_fs *fs, fuse_ino_t ino)
{
	struct zrfs_node *n;

	if (ino >= 1 && ino <= fs->nstat)
		return fs->stat[ino - 1];
	pthread_mutex_lock(&fs->tables_mu);
	n = *slot(fs, ino);
	pthread_mutex_unlock(&fs->tables_mu);
	return n;
}

/* Adds a kernel reference to the node with tmpl's name and content, made
 * (under a fresh inode) if there is none: a name whose content changed
 * gets a new inode, and the old one stays for the kernel's references.
 * Records: tmpl->ver[0] is its lookup view's epoch (zrfs_rec_same). */
static int dyn_ref(struct zrfs_fs *fs, const struct zrfs_node *tmpl,
		   struct zrfs_node **out)
{
	struct zrfs_node *n;
	int err = 0;

	pthread_mutex_lock(&fs->tables_mu);
	n = kfind(fs, tmpl);
	if (!n) {
		n = malloc(sizeof(*n));
		if (!n) {
			err = -ENOMEM;
			goto out;
		}
		*n = *tmpl;
		n->ino = fs->next_ino++;
		n->nlookup = 0;
		if (fs->ndyn >= fs->capdyn)
			grow(fs);
		n->next = NULL;
		*slot(fs, n->ino) = n;
		n->knext = NULL;
		*kslot(fs, n) = n;
		fs->ndyn++;
	}
	n->nlookup++;
	*out = n;
out:
	pthread_mutex_unlock(&fs->tables_mu);
	return err;
}

void zrfs_ns_hold(struct zrfs_fs *fs, struct zrfs_node *n)
{
	if (n->ino <= fs->nstat)
		return;
	pthread_mutex_lock(&fs->tables_mu);
	n->nlookup++;
	pthread_mutex_unlock(&fs->tables_mu);
}

void zrfs_ns_forget(struct zrfs_fs *fs, fuse_ino_t ino, uint64_t nlookup)
{
	struct zrfs_node **p, *n;

	if (ino <= fs->nstat)
		return;
	pthread_mutex_lock(&fs->tables_mu);
	p = slot(fs, ino);
	n = *p;
	if (n) {
		n->nlookup = n->nlookup > nlookup ? n->nlookup - nlookup : 0;
		if (!n->nlookup) {
			*p = n->next;
			*kslot(fs, n) = n->knext;
			fs->ndyn--;
			free(n->lens);
			free(n);
		}
	}
	pthread_mutex_unlock(&fs->tables_mu);
}

int zrfs_ns_records(struct zrfs_fs *fs, const struct zrfs_fstore *st,
		   uint64_t **idx, size_t *count)
{
	uint64_t *v = NULL;
	size_t n = 0;
	int err = 0;

	pthread_mutex_lock(&fs->tables_mu);
	if (fs->ndyn && !(v = malloc(fs->ndyn * sizeof(*v)))) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < fs->capdyn; i++)
		for (struct zrfs_node *d = fs->dyn[i]; d; d = d->next)
			if (d->kind == ZRFS_K_RECORD && d->st == st)
				v[n++] = d->idx;
out:
	pthread_mutex_unlock(&fs->tables_mu);
	*idx = v;
	*count = n;
	return err;
}

static int ends_with(const char *s, size_t len, const char *suf, size_t *stem)
{
	size_t k = strlen(suf);

	if (len <= k || memcmp(s + len - k, suf, k))
		return 0;
	*stem = len - k;
	return 1;
}

static int lookup_record(struct zrfs_fs *fs, struct zrfs_node *dir,
			 const char *name, struct zrfs_node **out)
{
	struct zrfs_node t = { .kind = ZRFS_K_RECORD, .st = dir->st };
	size_t stem;
	int err;

	if (ends_with(name, strlen(name), ".png", &stem))
		t.form = ZRFS_F_PNG;
	else if (!ends_with(name, strlen(name), ".npy", &stem))
		return -ENOENT;
	if (zrfs_parse_u64(name, stem, &t.idx) ||
	    t.idx >= zr_store_length(dir->st->zs))
		return -ENOENT;
	err = zrfs_rec_version(dir->st, t.idx, t.form, &t.size, &t.ver[0]);
	/* only the records that are images have a .png */
	if (err == ZR_E_DTYPE || err == ZR_E_SHAPE)
		err = -ENOENT;
	if (!err)
		err = dyn_ref(fs, &t, out);
	return err;
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
	return ZRFS_F_FLAT + form;
}

/* SEED-STEP followed by the suffix of a form this folder serves. */
static int parse_batch_name(const struct zrfs_node *dir, const char *name,
			    struct zrfs_node *t)
{
	size_t len = strlen(name), stem;
	const char *dash;
	int npz = !dir->st || zr_store_schema(dir->st->zs)->ragged, flat;
	int flats = npz && dir->st, recs = 1;

	if (dir->mix) /* as a store's or a dataset's (mixture.h) */
		recs = !zrfs_mix_forms(dir->mix, &npz, &flats);
	if (ends_with(name, len, ".indices.npy", &stem))
		t->form = ZRFS_F_IDX;
	else if (!recs)
		return -ENOENT;
	else if (flats && (flat = flat_form(name, len, &stem)))
		t->form = flat;
	else if (!npz && ends_with(name, len, ".npy", &stem))
		t->form = ZRFS_F_NPY;
	else if (npz && ends_with(name, len, ".npz", &stem))
		t->form = ZRFS_F_NPZ;
	else
		return -ENOENT;
	dash = memchr(name, '-', stem);
	if (!dash || zrfs_parse_u64(name, dash - name, &t->seed) ||
	    zrfs_parse_u64(dash + 1, stem - (dash + 1 - name), &t->step))
		return -ENOENT;
	return 0;
}

static int lookup_batch(struct zrfs_fs *fs, struct zrfs_node *dir,
			const char *name, struct zrfs_node **out)
{
	/* Only what the folder's name fixed: a dynamic folder's table links
	 * change under tables_mu meanwhile. */
	struct zrfs_node t = {
		.kind = dir->kind, .st = dir->st, .ds = dir->ds,
		.mix = dir->mix,
		.depth = dir->depth, .mode = dir->mode, .bsize = dir->bsize,
	};
	uint64_t v;
	int err;

	if (dir->depth == 0) {
		t.mode = fs->opts.mode;
		t.bsize = fs->opts.bsize;
		if (zr_sampler_mode_parse(name, &t.mode) == 0) {
			t.depth = 1;
			return dyn_ref(fs, &t, out);
		}
	} else if (dir->depth == 1) {
		if (zrfs_parse_u64(name, strlen(name), &v) || !v ||
		    v > (1u << 24))
			return -ENOENT;
		t.bsize = v;
		t.depth = 2;
		return dyn_ref(fs, &t, out);
	}
	err = parse_batch_name(dir, name, &t);
	if (err)
		return err;
	t.kind = ZRFS_K_BATCH;
	err = zrfs_batch_lookup(fs, &t);
	if (!err)
		err = dyn_ref(fs, &t, out);
	if (err || (*out)->lens != t.lens)
		free(t.lens); /* a node of this content had its own */
	return err;
}

static int lookup_static(struct zrfs_node *dir, const char *name,
			 struct zrfs_node **out)
{
	for (size_t i = 0; i < dir->nkids; i++) {
		struct zrfs_node *k = dir->kids[i];

		if (strcmp(k->name, name))
			continue;
		*out = k;
		return 0;
	}
	return -ENOENT;
}

int zrfs_ns_lookup(struct zrfs_fs *fs, struct zrfs_node *parent,
		  const char *name, struct zrfs_node **out)
{
	switch (parent->kind) {
	case ZRFS_K_DIR:
	case ZRFS_K_STORE:
		return lookup_static(parent, name, out);
	case ZRFS_K_RECDIR:
		return lookup_record(fs, parent, name, out);
	case ZRFS_K_BATCHDIR:
		return lookup_batch(fs, parent, name, out);
	default:
		return -ENOTDIR;
	}
}
