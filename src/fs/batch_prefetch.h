/*
 * batch_prefetch.h - the daemon's side of the prefetcher (src/prefetch):
 * which sequence a batch node belongs to, how a step of it is gathered
 * ahead, and the calls batch.c and main.c make.  See zrecordfs(8),
 * "Prefetch".
 */
#ifndef ZRFS_BATCH_PREFETCH_H
#define ZRFS_BATCH_PREFETCH_H

#include "fs.h"

/* Starts the prefetcher unless -o prefetch=0 (a failure to start is
 * reported and the mount serves without it). */
void zrfs_pf_start(struct zrfs_fs *fs);
/* Stops it and frees what it holds; reports what it did on stderr. */
void zrfs_pf_stop(void);
/* At a batch open whose open file shows the node's own content (not
 * fresh, open_file.h): 1 when the file now holds the node's bytes,
 * gathered ahead (zrtree_file_adopt), else 0. */
int zrfs_pf_take(struct zrfs_fh *fh);
/* After zrfs_pf_take gave fh its bytes, with no lock held and before the
 * open's reply: hands them to the kernel's page cache of the node
 * (fuse_lowlevel_notify_store), which the open's keep_cache keeps, so the
 * reads that follow need no round trip to the daemon.  Nothing for a
 * handle served past the page cache. */
void zrfs_pf_store(struct zrfs_fs *fs, const struct zrfs_fh *fh);
/* A batch open or read starts (+1) or ends (-1): the prefetch pauses
 * meanwhile.  Any thread. */
void zrfs_pf_busy(int delta);
/* After a batch open succeeded: epoch is the sum of its views' epochs
 * (zrtree_views_epoch), what the node's stores show now; steps gathered
 * at another are dropped. */
void zrfs_pf_hint(const struct zrfs_fh *fh, uint64_t epoch);

#endif
