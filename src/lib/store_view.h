/*
 * store_view.h - snapshots, views and the delete log (store_view.c): what
 * one read call sees of the table, and what deletes leave for the views
 * begun before them.
 */
#ifndef ZR_STORE_VIEW_H
#define ZR_STORE_VIEW_H

#include "store_io.h"

/* The snapshot of the store as it is now (the caller holds rw shared):
 * what a call outside a view reads. */
void zr__snap_now(const zr_store *s, struct zr__snap *out);
/* Entry idx as a snapshot with a log depth sees it. */
int zr__view_loc(const zr_store *s, const struct zr__snap *sn, uint64_t idx,
		 zr_loc *out);

/* View v's snapshot (the caller holds rw shared). */
void zr__view_snap(const zr_view *v, struct zr__snap *out);
/* Takes rw shared for a call through v (NULL: an implicit view): 0, or
 * ZR_E_BUSY at once for a ZR_VIEW_TRY view while a delete or compact
 * holds or awaits it. */
int zr__view_rdlock(zr_store *s, const zr_view *v);

/* Views and deletes, called by delete and compact under
 * the exclusive rw.  log_make records what deleting sorted[0..n)
 * (descending, unique) from a table of len entries will overwrite, if a
 * view lives (*out NULL if none; ZR_E_BUSY past the log's bound);
 * log_publish makes it the newest and counts the epoch (log may be NULL:
 * a delete nothing else saw still changes the epoch); log_drop frees an
 * unpublished one.  views_block fails compact with ZR_E_BUSY while a view
 * begun before the newest delete lives.  views_free is close's. */
int zr__log_make(zr_store *s, const uint64_t *sorted, size_t n, uint64_t len,
		 struct zr__dlog **out);
void zr__log_publish(zr_store *s, struct zr__dlog *log,
		      const uint64_t *sorted, size_t n);
void zr__log_drop(struct zr__dlog *log);
int zr__views_block(zr_store *s, const char *what);
void zr__views_free(zr_store *s);

/* Entry idx as snapshot sn sees it, with no guard of its own (for the fn
 * of a zr__maps_read); ZR_E_RANGE past sn->len.  A snapshot no delete
 * came after reads the table as the plain calls do. */
static inline int zr__snap_loc(const zr_store *s, const struct zr__snap *sn,
			       uint64_t idx, zr_loc *out)
{
	if (!sn->depth)
		return zr__loc_read(s, sn->meta, idx, sn->len, sn->tail, out);
	return zr__view_loc(s, sn, idx, out);
}

/* The same, guarded on its own. */
int zr__snap_loc_get(const zr_store *s, const struct zr__snap *sn,
		     uint64_t idx, zr_loc *out);

#endif
