/*
 * skips.c - the mount's skipped position ranges (skips.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "skips.h"

#define MAX_SKIPS 65536

static int number(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;

	if (!len || len > 20)
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9' ||
		    v > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = v;
	return 0;
}

int zrfs_skip_add(struct zrfs_opts *o, const char *val)
{
	const char *colon = strchr(val, ':');
	uint64_t a, b, *p;
	size_t at;

	if (!colon || number(val, colon - val, &a) ||
	    number(colon + 1, strlen(colon + 1), &b) || a >= b ||
	    o->nskip >= MAX_SKIPS)
		return -1;
	p = realloc(o->skip, (o->nskip + 1) * 2 * sizeof(*p));
	if (!p)
		return -1;
	o->skip = p;
	for (at = o->nskip; at > 0 && p[2 * (at - 1)] > a; at--)
		;
	memmove(p + 2 * at + 2, p + 2 * at, (o->nskip - at) * 2 * sizeof(*p));
	p[2 * at] = a;
	p[2 * at + 1] = b;
	o->nskip++;
	return 0;
}

int zrfs_skip_apply(const struct zrfs_opts *o, zr_stream *st,
		    const uint64_t *from, const uint64_t *weights, size_t n,
		    uint32_t k)
{
	size_t i = 0, j = 0;
	int err = 0;

	while (!err && (i < n || j < o->nskip)) {
		if (i < n && (j == o->nskip || from[i] <= o->skip[2 * j])) {
			err = zr_stream_weights(st, from[i], weights + i * k);
			i++;
		} else {
			err = zr_stream_skip(st, o->skip[2 * j],
					     o->skip[2 * j + 1]);
			j++;
		}
	}
	return err;
}
