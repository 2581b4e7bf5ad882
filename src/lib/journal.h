/*
 * journal.h - STORE/maintenance.zr, the journal that lets delete and
 * compact survive a crash, an I/O error or a power cut at any point.
 *
 * The file holds checksummed slots (layout in journal.c).  Delete writes
 * one undo slot (the header and the table entries it will overwrite)
 * before touching the table; compact moves most records without a journal
 * (a batch never overwrites what the table still points at) and writes
 * redo slots only for a record whose move overlaps its own bytes: the
 * chunk about to be overwritten, in one of two alternating slots.  A slot
 * that fails its checksum was never complete, and nothing it guards was
 * touched yet.  zr__journal_recover() runs at open and after a failure.
 */
#ifndef ZR_JOURNAL_H
#define ZR_JOURNAL_H

#include <stdint.h>

#include "store.h"

/* Makes the undo slot of a delete durable: the header (len, tail) and the
 * current table entries at pos[0..n) (distinct, < len). */
int zr__journal_delete(zr_store *s, uint64_t len, uint64_t tail,
		       const uint64_t *pos, size_t n);

/* A compact's redo journal, opened at its first overlapping move. */
struct zr__jmove {
	int fd;       /* -1 until needed */
	uint64_t seq; /* of the next slot */
};

/* Moves record idx (phys bytes) from src down to dst (dst < src <
 * dst + phys) from byte done on, journalling each chunk before it is
 * overwritten; then points the table entry at dst and makes it durable.
 * bounce holds ZR__J_CHUNK bytes. */
int zr__journal_move(zr_store *s, struct zr__jmove *j, uint64_t idx,
		     uint64_t src, uint64_t dst, uint64_t phys, uint64_t done,
		     uint8_t *bounce);

/* Removes the journal once what it guards is durable (and j's file, if
 * any, is closed; j may be NULL). */
int zr__journal_end(zr_store *s, struct zr__jmove *j);

/* At open (read-write), after the header was read into *len and *tail:
 * rolls an interrupted delete back, or finishes an interrupted overlapping
 * move, then removes the journal; *len and *tail are updated.  A
 * read-only handle that would need either fails with -EROFS. */
int zr__journal_recover(zr_store *s, uint64_t *len, uint64_t *tail);

#define ZR__J_CHUNK (1u << 20)

#endif
