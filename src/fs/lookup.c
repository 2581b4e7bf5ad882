/*
 * lookup.c - inode numbers: the static tree's, and the dynamic node tables
 * (records, batch files, batch folders; by inode and by name and content
 * version) holding the nodes the tree's names resolve to (tree.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "file_bytes.h"
#include "lookup.h"
#include "store_park.h"

#define DYN_FIRST (1ull << 32)

static uint64_t hash(uint64_t z)
{
	z ^= z >> 30;
	z *= 0xBF58476D1CE4E5B9ull;
	z ^= z >> 27;
	z *= 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

int zrfs_inode_init(struct zrfs_fs *fs)
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

void zrfs_inode_free(struct zrfs_fs *fs)
{
	for (size_t i = 0; fs->dyn && i < fs->capdyn; i++) {
		struct zrtree_node *n = fs->dyn[i], *next;

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
static int same_name(const struct zrtree_node *a, const struct zrtree_node *b)
{
	return a->kind == b->kind && a->st == b->st && a->ds == b->ds &&
	       a->mix == b->mix &&
	       a->depth == b->depth && a->mode == b->mode &&
	       a->bsize == b->bsize && a->seed == b->seed &&
	       a->step == b->step && a->form == b->form && a->idx == b->idx;
}

static uint64_t name_hash(const struct zrtree_node *n)
{
	uint64_t h = hash((uintptr_t)n->st ^ (uintptr_t)n->ds ^
			  (uintptr_t)n->mix ^
			  ((uint64_t)n->kind << 56 | (uint64_t)n->depth << 48 |
			   (uint64_t)n->mode << 40 | (uint64_t)n->form << 32));

	h = hash(h ^ n->idx ^ n->bsize);
	return hash(h ^ n->seed ^ hash(n->step));
}

/* Caller holds tables_mu. */
static struct zrtree_node **slot(struct zrfs_fs *fs, fuse_ino_t ino)
{
	struct zrtree_node **p = &fs->dyn[hash(ino) & (fs->capdyn - 1)];

	while (*p && (*p)->ino != ino)
		p = &(*p)->next;
	return p;
}

/* Caller holds tables_mu.  Where n is (or goes) in the by-name table. */
static struct zrtree_node **kslot(struct zrfs_fs *fs, const struct zrtree_node *n)
{
	struct zrtree_node **p = &fs->kdyn[name_hash(n) & (fs->capdyn - 1)];

	while (*p && *p != n)
		p = &(*p)->knext;
	return p;
}

/* Caller holds tables_mu.  The node named as tmpl that still shows what a
 * node made from tmpl would, or NULL. */
static struct zrtree_node *kfind(struct zrfs_fs *fs, const struct zrtree_node *tmpl)
{
	struct zrtree_node *n = fs->kdyn[name_hash(tmpl) & (fs->capdyn - 1)];

	for (; n; n = n->knext)
		if (same_name(n, tmpl) && (tmpl->kind == ZRTREE_K_RECORD ?
					   zrtree_rec_same(n, tmpl->ver[0]) :
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
	struct zrtree_node **t = calloc(cap, sizeof(*t));
	struct zrtree_node **k = calloc(cap, sizeof(*k));

	if (!t || !k) {
		free(t);
		free(k);
		return;
	}
	for (size_t i = 0; i < fs->capdyn; i++) {
		struct zrtree_node *n = fs->dyn[i], *next;

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

struct zrtree_node *zrfs_inode_get(struct zrfs_fs *fs, fuse_ino_t ino)
{
	struct zrtree_node *n;

	if (ino >= 1 && ino <= fs->tree.nstat)
		return fs->tree.stat[ino - 1];
	pthread_mutex_lock(&fs->tables_mu);
	n = *slot(fs, ino);
	pthread_mutex_unlock(&fs->tables_mu);
	return n;
}

/* Adds a kernel reference to the node with tmpl's name and content, made
 * (under a fresh inode) if there is none: a name whose content changed
 * gets a new inode, and the old one stays for the kernel's references.
 * Records: tmpl->ver[0] is its lookup view's epoch (zrtree_rec_same). */
static int dyn_ref(struct zrfs_fs *fs, const struct zrtree_node *tmpl,
		   struct zrtree_node **out)
{
	struct zrtree_node *n;
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

void zrfs_inode_hold(struct zrfs_fs *fs, struct zrtree_node *n)
{
	if (n->ino <= fs->tree.nstat)
		return;
	pthread_mutex_lock(&fs->tables_mu);
	n->nlookup++;
	pthread_mutex_unlock(&fs->tables_mu);
}

void zrfs_inode_forget(struct zrfs_fs *fs, fuse_ino_t ino, uint64_t nlookup)
{
	struct zrtree_node **p, *n;

	if (ino <= fs->tree.nstat)
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

int zrfs_inode_records(struct zrfs_fs *fs, const struct zrtree_store *st,
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
		for (struct zrtree_node *d = fs->dyn[i]; d; d = d->next)
			if (d->kind == ZRTREE_K_RECORD && d->st == st)
				v[n++] = d->idx;
out:
	pthread_mutex_unlock(&fs->tables_mu);
	*idx = v;
	*count = n;
	return err;
}

int zrfs_inode_lookup(struct zrfs_fs *fs, struct zrtree_node *parent,
		      const char *name, struct zrtree_node **out)
{
	struct zrtree_node t, *kid;
	int err = zrtree_lookup(&fs->tree, parent, name, &kid, &t);

	if (err || kid) {
		*out = kid;
		return zrfs_busy_to_park(err);
	}
	err = dyn_ref(fs, &t, out);
	if (err || (*out)->lens != t.lens)
		free(t.lens); /* a node of this content had its own */
	return err;
}
