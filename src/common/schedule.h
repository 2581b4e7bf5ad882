/*
 * schedule.h - a batch stream's schedule: skipped position ranges, growth
 * (a store or a mixture's source longer from a position on) and a
 * mixture file's weight changes.  `zrecord batch` (--length, --skip,
 * --grow) and a zrecordfs mount (-o length=, skip=, grow=) parse, order
 * and apply it here, so both draw the same stream by construction
 * (zrecord.h, "Streams").
 */
#ifndef ZRCOMMON_SCHEDULE_H
#define ZRCOMMON_SCHEDULE_H

#include <stddef.h>

#include "zrecord.h"

#define ZRCOMMON_MAX_ENTRIES 65536
#define ZRCOMMON_MAX_LENGTHS 1024

enum zrcommon_kind { ZRCOMMON_SKIP, ZRCOMMON_GROW };

/* SKIP: positions [at, until); GROW: source has length records from its
 * first cycle boundary at or after at. */
typedef struct zrcommon_entry {
	int kind;
	uint64_t at, until, length;
	uint32_t source;
} zrcommon_entry;

/* Entries in position order, entries of equal position as given; len:
 * each source's length at position 0 (nlen 0: the stores' lengths). */
typedef struct zrcommon_schedule {
	zrcommon_entry *e;
	size_t n;
	uint64_t *len;
	size_t nlen;
} zrcommon_schedule;

/* Adds "A:B" (SKIP, A < B) or "P:N", "P:K:N" (GROW; K 0 if not given).
 * 0, or -1 with msg saying what the value must be. */
int zrcommon_schedule_add(zrcommon_schedule *s, int kind, const char *val,
			  char *msg, size_t cap);
/* A run's start "P" or "P@G" (a position and the granule of the stream
 * it is a position of, G >= 1) into *pos and *granule (0 when not given):
 * 0, or -1 for another value. */
int zrcommon_schedule_start(const char *val, uint64_t *pos,
			    uint64_t *granule);
/* Sets the lengths at position 0 from "N[,N...]" (sep ','; a mount's -o
 * takes ':', as ',' separates its options); 0 or -1 with msg. */
int zrcommon_schedule_lengths(zrcommon_schedule *s, const char *val,
			      char sep, char *msg, size_t cap);
void zrcommon_schedule_free(zrcommon_schedule *s);

/* The k sources' lengths at position 0: s's, else have (their records
 * now).  -EINVAL with msg if s gives other than k lengths. */
int zrcommon_schedule_base(const zrcommon_schedule *s, uint32_t k,
			   const uint64_t *have, uint64_t *base, char *msg,
			   size_t cap);
/* Applies s to st, merged in position order with a mixture file's weight
 * changes from[0..n) (weights[i * k ...]; n 0 for a plain stream), the
 * file's changes first on a tie.  Library codes. */
int zrcommon_schedule_apply(const zrcommon_schedule *s, zr_stream *st,
			    const uint64_t *from, const uint64_t *weights,
			    size_t n, uint32_t k);
/* Whether the batch of (start, step, rank, world, batch) finds its
 * records: each source k must hold the largest of base[k] and the
 * lengths s grows it to at positions up to the batch's last one.
 * -ENOENT with msg when some source has fewer (have[k] now). */
int zrcommon_schedule_check(const zrcommon_schedule *s, const zr_stream *st,
			    uint64_t start, uint64_t step, uint32_t rank,
			    uint32_t world, uint64_t batch,
			    const uint64_t *base, const uint64_t *have,
			    char *msg, size_t cap);

#endif
