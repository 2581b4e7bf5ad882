/*
 * store.h - the store engine's internal handle and what its files share:
 * the on-disk constants, little-endian fields, whole reads and writes of
 * meta.zr and data.zr through the handle's backend (vfs.h), and the
 * interfaces of the guard, the locks and the changes list.  The read
 * paths' helpers are in store_io.h and store_view.h, which call into their
 * files: kept out of here, every file of the engine can include this one
 * without tying it into a circle.
 */
#ifndef ZR_STORE_H
#define ZR_STORE_H

#include <endian.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <zstd.h>

#include "sigbus.h"
#include "vfs.h"
#include "zrecord.h"

#define ZR__PAGE 4096u           /* static page: header + schema   */
#define ZR__HEADER 32u           /* header bytes at the page start */
#define ZR__LOC 16u              /* bytes of one RecordLoc         */
#define ZR__RAGGED_HEAD_MAX (8u + 8u * ZR_MAX_NDIM)
/* The journal of a delete or compact (journal.h); an open that finds it
 * recovers the store (see zrecord.h, Durability). */
#define ZR__MAINT_FILE "maintenance.zr"
/* The mark of an encoded-image store (store_content.c): beside the seed's
 * files, which it leaves byte for byte as they are. */
#define ZR__CONTENT_FILE "content.zr"

/* One read-only mapping of a file prefix.  Mappings are never unmapped
 * before close: a reader may still hold an older one.  On a backend
 * without map (vfs.h) meta.zr's is a copy read into memory (copy set) and
 * data.zr's has no base: its records are read through the file. */
struct zr__map {
	const uint8_t *base;
	size_t len;
	int file;             /* ZR__META, ZR__DATA */
	int copy;             /* base is malloc'd, not mapped */
	struct zr__map *next; /* every mapping made, for close */
};

enum { ZR__META = 0, ZR__DATA = 1 };

/* One entry a delete overwrote (or left past the new length, where an
 * append would): the record index and its 16 table bytes as they were. */
struct zr__dlog_ent {
	uint64_t idx;
	uint8_t loc[ZR__LOC];
};

/* What one delete changed, kept while a view begun before it lives
 * (store_view.c).  Immutable once published, but for older. */
struct zr__dlog {
	uint64_t epoch;                 /* the store's epoch it made   */
	size_t n;
	struct zr__dlog_ent *ent;       /* n, ascending idx            */
	_Atomic(struct zr__dlog *) older;
};

/* What one read call sees: the length it checks indices against, the
 * frontier records are validated with, the mappings it reads through and,
 * for a view begun before the newest delete, the depth newest entries of
 * the delete log that hold what those deletes overwrote. */
struct zr__snap {
	uint64_t len, tail;
	const struct zr__map *meta, *data;
	const struct zr__dlog *log;
	uint64_t depth;
};

/* Lock order: rw, then view_lock, then sync_lock, then live_lock, then
 * map_lock, then the pool's locks (a gather holds rw while its job runs).
 * Readers take no lock per record. */
struct zr_store {
	char *path;             /* folder, for messages */
	const struct zr__vfs *vfs; /* the backend of path (vfs.h) */
	struct zr__file *file[2]; /* meta.zr, data.zr */
	int readonly;
	int follow;             /* ZR_OPEN_FOLLOW: zr_store_refresh grows it */
	int meta_ex;            /* holds meta.zr exclusively (store_lock.c) */
	atomic_int lock_lost;   /* a lock conversion lost meta.zr; read by
	                         * any writing call, set under rw */
	zr_codec codec;
	zr_schema schema;
	size_t row_bytes;       /* dense row width, 0 for ragged */
	void *dict;             /* dict.zr bytes (codec 2) */
	size_t dict_len;
	ZSTD_DDict *ddict;      /* shared by all readers, immutable */
	ZSTD_CDict *cdict;      /* made by the first append session */
	/* Published by append commit (tail first, then length, release);
	 * readers load length, then tail, then a mapping (acquire). */
	_Atomic uint64_t length;
	_Atomic uint64_t tail;
	_Atomic(struct zr__map *) map[2]; /* current mapping per file */
	pthread_mutex_t map_lock; /* guards remapping and maps */
	struct zr__map *maps;     /* all mappings, newest first */
	/* Gathers and other readers hold it shared (once per call);
	 * delete and compact hold it exclusive. */
	pthread_rwlock_t rw;
	/* Views (store_view.c).  epoch counts the deletes that changed
	 * the table; it and a new log entry are written under the
	 * exclusive rw and view_lock, so readers holding rw shared read
	 * them as they were at their call's start.  view_lock guards the
	 * list of live views and the log's oldest end, which view_end
	 * frees without rw once no live view is older. */
	pthread_mutex_t view_lock;
	struct zr_view *newest, *oldest; /* live views, in begin order */
	uint64_t nviews;
	uint64_t epoch;
	_Atomic(struct zr__dlog *) dlog; /* newest first */
	uint64_t dlog_entries;    /* entries held, for the bound */
	struct zr__changes *changes; /* store_changes.c (view_lock) */
	pthread_mutex_t sync_lock; /* one sync at a time; after rw */
	/* live_lock guards live and live_known, and is held by a commit
	 * while it publishes length, so the sum can be kept up to date by
	 * commit, delete and compact after one scan (stats is otherwise a
	 * scan of the whole table per call). */
	pthread_mutex_t live_lock;
	uint64_t live;            /* sum of live phys_length, if known */
	int live_known;
	atomic_int appending;     /* an append session is open */
	/* The writer's guard (store_guard.c): the header this handle last
	 * read or wrote, and the most data.zr may hold by its doing; both
	 * under sync_lock or the exclusive rw. */
	uint64_t disk_len, disk_tail;
	_Atomic uint64_t data_seen;
	int cached;               /* on a filesystem with client caches */
	/* Why the flock does not reach other hosts ("" if it does or it is
	 * not known not to): zr_store_lock_warning (store_scope.c). */
	char scope_msg[512];
	/* What this open recovered from an interrupted delete or compact
	 * (ZR__RECOVERED_*, set by zr__journal_recover), and the note on it
	 * that zr_store_recovered returns (NULL if nothing). */
	int recovered;
	char *recovered_msg;
	int locks_ok;             /* map_lock and rw were initialized */
	/* Records are encoded images (content.zr): set at open or by
	 * zr_store_mark_images, read by any thread. */
	atomic_int images;
};

/* memcpy + le*toh compile to one load: the table is read on every
 * gathered record. */
static inline uint64_t zr__get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

static inline uint32_t zr__get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return le32toh(v);
}

static inline void zr__put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline void zr__put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline void zr__loc_encode(uint8_t b[ZR__LOC], const zr_loc *l)
{
	zr__put64(b, l->offset);
	zr__put32(b + 8, l->phys_length);
	zr__put32(b + 12, l->logic_length);
}

static inline uint64_t zr__loc_pos(uint64_t idx)
{
	return ZR__PAGE + idx * ZR__LOC;
}

/* The name of file (ZR__META, ZR__DATA), for messages. */
static inline const char *zr__file_name(int file)
{
	return file == ZR__META ? "meta.zr" : "data.zr";
}

/* Reads the store's content.zr at open (store_content.c). */
int zr__content_load(zr_store *s);

/* Reads/writes exactly len bytes of file (ZR__META, ZR__DATA) at off
 * (zr__io_read_all, zr__io_write_all). */
static inline int zr__pread_all(const zr_store *s, int file, void *buf,
				size_t len, uint64_t off)
{
	return zr__io_read_all(s->file[file], buf, len, off, s->path,
			       zr__file_name(file));
}

static inline int zr__pwrite_all(const zr_store *s, int file,
				 const void *buf, size_t len, uint64_t off)
{
	return zr__io_write_all(s->file[file], buf, len, off, s->path,
				zr__file_name(file));
}

/* The committed length and frontier, as a reader sees them. */
static inline uint64_t zr__length(const zr_store *s)
{
	return atomic_load_explicit(&s->length, memory_order_acquire);
}

static inline uint64_t zr__tail(const zr_store *s)
{
	return atomic_load_explicit(&s->tail, memory_order_acquire);
}

/* The current mapping of file. */
static inline const struct zr__map *zr__map_of(const zr_store *s, int file)
{
	return atomic_load_explicit(&s->map[file], memory_order_acquire);
}

/* A read view (zrecord.h): the store's length and delete epoch when it
 * began, on the store's list of live views (under view_lock). */
struct zr_view {
	zr_store *s;
	uint64_t len, epoch;
	int try_only;		/* ZR_VIEW_TRY */
	struct zr_view *newer, *older;
};

/* Which indices the last deletes changed (store_changes.c): add runs in
 * zr__log_publish, after the epoch counted the delete (sorted descending,
 * the length it left); free at close. */
void zr__changes_add(zr_store *s, const uint64_t *sorted, size_t n,
		     uint64_t length);
void zr__changes_free(zr_store *s);

/* The writer's guard (store_guard.c).  guard_init notes whether the
 * store's filesystem caches files on each client; refresh makes the next
 * read of file (ZR__META, ZR__DATA) come from the server there;
 * guard_check fails with ZR_E_CHANGED (what names the call) unless the
 * header on disk is the one last read or written by this handle and
 * data.zr holds nothing it did not write; guard_wrote records a header
 * this handle wrote (or read at open). */
void zr__guard_init(zr_store *s);
int zr__refresh(zr_store *s, int file);
/* The size of file (ZR__META, ZR__DATA) as the server has it. */
int zr__file_size(zr_store *s, int file, uint64_t *out);
int zr__guard_check(zr_store *s, const char *what);
void zr__guard_wrote(zr_store *s, uint64_t len, uint64_t tail);

/* Fills scope_msg if the store's filesystem is known to keep flock on
 * this host (store_scope.c). */
void zr__scope_init(zr_store *s);

/* The flocks (store_lock.c).  lock_open takes the handle's role's locks
 * (a writer's with meta.zr exclusive when it can); lock_exclusive makes
 * meta.zr exclusive for a delete, compact or recovery (ZR_E_BUSY while a
 * follower holds it) and lock_share makes it shared again; lock_held
 * fails with ZR_E_BUSY once a conversion lost the lock. */
int zr__lock_open(zr_store *s);
int zr__lock_exclusive(zr_store *s, const char *what);
void zr__lock_share(zr_store *s);
int zr__lock_held(const zr_store *s, const char *what);

/* The header's length and tail as the server has them (past the client's
 * page cache on a filesystem with client caches). */
int zr__header_read(zr_store *s, uint64_t *len, uint64_t *tail);

/* zr_store_open through backend vfs (the suites' way to a row that no
 * path selects). */
int zr__store_open_vfs(const char *path, const struct zr__vfs *vfs,
		       unsigned flags, zr_store **out);
#endif
