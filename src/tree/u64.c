/*
 * u64.c - record indices as names and sorted arrays (u64.h).
 */
#include <errno.h>

#include "u64.h"

int zrtree_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

int zrtree_parse_u64(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;

	if (!len || len > 20 || (s[0] == '0' && len > 1))
		return -ENOENT;
	for (size_t i = 0; i < len; i++) {
		unsigned d = (unsigned char)s[i] - '0';

		if (d > 9 || v > (UINT64_MAX - d) / 10)
			return -ENOENT;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}
