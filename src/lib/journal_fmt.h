/*
 * journal_fmt.h - the layout of STORE/maintenance.zr, shared by the files
 * that write it (journal.c) and read it back (journal_recover.c).
 *
 * A slot, little-endian:
 *   0   8  magic "ZRMAINT1"
 *   8   4  kind: 1 delete (undo), 2 compact chunk, 3 compact batch
 *   12  4  payload length P
 *   16  8  sequence number
 *   24  8  FNV-1a 64 of bytes [0, 24) and of the payload
 *   32  P  payload
 * Delete, one slot at 0: old length, old tail_offset, then per overwritten
 * table entry its index (8) and old bytes (16).  Compact, slots
 * alternating at 0 and ZR__J_SLOT by sequence parity, the newest valid
 * one winning: kind 2, one chunk of a large record's move: record index
 * (UINT64_MAX: no move in flight), src, dst, phys, chunk offset (5 x 8),
 * then the chunk's original bytes; kind 3, a batch of whole records moved
 * to one run at dst: dst, count, per record its index, src and phys (3 x
 * 8), then their original bytes, in order.
 */
#ifndef ZR_JOURNAL_FMT_H
#define ZR_JOURNAL_FMT_H

#include <stddef.h>
#include <stdint.h>

#include "journal.h"

#define J_MAGIC "ZRMAINT1"
#define J_HEAD 32u
#define J_MOVE_HEAD 40u
#define ZR__J_SLOT (J_HEAD + J_MOVE_HEAD + ZR__J_CHUNK)
#define J_FILE_MAX ((uint64_t)1 << 32)
#define NO_MOVE UINT64_MAX

enum { J_DELETE = 1, J_COMPACT = 2, J_BATCH = 3 };

static inline uint64_t zr__fnv(uint64_t h, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

/* The checksum of a slot: its first 24 bytes, then its payload. */
static inline uint64_t zr__slot_sum(const uint8_t *slot,
				    const uint8_t *payload, size_t n)
{
	return zr__fnv(zr__fnv(0xcbf29ce484222325ull, slot, 24), payload, n);
}

/* STORE/maintenance.zr into buf. */
int zr__jpath(zr_store *s, char *buf, size_t cap);
/* A new journal (flags ZR__VFS_CREATE | ZR__VFS_TRUNC), or the one being
 * recovered (0: its valid slot must survive until a newer one is
 * durable). */
int zr__jopen(zr_store *s, unsigned flags, struct zr__file **f);
/* Writes a batch's bytes (total) at its dst, then its table entries, each
 * durable before the next step; fields as in the slot, n records. */
int zr__jbatch_apply(zr_store *s, const uint8_t *fields, size_t n,
		     const uint8_t *bytes, uint64_t total);

#endif
