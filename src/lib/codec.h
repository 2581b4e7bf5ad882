/*
 * codec.h - per-record compression: the thread-cached zstd contexts and the
 * encode/decode primitives the store engine builds on.
 */
#ifndef ZR_CODEC_H
#define ZR_CODEC_H

#include <stddef.h>
#include <zstd.h>

#include "zrecord.h"

/* The calling thread's cached contexts (created on first use, freed when
 * the thread exits); NULL when out of memory. */
ZSTD_CCtx *zr__cctx(void);
ZSTD_DCtx *zr__dctx(void);

/* Compresses the concatenation head[0..head_len) + body[0..body_len) as one
 * frame into dst (cap >= ZSTD_compressBound of the total): plain level 3 if
 * cdict is NULL, else with cdict.  *out gets the frame size.  Returns 0 or
 * ZR_E_CODEC / -ENOMEM (message set). */
int zr__encode(const ZSTD_CDict *cdict, const void *head, size_t head_len,
	       const void *body, size_t body_len, void *dst, size_t cap,
	       size_t *out);

/* Checks that a frame declares exactly logic decoded bytes, before anyone
 * allocates logic bytes on the table's word (verify, the daemon). */
int zr__frame_check(const void *src, size_t phys, size_t logic,
		    const char *path, uint64_t idx);
/* Decodes record idx of the store at path, one frame of exactly logic
 * bytes, into dst (ddict may be NULL).  Returns 0, ZR_E_CODEC for a broken
 * frame, ZR_E_CORRUPT when the frame's content is not exactly logic bytes;
 * the message names "path/data.zr record idx" (formatted only on failure:
 * this runs once per gathered record). */
int zr__decode(const ZSTD_DDict *ddict, const void *src, size_t phys,
	       void *dst, size_t logic, const char *path, uint64_t idx);

/* Decodes only the first min(want, logic) bytes of a frame into dst. */
int zr__decode_head(const ZSTD_DDict *ddict, const void *src, size_t phys,
		    void *dst, size_t want, const char *what);

#endif
