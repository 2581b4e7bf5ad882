/*
 * npy_stream.h - incremental parser of a stream of concatenated .npy files
 * that feeds one append session.  Shared by `zrecord append` (file chunks)
 * and zrecordfs's `append` file (FUSE writes with arbitrary boundaries).
 *
 * Memory stays bounded whatever the stream size: dense rows are appended
 * straight from the caller's buffer (only a row split by a chunk boundary is
 * copied); a ragged record (one whole .npy) is held until complete, which
 * ZR_RECORD_MAX bounds.  Not thread-safe: one caller at a time per parser.
 */
#ifndef ZRFILE_NPY_STREAM_H
#define ZRFILE_NPY_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "zrecord.h"

typedef struct zrfile_npystream zrfile_npystream;

/* Starts an append session on s (zr_append_begin) and an empty parser. */
int zrfile_npystream_new(zr_store *s, zrfile_npystream **out);

/* Feeds the next len bytes.  Validates each .npy header as soon as it is
 * complete: dense stores need dtype == store dtype and shape[1:] ==
 * item_shape (shape[0] rows; a 0-row array is allowed and appends nothing);
 * ragged stores take each .npy as one record (dtype must match; zero
 * elements -> ZR_E_EMPTY).  On error returns the code, keeps a one-line
 * message (with the byte offset in the stream), and every later call fails
 * with the same code. */
int zrfile_npystream_feed(zrfile_npystream *p, const void *buf, size_t len);

/* The stream must end at a .npy boundary (else ZR_E_TRUNCATED); commits the
 * session.  *records (may be NULL) receives how many records were added.
 * After it, every call but message/offset/free fails with -EINVAL. */
int zrfile_npystream_finish(zrfile_npystream *p, uint64_t *records);

/* The one-line reason of the first failure ("" if none); lives with p. */
const char *zrfile_npystream_message(const zrfile_npystream *p);

/* Bytes consumed so far (for progress). */
uint64_t zrfile_npystream_offset(const zrfile_npystream *p);

/* 1 if the bytes fed so far end exactly at a .npy boundary (nothing of a
 * header or array pending), else 0.  Lets a caller require that each of
 * several input files holds whole .npy files. */
int zrfile_npystream_at_boundary(const zrfile_npystream *p);

/* Aborts the session if not finished; frees.  NULL is a no-op. */
void zrfile_npystream_free(zrfile_npystream *p);

#endif
