/*
 * tree.h - a source folder as the tree of files a mount of it serves,
 * for the zrecordfs daemon and `zrecord cat`, which reads the same files
 * without a mount: SRC's folders, its stores (opened and kept open) and
 * their fixed files, the datasets (folders holding two or more stores),
 * the mixture files' folders, and the names looked up under them
 * (records/I.npy, batch/[MODE/B/]SEED-STEP.{npy,npz}, ...).  Stores
 * created under SRC after the build are not picked up: the tree, and the
 * store locks it holds, are fixed until zrtree_free.
 *
 * Contents.  A record or batch node stands for one content: its size and
 * a version tag are fixed at lookup (a record's: the store's delete epoch
 * of its lookup's view, zr_store_index_changed telling whether a delete
 * since changed its index; a batch's: the length it draws from (with -o
 * length, that option's, so the content no longer depends on the store's
 * length) and the sum of its stores' epochs, which compacts leave, as
 * they change no content; a mixture's: the sum of its sources' lengths,
 * which the node keeps one by one to draw at).  When the store changes
 * what a name shows, a later lookup of the name makes a new node (a new inode), and the
 * old one lives on for its open files (the mount's: the kernel's
 * references): what rename(2) over a file does.
 */
#ifndef ZRTREE_TREE_H
#define ZRTREE_TREE_H

#include <stdint.h>

#include "zrecord.h"
#include "mixfile.h"
#include "schedule.h"
#include "errors_log.h" /* a store's or a mixture's recent failures */

/* What batch files draw and how large they may be: the mount's -o
 * options and `zrecord cat`'s. */
struct zrtree_run {
	zr_sampler_mode mode;	/* default sampler of batch/ files        */
	uint64_t bsize;		/* default batch size                     */
	uint32_t rank, world;
	uint64_t start;		/* the run's first position               */
	uint64_t granule;	/* cycle multiple, 0: W * B               */
	uint64_t at_granule;	/* start=P@G's G, 0 without               */
	zrcommon_schedule sched; /* length=, skip=, grow= (schedule.h)    */
	uint64_t max_batch;	/* max_batch_bytes: one batch file        */
	/* decode=, augment=: an encoded-image store's batch/SEED-STEP.npy
	 * decoded (size, flags, scale; seed and position are each
	 * batch's) */
	zr_image_opts image;
};

/* What a namespace node is; decides every operation on it. */
enum zrtree_kind {
	ZRTREE_K_DIR,	/* a plain folder of SRC (maybe a dataset)        */
	ZRTREE_K_STORE,	/* a store folder                                 */
	ZRTREE_K_RECDIR,	/* STORE/records                                  */
	ZRTREE_K_BATCHDIR, /* STORE/batch[/MODE[/B]], DIR/@batch[/MODE[/B]]  */
	ZRTREE_K_RECORD,	/* STORE/records/I.npy                            */
	ZRTREE_K_BATCH,	/* a batch file (.npy, .npz or .indices.npy)      */
	ZRTREE_K_APPEND,
	ZRTREE_K_STATS,
	ZRTREE_K_SCHEMA,
	ZRTREE_K_ERRORS,
	ZRTREE_K_SYNC,
	ZRTREE_K_COMPACT,
	ZRTREE_K_DELETE,
	ZRTREE_K_SIDE,	/* classes.json, files.txt: zrecord import's files
			 * beside a dataset's stores, served as they are */
	ZRTREE_K_INFO,	/* the host's text at the root (zrtree_add_info) */
};

/* The text of a ZRTREE_K_INFO node, made by its host at each read:
 * zrtree_text's contract. */
typedef int zrtree_info_fn(void *ctx, char **out, size_t *len);

/* One store served by the mount, open from mount to unmount. */
struct zrtree_store {
	zr_store *zs;
	char *path;		/* relative to SRC, for messages          */
	uint32_t id;		/* index in the tree's store array        */
	uint64_t records_ino;	/* its records/ folder's node (its ino)  */
	struct zrtree_elog *log;	/* its errors file (errors_log.h)      */
	/* zrtree_refresh's last failure written to log ("": none since its
	 * last success); only the refreshing thread touches it */
	char refresh_last[ZRTREE_ELOG_LINE];
};

/* A folder whose direct children include at least two stores. */
struct zrtree_dataset {
	size_t n;
	struct zrtree_store **st; /* sorted by name                */
	const char **names;	/* the stores' folder names      */
};

/* A mixture file served as a folder (mixture.h); what it serves, fixed
 * once resolved (the tree's stores are). */
struct zrtree_mix {
	char *path;		/* the file, relative to SRC (messages) */
	struct zrtree_elog *log;	/* its errors file (errors_log.h)    */
	zrcommon_mixfile file;
	int parsed, ok;		/* file read; its sources served */
	int records;		/* files of records (else indices only) */
	uint32_t k, nf;		/* sources; fields (1 but datasets)  */
	/* source s's field f is grid[f * k + s], its view's place in the
	 * handle's views st[slot[f * k + s]] */
	struct zrtree_store **grid;
	uint32_t *slot;
	const char **names;	/* nf field names (NULL: store sources) */
	struct zrtree_store **st; /* each store once, ascending id      */
	size_t nst;
};

/* A namespace node.  Static nodes (folders, stores and their fixed files)
 * live for the whole mount; record, batch and batch-folder nodes are made
 * by lookup and freed when the kernel forgets them. */
struct zrtree_node {
	/* static: its place in the tree + 1; dynamic: the host's number
	 * (the mount's inode) */
	uint64_t ino;
	enum zrtree_kind kind;
	const char *name;
	struct zrtree_node *parent;
	struct zrtree_node **kids; /* static folders                 */
	size_t nkids;
	struct zrtree_store *st;	/* store folders and their files  */
	struct zrtree_dataset *ds; /* @batch nodes of a dataset      */
	struct zrtree_mix *mix;	/* NAME.mix/ and its files (mixture.h) */
	/* batch folders (depth 0: batch/, 1: MODE/, 2: MODE/B/) and files */
	int depth;
	zr_sampler_mode mode;
	uint64_t bsize;
	uint64_t seed, step;
	int form;		/* enum zrfile_form (form_table.h)     */
	uint64_t idx;		/* record index                   */
	/* record and batch files: fixed at lookup (see Contents) */
	uint64_t size;		/* file bytes                     */
	uint64_t ver[2];	/* what the content was made from */
	uint64_t *lens;		/* mixture batch: each source's length
				 * at lookup (owned, freed with the node) */
	char *file;		/* ZRTREE_K_SIDE: the file's absolute path
				 * (size: its size at build)         */
	zrtree_info_fn *info;	/* ZRTREE_K_INFO: its text, and ...  */
	void *info_ctx;		/* ... what that is given           */
	/* the host's, for dynamic nodes: the mount's kernel references
	 * and its node tables' chains (by ino, by name) */
	uint64_t nlookup;
	struct zrtree_node *next, *knext;
};

/* The tree.  Static nodes are stat[0] (the root) .. stat[nstat - 1]; their
 * ino is their place + 1. */
struct zrtree {
	const char *src;	/* absolute SRC                           */
	unsigned flags;		/* the stores' ZR_OPEN_* flags            */
	const struct zrtree_run *run;
	struct zrtree_node **stat;
	size_t nstat, capstat;
	struct zrtree_store **stores;
	size_t nstores;
	struct zrtree_dataset **ds;
	size_t nds;
};

/* Scans src (absolute) and opens every store with flags (ZR_OPEN_RDONLY,
 * ZR_OPEN_FOLLOW); run is kept, not copied.  Prints a one-line reason to
 * stderr on failure ("store busy: ..." when a lock conflicts). */
int zrtree_build(struct zrtree *t, const char *src, unsigned flags,
		 const struct zrtree_run *run);
/* Adds a file name at the root whose text info makes at every read: the
 * host's own (the mount's state), so only a host that calls this has it;
 * `zrecord ls` and `cat`, which build the same tree, do not.  -EEXIST if
 * SRC already shows that name at the root (the caller goes without),
 * -ENOMEM.  After zrtree_build, before any lookup. */
int zrtree_add_info(struct zrtree *t, const char *name, zrtree_info_fn *info,
		    void *ctx);
/* Closes every store (syncing read-write ones) and frees the tree.
 * Returns the first close failure. */
int zrtree_free(struct zrtree *t);

/* What -o follow does each interval (refresh.c): zr_store_refresh on
 * every store (opened with ZR_OPEN_FOLLOW), so that names looked up
 * afterwards show what writers elsewhere synced.  A store whose refresh
 * fails stays as it was, and the failure goes to its errors file once:
 * not again until its message changes or a refresh succeeds.  One thread
 * at a time (the mount's follower); any thread may look up meanwhile. */
void zrtree_refresh(struct zrtree *t);

/* Resolves name in folder dir: a static node into *kid, else (*kid NULL)
 * a dynamic one (a record, batch file or batch folder) into *tmpl, with
 * its size and version (see Contents; a mixture batch's source lengths
 * into tmpl->lens, the caller's to free).  -ENOENT for names that do not
 * exist, -ENOTDIR when dir is no folder, ZR_E_BUSY while a delete or
 * compact of a store it reads runs. */
int zrtree_lookup(struct zrtree *t, const struct zrtree_node *dir,
		  const char *name, struct zrtree_node **kid,
		  struct zrtree_node *tmpl);

/* The k-th entry of folder n (from 0; "." and ".." are the host's): its
 * name into name (cap bytes, truncated as snprintf does), whether it is a
 * folder into *is_dir, and its static node into *kid, or NULL for a
 * generated entry (records/I.npy, batch/'s mode folders), which the host
 * resolves by name.  0, -ENOENT past the last entry, -ENOTDIR when n is no
 * folder.  records/ lists the records of the store's length now. */
int zrtree_entry(const struct zrtree_node *n, uint64_t k, char *name,
		 size_t cap, int *is_dir, struct zrtree_node **kid);

/* The text of a stats, schema or errors node, in a new malloc'd buffer
 * (ZR_E_BUSY while a compact runs: stats would wait for it); a side
 * file's bytes (-ESTALE if its size is no longer the one the tree
 * shows); an info node's, from its host. */
int zrtree_text(const struct zrtree_node *n, char **out, size_t *len);
/* The line reading an append, sync, compact or delete file shows. */
const char *zrtree_usage(enum zrtree_kind kind);

#endif
