/*
 * index_list.h - incremental parser of a list of record indices: decimal
 * text (separated by spaces, tabs, commas, carriage returns or newlines)
 * or one integer .npy (any int/uint dtype, 0-d or 1-d).  Shared by
 * zrecordfs's `delete` file (FUSE writes with arbitrary boundaries) and
 * `zrecord delete --from FILE`, so both take exactly one grammar.
 *
 * The first byte picks the form: 0x93 (the .npy magic) a .npy, anything
 * else text.  Works on buffers only (no I/O).  Not thread-safe: one caller
 * at a time per parser.  It keeps the indices read so far, not the input:
 * 8 bytes an index, 4 times the size of a text list ("0,0,...") and 8
 * times that of an int8 .npy, in an array that grows by doubling (so up to
 * twice that, and three times while it grows).
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
 * indices in input order, duplicates kept (the caller frees it; NULL when
 * *n is 0).  After it, every call but message/free fails with -EINVAL. */
int zrfile_idxlist_finish(zrfile_idxlist *p, uint64_t limit, uint64_t **idx,
			  size_t *n);

/* The one-line reason of the first failure ("" if none); lives with p. */
const char *zrfile_idxlist_message(const zrfile_idxlist *p);

/* NULL is a no-op. */
void zrfile_idxlist_free(zrfile_idxlist *p);

#endif
