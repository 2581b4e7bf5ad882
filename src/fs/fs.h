/*
 * fs.h - the zrecordfs daemon's shared types: the mount, its stores and
 * datasets, the namespace nodes and open-file handles.  Everything below the
 * FUSE layer is libzrecord's public API; these types only route requests.
 *
 * Stores.  The daemon keeps no lock, generation or log of its own on a
 * store: every read of a record table goes through a library view
 * (zrecord.h, "views"), begun without waiting; while the daemon's own
 * delete or compact runs, the library answers ZR_E_BUSY at once and the
 * request is parked until that call returns (store_park.h).
 *
 * Lock order (outermost first): an append or delete handle's mutex, a
 * record or batch handle's mutex, then any one of the leaf mutexes:
 * tables_mu, the kept buffers' (big_buffers.h), zrfs_leaf_lock's
 * (errors_log.h: the errors rings and the park queue), or the
 * prefetcher's (batch_prefetch.c: taken with no other lock held).  A leaf
 * mutex is never held while another lock is taken, but for the kept
 * buffers' inside the prefetcher's; no lock is held across a
 * fuse_lowlevel_notify_* call.
 *
 * Contents.  A record or batch node stands for one content: its size and
 * a version tag are fixed at lookup (a record's: the store's delete epoch
 * of its lookup's view, zr_store_index_changed telling whether a delete
 * since changed its index; a batch's: the length it draws from (with -o
 * length, that option's, so the content no longer depends on the store's
 * length) and the sum of its stores' epochs, which compacts leave, as
 * they change no content; a mixture's: the sum of its sources' lengths,
 * which the node keeps one by one to draw at).  When the store changes
 * what a name
 * shows, a later lookup of the name makes a new node (a new inode), and the
 * old one lives on for the kernel's references: what rename(2) over a file
 * does.  An open handle serves one content from open to release, so no
 * read of it can see a change made after the open.  A handle of the
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

#include "zrecord.h"
#include "mixfile.h"
#include "schedule.h"

/* A store's or a mixture's ring of recent failures (errors_log.h). */
struct zrfs_elog;

/* Returned (negative) by a step that met a running delete or compact:
 * the request should be parked (zrfs_park, store_park.h). */
#define ZRFS_E_PARK (-EINPROGRESS)

struct zrfs_parked;
/* The mount's parked requests (struct zrfs_fs.park), guarded by the
 * daemon's leaf mutex (errors_log.h, store_park.h); zeroed, it is empty. */
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
	uint64_t max_batch;	/* -o max_batch_bytes: one batch file     */
	unsigned prefetch;	/* -o prefetch: steps gathered ahead, 0: off */
	uint64_t prefetch_mem;	/* -o prefetch_mem: their bytes, 0: default */
	int direct_batches;	/* -o direct_batches: past the page cache */
	unsigned follow_ms;	/* -o follow: refresh interval, 0: off    */
	zr_sampler_mode mode;	/* default sampler of batch/ files        */
	uint64_t bsize;		/* default batch size                     */
	uint32_t rank, world;
	uint64_t start;		/* -o start: the run's first position     */
	uint64_t granule;	/* -o granule: cycle multiple, 0: W * B   */
	zrcommon_schedule sched; /* -o length=, skip=, grow= (schedule.h) */
	struct fuse_args args;	/* what libfuse's session parses          */
};

/* What a namespace node is; decides every operation on it. */
enum zrfs_kind {
	ZRFS_K_DIR,	/* a plain folder of SRC (maybe a dataset)        */
	ZRFS_K_STORE,	/* a store folder                                 */
	ZRFS_K_RECDIR,	/* STORE/records                                  */
	ZRFS_K_BATCHDIR, /* STORE/batch[/MODE[/B]], DIR/@batch[/MODE[/B]]  */
	ZRFS_K_RECORD,	/* STORE/records/I.npy                            */
	ZRFS_K_BATCH,	/* a batch file (.npy, .npz or .indices.npy)      */
	ZRFS_K_APPEND,
	ZRFS_K_STATS,
	ZRFS_K_SCHEMA,
	ZRFS_K_ERRORS,
	ZRFS_K_SYNC,
	ZRFS_K_COMPACT,
	ZRFS_K_DELETE,
};

/* The byte layout a batch file serves. */
enum zrfs_form {
	ZRFS_F_NPY,	/* dense store: one (B, *item_shape) array        */
	ZRFS_F_NPZ,	/* ragged store or dataset: one member per record */
	ZRFS_F_IDX,	/* the batch's int64 indices                      */
	ZRFS_F_PNG,	/* records/I.png: a uint8 image record as a PNG   */
	/* ragged store: ZRFS_F_FLAT + the enum zrfile_npy_form of its
	 * suffix (zrfile_npy_ragged_form): .packed.npz, .padded.npz
	 * and their parts, .packed.npy, .offsets.npy, ... */
	ZRFS_F_FLAT = 16,
};

/* One store served by the mount, open from mount to unmount. */
struct zrfs_fstore {
	zr_store *zs;
	char *path;		/* relative to SRC, for messages          */
	uint32_t id;		/* index in the mount's store array       */
	fuse_ino_t records_ino; /* its records/ folder (for invalidation) */
	struct zrfs_elog *log;	/* its errors file (errors_log.h)      */
};

/* A folder whose direct children include at least two stores. */
struct zrfs_dataset {
	size_t n;
	struct zrfs_fstore **st; /* sorted by name                */
	const char **names;	/* the stores' folder names      */
};

/* A mixture file served as a folder (mixture.h); what it serves, fixed
 * once resolved (the mount's stores are). */
struct zrfs_mix {
	char *path;		/* the file, relative to SRC (messages) */
	struct zrfs_elog *log;	/* its errors file (errors_log.h)    */
	zr_mixfile file;
	int parsed, ok;		/* file read; its sources served */
	int records;		/* files of records (else indices only) */
	uint32_t k, nf;		/* sources; fields (1 but datasets)  */
	/* source s's field f is grid[f * k + s], its view's place in the
	 * handle's views st[slot[f * k + s]] */
	struct zrfs_fstore **grid;
	uint32_t *slot;
	const char **names;	/* nf field names (NULL: store sources) */
	struct zrfs_fstore **st; /* each store once, ascending id      */
	size_t nst;
};

/* A namespace node.  Static nodes (folders, stores and their fixed files)
 * live for the whole mount; record, batch and batch-folder nodes are made
 * by lookup and freed when the kernel forgets them. */
struct zrfs_node {
	fuse_ino_t ino;
	enum zrfs_kind kind;
	const char *name;
	struct zrfs_node *parent;
	struct zrfs_node **kids; /* static folders                 */
	size_t nkids;
	struct zrfs_fstore *st;	/* store folders and their files  */
	struct zrfs_dataset *ds; /* @batch nodes of a dataset      */
	struct zrfs_mix *mix;	/* NAME.mix/ and its files (mixture.h) */
	/* batch folders (depth 0: batch/, 1: MODE/, 2: MODE/B/) and files */
	int depth;
	zr_sampler_mode mode;
	uint64_t bsize;
	uint64_t seed, step;
	enum zrfs_form form;
	uint64_t idx;		/* record index                   */
	/* record and batch files: fixed at lookup (see Contents) */
	uint64_t size;		/* file bytes                     */
	uint64_t ver[2];	/* what the content was made from */
	uint64_t *lens;		/* mixture batch: each source's length
				 * at lookup (owned, freed with the node) */
	uint64_t nlookup;	/* dynamic nodes: kernel references */
	struct zrfs_node *next;	/* dynamic table chain (by ino)   */
	struct zrfs_node *knext; /* dynamic table chain (by name)  */
};

/* The mount. */
struct zrfs_fs {
	struct zrfs_opts opts;
	struct fuse_session *se;
	struct zrfs_node **stat;	 /* static nodes, ino = index + 1   */
	size_t nstat, capstat;
	struct zrfs_fstore **stores;
	size_t nstores;
	struct zrfs_dataset **ds;
	size_t nds;
	uid_t uid;
	gid_t gid;
	struct timespec t0;
	/* Guards the dynamic node tables and the open handle list: both
	 * are touched briefly, never with another lock taken inside. */
	pthread_mutex_t tables_mu;
	struct zrfs_node **dyn;	/* by inode number                 */
	struct zrfs_node **kdyn; /* by what the name means          */
	size_t ndyn, capdyn;
	fuse_ino_t next_ino;
	/* Every open handle: a lazily unmounted mount may end without
	 * releasing them, so shutdown frees what is left. */
	struct zrfs_fh *fhs;
	/* Requests that met a running delete or compact. */
	struct zrfs_park_queue park;
	struct zrfs_follower *follower; /* -o follow (follow.c) */
};

/* How far an open record or batch file's buffer is. */
enum zrfs_fill_state {
	ZRFS_FILL_NONE,		/* nothing in buf yet                     */
	ZRFS_FILL_PLANNED,	/* batch: fill is set, its pieces coming  */
	ZRFS_FILL_DONE,		/* buf holds the whole file               */
};

/* An open file: per-kind state.  The kernel's open holds one reference
 * and every request working on the handle holds one more while it runs:
 * the kernel may send release as soon as it has a read's reply, while the
 * thread that sent the reply is still returning.  The last reference
 * frees the handle. */
struct zrfs_fh {
	struct zrfs_node *node;
	_Atomic unsigned refs;
	/* Guards buf of a record or batch (nested inside the store locks),
	 * and the state of an append or delete handle (outside them). */
	pthread_mutex_t mu;
	char *buf;		/* the file's bytes                        */
	/* record: the store as it was at open, which the first fill reads
	 * (under mu); batch: one view per store of the node (its
	 * zrfs_batch_stores order); ended once buf holds the file */
	zr_view *view;
	zr_view **views;
	size_t len, cap;
	int cached;		/* buf came from zrcommon_bigbuf_get            */
	int uncached;		/* record, batch: served past the page cache
				 * (bytes newer than the node's, or
				 * -o direct_batches) */
	/* record, batch: how far buf is (enum zrfs_fill_state), written
	 * under mu (release) and read without it (acquire), so that reads
	 * of bytes already in take no lock */
	atomic_int state;
	/* batch: the pieces of buf a read may need, filled as reads reach
	 * them (batch.c); set under mu before state is PLANNED. */
	struct zrfs_fill *fill;
	/* what the kind keeps besides buf and view, freed with the handle */
	void (*drop)(struct zrfs_fh *fh);
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
