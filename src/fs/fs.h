/*
 * fs.h - the zrecordfs daemon's shared types: the mount, its stores and
 * datasets, the namespace nodes and open-file handles.  Everything below the
 * FUSE layer is libzrecord's public API; these types only route requests.
 *
 * Lock order (outermost first): an append or delete handle's mutex, a
 * store's rwlock (several stores: in ascending store id), a record
 * handle's mutex, then any one of the leaf mutexes (qmu, dyn_mu, fh_mu,
 * the buffer cache's, an errors ring's).  No store
 * lock is held across a fuse_lowlevel_notify_* call.
 *
 * Contents.  A record or batch node stands for one content: its size and
 * a version tag are fixed at lookup.  When the store changes what a name
 * shows, a later lookup of the name makes a new node (a new inode), and the
 * old one lives on for the kernel's references: what rename(2) over a file
 * does.  An open handle serves one content from open to release, so no
 * read of it can see a change made after the open.  A handle of the
 * node's own content copies it at the first read the page cache cannot
 * answer (a delete that would change it first makes every such handle
 * copy), and the kernel keeps the pages across opens (keep_cache); a
 * handle opened after the name's content changed, at the same size,
 * copies the new content at open and is served past the page cache
 * (direct_io).
 */
#ifndef ZR_FS_H
#define ZR_FS_H

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

#include "zrecord.h"
#include "dlog.h"
#include "elog.h"
#include "opts.h"

/* What a namespace node is; decides every operation on it. */
enum zr__kind {
	ZR__K_DIR,	/* a plain folder of SRC (maybe a dataset)        */
	ZR__K_STORE,	/* a store folder                                 */
	ZR__K_RECDIR,	/* STORE/records                                  */
	ZR__K_BATCHDIR, /* STORE/batch[/MODE[/B]], DIR/@batch[/MODE[/B]]  */
	ZR__K_RECORD,	/* STORE/records/I.npy                            */
	ZR__K_BATCH,	/* a batch file (.npy, .npz or .indices.npy)      */
	ZR__K_APPEND,
	ZR__K_STATS,
	ZR__K_SCHEMA,
	ZR__K_ERRORS,
	ZR__K_SYNC,
	ZR__K_COMPACT,
	ZR__K_DELETE,
};

/* The byte layout a batch file serves. */
enum zr__form {
	ZR__F_NPY,	/* dense store: one (B, *item_shape) array        */
	ZR__F_NPZ,	/* ragged store or dataset: one member per record */
	ZR__F_IDX,	/* the batch's int64 indices                      */
	ZR__F_PNG,	/* records/I.png: a uint8 image record as a PNG   */
	/* ragged store: ZR__F_FLAT + the enum zr_npyfile_form of its
	 * suffix (zr_npyfile_ragged_form): .packed.npz, .padded.npz
	 * and their parts, .packed.npy, .offsets.npy, ... */
	ZR__F_FLAT = 16,
};

/* One store served by the mount, open from mount to unmount. */
struct zr__fstore {
	zr_store *zs;
	char *path;		/* relative to SRC, for messages          */
	uint32_t id;		/* index in the mount's store array       */
	fuse_ino_t records_ino; /* its records/ folder (for invalidation) */
	/* Read: reading the record table to size or fill a file, stats,
	 * starting an append session.  Write: delete and compact, which
	 * change what a record name shows.  Taken through stlock.h, which
	 * parks the requests that would wait for a writer (sync takes no lock
	 * here: the library orders it against everything else). */
	pthread_rwlock_t rw;
	pthread_mutex_t qmu;	/* guards the three below                 */
	unsigned writers;	/* deletes/compacts holding or awaiting rw */
	struct zr__parked *parked; /* requests waiting for them           */
	struct zr__parked *ready;  /* ... and free to run again           */
	/* Changed under the write lock; read under the read lock. */
	uint64_t gen;		/* deletes and compacts: batch contents   */
	struct zr__dlog dlog;	/* what the recent deletes changed        */
	struct zr__elog log;
	/* An append handle has a library session open: deletes get EBUSY
	 * at write(), before the library would refuse them at close. */
	atomic_int appending;
};

/* A folder whose direct children include at least two stores. */
struct zr__dataset {
	size_t n;
	struct zr__fstore **st; /* sorted by name                */
	const char **names;	/* the stores' folder names      */
};

/* A namespace node.  Static nodes (folders, stores and their fixed files)
 * live for the whole mount; record, batch and batch-folder nodes are made
 * by lookup and freed when the kernel forgets them. */
struct zr__node {
	fuse_ino_t ino;
	enum zr__kind kind;
	const char *name;
	struct zr__node *parent;
	struct zr__node **kids; /* static folders                 */
	size_t nkids;
	struct zr__fstore *st;	/* store folders and their files  */
	struct zr__dataset *ds; /* @batch nodes of a dataset      */
	/* batch folders (depth 0: batch/, 1: MODE/, 2: MODE/B/) and files */
	int depth;
	zr_sampler_mode mode;
	uint64_t bsize;
	uint64_t seed, step;
	enum zr__form form;
	uint64_t idx;		/* record index                   */
	/* record and batch files: fixed at lookup (see Contents) */
	uint64_t size;		/* file bytes                     */
	uint64_t ver[2];	/* what the content was made from */
	uint64_t nlookup;	/* dynamic nodes: kernel references */
	struct zr__node *next;	/* dynamic table chain (by ino)   */
	struct zr__node *knext; /* dynamic table chain (by name)  */
};

/* The mount. */
struct zr__fs {
	struct zr__opts opts;
	struct fuse_session *se;
	struct zr__node **stat;	 /* static nodes, ino = index + 1   */
	size_t nstat, capstat;
	struct zr__fstore **stores;
	size_t nstores;
	struct zr__dataset **ds;
	size_t nds;
	uid_t uid;
	gid_t gid;
	struct timespec t0;
	pthread_mutex_t dyn_mu; /* guards the dynamic tables below */
	struct zr__node **dyn;	/* by inode number                 */
	struct zr__node **kdyn; /* by what the name means          */
	size_t ndyn, capdyn;
	fuse_ino_t next_ino;
	/* Every open handle: a lazily unmounted mount may end without
	 * releasing them, so shutdown frees what is left. */
	pthread_mutex_t fh_mu;
	struct zr__fh *fhs;
	struct zr__follower *follower; /* -o follow (follow.c) */
};

/* An open file: per-kind state.  The kernel's open holds one reference
 * and every request working on the handle holds one more while it runs:
 * the kernel may send release as soon as it has a read's reply, while the
 * thread that sent the reply is still returning.  The last reference
 * frees the handle. */
struct zr__fh {
	struct zr__node *node;
	_Atomic unsigned refs;
	/* Guards buf of a record or batch (nested inside the store locks),
	 * and the state of an append or delete handle (outside them). */
	pthread_mutex_t mu;
	char *buf;		/* the file's bytes                        */
	size_t len, cap;
	int cached;		/* buf came from zr__buf_get            */
	int uncached;		/* record, batch: bytes newer than the node's */
	int lazy;		/* batch: the node's bytes, copied at a read */
	atomic_int filled;	/* record, batch: buf is complete          */
	atomic_int lost;	/* batch: a delete came before the copy    */
	/* batch: the pieces of buf a read may need, filled as reads reach
	 * them (batch.c); set under mu, then planned (release). */
	struct zr__fill *fill;
	atomic_int planned;
	struct zr_npystream *ns;    /* append session (NULL between them) */
	uint64_t pos;		/* append: next expected write offset;
				 * delete: input checked up to here        */
	int err;		/* first failure of the append or delete   */
	int append_mode;	/* opened O_APPEND: offsets are ignored    */
	pid_t owner;		/* append, delete: the opening process     */
	struct zr__fh *prev, *next; /* the mount's open handles (fh_mu)  */
};

#endif
