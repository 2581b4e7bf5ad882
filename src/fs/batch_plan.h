/*
 * batch_plan.h - a batch file's plan, the one type the daemon's batch
 * code shares: file_bytes.c makes and fills it, a mixture's draw
 * (mix_batch.h) puts its streams and records in.  A header of its own so
 * that those two depend on it and not on each other.
 */
#ifndef ZRFS_BATCH_PLAN_H
#define ZRFS_BATCH_PLAN_H

#include "fs.h"
#include "npy_file.h"

/* A batch file's layout: planned (zrfs_plan_make), then filled
 * (zrfs_plan_fill) through the same views. */
struct zrfs_plan {
	const struct zrfs_node *node;
	uint64_t *idx;		/* this rank's batch indices         */
	uint64_t length;	/* the records it samples from       */
	uint64_t epoch;		/* its views' (zrfs_views_epoch)     */
	uint64_t count;
	zrfile_source *streams; /* the node's stores, for the encoder */
	size_t nst;
	zrfile_npy file;	/* the layout, and what fills it     */
	uint64_t total;		/* bytes of the file                 */
	uint64_t *lens;		/* a mixture's source lengths drawn
				 * at, unless the node's (mixture.h) */
	/* a packed or padded form: what its lookup kept (shape_cache.h), or
	 * what this plan read for a lookup to keep */
	int kept;		/* planned from what was kept        */
	char *recs;		/* its records gathered, or NULL     */
	uint64_t *roff;		/* their boundaries                  */
};

#endif
