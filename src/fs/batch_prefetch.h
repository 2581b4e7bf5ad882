/*
 * batch_prefetch.h - the daemon's side of the prefetcher (src/prefetch):
 * which sequence a batch node belongs to, how a step of it is gathered
 * ahead, and the calls batch.c and main.c make.  See zrecordfs(8),
 * "Prefetch".
 */
#ifndef ZRFS_BATCH_PREFETCH_H
#define ZRFS_BATCH_PREFETCH_H

#include "fs.h"
#include "prefetch.h"

/* Starts the prefetcher unless -o prefetch=0 (a failure to start is
 * reported and the mount serves without it). */
void zrfs_prefetch_start(struct zrfs_fs *fs);
/* Stops it and frees what it holds; reports what it did in one line
 * (zrtree_elog_note: stderr in the foreground, syslog for a daemon). */
void zrfs_prefetch_stop(void);

/* What the prefetcher is and did so far: the mount's root file shows it
 * (info_file.c) while the summary only comes at unmount. */
struct zrfs_prefetch_counts {
	unsigned depth;		/* steps ahead; 0: off (or not started)  */
	uint64_t budget;	/* its bytes at most; 0: off             */
	struct zrpf_counts n;	/* gathered, served, dropped so far      */
	uint64_t taken_over;	/* steps an open took over part-way      */
};
/* Any thread while the session runs (before zrfs_prefetch_stop). */
void zrfs_prefetch_counts(struct zrfs_prefetch_counts *out);
/* At a batch open whose open file shows the node's own content (not
 * fresh, open_file.h), with no lock held: a step gathered ahead whole
 * becomes the file's bytes (zrtree_file_adopt), which its reads copy
 * out with nothing left to decode; a step the prefetch thread is still
 * gathering is taken over part-way (zrtree_file_take_over), never
 * gathered again. */
void zrfs_prefetch_take(struct zrfs_fh *fh);
/* A batch open, read or gather starts (+1) or ends (-1): the prefetch
 * pauses meanwhile.  Any thread; nothing with -o prefetch=0. */
void zrfs_prefetch_busy(int delta);
/* After a batch open succeeded: epoch is the sum of its views' epochs
 * (zrtree_views_epoch), what the node's stores show now; steps gathered
 * at another are dropped. */
void zrfs_prefetch_hint(const struct zrfs_fh *fh, uint64_t epoch);

#endif
