/*
 * index_list.h - incremental parser of a list of record indices: decimal
 * text (separated by spaces, tabs, commas, carriage returns or newlines)
 * or one integer .npy (any int/uint dtype, 0-d or 1-d).  Shared by
 * zrecordfs's `delete` file (FUSE writes with arbitrary boundaries) and
 * `zrecord delete --from FILE`, so both take exactly one grammar.
 *
 * The first byte picks the form: 0x93 (the .npy magic) a .npy, anything
 * else text.  Works on buffers only (no I/O).  Not thread-safe: one caller
 * at a time per parser.  It keeps the indices read so far, not the input,
 * in memory bounded by the limit (the store's length), not by the input
 * (index_set.h): a list in input order, 8 bytes an index, while it costs
 * at most 32 KiB or what two bitmaps of `limit` bits do (limit / 4
 * bytes), then those bitmaps, which hold any number of indices.  So a
 * 256 MiB int8 .npy, 256 Mi indices, costs a store of 1000 records 32 KiB
 * rather than 2 GiB, and a store of 10^9 records at most about 500 MB
 * (250 MB once the list has made way for the bitmaps).  What finish
 * returns then holds each index once: at most 64 Mi of them (512 MiB,
 * an int32 .npy of distinct indices) within the input cap.
 */
#ifndef ZRFILE_INDEX_LIST_H
#define ZRFILE_INDEX_LIST_H

#include <stddef.h>
#include <stdint.h>

#include "zrecord.h"

/* Input past this many bytes fails with -EFBIG. */
#define ZRFILE_IDXLIST_MAX (256u << 20)

typedef struct zrfile_idxlist zrfile_idxlist;

/* An empty parser (-ENOMEM). */
int zrfile_idxlist_new(zrfile_idxlist **out);

/* Feeds the next len bytes and checks what they complete, so that a
 * caller fed by writes can fail the write that brings a bad byte: a byte
 * that is neither a digit nor a separator is -EINVAL; a malformed .npy
 * header, a dtype other than int/uint, more than one dimension or more
 * bytes than the shape holds ZR_E_NPY; an index (or the digits so far of
 * one cut by the chunk's end) >= limit, or a negative one, ZR_E_RANGE;
 * more than ZRFILE_IDXLIST_MAX bytes in all -EFBIG; -ENOMEM.  On error it
 * keeps a one-line message naming the offending input, and every later
 * call fails with the same code. */
int zrfile_idxlist_feed(zrfile_idxlist *p, const void *buf, size_t len,
			uint64_t limit);

/* Ends the input: a .npy must be whole (else ZR_E_NPY), and every index
 * must be < limit (which may differ from the feeds', ZR_E_RANGE naming the
 * first in input order that is not).  On success *idx receives the
 * indices (the caller frees it; NULL when *n is 0): those of a short list
 * in input order, duplicates kept; those of a long one, once bitmaps hold
 * them, each once in ascending order -- a delete takes either.  -ENOMEM.
 * After it, every call but message/bytes/free fails with -EINVAL. */
int zrfile_idxlist_finish(zrfile_idxlist *p, uint64_t limit, uint64_t **idx,
			  size_t *n);

/* The heap bytes the parser holds for its indices now (the bound above;
 * for tests). */
size_t zrfile_idxlist_bytes(const zrfile_idxlist *p);

/* The one-line reason of the first failure ("" if none); lives with p. */
const char *zrfile_idxlist_message(const zrfile_idxlist *p);

/* NULL is a no-op. */
void zrfile_idxlist_free(zrfile_idxlist *p);

#endif
