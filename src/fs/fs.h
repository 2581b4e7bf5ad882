/*
 * fs.h - the zrecordfs daemon's shared types: the mount, its options,
 * open-file handles and parked requests.  What the mount serves is the
 * tree of src/tree (tree.h) over libzrecord's public API; these types
 * only route requests to it.
 *
 * Stores.  The daemon keeps no lock, generation or log of its own on a
 * store: every read of a record table goes through a library view
 * (zrecord.h, "views"), begun without waiting; while the daemon's own
 * delete or compact runs, the library answers ZR_E_BUSY at once and the
 * request is parked until that call returns (store_park.h).
 *
 * Lock order (outermost first): an append or delete handle's mutex, a
 * record or batch file's (src/tree/open_file.c), then any one of the leaf
 * mutexes: tables_mu, the kept buffers' (big_buffers.h), the park queue's
 * (store_park.c), the errors rings' (src/tree/errors_log.c), a batch
 * gather's (src/tree/batch_gather.c), or the prefetcher's and its
 * run_mu (batch_prefetch.c: taken with no other lock held).  A leaf
 * mutex is never held while another lock is taken, but for the kept
 * buffers' inside the prefetcher's and a gather's inside run_mu; no lock
 * is held across a fuse_lowlevel_notify_* call.
 *
 * Open files.  What a node is and shows is in src/tree/tree.h
 * (Contents).  An open handle serves one content from open to release,
 * so no read of it can see a change made after the open.  A handle of the
 * node's own content copies it at the first read the page cache cannot
 * answer, through the library views it began at open (so whatever deletes
 * came since), and the kernel keeps the pages across opens (keep_cache); a
 * handle opened after the name's content changed, at the same size,
 * copies the new content at open and is served past the page cache
 * (direct_io).
 */
#ifndef ZRFS_H
#define ZRFS_H

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

#include "tree.h"

/* Returned (negative) by a step that met a running delete or compact:
 * the request should be parked (zrfs_park, store_park.h). */
#define ZRFS_E_PARK (-EINPROGRESS)

struct zrfs_parked;
/* The mount's parked requests (struct zrfs_fs.park), guarded by the
 * mutex of store_park.c; zeroed, it is empty. */
struct zrfs_park_queue {
	unsigned writers;	/* deletes and compacts running           */
	struct zrfs_parked *parked; /* requests waiting for them           */
	struct zrfs_parked *ready;  /* ... and free to run again           */
};

/* The command line (opts.h). */
struct zrfs_opts {
	char *src;		/* absolute SRC                           */
	char *mountpoint;
	int ro;
	int foreground;
	int debug;
	int single;		/* -s: one thread serves every request    */
	int clone_fd;
	unsigned max_idle_threads;
	unsigned max_threads;	/* -o max_threads: the session's threads  */
	unsigned prefetch;	/* -o prefetch: steps gathered ahead, 0: off */
	uint64_t prefetch_mem;	/* -o prefetch_mem: their bytes, 0: default */
	int direct_batches;	/* -o direct_batches: past the page cache */
	unsigned follow_ms;	/* -o follow: refresh interval, 0: off    */
	char *cache;		/* -o cache: the host cache's folder, "off" */
	uint64_t cache_size;	/* -o cache_size: its bytes, 0: default   */
	struct zrtree_run run;	/* what batch files draw (tree.h)      */
	struct fuse_args args;	/* what libfuse's session parses          */
};

/* The mount. */
struct zrfs_fs {
	struct zrfs_opts opts;
	struct fuse_session *se;
	struct zrtree tree;	/* SRC's stores, folders and files     */
	uid_t uid;
	gid_t gid;
	struct timespec t0;
	/* Guards the dynamic node tables and the open handle list: both
	 * are touched briefly, never with another lock taken inside. */
	pthread_mutex_t tables_mu;
	struct zrtree_node **dyn;	/* by inode number                 */
	struct zrtree_node **kdyn; /* by what the name means          */
	size_t ndyn, capdyn;
	fuse_ino_t next_ino;
	/* Every open handle: a lazily unmounted mount may end without
	 * releasing them, so shutdown frees what is left. */
	struct zrfs_fh *fhs;
	/* Requests that met a running delete or compact. */
	struct zrfs_park_queue park;
	struct zrfs_follower *follower; /* -o follow (follow.c) */
};

/* An open file: per-kind state.  The kernel's open holds one reference
 * and every request working on the handle holds one more while it runs:
 * the kernel may send release as soon as it has a read's reply, while the
 * thread that sent the reply is still returning.  The last reference
 * frees the handle. */
struct zrfs_fh {
	struct zrtree_node *node;
	_Atomic unsigned refs;
	/* Guards the state of an append or delete handle. */
	pthread_mutex_t mu;
	/* record, batch: the open file (src/tree/open_file.h: its views,
	 * its bytes as reads reach them, its own lock) */
	struct zrtree_file *file;
	char *buf;		/* text: the file's bytes                 */
	size_t len;		/* the file's size                        */
	int uncached;		/* record, batch: served past the page cache
				 * (bytes newer than the node's, or
				 * -o direct_batches) */
	struct zrfile_npystream *ns;    /* append session (NULL between them) */
	struct zrfile_idxlist *ix;	/* delete: the parser of the input
					 * since the last commit (NULL: none) */
	uint64_t pos;		/* append: next expected write offset      */
	int err;		/* first failure of the append or delete   */
	int append_mode;	/* opened O_APPEND: offsets are ignored    */
	pid_t owner;		/* append, delete: the opening process     */
	struct zrfs_fh *prev, *next; /* the mount's open handles (tables_mu) */
};

#endif
