/*
 * journal.h - STORE/maintenance.zr, the journal that lets delete and
 * compact survive a crash, an I/O error or a power cut at any point.
 *
 * The file holds checksummed slots (layout in journal.c).  Delete writes
 * one undo slot (the header and the table entries it will overwrite)
 * before touching the table.  Compact writes redo slots, in one of two
 * alternating places: a batch of whole records (at most 1 MiB of them)
 * with their original bytes, or one 1 MiB chunk of a larger record with
 * its original bytes; each is durable before the bytes it holds may be
 * overwritten, so a cut anywhere is redone from the newest valid slot.  A
 * slot that fails its checksum was never complete, and nothing it guards
 * was touched yet.  zr__journal_recover() runs at open and after a
 * failure.
 */
#ifndef ZR_JOURNAL_H
#define ZR_JOURNAL_H

#include <stdint.h>

#include "store.h"

/* Makes the undo slot of a delete durable: the header (len, tail) and the
 * current table entries at pos[0..n) (distinct, < len). */
int zr__journal_delete(zr_store *s, uint64_t len, uint64_t tail,
		       const uint64_t *pos, size_t n);

/* A compact's redo journal, opened at its first move. */
struct zr__jmove {
	struct zr__file *f; /* NULL until needed */
	uint64_t seq; /* of the next slot */
};

/* One record of a compact batch. */
struct zr__jrec {
	uint64_t idx, src, phys;
};

/* Whether n records of bytes in all fit one batch slot. */
int zr__journal_batch_fits(size_t n, uint64_t bytes);

/* Moves records r[0..n) (in physical order, fitting one slot) down into
 * one run from dst (dst <= r[0].src), through a batch slot, and points
 * their table entries there, durably.  bounce holds ZR__J_CHUNK bytes. */
int zr__journal_batch(zr_store *s, struct zr__jmove *j,
		      const struct zr__jrec *r, size_t n, uint64_t dst,
		      uint8_t *bounce);

/* Moves record idx (phys bytes) from src down to dst (dst < src) from
 * byte done on, journalling each chunk before it is
 * overwritten; then points the table entry at dst and makes it durable.
 * bounce holds ZR__J_CHUNK bytes. */
int zr__journal_move(zr_store *s, struct zr__jmove *j, uint64_t idx,
		     uint64_t src, uint64_t dst, uint64_t phys, uint64_t done,
		     uint8_t *bounce);

/* Says no move is in flight: before the header may name a new tail (a
 * slot would otherwise be redone against it at open). */
int zr__journal_idle(zr_store *s, struct zr__jmove *j);

/* Removes the journal once what it guards is durable (and j's file, if
 * any, is closed; j may be NULL). */
int zr__journal_end(zr_store *s, struct zr__jmove *j);

/* At open (read-write), after the header was read into *len and *tail:
 * rolls an interrupted delete back, or redoes an interrupted compact
 * move, then removes the journal; *len and *tail are updated, and
 * s->recovered says which it was.  A read-only handle that would need
 * either changes nothing and returns ZR__NEED_WRITER: zr_store_open then
 * recovers through a read-write handle of its own. */
int zr__journal_recover(zr_store *s, uint64_t *len, uint64_t *tail);

#define ZR__NEED_WRITER 1

/* s->recovered */
enum { ZR__RECOVERED_DELETE = 1, ZR__RECOVERED_COMPACT = 2 };

#define ZR__J_CHUNK (1u << 20)

#endif
