/*
 * file_bytes.h - record and batch files as a mount serves them: their sizes
 * from the record table and the sampler alone (getattr never decompresses)
 * and their bytes, both from the one encoder `zrecord` uses too
 * (src/files/encoder.h, where the header policy is).  A batch is planned
 * and filled by the planner `zrecord batch` uses (src/files/batch_file.h,
 * with the bounds a batch name must pass before any view); here a batch
 * node becomes its spec, read through non-waiting views.
 */
#ifndef ZRTREE_FILE_BYTES_H
#define ZRTREE_FILE_BYTES_H

#include "batch_node.h"
#include "batch_file.h"
#include "encoder.h"

/* The tree's views: begun with ZR_VIEW_TRY, so that they never wait for
 * a delete or compact but answer ZR_E_BUSY (on which the mount parks the
 * request, store_park.h). */
/* Begins the views of n stores (all or none): 0, ZR_E_BUSY while one has
 * a delete or compact running, or an error. */
int zrtree_views_begin(struct zrtree_store *const *st, size_t n, zr_view **v);
void zrtree_views_end(zr_view **v, size_t n);
/* 0 when no delete or compact of st runs now (a library call that would
 * wait for one then waits for none, unless one starts meanwhile), else
 * ZR_E_BUSY. */
int zrtree_st_probe(struct zrtree_store *st);

/* Size of record idx's file in form ZRFILE_RECORD (records/I.npy) or
 * ZRFILE_PNG (records/I.png: ZR_E_DTYPE or ZR_E_SHAPE unless the record is
 * a uint8 image), or an encoded-image store's (ZRFILE_IMAGE, _IMAGE_PNG:
 * ZR_E_IMAGE if its header does not decode; ZRFILE_STORED_*: ZR_E_DTYPE
 * for a file of another format), as view v of st shows it; -ENOENT past
 * its length.
 * Every function here gives ZR_E_BUSY where its view met a running
 * delete or compact (store_park.h). */
int zrtree_rec_size(struct zrtree_store *st, zr_view *v, uint64_t idx, int form,
		 uint64_t *size);
/* At lookup: the size, through a view begun now, and that view's epoch
 * (the node's version, see Contents in tree.h). */
int zrtree_rec_version(struct zrtree_store *st, uint64_t idx, int form,
		    uint64_t *size, uint64_t *epoch);
/* Whether record node n (looked up at delete epoch n->ver[0]) shows at
 * epoch the bytes it did: no delete between changed its index. */
int zrtree_rec_same(const struct zrtree_node *n, uint64_t epoch);
/* Fills buf (size bytes, from zrtree_rec_size) with record idx's file, as
 * view v shows it. */
int zrtree_rec_fill(struct zrtree_store *st, zr_view *v, uint64_t idx, int form,
		 char *buf, uint64_t size);

/* A failure of record node n's file into its store's errors file:
 * "records/I.SUFFIX: msg" (a record that does not decode: the library's
 * message names the store, the index and the decoder's words). */
void zrtree_rec_log(const struct zrtree_node *n, const char *msg);

/* Plans batch node n's file (zrfile_batch_plan; size_only: only what its
 * size needs), sampling from the first length records (0: all the views
 * have; a mixture: at the lengths its lookup kept, length their sum),
 * through views (one per store, zrtree_batch_stores order).  A refusal the
 * planner explains goes to the node's errors file.  -EFBIG over the
 * tree's max_batch_bytes.  Fill and free p with zrfile_batch_*. */
int zrtree_plan_make(struct zrtree *t, const struct zrtree_node *n,
		   struct zrfile_batch *p, int size_only, uint64_t length,
		   zr_view *const *views);
/* The sum of k views' delete epochs: two sets of views of the same stores
 * with the same sum show the same records at every index (epochs only
 * grow), so the batch drawn from their first N records is the same. */
uint64_t zrtree_views_epoch(zr_view *const *views, size_t k);
/* At lookup: the size and version tag of batch node n (see Contents in
 * tree.h), after refusing with -EFBIG, before any view, allocation or table
 * read, a batch that would exceed max_batch_bytes or the .npz member
 * limit whatever records it held. */
int zrtree_batch_version(struct zrtree *t, const struct zrtree_node *n,
		       uint64_t *size, uint64_t ver[2]);
/* zrtree_batch_version into t's size and ver, and of a mixture's batch
 * the source lengths it draws at into t->lens (the caller's to free). */
int zrtree_batch_lookup(struct zrtree *tree, struct zrtree_node *t);

#endif
