/*
 * store_io.h - the store engine's low-level pieces (store_io.c): its files
 * through the backend, the read mappings and the guarded reads through
 * them, validated table entries and one record's bytes, the header.
 */
#ifndef ZR_STORE_IO_H
#define ZR_STORE_IO_H

#include "store.h"

/* fdatasync of meta.zr or data.zr (how ZR__SYNC_DATA), or fsync
 * (ZR__SYNC_ALL), with a message naming the file. */
int zr__flush(zr_store *s, int file);
int zr__sync(zr_store *s, int file, int how);
/* Truncates file to len, with a message naming it. */
int zr__truncate(zr_store *s, int file, uint64_t len);

/* Makes the current mapping of file cover at least need bytes (remapping
 * and publishing a larger one if not).  Not for concurrent callers of the
 * same store other than readers. */
int zr__map_ensure(zr_store *s, int file, uint64_t need);
/* Unmaps every mapping (close only). */
void zr__map_free_all(zr_store *s);

/* Runs fn(arg), a read through mapping m of file (idx is the record, for
 * the message).  With zr_sigbus_guard() on, a fault there fails with -EIO
 * and a message naming the file instead of killing the process; off, this
 * is one predictable branch and a direct call. */
int zr__map_read_guarded(const zr_store *s, const struct zr__map *m,
			 int file, uint64_t idx, int (*fn)(void *),
			 void *arg);

static inline int zr__map_read(const zr_store *s, const struct zr__map *m,
			       int file, uint64_t idx, int (*fn)(void *),
			       void *arg)
{
	if (zr__guard_enabled())
		return zr__map_read_guarded(s, m, file, idx, fn, arg);
	return fn(arg);
}

/* As zr__map_read, for a block of reads through meta and data (NULL if
 * fn reads no record): one guard for the lot, so a fault anywhere fails
 * the whole block with -EIO and a message naming the file and offset.
 * fn must read through these mappings only (the ones current when the
 * caller took its length and frontier cover everything it may read). */
int zr__maps_read_guarded(const zr_store *s, const struct zr__map *meta,
			  const struct zr__map *data, int (*fn)(void *),
			  void *arg);

static inline int zr__maps_read(const zr_store *s,
				const struct zr__map *meta,
				const struct zr__map *data,
				int (*fn)(void *), void *arg)
{
	if (zr__guard_enabled())
		return zr__maps_read_guarded(s, meta, data, fn, arg);
	return fn(arg);
}

/* Validates entry idx's 16 table bytes b against frontier tail. */
int zr__loc_decode(const zr_store *s, uint64_t idx, uint64_t tail,
		   const uint8_t *b, zr_loc *out);

/* Reads and validates table entry idx against length len and frontier
 * tail (ZR_E_RANGE, ZR_E_CORRUPT), each read guarded on its own. */
int zr__loc_get(const zr_store *s, uint64_t idx, uint64_t len, uint64_t tail,
		zr_loc *out);
/* Decodes the record at loc (validated) into dst (loc->logic_length
 * bytes); idx is for messages.  Ragged records are not parsed here. */
int zr__record_decode(const zr_store *s, uint64_t idx, const zr_loc *loc,
		      void *dst);
/* The same through a given mapping, with no guard of their own: for the
 * fn of a zr__maps_read, which pays one guard for many records. */
int zr__loc_read(const zr_store *s, const struct zr__map *meta, uint64_t idx,
		 uint64_t len, uint64_t tail, zr_loc *out);
int zr__record_read(const zr_store *s, const struct zr__map *data,
		    uint64_t idx, const zr_loc *loc, void *dst);
/* The same from its stored bytes src, wherever they are (a mapping, or
 * a batch staged from a remote backend: store_stage.h). */
int zr__record_from(const zr_store *s, uint64_t idx, const zr_loc *loc,
		    const uint8_t *src, void *dst);
/* The stored bytes of record loc (validated): in data's mapping, or on a
 * backend without map read into *buf, which the caller frees (NULL
 * otherwise).  A read of the mapping through *src is the caller's to
 * guard. */
int zr__record_src(const zr_store *s, const struct zr__map *data,
		   const zr_loc *loc, const uint8_t **src, uint8_t **buf);

/* Checks a ragged record's first head_len bytes (at least the whole prefix
 * or the whole record) against its total length. */
int zr__ragged_head(const void *head, size_t head_len, uint64_t total,
		    size_t itemsize, uint32_t *ndim, uint64_t *shape,
		    size_t *payload_offset);

/* Writes length and tail into the header at offset 0 (the rest of the
 * 32 bytes never changes after create). */
int zr__header_write(zr_store *s, uint64_t length, uint64_t tail);
/* Encodes the header of a store into b[0..32). */
void zr__header_encode(uint8_t b[ZR__HEADER], uint64_t length, uint64_t tail,
		       uint32_t schema_len, zr_codec codec);

/* Opens the store's file name through its backend: -errno, no message. */
int zr__open_file(zr_store *s, const char *name, unsigned flags,
		  unsigned mode, struct zr__file **out);

/* Fails with -EROFS on a read-only handle (name is the call), ZR_E_BUSY
 * once the handle lost its lock. */
int zr__writable(const zr_store *s, const char *name);

#endif
