/*
 * ns.c - inode numbers and names: the static tree's arrays, the dynamic
 * node table (records, batch files, batch folders), and the grammar of the
 * virtual names (records/I.npy, batch/[MODE/B/]SEED-STEP.{npy,npz}, ...).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ns.h"
#include "tree.h"

#define DYN_FIRST (1ull << 32)

static uint64_t hash(uint64_t z)
{
	z ^= z >> 30;
	z *= 0xBF58476D1CE4E5B9ull;
	z ^= z >> 27;
	z *= 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

int zr__ns_init(struct zr__fs *fs)
{
	fs->capdyn = 1024;
	fs->ndyn = 0;
	fs->next_ino = DYN_FIRST;
	fs->dyn = calloc(fs->capdyn, sizeof(*fs->dyn));
	if (!fs->dyn)
		return -ENOMEM;
	pthread_mutex_init(&fs->dyn_mu, NULL);
	return 0;
}

void zr__ns_free(struct zr__fs *fs)
{
	for (size_t i = 0; i < fs->capdyn; i++) {
		struct zr__node *n = fs->dyn[i], *next;

		for (; n; n = next) {
			next = n->next;
			free(n);
		}
	}
	free(fs->dyn);
	fs->dyn = NULL;
	pthread_mutex_destroy(&fs->dyn_mu);
}

/* Caller holds dyn_mu. */
static struct zr__node **slot(struct zr__fs *fs, fuse_ino_t ino)
{
	struct zr__node **p = &fs->dyn[hash(ino) & (fs->capdyn - 1)];

	while (*p && (*p)->ino != ino)
		p = &(*p)->next;
	return p;
}

/* Caller holds dyn_mu.  Doubling keeps chains short; failure to grow only
 * costs speed. */
static void grow(struct zr__fs *fs)
{
	size_t cap = fs->capdyn * 2;
	struct zr__node **t = calloc(cap, sizeof(*t));

	if (!t)
		return;
	for (size_t i = 0; i < fs->capdyn; i++) {
		struct zr__node *n = fs->dyn[i], *next;

		for (; n; n = next) {
			size_t b = hash(n->ino) & (cap - 1);

			next = n->next;
			n->next = t[b];
			t[b] = n;
		}
	}
	free(fs->dyn);
	fs->dyn = t;
	fs->capdyn = cap;
}

struct zr__node *zr__ns_get(struct zr__fs *fs, fuse_ino_t ino)
{
	struct zr__node *n;

	if (ino >= 1 && ino <= fs->nstat)
		return fs->stat[ino - 1];
	pthread_mutex_lock(&fs->dyn_mu);
	n = *slot(fs, ino);
	pthread_mutex_unlock(&fs->dyn_mu);
	return n;
}

/* Adds a reference to the node of tmpl->ino (records), or inserts a copy
 * of tmpl under a fresh inode (ino 0). */
static int dyn_ref(struct zr__fs *fs, const struct zr__node *tmpl,
		   struct zr__node **out)
{
	struct zr__node **p, *n = NULL;
	int err = 0;

	pthread_mutex_lock(&fs->dyn_mu);
	if (tmpl->ino) {
		p = slot(fs, tmpl->ino);
		n = *p;
	}
	if (!n) {
		n = malloc(sizeof(*n));
		if (!n) {
			err = -ENOMEM;
			goto out;
		}
		*n = *tmpl;
		if (!n->ino)
			n->ino = fs->next_ino++;
		n->nlookup = 0;
		if (fs->ndyn >= fs->capdyn)
			grow(fs);
		p = slot(fs, n->ino);
		n->next = NULL;
		*p = n;
		fs->ndyn++;
	}
	n->nlookup++;
	*out = n;
out:
	pthread_mutex_unlock(&fs->dyn_mu);
	return err;
}

void zr__ns_forget(struct zr__fs *fs, fuse_ino_t ino, uint64_t nlookup)
{
	struct zr__node **p, *n;

	if (ino <= fs->nstat)
		return;
	pthread_mutex_lock(&fs->dyn_mu);
	p = slot(fs, ino);
	n = *p;
	if (n) {
		n->nlookup = n->nlookup > nlookup ? n->nlookup - nlookup : 0;
		if (!n->nlookup) {
			*p = n->next;
			fs->ndyn--;
			free(n);
		}
	}
	pthread_mutex_unlock(&fs->dyn_mu);
}

int zr__ns_records(struct zr__fs *fs, const struct zr__fstore *st,
		   uint64_t **idx, size_t *count)
{
	uint64_t *v = NULL;
	size_t n = 0;
	int err = 0;

	pthread_mutex_lock(&fs->dyn_mu);
	if (fs->ndyn && !(v = malloc(fs->ndyn * sizeof(*v)))) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < fs->capdyn; i++)
		for (struct zr__node *d = fs->dyn[i]; d; d = d->next)
			if (d->kind == ZR__K_RECORD && d->st == st)
				v[n++] = d->idx;
out:
	pthread_mutex_unlock(&fs->dyn_mu);
	*idx = v;
	*count = n;
	return err;
}

int zr__parse_u64(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;

	if (!len || len > 20 || (s[0] == '0' && len > 1))
		return -ENOENT;
	for (size_t i = 0; i < len; i++) {
		unsigned d = (unsigned char)s[i] - '0';

		if (d > 9 || v > (UINT64_MAX - d) / 10)
			return -ENOENT;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

uint64_t zr__st_length(struct zr__fstore *st)
{
	uint64_t n;

	pthread_rwlock_rdlock(&st->rw);
	n = zr_store_length(st->zs);
	pthread_rwlock_unlock(&st->rw);
	return n;
}

int zr__ds_equal_locked(const struct zr__dataset *ds, uint64_t *len)
{
	uint64_t n = zr_store_length(ds->st[0]->zs);

	for (size_t i = 1; i < ds->n; i++)
		if (zr_store_length(ds->st[i]->zs) != n)
			return 0;
	*len = n;
	return 1;
}

int zr__ds_equal(const struct zr__dataset *ds, uint64_t *len)
{
	uint64_t n = zr__st_length(ds->st[0]);

	for (size_t i = 1; i < ds->n; i++)
		if (zr__st_length(ds->st[i]) != n)
			return 0;
	*len = n;
	return 1;
}

static int ends_with(const char *s, size_t len, const char *suf, size_t *stem)
{
	size_t k = strlen(suf);

	if (len <= k || memcmp(s + len - k, suf, k))
		return 0;
	*stem = len - k;
	return 1;
}

static int lookup_record(struct zr__fs *fs, struct zr__node *dir,
			 const char *name, struct zr__node **out)
{
	struct zr__node t = { .kind = ZR__K_RECORD, .st = dir->st };
	size_t stem;

	if (!ends_with(name, strlen(name), ".npy", &stem) ||
	    zr__parse_u64(name, stem, &t.idx) ||
	    t.idx >= (1ull << ZR__REC_IDX_BITS) ||
	    t.idx >= zr__st_length(dir->st))
		return -ENOENT;
	t.ino = ZR__REC_BIT | (uint64_t)dir->st->id << ZR__REC_IDX_BITS |
		t.idx;
	return dyn_ref(fs, &t, out);
}

/* SEED-STEP followed by the suffix of a form this folder serves. */
static int parse_batch_name(const struct zr__node *dir, const char *name,
			    struct zr__node *t)
{
	size_t len = strlen(name), stem;
	const char *dash;
	int npz = !dir->st || zr_store_schema(dir->st->zs)->ragged;

	if (ends_with(name, len, ".indices.npy", &stem))
		t->form = ZR__F_IDX;
	else if (!npz && ends_with(name, len, ".npy", &stem))
		t->form = ZR__F_NPY;
	else if (npz && ends_with(name, len, ".npz", &stem))
		t->form = ZR__F_NPZ;
	else
		return -ENOENT;
	dash = memchr(name, '-', stem);
	if (!dash || zr__parse_u64(name, dash - name, &t->seed) ||
	    zr__parse_u64(dash + 1, stem - (dash + 1 - name), &t->step))
		return -ENOENT;
	return 0;
}

static int lookup_batch(struct zr__fs *fs, struct zr__node *dir,
			const char *name, struct zr__node **out)
{
	struct zr__node t = *dir;
	uint64_t v;
	int err;

	t.ino = 0;
	t.kids = NULL;
	t.nkids = 0;
	t.name = NULL;
	t.parent = NULL;
	if (dir->depth == 0) {
		t.mode = fs->opts.mode;
		t.bsize = fs->opts.bsize;
		if (zr_sampler_mode_parse(name, &t.mode) == 0) {
			t.depth = 1;
			return dyn_ref(fs, &t, out);
		}
	} else if (dir->depth == 1) {
		if (zr__parse_u64(name, strlen(name), &v) || !v ||
		    v > (1u << 24))
			return -ENOENT;
		t.bsize = v;
		t.depth = 2;
		return dyn_ref(fs, &t, out);
	}
	err = parse_batch_name(dir, name, &t);
	if (err)
		return err;
	t.kind = ZR__K_BATCH;
	return dyn_ref(fs, &t, out);
}

static int lookup_static(struct zr__node *dir, const char *name,
			 struct zr__node **out)
{
	uint64_t len;

	for (size_t i = 0; i < dir->nkids; i++) {
		struct zr__node *k = dir->kids[i];

		if (strcmp(k->name, name))
			continue;
		/* A dataset's aligned batch exists only while its streams
		 * have equal length. */
		if (k->kind == ZR__K_BATCHDIR && k->ds && !zr__ds_equal(k->ds,
									&len))
			return -ENOENT;
		*out = k;
		return 0;
	}
	return -ENOENT;
}

int zr__ns_lookup(struct zr__fs *fs, struct zr__node *parent,
		  const char *name, struct zr__node **out)
{
	switch (parent->kind) {
	case ZR__K_DIR:
	case ZR__K_STORE:
		return lookup_static(parent, name, out);
	case ZR__K_RECDIR:
		return lookup_record(fs, parent, name, out);
	case ZR__K_BATCHDIR:
		if (parent->ds) {
			uint64_t len;

			if (!zr__ds_equal(parent->ds, &len))
				return -ENOENT;
		}
		return lookup_batch(fs, parent, name, out);
	default:
		return -ENOTDIR;
	}
}
