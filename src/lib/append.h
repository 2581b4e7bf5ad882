/*
 * append.h - an append session's state and the steps its two files
 * share: store_append.c stages records from the caller's buffers,
 * store_reserve.c reserves row slots that the caller's threads fill.
 */
#ifndef ZR_APPEND_H
#define ZR_APPEND_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "store.h"

struct lane_buf {
	uint8_t *buf;     /* compressed frame */
	size_t cap;
	uint8_t *ents;    /* ZR__ENT_BATCH encoded entries */
};

/* Row slots reserved by zr_append_dense_reserve: in a raw store, the
 * rows of data.zr from base on, which zr_append_dense_put writes with
 * pwrite from any thread; in a compressed one, a buffer (buf) that
 * staging compresses.  count is 0 while nothing is reserved. */
struct zr__window {
	uint64_t base;
	uint64_t count;
	uint8_t *buf;
	off_t size_before;  /* data.zr's size before the puts grew it */
};

struct zr_append {
	zr_store *s;
	uint64_t base;      /* committed length at begin */
	uint64_t staged;    /* records staged so far */
	pthread_mutex_t lock; /* guards frontier while lanes reserve */
	uint64_t frontier;  /* first free byte of data.zr for this session */
	zr__error failure;  /* sticky: the first failure of the session */
	unsigned nlanes;
	struct lane_buf *lanes;
	struct zr__window win; /* set by the session's caller; puts only
				* read it (and take lock to fail) */
};

/* Records err as the session's failure and returns it. */
int zr__append_fail(zr_append *a, int err);
/* The checks every staging call starts with: a live session of the
 * right kind with room for count more records. */
int zr__append_check(zr_append *a, int ragged, uint64_t count);
/* Takes len bytes of data.zr at the session frontier for the caller. */
int zr__append_reserve(zr_append *a, size_t len, uint64_t *off);
/* Writes the table entries of count raw dense rows laid out from off and
 * counts them staged. */
int zr__append_raw_rows(zr_append *a, uint64_t off, uint64_t count);
/* Gives back reserved slots without staging them (commit, abort and
 * every staging call start with this). */
void zr__append_window_drop(zr_append *a);

#endif
