/*
 * stream.h - the inside of a zr_stream (zrecord.h, "Streams"): its sources
 * with their length histories, its weight segments and its skipped ranges.
 * stream.c builds one entry at a time, stream_map.c reads it; after the
 * last entry it is never written again, so any number of threads may map.
 */
#ifndef ZR_STREAM_H
#define ZR_STREAM_H

#include "zrecord.h"

/* Sources and weight segments a stream may hold, so that a schedule read
 * from a file bounds the work and memory it causes. */
#define ZR__STREAM_MAX_SOURCES 1024u
#define ZR__STREAM_MAX_ENTRIES 65536u
/* The largest sum of weights (after division by their gcd): a period's
 * first offset in a call is reached by simulating up to this many steps. */
#define ZR__STREAM_MAX_PERIOD (1ull << 20)

/* From counter at on, the source has n records; cycles: the cycles its
 * counter completed before at; len: positions per cycle (L). */
typedef struct zr__lenseg {
	uint64_t at, n, cycles, len;
} zr__lenseg;

typedef struct zr__source {
	zr_sampler_mode mode;
	uint64_t key, granule;
	uint32_t nseg;
	zr__lenseg *seg;
} zr__source;

/* From position from on, source k is drawn w[k] times per period of
 * period = sum(w) positions; base[k]: its draws before from. */
typedef struct zr__wseg {
	uint64_t from, period;
	uint64_t *w, *base;
} zr__wseg;

typedef struct zr__skip {
	uint64_t from, until;
} zr__skip;

struct zr_stream {
	uint32_t k;     /* sources                                  */
	int mixture;    /* built by zr_stream_new_mixture           */
	uint64_t last;  /* position of the latest entry (order)     */
	uint64_t skipped; /* positions in all skipped ranges        */
	zr__source *src;
	uint32_t nw, nskip;
	zr__wseg *ws;
	zr__skip *skip;
};

/* The draws of each source before position pos (counts[0..k)). */
int zr__stream_counts(const zr_stream *st, uint64_t pos, uint64_t *counts);

#endif
