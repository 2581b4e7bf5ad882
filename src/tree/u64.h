/*
 * u64.h - record indices as names and sorted arrays: a leaf the namespace
 * (names.c), the mount's delete file and the invalidation after it share.
 */
#ifndef ZRTREE_U64_H
#define ZRTREE_U64_H

#include <stddef.h>
#include <stdint.h>

/* qsort/bsearch order of uint64_t. */
int zrtree_cmp_u64(const void *a, const void *b);
/* Parses a whole canonical decimal (no sign, no leading zero): 0 or
 * -ENOENT. */
int zrtree_parse_u64(const char *s, size_t len, uint64_t *out);

#endif
