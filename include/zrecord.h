/*
 * zrecord.h - public API of libzrecord: the Zrecord persistent record store,
 * the Zsampler index generator, dictionary training and the NumPy .npy
 * header codec.  This header is the manual; read the conventions first.
 *
 * ============================================================================
 * CONVENTIONS
 * ============================================================================
 *
 * Errors.  Every function that can fail returns int: 0 on success, a negative
 * errno (-EIO, -ENOMEM, -EINVAL, -EROFS, -EBUSY, ...) for system failures and
 * misuse, or one of the library codes ZR_E_* below (a block far from errno,
 * -30800 downward).  zr_strerror() names any of them, zr_errno() maps any of
 * them to the positive errno a filesystem or an OSError should report.
 * Output parameters are written only on success.
 *
 * Messages.  A failing call also records a one-line detailed message (which
 * file, which record, which offset) in a thread-local buffer, read with
 * zr_errmsg() on the same thread before the next library call.  Work done on
 * pool threads reports back to the calling thread, so the message is always
 * on the thread that made the call.  zr_set_log() additionally receives every
 * such message, from any thread.
 *
 * Threads.  Functions on distinct handles are independent.  On one store
 * handle, zr_store_gather*, zr_store_length, zr_store_stats, zr_store_loc,
 * zr_ragged_shape, the zr_view_* calls and the schema accessors may be
 * called from any number of threads at once, concurrently with one append
 * session; so may zr_store_sync.  Delete and compact exclude everything
 * else for their span (a view begun before still sees what it saw: see
 * Views), and close must be the last call.
 * The sampler, npy, dtype and schema functions are pure and thread-safe.
 *
 * ============================================================================
 * ON-DISK FORMAT (byte for byte the seed's; all integers little-endian)
 * ============================================================================
 *
 *   STORE/meta.zr   static page + record table
 *   STORE/data.zr   payload stream: every record is one independent frame
 *   STORE/dict.zr   zstd dictionary, present iff codec == 2
 *   STORE/maintenance.zr  journal, present only while a delete or compact
 *                   runs or was interrupted (see Durability)
 *
 * meta.zr:
 *   OFFSET SIZE  MEANING
 *   0      8     length        live record count N (u64)
 *   8      8     tail_offset   committed frontier of data.zr (u64)
 *   16     4     schema_length bytes of MsgPack schema, 1..4064 (u32)
 *   20     11    reserved      zero
 *   31     1     codec         0 raw, 1 zstd level 3, 2 zstd+dict level 19
 *   32     S     schema        one MsgPack map (see SCHEMA), S = schema_length
 *   32+S   ..    zero padding up to 4096
 *   4096+16i 16  RecordLoc i:  u64 offset (absolute, in data.zr),
 *                              u32 phys_length (stored bytes),
 *                              u32 logic_length (decoded bytes)
 *
 * Every entry below length is live; delete swaps the last entry into the
 * hole, so the live records are always exactly 0..N-1.  Entries at or past
 * length, and data.zr bytes past tail_offset, are garbage from unsynced or
 * aborted work and are overwritten by the next append.
 *
 * A dense record is one row of the schema's item_shape (logic_length equals
 * the row width).  A ragged record is [u64 ndim][u64 dim]*ndim [payload],
 * so its shape travels in the same frame as its bytes; ndim <= ZR_MAX_NDIM
 * and product(dims) * itemsize equals the payload length.  Records are never
 * empty, and logic_length <= 2^31.  A raw record has phys_length equal to
 * logic_length; a compressed one is exactly one zstd frame, even when that
 * frame is larger than its input.
 *
 * Durability.  Append writes payloads and table entries at once, but the
 * header (length, tail_offset) only on zr_store_sync() or zr_store_close()
 * (which syncs).  Sync, in this order: (1) snapshots the committed length,
 * then tail_offset; (2) fdatasync(data.zr), the payloads; (3)
 * fdatasync(meta.zr), the record table; (4) writes the snapshot into the
 * header; (5) fsync(meta.zr).  So a header on disk never covers a payload
 * or a table entry that is not.  Sync runs concurrently with gathers and
 * with an append session (a commit that lands during a sync is left for
 * the next one); it waits for a delete or compact, and for another sync.
 * After a crash a store reopens at its last synced header.  Create renames
 * meta.zr into place last, so a create cut short leaves no store
 * (ZR_E_NOSTORE), never a malformed one.
 *
 * Delete and compact are atomic across a crash, a kill, an I/O error or a
 * power cut: the store reopens exactly as before or after the whole
 * operation, with no rebuild, through the journal STORE/maintenance.zr
 * (checksummed slots; a slot that is torn was never relied on).  Delete
 * syncs, makes an undo slot durable (the header and the table entries it
 * will overwrite), swaps, syncs, and removes the journal; an interrupted
 * delete is rolled back.  Compact moves records down in batches of at
 * most 1 MiB: a redo slot with the batch's original bytes and new places
 * is made durable, then the copies, then the table entries (a record over
 * 1 MiB goes the same way one 1 MiB chunk at a time); slots alternate
 * between two places, so the journal stays under 2.1 MiB and a torn slot
 * leaves the one before it.  An interrupted compact leaves a store with
 * the same records, the batch in flight redone at open.  The header's new
 * tail is written before data.zr shrinks.  A failed delete or compact
 * recovers the same way at once.  Recovery runs at the first open that
 * may write the store's files, read-only ones included (they recover
 * through a read-write handle of their own, as SQLite does with a hot
 * journal; zr_store_recovered says what was done).  A read-only open that
 * may not write them fails, never serving a half-rewritten table, and
 * its message names `zrecord recover STORE`.  A journal with no valid
 * slot is ignored (and removed by a read-write open).
 *
 * Locking.  Every lock is a non-blocking flock() held for the handle's
 * lifetime; an open that conflicts fails at once with ZR_E_BUSY (also
 * within one process).  There are three kinds of handle:
 *   writer (read-write)            data.zr exclusive + meta.zr shared
 *   reader (ZR_OPEN_RDONLY)        meta.zr shared + data.zr shared
 *   follower (RDONLY|FOLLOW)       meta.zr shared
 * So a store has at most one writer; a reader serves one snapshot and
 * keeps writers out; a writer and any number of followers share the store,
 * the followers taking up its synced records with zr_store_refresh.  Delete
 * and compact (and an open that must recover an interrupted one) make the
 * writer's meta.zr lock exclusive for their span, so they fail with
 * ZR_E_BUSY while a follower is open.  A seed process holds meta.zr
 * exclusively for its lifetime, so it still excludes, and is excluded by,
 * each of the three.  flock() converts a lock by dropping it first: should
 * a process that takes meta.zr alone (the seed) slip into that gap, the
 * writer's later mutating calls fail with ZR_E_BUSY.
 * A writer also checks, before each append session, delete and compact,
 * and before a sync writes a new header, that meta.zr's header is still
 * the one it last read or wrote (read past the client's page cache) and
 * that data.zr holds nothing it did not write; if not, the call fails with
 * ZR_E_CHANGED ("store changed by another writer") and writes nothing.  A
 * sync with nothing new to publish writes no header.  That can only happen when the lock does not reach
 * the other writer (sshfs and NFS with local locks keep flock on one
 * host) or the files were modified behind the library; the check narrows
 * such a race, it cannot close it: on those filesystems use one writer
 * (zr_store_lock_warning says when a store is on one).
 * On FUSE and network filesystems (statfs type FUSE, NFS, CIFS/SMB, Ceph)
 * a read-write open, once it holds the lock, makes each client cache drop
 * the store's files (a one-byte FALLOC_FL_KEEP_SIZE fallocate, which
 * changes nothing) and asks the server for their sizes (a forced statx),
 * so that on GlusterFS, whose clients cache contents and sizes for a
 * second by default, a writer right after another host's writer sees that
 * writer's records instead of writing over them.  A read-only open takes
 * sizes from the server too, but may be served the store as it was up to
 * that cache time ago.
 *
 * Reading maps data.zr and meta.zr read-only (writes stay positional);
 * modifying the files of an open store behind the library's back is
 * unsupported.  Records under 64 KiB and the record table are read from
 * those mappings, so a media error there, or a file truncated behind the
 * library, raises SIGBUS, which kills the process unless
 * zr_sigbus_guard() was called (see Store).
 *
 * ============================================================================
 * SCHEMA
 * ============================================================================
 * A MsgPack map.  Dense: {"dtype": str, "item_shape": [uint...]} in that key
 * order; ragged: {"dtype": str}.  dtype is NumPy's dtype.str of a
 * fixed-size numeric type: |b1, [<>]i2/i4/i8, |i1, [<>]u2/u4/u8, |u1,
 * [<>]f2/f4/f8, [<>]c8/c16.  Unknown keys, other dtypes, a dense
 * item_shape with a zero dimension and a schema over 4064 bytes are
 * rejected (ZR_E_SCHEMA).
 */
#ifndef ZRECORD_H
#define ZRECORD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(ZR_BUILDING_LIBRARY) && defined(__GNUC__)
#define ZR_API __attribute__((visibility("default")))
#else
#define ZR_API
#endif

/* ---------------------------------------------------------------------------
 * Version
 *
 * These three lines are the package's version: configure.ac reads them
 * (scripts/version.sh), so a release changes them here and nowhere else.
 * MAJOR is the ABI: it equals the soname's number (libzrecord.so.0) and
 * changes only with an incompatible change; MINOR grows when functions or
 * struct members are added; PATCH is for fixes.  A program compiled against
 * one header may run with another library of the same MAJOR and a MINOR at
 * least as high.
 * ------------------------------------------------------------------------- */

#define ZR_VERSION_MAJOR 0
#define ZR_VERSION_MINOR 1
#define ZR_VERSION_PATCH 0
/* MAJOR * 10000 + MINOR * 100 + PATCH: 0.1.0 is 100. */
#define ZR_VERSION_NUMBER                                                      \
	(ZR_VERSION_MAJOR * 10000 + ZR_VERSION_MINOR * 100 + ZR_VERSION_PATCH)
#define ZR__STR(x) #x
#define ZR__XSTR(x) ZR__STR(x)
/* "0.1.0" */
#define ZR_VERSION_STRING                                                      \
	ZR__XSTR(ZR_VERSION_MAJOR) "." ZR__XSTR(ZR_VERSION_MINOR) "."          \
	ZR__XSTR(ZR_VERSION_PATCH)

/* The version of the library running (which may be newer than the header a
 * program was compiled with), as ZR_VERSION_NUMBER and as
 * ZR_VERSION_STRING.  Thread-safe; the string is static. */
ZR_API unsigned zr_version(void);
ZR_API const char *zr_version_string(void);

/* sizeof the public struct named name ("zr_schema", "zr_stats", ...; any
 * typedef struct of this header), 0 for a name it does not know.  For
 * bindings that declare the structs by hand (cffi's ABI mode, ctypes): they
 * compare these with their own sizes before the first call. */
ZR_API size_t zr_struct_size(const char *name);

/* ---------------------------------------------------------------------------
 * Errors
 * ------------------------------------------------------------------------- */

/* X(name, value, errno it maps to, message) */
#define ZR_ERROR_MAP(X)                                                        \
	X(BUSY, -30800, EBUSY, "store busy: another handle holds its lock")    \
	X(EXISTS, -30801, EEXIST, "a file or store already exists there")      \
	X(NOSTORE, -30802, ENOENT, "no store at that path")                    \
	X(CORRUPT, -30803, EIO, "malformed store files")                       \
	X(SCHEMA, -30804, EINVAL, "invalid or unsupported schema")             \
	X(DTYPE, -30805, EINVAL, "dtype mismatch or unsupported dtype")        \
	X(SHAPE, -30806, EINVAL, "shape mismatch")                             \
	X(RANGE, -30807, ERANGE, "index out of range")                         \
	X(EMPTY, -30808, EINVAL, "zero-byte record")                           \
	X(TOOBIG, -30809, EFBIG, "record over 2 GiB or size overflow")         \
	X(CODEC, -30810, EIO, "compression or decompression failed")           \
	X(NODICT, -30811, EINVAL, "zstd_dict store needs a dictionary")        \
	X(NPY, -30812, EINVAL, "malformed .npy data")                          \
	X(TRUNCATED, -30813, EINVAL, "input ends early")                      \
	X(CHANGED, -30814, EBUSY, "store changed by another writer")         \
	X(IMAGE, -30815, EIO, "image does not decode")

enum {
#define ZR__ENUM(name, value, errnum, msg) ZR_E_##name = (value),
	ZR_ERROR_MAP(ZR__ENUM)
#undef ZR__ENUM
};

/* A static description of any return code (0, -errno or ZR_E_*). */
ZR_API const char *zr_strerror(int err);
/* The code's symbolic name: "ZR_E_BUSY", "EIO", "OK". */
ZR_API const char *zr_errname(int err);
/* The positive errno that best reports err (0 for 0, EIO if unknown). */
ZR_API int zr_errno(int err);
/* The calling thread's detailed message for its last failed call ("" if
 * none).  Valid until that thread's next library call. */
ZR_API const char *zr_errmsg(void);

typedef void (*zr_log_fn)(void *ctx, int err, const char *msg);
/* Process-wide sink for detailed failure messages; NULL disables.  fn may be
 * called from any thread, concurrently.  Not thread-safe against itself:
 * set it once at start-up. */
ZR_API void zr_set_log(zr_log_fn fn, void *ctx);

/* ---------------------------------------------------------------------------
 * dtypes and schemas
 * ------------------------------------------------------------------------- */

#define ZR_MAX_NDIM 32          /* NumPy 1.x's limit, for records and .npy */
#define ZR_SCHEMA_MAX 4064      /* bytes available in the static page      */
#define ZR_RECORD_MAX (1u << 31) /* largest logic_length of one record     */

typedef struct zr_dtype {
	char str[5];       /* canonical dtype.str, NUL-terminated: "<f4" */
	char kind;         /* 'b' bool, 'i', 'u', 'f', 'c'               */
	char order;        /* '<', '>' or '|' (one-byte types)           */
	uint32_t itemsize; /* bytes per element                          */
} zr_dtype;

/* Parses a dtype.str ("<f4", ">i8", "|u1"; '=' means native, a one-byte
 * type takes any order character) or a plain name ("float32", "uint8",
 * "bool", "complex64": native byte order).  Fails with ZR_E_DTYPE. */
ZR_API int zr_dtype_parse(const char *s, zr_dtype *out);

typedef struct zr_schema {
	zr_dtype dtype;
	int ragged;                  /* 1: ragged store, no item_shape   */
	uint32_t ndim;               /* dense: rank of one record (0..)  */
	uint64_t shape[ZR_MAX_NDIM]; /* dense: item_shape               */
} zr_schema;

/* Encodes schema as MsgPack exactly as the seed's Python does (map of
 * "dtype" then "item_shape"; ints in their shortest form).  *len gets the
 * size; ZR_E_SCHEMA if it would exceed cap or ZR_SCHEMA_MAX. */
ZR_API int zr_schema_encode(const zr_schema *schema, void *dst, size_t cap,
			    size_t *len);
/* Decodes and validates a MsgPack schema (ZR_E_SCHEMA on anything else). */
ZR_API int zr_schema_decode(const void *buf, size_t len, zr_schema *out);
/* Bytes of one dense record (product(shape) * itemsize); ZR_E_TOOBIG on
 * overflow or above ZR_RECORD_MAX, ZR_E_SCHEMA for a zero dimension;
 * -EINVAL for a ragged schema. */
ZR_API int zr_schema_row_bytes(const zr_schema *schema, size_t *out);
/* Writes the schema as one JSON object, NUL-terminated (-ENOBUFS if cap
 * cannot hold it):
 * {"dtype": "<f4", "item_shape": [3, 4]} or {"dtype": "<i4"}. */
ZR_API int zr_schema_json(const zr_schema *schema, char *dst, size_t cap);

/* ---------------------------------------------------------------------------
 * Store
 * ------------------------------------------------------------------------- */

typedef struct zr_store zr_store;
typedef struct zr_append zr_append;

typedef enum zr_codec {
	ZR_CODEC_RAW = 0,
	ZR_CODEC_ZSTD = 1,      /* zstd level 3 per record           */
	ZR_CODEC_ZSTD_DICT = 2  /* zstd level 19 with dict.zr        */
} zr_codec;

/* "raw", "zstd", "zstd_dict" (also "zstdict"); -EINVAL otherwise. */
ZR_API int zr_codec_parse(const char *s, zr_codec *out);
ZR_API const char *zr_codec_name(zr_codec codec);

enum {
	ZR_OPEN_RDONLY = 1, /* shared lock; every mutating call gives -EROFS */
	/* With ZR_OPEN_RDONLY: a follower, which lets one writer in beside
	 * it and sees its synced appends after zr_store_refresh (see
	 * Locking).  Without ZR_OPEN_RDONLY: -EINVAL. */
	ZR_OPEN_FOLLOW = 2
};

/* A store path is a folder; a path that starts with a URL scheme
 * ("name://...") names a store on the storage backend of that scheme, and
 * fails with -EPROTONOSUPPORT where this build has none (a local folder of
 * such a name is reached as "./name://...").
 *
 * S3.  "s3://BUCKET/PREFIX" is the store whose files are the objects
 * PREFIX/meta.zr, PREFIX/data.zr and, if present, PREFIX/dict.zr and
 * PREFIX/content.zr (a local store's files uploaded as they are).  It
 * opens read-only only: zr_store_open with ZR_OPEN_RDONLY, or with
 * ZR_OPEN_FOLLOW, whose zr_store_refresh takes up a newer version that
 * zr_store_push published if it extends the one read (else -ESTALE: open
 * it again; docs/many-hosts.md, "Following a pushed store"); a
 * read-write open and zr_store_create give -EROFS (zr_store_list below
 * finds the stores under a prefix).  Reads come from the host cache
 * (zr_cache_set) or ranged GETs, signed with SigV4 by libcurl:
 *   AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY  the keys; else those of
 *       AWS_PROFILE (default "default") in ~/.aws/credentials
 *       (AWS_SHARED_CREDENTIALS_FILE);
 *   AWS_SESSION_TOKEN  sent as x-amz-security-token when set;
 *   AWS_REGION         the signature's region (else the profile's region
 *       in ~/.aws/config or AWS_CONFIG_FILE, else us-east-1);
 *   AWS_ENDPOINT_URL   another S3 service (Ceph RGW, MinIO...): URLs
 *       ENDPOINT/BUCKET/KEY; unset, AWS itself
 *       (https://BUCKET.s3.REGION.amazonaws.com/KEY).
 * The variables are read at each open.  Errors, with zr_errmsg() naming
 * the object's URL and the HTTP status: -EACCES (403, or no credentials:
 * check the variables above), ZR_E_NOSTORE (no PREFIX/meta.zr; the
 * message says when the bucket itself is missing), -ESTALE (an object
 * replaced since the open: its ETag no longer matches, and no byte of the
 * new one is returned; open the store again), -EIO (a refused or broken
 * connection or a 5xx answer, after 4 tries over about a second; a
 * connection not made in 10 s or a transfer stalled for 20 s, at once:
 * a stalled endpoint is not retried).
 *
 * Creates a new store at path (which must not exist; missing parent folders
 * are created) and returns it open read-write.  dict/dict_len is required
 * for ZR_CODEC_ZSTD_DICT (ZR_E_NODICT without it) and must be NULL/0
 * otherwise.  The new store is synced before return.  On failure nothing is
 * left at path. */
ZR_API int zr_store_create(const char *path, const zr_schema *schema,
			   zr_codec codec, const void *dict, size_t dict_len,
			   zr_store **out);
/* Opens an existing store (ZR_E_NOSTORE if there is none) and validates its
 * header, schema, file sizes and dictionary; ZR_E_BUSY if the lock
 * conflicts. */
ZR_API int zr_store_open(const char *path, unsigned flags, zr_store **out);
/* 1 if path is a store (its meta.zr is there, asked of path's backend: a
 * folder's file, an s3:// URL's object), 0 if not, -errno if that cannot
 * be told (-EPROTONOSUPPORT, -EACCES, -EIO; zr_errmsg() says why).  Opens
 * and locks nothing: what a command asks before it takes path for a store
 * rather than a file. */
ZR_API int zr_store_probe(const char *path);
/* 1 if path starts with a URL scheme ("name://": a letter, then letters,
 * digits, '+', '-' or '.'), so names a store of that scheme's backend, to
 * be passed on as written; 0 for a local path (also "./name://...") and
 * NULL.  The rule above, for programs that resolve local paths themselves
 * (realpath, a path relative to a file's folder); whether this build has
 * the backend is not asked. */
ZR_API int zr_path_is_url(const char *path);
/* The stores at and under url = "s3://BUCKET/PREFIX", as a mount of the
 * URL serves them (zrecordfs(8)): 0 with *paths, n strings relative to url
 * in byte order ('/' between folders; the one path "" when url itself is
 * a store, which is then all that is asked: no listing), freed with
 * zr_store_list_free.  The prefix is listed with ListObjectsV2 one folder
 * level at a time: a folder holding meta.zr (a store's files uploaded as
 * they are) or manifest (a published one) is a store and is not searched
 * further; a folder named parts, one deeper than 32 levels, and a name no
 * folder can have ("", ".", "..", over 255 bytes) are passed over.  The
 * bucket's names are input: past ZR_STORE_LIST_MAX keys and folders in
 * all, -E2BIG (list a folder nearer the stores).  ZR_E_NOSTORE when no
 * folder under url is a store, -ENOENT for a missing bucket, -EACCES for
 * refused credentials, -EPROTONOSUPPORT for a path that is no s3:// URL;
 * zr_errmsg() names the URL and what to check. */
#define ZR_STORE_LIST_MAX 100000u
ZR_API int zr_store_list(const char *url, char ***paths, size_t *n);
ZR_API void zr_store_list_free(char **paths, size_t n);

/* Publishing (docs/many-hosts.md, "Publishing"; zrecord(5), "Published
 * stores").  zr_store_push uploads the local store folder path to
 * url = "s3://BUCKET/PREFIX/NAME" as a published version: every file cut
 * into part objects of at most part_size bytes (0: ZR_PUSH_PART_SIZE),
 * each stored at PREFIX/NAME/parts/SHA256 (the digest of its bytes, so a
 * key never names two contents), then the object PREFIX/NAME/manifest,
 * written last, which lists them.  A reader (zr_store_open of the URL)
 * sees one whole version: the one before the manifest's PUT or the one
 * after.  Parts of the published version that the local file still holds
 * are kept (data.zr only grows: a newer version uploads its new tail), and
 * a part already there with its size is not uploaded again, so a push
 * killed at any point leaves the previous version readable and the next
 * push (same part_size) completes it.  No push deletes a part: a reader
 * that opened an older version keeps reading it.  The store is opened
 * read-only for the push (a reader's locks keep writers out).  -EINVAL
 * for a URL without BUCKET and NAME or a part_size out of range,
 * ZR_E_NOSTORE if path is not a store, -ENOENT for a missing bucket,
 * -EACCES for refused credentials (zr_errmsg() names the URL and what to
 * check); nothing is published then.  out: what the version holds and
 * what this call uploaded. */
#define ZR_PUSH_PART_SIZE ((uint64_t)64 << 20)
#define ZR_PUSH_PART_MIN 4096u
#define ZR_PUSH_PART_MAX ((uint64_t)5 << 30) /* S3's largest single PUT */

typedef struct zr_transfer {
	uint64_t files;      /* pull: store files copied */
	uint64_t parts;      /* push: part objects of the version */
	uint64_t parts_sent; /* push: of which this call uploaded */
	uint64_t bytes;      /* the store files' bytes */
	uint64_t bytes_sent; /* bytes this call moved */
	int published;       /* push: 1 if it wrote a new manifest (0: the
			      * same version was there already) */
	char version[65];    /* push: the version's id (a SHA-256, hex) */
} zr_transfer;

ZR_API int zr_store_push(const char *path, const char *url,
			 uint64_t part_size, zr_transfer *out);
/* Copies the store at url (s3://BUCKET/PREFIX: published by push, or its
 * files uploaded as they are) into a new local store folder dest, which
 * must not exist (-EEXIST).  One published version, whole: the files go
 * into a folder DEST.pull-XXXXXX beside dest, which is renamed to dest
 * once it opens as a store; on failure nothing is at dest.  Errors as
 * zr_store_open's for the URL. */
ZR_API int zr_store_pull(const char *url, const char *dest,
			 zr_transfer *out);

/* The host cache (docs/many-hosts.md, "The host cache").  What an S3 read
 * fetches is kept on local disk, in blocks of ZR_CACHE_BLOCK bytes of one
 * object version, for every process on the host that uses the same
 * folder (the mount, the commands and loaderx at once): a block is
 * downloaded once, however many processes read it, and the cache
 * survives unmounts and reboots.  Blocks are keyed by the object's URL,
 * its ETag and its size (not by the endpoint: a relay or another port to
 * the same service keeps them), so a replaced object or a new published
 * version never serves old bytes; a block is written under another name,
 * synced, then renamed, so no reader sees part of one.  The folder holds
 * at most max_bytes of blocks: a process that finds it past that removes
 * the blocks used longest ago, down to 9/10 of it (a process killed
 * between keeping a block and counting it may leave it up to that block
 * over, until the next removal counts again).  The cache's own failures
 * (a full disk, a folder removed) never fail a read: the block is served
 * from its download and not kept.  zr_store_pull reads past it.  A
 * gather maps the block files it reads (up to 4096 per process, until the
 * store is closed) and copies each record once: the folder's files must
 * not be truncated or rewritten in place (unlinking is safe).
 *
 * zr_cache_set chooses the cache this process uses from now on: dir (made
 * if missing; the blocks go in dir/v1) or NULL for the default, "off" for
 * none; max_bytes, or 0 for the default.  Defaults: ZR_CACHE (a folder or
 * "off"), else /var/cache/zrecord for root and $XDG_CACHE_HOME/zrecord
 * (~/.cache/zrecord) for others; ZR_CACHE_SIZE (bytes, with K, M or G),
 * else ZR_CACHE_SIZE_DEFAULT.  A process that never calls it takes the
 * defaults at its first S3 read (off if they fail; zr_cache_status says
 * why).  -EINVAL for a size below ZR_CACHE_SIZE_MIN or an empty dir,
 * -errno of a folder that cannot be made or written (zr_errmsg() names
 * it); the cache is off then. */
#define ZR_CACHE_BLOCK ((uint64_t)1 << 20)
#define ZR_CACHE_SIZE_DEFAULT ((uint64_t)8 << 30)
#define ZR_CACHE_SIZE_MIN (64u << 20)
ZR_API int zr_cache_set(const char *dir, uint64_t max_bytes);

typedef struct zr_cache_info {
	char dir[4096];		/* the blocks' folder, "" when off */
	uint64_t max_bytes;
	uint64_t used_bytes;	/* held now, as every process counts */
	uint64_t fetched_bytes;	/* this process: downloaded into it */
	uint64_t hit_bytes;	/* this process: read from it */
	char why_off[256];	/* why the default is off ("" if it is not) */
} zr_cache_info;
ZR_API int zr_cache_status(zr_cache_info *out);
/* A follower takes up the records the writer beside it has synced since
 * the last call: zr_store_length grows to the length in the header on
 * disk once meta.zr and data.zr hold what it names (the header is flushed
 * first, so no record is served before it is durable).  A header the
 * files do not cover yet (a client cache's delay) is left for a later
 * call; so is one whose new bytes do not all read back through the files
 * yet: the new table entries and records are read once with pread before
 * the mappings may reach them (a GlusterFS client serving its cached end
 * of the file gives a short read, and a mapped read past it SIGBUS).
 * Gathers may run meanwhile and see the old or the new length.
 * ZR_E_CHANGED if the header shrank (the lock did not reach the writer);
 * over S3, -ESTALE for a pushed version that does not extend the one read
 * (see S3 above); the view is unchanged on any error.  Other handles: 0,
 * nothing to do. */
ZR_API int zr_store_refresh(zr_store *s);
/* Syncs (read-write handles), releases the lock and frees.  NULL is a no-op.
 * Returns the sync's result; the handle is freed either way. */
ZR_API int zr_store_close(zr_store *s);

ZR_API uint64_t zr_store_length(const zr_store *s);
ZR_API const zr_schema *zr_store_schema(const zr_store *s);
ZR_API zr_codec zr_store_codec(const zr_store *s);
ZR_API int zr_store_readonly(const zr_store *s);
/* NULL, or why this store's lock does not keep out a writer on another
 * host: the store is on a filesystem known to keep flock on this host
 * (sshfs and some other FUSE filesystems; NFS with local_lock=flock|all).
 * The message names the store and its filesystem type; valid until close.
 * zrecordfs and zrecord print it as a warning at open.  GlusterFS and
 * local filesystems give NULL. */
ZR_API const char *zr_store_lock_warning(const zr_store *s);
/* NULL, or what this open recovered: a delete or compact cut short (a
 * crash, kill -9, a power cut) leaves its journal STORE/maintenance.zr,
 * and the next open that may write the store's files, read-only ones
 * included, rolls the delete back or finishes the compact's move in
 * flight before it goes on.  The rest of such a compact is not redone:
 * the note says how many bytes are still reclaimable and to run compact
 * again.  A read-only open that cannot write the files (a read-only
 * medium, no permission, another process holding the store) fails, and
 * its message names `zrecord recover`.  Valid until close; zrecordfs
 * and zrecord print it at open. */
ZR_API const char *zr_store_recovered(const zr_store *s);
/* Dense row width in bytes; 0 for ragged stores. */
ZR_API size_t zr_store_row_bytes(const zr_store *s);

typedef struct zr_loc {
	uint64_t offset;
	uint32_t phys_length;
	uint32_t logic_length;
} zr_loc;

/* Record idx's validated table entry (ZR_E_RANGE, ZR_E_CORRUPT). */
ZR_API int zr_store_loc(const zr_store *s, uint64_t idx, zr_loc *out);

/* -- append ---------------------------------------------------------------
 * An append session stages records: their payloads and table entries are
 * written past the committed frontier as they come (bounded memory, however
 * many), and become visible all together at zr_append_commit().  Abort, or
 * any failure, leaves the store exactly as before the session.  A failed
 * zr_append_dense/ragged ends the session's usefulness: later calls and
 * commit return the same error (abort or commit still frees it).  One
 * session per store at a time (-EBUSY); delete and compact give -EBUSY
 * while one is open.  Compression fans out across the worker pool. */
typedef struct zr_ragged_in {
	const void *data;       /* product(shape) * itemsize bytes, C order */
	uint32_t ndim;          /* 0..ZR_MAX_NDIM                          */
	const uint64_t *shape;  /* ndim dims                               */
} zr_ragged_in;

ZR_API int zr_append_begin(zr_store *s, zr_append **out);
/* Dense: count rows of zr_store_row_bytes() each, contiguous. */
ZR_API int zr_append_dense(zr_append *a, const void *rows, uint64_t count);
/* Ragged: count records; ZR_E_EMPTY for one with no elements. */
ZR_API int zr_append_ragged(zr_append *a, const zr_ragged_in *recs,
			    uint64_t count);
/* Dense rows put in place by many threads.  zr_append_dense_reserve takes
 * the session's next count rows as slots 0..count-1; zr_append_dense_put
 * writes one row (zr_store_row_bytes() bytes) into a slot and may be
 * called from any number of threads at once, for distinct slots (a
 * decoder puts each row as soon as it has it, from its own buffer); then
 * zr_append_dense_stage stages the slots kept, in order, and ends the
 * reservation.  What is staged is byte for byte what zr_append_dense of
 * the kept rows, in that order, stages.  In a raw store of rows of 4 KiB
 * or more each put is the one write of its row into data.zr (slots lie
 * past the frontier, unpublished until commit, like every staged
 * record); in a compressed store, or of smaller rows, the slots are a
 * buffer that staging compresses or writes in one call.
 *
 * Reserve, stage and the other session calls still come from one thread
 * at a time, and never while puts run (the caller waits for its putting
 * threads first).  A put's failure (ENOSPC) is returned to its thread
 * and fails the session: stage and commit return it.  Any other session
 * call, commit or abort gives back a reservation unstaged.  -EINVAL for
 * count 0. */
ZR_API int zr_append_dense_reserve(zr_append *a, uint64_t count);
/* Writes row into slot (0 <= slot < the reserved count).  Thread-safe for
 * distinct slots; the message of a failure is the calling thread's. */
ZR_API int zr_append_dense_put(zr_append *a, uint64_t slot, const void *row);
/* Stages slots keep[0..count), which must be ascending (NULL: slots
 * 0..count-1), each put before; the rest are given back.  count may be 0.
 * -EINVAL, which fails the session, if nothing is reserved or keep is not
 * ascending slots of the reservation. */
ZR_API int zr_append_dense_stage(zr_append *a, const uint64_t *keep,
				 uint64_t count);
/* Records staged so far in this session. */
ZR_API uint64_t zr_append_count(const zr_append *a);
/* Publishes every staged record at once and frees the session.  On failure
 * nothing is published and the session is freed. */
ZR_API int zr_append_commit(zr_append *a);
/* Discards the session.  NULL is a no-op. */
ZR_API void zr_append_abort(zr_append *a);
/* 1 while an append session is open on s (begun, not yet committed or
 * aborted), else 0: a delete or compact would give -EBUSY.  Any thread;
 * the answer may be stale by the time it is used, so it is for saying
 * "busy" early (zrecordfs's delete file, at write), never instead of the
 * delete's own verdict. */
ZR_API int zr_store_appending(const zr_store *s);

/* One-call forms: begin, stage, commit. */
ZR_API int zr_store_append_dense(zr_store *s, const void *rows,
				 uint64_t count);
ZR_API int zr_store_append_ragged(zr_store *s, const zr_ragged_in *recs,
				  uint64_t count);

/* -- gather ---------------------------------------------------------------
 * Reads records idx[0..count) straight into dst (decompressing in place, no
 * intermediate copy), fanned out across the pool.  Indices may repeat and
 * come in any order.  Dense: record k lands at dst + k * row_bytes, dst_cap
 * must be >= count * row_bytes, offsets may be NULL.  Ragged: records (with
 * their shape prefix, as stored) are packed back to back, offsets[0..count]
 * receives their boundaries, dst_cap must be >= zr_store_gather_size().
 * Every record is validated; on any error dst contents are unspecified. */
ZR_API int zr_store_gather(zr_store *s, const uint64_t *idx, size_t count,
			   void *dst, size_t dst_cap, uint64_t *offsets);
/* Sum of logic_length over idx (the dst size gather needs). */
ZR_API int zr_store_gather_size(zr_store *s, const uint64_t *idx,
				size_t count, uint64_t *out);

/* Parses a ragged record as gathered: ZR_E_CORRUPT unless the prefix is
 * well-formed and product(shape) * itemsize equals the payload length. */
ZR_API int zr_ragged_parse(const void *rec, size_t len, size_t itemsize,
			   uint32_t *ndim, uint64_t shape[ZR_MAX_NDIM],
			   size_t *payload_offset);
/* Turns a gathered ragged batch (buf and offsets[0..count] as
 * zr_store_gather wrote them) into the packed form, in place: afterwards
 * buf[0..packed[count]) holds every record's elements back to back (no
 * shape prefix), packed[0..count] their byte boundaries, and
 * shapes[k * ndim .. k * ndim + ndim) record k's shape.  Every record
 * must have ndim dimensions (ZR_E_SHAPE otherwise), its prefix be
 * well-formed (ZR_E_CORRUPT) and offsets be non-decreasing (-EINVAL); on
 * error buf's contents are unspecified.  Pure, thread-safe. */
ZR_API int zr_ragged_pack(void *buf, const uint64_t *offsets, size_t count,
			  size_t itemsize, uint32_t ndim, uint64_t *shapes,
			  uint64_t *packed);
/* The same with the elements written to dst (dst_cap bytes; -EINVAL if
 * they need more) instead of buf, which is then left as it was; dst may
 * be buf, else the two must not overlap.  Pure, thread-safe. */
ZR_API int zr_ragged_pack_into(const void *buf, const uint64_t *offsets,
			       size_t count, size_t itemsize, uint32_t ndim,
			       void *dst, size_t dst_cap, uint64_t *shapes,
			       uint64_t *packed);
/* The padded form of a packed batch: the shape every record is padded to,
 * padded[0] the longest axis 0 and padded[1..ndim) the axes beyond it,
 * which every record must share (shapes as zr_ragged_pack gives them).
 * ZR_E_SHAPE, naming the record, for shapes that differ beyond axis 0 or
 * for ndim 0 (no axis 0 to pad).  Pure, thread-safe. */
ZR_API int zr_ragged_pad_shape(const uint64_t *shapes, size_t count,
			       uint32_t ndim, uint64_t padded[ZR_MAX_NDIM]);
/* Lays a packed batch (src, packed, shapes as zr_ragged_pack left them)
 * out as one (count, *padded) array at dst: record k's elements at dst +
 * k * row, row = product(padded[0..ndim)) * itemsize bytes, then pad (one
 * element of itemsize bytes; NULL: zero bytes) to the end of the row.
 * dst_cap must be >= count * row (-EINVAL otherwise).  dst may be src
 * (the records then move up, the last first), else the two must not
 * overlap.  ZR_E_SHAPE if a record does not fit padded or its byte length
 * is not its shape's.  These are the bytes of the data member of a
 * mount's .padded.npz (pad NULL).  Pure, thread-safe. */
ZR_API int zr_ragged_pad(const void *src, const uint64_t *packed,
			 size_t count, size_t itemsize, uint32_t ndim,
			 const uint64_t *shapes, const uint64_t *padded,
			 const void *pad, void *dst, size_t dst_cap);
/* Reads ragged record idx's shape without decoding its payload (a
 * compressed record decodes only the frame's first bytes). */
ZR_API int zr_ragged_shape(zr_store *s, uint64_t idx, uint32_t *ndim,
			   uint64_t shape[ZR_MAX_NDIM]);

/* -- views ----------------------------------------------------------------
 * A view is a read snapshot the library owns, as an LMDB read transaction
 * is: what it shows never changes while it is open, whatever deletes and
 * appends happen meanwhile on the same handle.
 *
 *   length  fixed at begin: appends are invisible to it, and so are the
 *           records a delete moves below the store's new length;
 *   indices 0 .. length-1 show the records they showed at begin, bytes
 *           and all, after any number of deletes (each delete saves the
 *           table entries it overwrites, and those it leaves past the new
 *           length, while a view begun before it is open; a deleted
 *           record's bytes are not reused until compact);
 *   epoch   the number of deletes done through this handle before begin:
 *           two views of one handle with the same epoch show the same
 *           record at every index both have, so a cache keyed by (handle,
 *           epoch, index) is never stale; appends and compact leave it.
 *
 * zr_store_gather, zr_store_gather_size, zr_store_loc and zr_ragged_shape
 * read through an implicit view for that one call: a view is for reads
 * that must agree with each other (a size, then a gather; a batch read
 * piece by piece; a file kept open across a delete).
 *
 * Begin never waits unless asked: while a delete or compact runs (or waits
 * for gathers to end before it runs) it fails at once with ZR_E_BUSY, so a
 * server can set the request aside instead of holding a thread;
 * ZR_VIEW_WAIT waits instead.  A gather through a view waits for a running
 * delete or compact, as zr_store_gather does.
 *
 * Compact moves records' bytes.  It keeps every index's record, so a view
 * begun after the last delete is not affected and does not hold it up; but
 * while a view begun before the last delete is open (it may still read a
 * deleted record's bytes), compact fails at once with ZR_E_BUSY, changing
 * nothing, and its message says how many views and what to do (end them:
 * close the files or loaders reading the store, then retry).  Saved
 * entries cost 24 bytes each and are freed as the views older than their
 * delete end; past 4 Mi entries held at once, a delete fails with
 * ZR_E_BUSY (nothing changed) until views end.
 *
 * Other handles and processes: a delete needs meta.zr exclusive, which no
 * reader or follower open on the store allows (see Locking), so within one
 * handle is the only place a delete can race a reader.
 *
 * Threads: begin, end and every call through views may run on any threads
 * at once, concurrently with the store's other readers, one append session
 * and one delete or compact.  A view belongs to its store handle: end it
 * before zr_store_close (close frees the saved entries; a view used after
 * is undefined), and do not end a view while a call through it runs.
 * Through a view, gather, gather_size and ragged_shape behave as the store
 * calls above, with the view's length (ZR_E_RANGE at or past it). */
typedef struct zr_view zr_view;

enum {
	ZR_VIEW_WAIT = 1, /* begin waits for a running delete or compact */
	/* Every call through the view (gather, gather_size, ragged_shape,
	 * loc) fails at once with ZR_E_BUSY while a delete or compact runs,
	 * instead of waiting for it: for a server that sets the request
	 * aside and runs it again once its own delete or compact returned. */
	ZR_VIEW_TRY = 2
};

/* Begins a view of s (flags: 0 or any of ZR_VIEW_WAIT, ZR_VIEW_TRY;
 * -EINVAL otherwise); ZR_E_BUSY at once while a delete or compact runs,
 * without ZR_VIEW_WAIT; -ENOMEM. */
ZR_API int zr_view_begin(zr_store *s, unsigned flags, zr_view **out);
/* Ends a view and frees what only it needed.  NULL is a no-op.  Never
 * waits for a delete or compact. */
ZR_API void zr_view_end(zr_view *v);
/* The store's length at begin, the view's epoch (above), its store. */
ZR_API uint64_t zr_view_length(const zr_view *v);
ZR_API uint64_t zr_view_epoch(const zr_view *v);
ZR_API zr_store *zr_view_store(const zr_view *v);
ZR_API int zr_view_gather(zr_view *v, const uint64_t *idx, size_t count,
			  void *dst, size_t dst_cap, uint64_t *offsets);
ZR_API int zr_view_gather_size(zr_view *v, const uint64_t *idx,
			       size_t count, uint64_t *out);
/* Makes records idx[0..count) local ahead of the gathers that will read
 * them: for a store on a remote medium (s3://) with the host cache on
 * (zr_cache_set), the blocks holding them that the cache lacks are
 * fetched, all at once, as one gather's would be; 0 and nothing done for
 * a local store, with the cache off, or for more than a gather stages at
 * once.  What a caller that gathers a batch in parts calls first, so that
 * the parts do not each wait for a round trip.  Errors as a gather's. */
ZR_API int zr_view_warm(zr_view *v, const uint64_t *idx, size_t count);
ZR_API int zr_view_ragged_shape(zr_view *v, uint64_t idx, uint32_t *ndim,
				uint64_t shape[ZR_MAX_NDIM]);
/* Record idx's table entry as the view sees it (ZR_E_RANGE, ZR_E_CORRUPT). */
ZR_API int zr_view_loc(zr_view *v, uint64_t idx, zr_loc *out);
/* Whether index idx may show another record at delete epoch b than at
 * delete epoch a (zr_view_epoch; either order): 1 when a delete between
 * them refilled idx or cut the length to idx or below, 0 when none did.
 * The handle remembers the holes of its last 1024 deletes, 64 Ki holes in
 * all (a few hundred KiB at most, kept from the first delete until close);
 * past that, or for an epoch this handle never had, the answer is 1.  A
 * cache keyed by (index, epoch) can so outlive deletes that missed its
 * index: zrecordfs keeps a record file's name and pages across them.
 * Compact changes no index's record.  Any thread, without waiting for a
 * running delete or compact. */
ZR_API int zr_store_index_changed(zr_store *s, uint64_t a, uint64_t b,
				  uint64_t idx);

/* -- maintenance ------------------------------------------------------- */

/* Deletes the given indices (any order, duplicates ignored) by swapping the
 * last live record into each hole, in descending index order, then syncs:
 * a delete that returned survives a crash, and one interrupted is rolled
 * back at the next open (see Durability).  ZR_E_RANGE (nothing changed) if
 * any index is >= length.  Needs write access to the store's folder (for
 * maintenance.zr). */
ZR_API int zr_store_delete(zr_store *s, const uint64_t *idx, size_t count);

typedef void (*zr_progress_fn)(void *ctx, uint64_t done, uint64_t total);
/* Rewrites live records in physical order, in place, then truncates data.zr
 * and meta.zr and syncs.  progress may be NULL.  Crash-safe with no free
 * space beyond a journal of at most 2.1 MiB: an interrupted compact leaves
 * the same records, readable (see Durability). */
ZR_API int zr_store_compact(zr_store *s, zr_progress_fn progress, void *ctx);

typedef struct zr_stats {
	uint64_t records;     /* live records                             */
	uint64_t live_bytes;  /* sum of live phys_length                  */
	uint64_t data_bytes;  /* committed frontier of data.zr            */
	uint64_t reclaimable; /* data_bytes - live_bytes                  */
} zr_stats;
ZR_API int zr_store_stats(zr_store *s, zr_stats *out);

/* Makes the committed records durable: flushes data.zr, then the record
 * table, then writes the header and flushes meta.zr (the order is under
 * Durability).  Safe next to gathers and an append session. */
ZR_API int zr_store_sync(zr_store *s);

/* Decodes every record.  bad(ctx, idx, err) is called for each record that
 * fails (may be NULL); progress may be NULL.  Returns the number of bad
 * records (>= 0), or an error that stopped the scan. */
typedef void (*zr_bad_fn)(void *ctx, uint64_t idx, int err);
ZR_API int64_t zr_store_verify(zr_store *s, zr_bad_fn bad, void *bad_ctx,
			       zr_progress_fn progress, void *progress_ctx);

/* Opt-in, process-wide: installs a SIGBUS handler (SA_SIGINFO |
 * SA_NODEFER) once; idempotent and thread-safe, 0 or -errno from
 * sigaction.  From then on a SIGBUS raised while the library reads one
 * of its own mappings of meta.zr or data.zr (an unreadable page, a file
 * truncated behind its back) makes that one call fail with -EIO and a
 * message naming the store file ("STORE/data.zr: record 17: I/O error
 * reading the mapped file at offset ..."; a gather, which guards its
 * records a block at a time, names the record only for a fault in
 * meta.zr); the store and the process stay usable.  Every other SIGBUS
 * goes to the handler that was installed before (or gets the default
 * action).  Install your own SIGBUS handler, if any, before this call;
 * the handler is never removed.  Without this call a read costs nothing
 * extra; with it, one sigsetjmp per single-record read, and one per
 * block of records (a pool chunk) in a gather. */
ZR_API int zr_sigbus_guard(void);

/* ---------------------------------------------------------------------------
 * Encoded images: JPEG, PNG and WebP records decoded in the gather.
 *
 * The mark.  A ragged |u1 store whose records are image files' bytes is
 * marked by zr_store_mark_images: the file STORE/content.zr holding the
 * seven bytes "images\n", beside the seed's files (meta.zr, data.zr and
 * the schema stay byte for byte the seed's, so the seed's reader opens
 * the store and sees each record's file bytes).  Open reads the mark;
 * one with other content fails (ZR_E_SCHEMA), and so does the mark on a
 * store that is not ragged |u1.  The format of each record is found from
 * its bytes (JPEG FF D8 FF, PNG's signature, RIFF....WEBP).
 *
 * Output.  Every decoded image is H x W x 3 uint8 RGB, row-major, as
 * PIL's np.asarray(Image.open(f).convert("RGB")) gives it: grey is
 * replicated, alpha (and a palette's or colour key's transparency)
 * dropped, not blended; a palette looked up; 16-bit PNG samples keep
 * their high byte, but 16-bit grey is clipped to 255 as PIL's mode I
 * conversion does; CMYK and YCCK JPEGs are read as Adobe's inverted CMYK
 * and converted as PIL's cmyk2rgb does.  Animated WebPs are refused.
 *
 * Transforms (zr_image_opts), on the image's pixel grid (W x H):
 *   size 0            the whole image, exact: byte for byte PIL's decode.
 *   size S            the evaluation transform: the centred square of side
 *                     m = min(W, H), box x0 = (W - m) / 2, y0 = (H - m) / 2
 *                     (integer division), resized to S x S.
 *   ZR_IMAGE_RRC      torchvision's RandomResizedCrop box (scale
 *                     [scale_min, scale_max], ratio [3/4, 4/3]) resized
 *                     to S x S (S 224 if size is 0);
 *   ZR_IMAGE_FLIP     then mirrored left-right with probability 1/2.
 * The random draws are the word stream of (seed, position) of the
 * sampler (w_0, w_1, ... below; u(w) = (w >> 11) * 2^-53, a double in
 * [0, 1)): flip iff w_0 >> 63 is 1.  RRC, A = W * H: for attempt
 * a = 0..9, with w = w_{1+2a}, v = w_{2+2a}: area = A * (smin + (smax -
 * smin) * u(w)); r = E(lo + (hi - lo) * u(v)), lo = ln(3/4), hi = ln(4/3),
 * E the 24-term Taylor series of exp in Horner form; bw = R(sqrt(area *
 * r)), bh = R(sqrt(area / r)), R(x) = floor(x + 0.5); the first attempt
 * with 0 < bw <= W and 0 < bh <= H gives y0 = floor(u(w_21) * (H - bh +
 * 1)), x0 = floor(u(w_22) * (W - bw + 1)).  If none does: with W / H <
 * 3/4, bw = W, bh = min(H, R(W * 4 / 3)); above 4/3, bh = H, bw = min(W,
 * R(H * 4 / 3)); else the whole image; centred as size S is.  Only IEEE
 * double +, -, *, / and sqrt are used, so every host gives the same box.
 * Record k of a gather uses position opts.position + k.  The batch of
 * rank R of W at step t (batch size B) of a run begun at position P is
 * positions P + t*W*B + R*B + k, k = 0..B-1, with the sampler's seed (as
 * zrecord batch --augment and loaderx's DataLoader use them), so a
 * sample's crop does not depend on the path that reads it.
 *
 * Resampling: PIL's BILINEAR (a triangle filter widened by the
 * reduction, so downscaling averages; its fixed-point weights and a
 * uint8 horizontal pass, then a vertical one) from the box to S x S.  A
 * box of S x S is copied.  PNG and WebP are decoded whole, so the result
 * equals PIL's img.resize((S, S), Image.BILINEAR, box=(x0, y0, x0 + bw,
 * y0 + bh)) byte for byte.  A JPEG is decoded at the smallest
 * libjpeg-turbo DCT scaling n/8 (n = 1..8) that keeps the box at least S
 * on both sides, and only the columns (iMCU aligned, jpeg_crop_scanline)
 * and rows (jpeg_skip_scanlines) the box needs, then resampled the same
 * way; the tolerance against PIL's reference of the same box is a mean
 * absolute difference of at most 3 levels (single pixels of fine
 * texture may differ by more: the DCT scaling filters differently), and
 * equal byte for byte when n is 8 (a box side under 8/7 S).  Checked by
 * contrib/python/tests/test_images.py; docs/performance.md has the
 * measured figures.
 *
 * Bad records: a record that does not decode (a corrupt or truncated
 * file, an unknown format, over 2^28 pixels) fails the call with
 * ZR_E_IMAGE and the message "STORE: record I: JPEG: <the decoder's
 * message>"; no image is made up for it.
 * ------------------------------------------------------------------------- */

enum {
	ZR_IMAGE_RRC = 1,  /* RandomResizedCrop (needs an output size) */
	ZR_IMAGE_FLIP = 2  /* horizontal flip, p = 1/2                 */
};

typedef struct zr_image_opts {
	uint32_t size;     /* 0: whole image; else S x S (see above)    */
	uint32_t flags;    /* ZR_IMAGE_RRC | ZR_IMAGE_FLIP               */
	double scale_min;  /* RRC area fraction range; 0 and 0 mean      */
	double scale_max;  /* torchvision's 0.08 .. 1.0                  */
	uint64_t seed;     /* the draws' key                            */
	uint64_t position; /* record k of a gather uses position + k    */
} zr_image_opts;

/* Parses the decode and augment options as the CLI, the mount and loaderx
 * take them into out (seed and position 0): decode "" or NULL (whole
 * images) or SIZE (1..4096); augment "", NULL, or a comma list of
 * "rrc", "rrc:SMIN:SMAX" (0 < SMIN <= SMAX <= 1) and "flip" ('+'
 * separates as ',' does: a mount's -o list splits at commas, so it takes
 * augment=rrc+flip).  -EINVAL with a message naming the bad part. */
ZR_API int zr_image_opts_parse(const char *decode, const char *augment,
			       zr_image_opts *out);
/* The format of image bytes buf/len by their magic (the formats the
 * decoder reads), 0 for none: what a mount's records/I.jpg, I.orig.png
 * and I.webp are named by.  Pure, any thread. */
enum {
	ZR_IMAGE_FORMAT_JPEG = 1, /* FF D8 FF          */
	ZR_IMAGE_FORMAT_PNG = 2,  /* PNG's signature   */
	ZR_IMAGE_FORMAT_WEBP = 3  /* RIFF....WEBP      */
};
ZR_API int zr_image_format(const void *buf, size_t len);
/* The H and W opts gives image buf/len (size 0: the image's own; else S,
 * S); ZR_E_IMAGE if buf is not a JPEG, PNG or WebP it can read. */
ZR_API int zr_image_shape(const void *buf, size_t len,
			  const zr_image_opts *opts, uint32_t *h, uint32_t *w);
/* Decodes image buf/len as opts says (position opts->position) into dst,
 * H * W * 3 bytes (zr_image_shape; -EINVAL if dst_cap is less).  Pure,
 * thread-safe; ZR_E_IMAGE with the decoder's message. */
ZR_API int zr_image_decode(const void *buf, size_t len,
			   const zr_image_opts *opts, void *dst,
			   size_t dst_cap);
/* Marks a ragged |u1 store's records as encoded images (see above);
 * durable on return.  -EROFS on a read-only handle, ZR_E_SCHEMA for
 * another schema; 0 if already marked. */
ZR_API int zr_store_mark_images(zr_store *s);
/* 1 if the store is marked as encoded images, else 0.  Any thread. */
ZR_API int zr_store_images(const zr_store *s);
/* Gathers records idx[0..count) of an image store decoded, fanned out
 * over the pool's lanes, each straight into dst.  opts->size S > 0 (or
 * RRC): record k at dst + k * S * S * 3, offsets NULL, dst_cap >= count
 * * S * S * 3.  Size 0: offsets[0..count] are inputs, record k goes to
 * dst + offsets[k] and must decode to offsets[k + 1] - offsets[k] bytes
 * (zr_view_image_shape; ZR_E_SHAPE otherwise).  -EINVAL for a store not
 * marked; ZR_E_IMAGE (store, index, decoder message) for a record that
 * does not decode; on error dst is unspecified. */
ZR_API int zr_view_gather_images(zr_view *v, const uint64_t *idx,
				 size_t count, const zr_image_opts *opts,
				 void *dst, size_t dst_cap,
				 const uint64_t *offsets);
ZR_API int zr_store_gather_images(zr_store *s, const uint64_t *idx,
				  size_t count, const zr_image_opts *opts,
				  void *dst, size_t dst_cap,
				  const uint64_t *offsets);
/* The H and W record idx decodes to under opts (reads the record). */
ZR_API int zr_view_image_shape(zr_view *v, uint64_t idx,
			       const zr_image_opts *opts, uint32_t *h,
			       uint32_t *w);

/* ---------------------------------------------------------------------------
 * Dictionary training (zstd ZDICT)
 * ------------------------------------------------------------------------- */

typedef enum zr_dict_tier {
	ZR_DICT_FAST = 0,     /*   32 KiB dictionary,  4 MiB sample */
	ZR_DICT_BALANCED = 1, /*  128 KiB dictionary, 16 MiB sample */
	ZR_DICT_MAX = 2       /* 1024 KiB dictionary, 64 MiB sample */
} zr_dict_tier;

ZR_API int zr_dict_tier_parse(const char *s, zr_dict_tier *out);
ZR_API const char *zr_dict_tier_name(zr_dict_tier tier);
ZR_API size_t zr_dict_tier_dict_size(zr_dict_tier tier);
ZR_API size_t zr_dict_tier_sample_size(zr_dict_tier tier);

/* Trains on a strided subset of samples[0..n) whose total fits the tier's
 * sample budget.  dst_cap must be >= zr_dict_tier_dict_size(tier). */
ZR_API int zr_dict_train(const void *const *samples, const size_t *sizes,
			 size_t n, zr_dict_tier tier, void *dst,
			 size_t dst_cap, size_t *dict_len);
/* Same, sampling a store's records (as stored: ragged prefixes included). */
ZR_API int zr_dict_train_store(zr_store *s, zr_dict_tier tier, void *dst,
			       size_t dst_cap, size_t *dict_len);

/* ---------------------------------------------------------------------------
 * Sampler: every batch is a pure function of the config and step.
 *
 * Words.  fmix(z): z ^= z >> 30; z *= 0xBF58476D1CE4E5B9; z ^= z >> 27;
 * z *= 0x94D049BB133111EB; z ^= z >> 31 (the SplitMix64 finalizer).
 * G = 0x9E3779B97F4A7C15.  The word stream of (key, x) is
 * w_c = fmix(s0 + (c + 1) * G), c = 0, 1, ..., with s0 = fmix(fmix(key) ^ x),
 * all arithmetic mod 2^64.
 *
 * Global batch.  With W = max(world, 1) and B = batch_size, step t draws a
 * global batch of W * B positions g = 0..W*B-1; rank R receives positions
 * R*B .. R*B+B-1, in order.  N = length.
 *
 * SEQUENTIAL: index(g) = (t * W*B + g) mod N, in 128-bit arithmetic; seed
 * unused.
 *
 * IID: consume the word stream of (seed, t) in order; each position draws
 * with Lemire's method: m = w * N (128-bit), l = low 64 bits of m; if
 * l < N, let th = (2^64 - N) mod N and while l < th take the next word and
 * recompute m, l; index = high 64 bits of m.  Positions draw in order
 * 0..W*B-1 (a rank computes and discards the draws before its slice).
 *
 * CYCLIC: requires W*B <= N.  P = floor(N / (W*B)) steps per cycle; cycle
 * c = t / P, j = t mod P; index(g) = perm_c(j*W*B + g).  perm_c is a Feistel
 * network on h-bit halves, h the smallest integer >= 1 with 4^h >= N, mask
 * M = 2^h - 1; round keys k_r = w_r of the stream of (seed, c), r = 0..5;
 * one pass: L = x >> h, R = x & M; for r in 0..5: (L, R) = (R, L ^
 * (fmix(R ^ k_r) & M)); result (L << h) | R.  perm_c(x) applies passes
 * until the result is < N (cycle-walking).  Positions beyond P*W*B of a
 * cycle are never served: a different remainder each cycle.
 * ------------------------------------------------------------------------- */

typedef enum zr_sampler_mode {
	ZR_SAMPLER_SEQUENTIAL = 0,
	ZR_SAMPLER_IID = 1,
	ZR_SAMPLER_CYCLIC = 2
} zr_sampler_mode;

typedef struct zr_sampler {
	zr_sampler_mode mode;
	uint64_t seed;
	uint64_t length;     /* N >= 1                        */
	uint64_t batch_size; /* B >= 1: this rank's slice     */
	uint32_t rank;       /* 0 <= rank < world             */
	uint32_t world;      /* 0 or 1: single process        */
} zr_sampler;

/* "sequential", "iid", "cyclic"; -EINVAL otherwise. */
ZR_API int zr_sampler_mode_parse(const char *s, zr_sampler_mode *out);
ZR_API const char *zr_sampler_mode_name(zr_sampler_mode mode);
/* Checks the config (-EINVAL with a message when it cannot serve). */
ZR_API int zr_sampler_check(const zr_sampler *cfg);
/* Writes this rank's batch_size indices for step into out. */
ZR_API int zr_sampler_batch(const zr_sampler *cfg, uint64_t step,
			    uint64_t *out);

/* ---------------------------------------------------------------------------
 * Streams: positions, elastic resume, weighted mixtures, skips, growth.
 *
 * A stream maps positions p = 0, 1, 2, ... of one global sample stream to
 * (source, record index).  The position is the whole state of a run: a
 * run that consumed P samples resumes by reading from position P, with any
 * world size and batch size.  Everything below is a pure function of the
 * stream's definition (made with the calls below, in position order) and
 * the position.
 *
 * Plain stream (zr_stream_new: mode, seed, length N, granule G).  One
 * source whose counter is the position.  Its cycles hold L positions:
 * L = N for SEQUENTIAL, L = floor(N / G) * G for CYCLIC (which needs
 * G <= N) and IID (L = G when N < G).  For counter c in a length segment
 * starting at counter a with length n (see growth; the first segment has
 * a = 0, n = N, e = 0 cycles before it), d = c - a:
 *   SEQUENTIAL: index = d mod n.
 *   IID: index = the (c mod G)-th draw (from 0) of the word stream of
 *        (seed, floor(c / G)), drawn from [0, n) as the sampler's IID
 *        mode draws.
 *   CYCLIC: index = perm_k(d mod L) with cycle k = e + floor(d / L), perm_k
 *        the sampler's permutation of [0, n) for (seed, k).
 * With G = world * batch_size these are exactly zr_sampler_batch's
 * batches: its step t, rank r reads positions t*W*B + r*B .. + B - 1.  A
 * cycle's last N - L records are never served in it (a different
 * remainder each cycle), as in the sampler.
 *
 * Elastic resume.  G is part of the stream, not of a run: keep it when W
 * or B change, and a cycle's positions still map to distinct records of
 * that cycle's permutation, so every record of the cycle is served once
 * across all ranks before and after the change.  A step may then straddle
 * two cycles; IID's words stay keyed by floor(p / G), so its stream does
 * not change either.
 *
 * Mixture (zr_stream_new_mixture: seed, K sources with lengths n_k and
 * weights w_k).  Source k is a CYCLIC stream of its own with G = 1 (every
 * record each cycle) and seed fmix(seed + (k + 1) * 0x9E3779B97F4A7C15):
 * its counter is the number of its draws before the position, so it
 * repeats a record only after serving all of them.  Weights apply in
 * segments (the first from position 0, each zr_stream_weights call opens
 * the next); a segment's weights are divided by their gcd, S = their sum
 * (1..2^20) is its period.  For position p of a segment starting at f,
 * q = floor((p - f) / S) periods have passed and x = (p - f) mod S is the
 * offset in this one.  The period's sources come from earliest-deadline
 * first: with C_k draws of source k so far in the period, k is ready at
 * offset x when floor(C_k * S / w_k) <= x and C_k < w_k, due at
 * floor((C_k + 1) * S / w_k); offset x goes to the ready source due
 * first, the lowest k on a tie.  So over every whole period source k is
 * drawn exactly w_k times, and after any n positions of a period
 * |C_k - n * w_k / S| < 1.  Source k's counter at p is its draws before f
 * + q * w_k + C_k(x): a weight change keeps every source's counter, so no
 * record repeats or is skipped because of it.  Cost: O(K) per position and
 * once per call up to S steps to reach the first offset.
 *
 * Skips (zr_stream_skip: positions [from, until)).  A skipped position is
 * never served and still counts: every other position keeps its record
 * (so a skipped record comes back only in a later cycle of its source,
 * where it comes back as any record does).  A run's samples are the
 * served positions in order: zr_stream_batch's step t, rank r of (W, B)
 * from start s takes the served positions with ordinals o(s) + t*W*B +
 * r*B .. + B - 1, o(s) the served positions before s.
 *
 * Growth (zr_stream_grow: source k, at position p, length n).  A store
 * that grew between runs: the new length takes effect at the first cycle
 * boundary of source k's counter at or after its counter at p (for a plain
 * stream, the counter is the position), so the cycle in progress finishes
 * with the length it began with.  Each call adds a length segment
 * (a, n, e); a second call before that boundary replaces the length.  A
 * length below the current one is -EINVAL (a store that shrank, by delete,
 * needs a new stream).
 *
 * Entries (weights, skips, growth) go in non-decreasing position order;
 * the stream holds at most 1024 sources and 65536 entries of each kind.
 * A stream is built by one thread; once built, any number of threads may
 * call zr_stream_map, zr_stream_batch and zr_stream_position at once.
 * ------------------------------------------------------------------------- */

typedef struct zr_stream zr_stream;

/* A plain stream over one store of length records (see above). */
ZR_API int zr_stream_new(zr_sampler_mode mode, uint64_t seed,
			 uint64_t length, uint64_t granule, zr_stream **out);
/* A mixture of sources (1..1024) stores: lengths[k] records each, drawn
 * in the shares weights[k] (each 0..2^20, not all 0) from position 0. */
ZR_API int zr_stream_new_mixture(uint64_t seed, uint32_t sources,
				 const uint64_t *lengths,
				 const uint64_t *weights, zr_stream **out);
/* NULL is a no-op. */
ZR_API void zr_stream_free(zr_stream *st);
/* 1 for a plain stream, K for a mixture. */
ZR_API uint32_t zr_stream_sources(const zr_stream *st);
/* From position from on, a mixture's weights (one per source). */
ZR_API int zr_stream_weights(zr_stream *st, uint64_t from,
			     const uint64_t *weights);
/* Positions [from, until) are not served. */
ZR_API int zr_stream_skip(zr_stream *st, uint64_t from, uint64_t until);
/* Source has length records from its first cycle boundary at or after
 * position at. */
ZR_API int zr_stream_grow(zr_stream *st, uint64_t at, uint32_t source,
			  uint64_t length);
/* (source[i], index[i]) of positions pos + i, i < count, skips not
 * considered; source may be NULL (a plain stream's is always 0). */
ZR_API int zr_stream_map(const zr_stream *st, uint64_t pos, uint64_t count,
			 uint32_t *source, uint64_t *index);
/* Rank's batch of batch samples at step of a run that began at position
 * start with world ranks (0 or 1: one); source may be NULL. */
ZR_API int zr_stream_batch(const zr_stream *st, uint64_t start,
			   uint64_t step, uint32_t rank, uint32_t world,
			   uint64_t batch, uint32_t *source, uint64_t *index);
/* The position a run that began at start reaches after serving served
 * samples (the next position it reads, past skipped ranges). */
ZR_API int zr_stream_position(const zr_stream *st, uint64_t start,
			      uint64_t served, uint64_t *pos);

/* ---------------------------------------------------------------------------
 * NumPy .npy headers (format 1.0, 2.0, 3.0; C order)
 * ------------------------------------------------------------------------- */

typedef struct zr_npy_header {
	zr_dtype dtype;
	uint32_t ndim;
	uint64_t shape[ZR_MAX_NDIM];
	size_t header_len; /* bytes before the array data            */
	uint64_t data_len; /* product(shape) * itemsize (checked)    */
} zr_npy_header;

/* Parses the header at the start of buf.  If buf holds too few bytes,
 * returns ZR_E_TRUNCATED and sets *need (when need is not NULL) to the
 * byte count it needs next: 10 or 12 until the length field is there,
 * then the whole header's size; call again with at least that much.
 * Malformed headers, dtypes outside the schema's set and Fortran-order
 * arrays of more than one non-trivial axis give ZR_E_NPY (or ZR_E_DTYPE);
 * a header dict over 64 KiB is ZR_E_NPY, an array over 2^63-1 bytes
 * ZR_E_TOOBIG. */
ZR_API int zr_npy_parse(const void *buf, size_t len, zr_npy_header *out,
			size_t *need);
/* The header size NumPy itself would write for this array (version 1.0, or
 * 2.0 when 1.0 cannot hold it; padded to 64 bytes, with NumPy's spare room
 * for growing the first axis). */
ZR_API size_t zr_npy_header_len(const zr_dtype *dtype, uint32_t ndim,
				const uint64_t *shape);
/* Writes exactly that header; *len gets its size (-ENOBUFS if cap is
 * smaller). */
ZR_API int zr_npy_write_header(const zr_dtype *dtype, uint32_t ndim,
			       const uint64_t *shape, void *dst, size_t cap,
			       size_t *len);

/* Ragged records are served as .npy files whose size must be known from the
 * record table alone (without decoding the shape prefix).  H, returned
 * here, is the smallest multiple of 64 that holds np.save's header (growth
 * room included) of any shape a record of logic_len bytes (prefix
 * included) could carry, using digits(d1*...*dn) >= sum(digits(di)) -
 * (n-1).  A server places the record, prefix first, at offset H and then
 * writes a header of H + prefix bytes over [0, H + prefix) with
 * zr_npy_write_header_fixed(): the file is exactly H + logic_len bytes
 * whatever the shape, a valid .npy whose header holds more spaces than
 * np.save writes.  0 if logic_len cannot be a ragged record of this
 * dtype. */
ZR_API size_t zr_npy_ragged_header_len(const zr_dtype *dtype,
				       uint64_t logic_len);
/* Writes a header for the array padded with spaces to exactly header_len
 * bytes (at most 64 KiB + 12, else -EINVAL; NumPy does not require the
 * 64-byte multiple np.save writes); ZR_E_SHAPE if it does not fit,
 * -ENOBUFS if cap < header_len. */
ZR_API int zr_npy_write_header_fixed(const zr_dtype *dtype, uint32_t ndim,
				     const uint64_t *shape, size_t header_len,
				     void *dst, size_t cap);

/* ---------------------------------------------------------------------------
 * Worker pool
 * ------------------------------------------------------------------------- */

/* Lanes a batch fans out to: one calling thread plus the pool's workers.
 * Workers default to three quarters of the CPUs this process may use (at
 * least 1); ZR_THREADS=<n> in the environment sets the worker count (0 =
 * caller only).  The pool starts on first use and is shared process-wide.
 * A batch runs on the calling thread alone when another batch holds the
 * pool, when it is too small to split, or when the last pooled batch of
 * its kind was not faster than the caller alone would have been (a small
 * batch, or a machine whose CPUs other processes keep busy); such a kind
 * tries the pool again after 1, 2, 4 .. 16 calls. */
ZR_API unsigned zr_pool_lanes(void);

#ifdef __cplusplus
}
#endif
#endif /* ZRECORD_H */
