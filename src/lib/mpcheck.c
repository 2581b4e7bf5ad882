/*
 * mpcheck.c - the MsgPack bounds pre-scan (see mpcheck.h).  It walks the
 * bytes without allocating: every string, binary, extension and container
 * length is checked against what is left, each element needing at least
 * one byte.
 */
#include <stdint.h>

#include "mpcheck.h"

typedef struct scan {
	const uint8_t *p;
	size_t len, pos;
} scan;

/* Reads a big-endian field of n bytes. */
static int read_be(scan *s, unsigned n, uint64_t *out)
{
	uint64_t v = 0;

	if (s->len - s->pos < n)
		return -1;
	for (unsigned i = 0; i < n; i++)
		v = v << 8 | s->p[s->pos++];
	*out = v;
	return 0;
}

static int skip_bytes(scan *s, uint64_t n)
{
	if (n > s->len - s->pos)
		return -1;
	s->pos += (size_t)n;
	return 0;
}

static int skip_object(scan *s, unsigned depth);

/* count objects (maps pass twice their pair count). */
static int skip_items(scan *s, uint64_t count, unsigned depth)
{
	if (!depth || count > s->len - s->pos)
		return -1;
	for (uint64_t i = 0; i < count; i++)
		if (skip_object(s, depth - 1))
			return -1;
	return 0;
}

/* Width in bytes of the length field for codes 0xc4..0xdf, or 0. */
static unsigned length_width(uint8_t b)
{
	switch (b) {
	case 0xc4: case 0xc7: case 0xd9:
		return 1;
	case 0xc5: case 0xc8: case 0xda: case 0xdc: case 0xde:
		return 2;
	case 0xc6: case 0xc9: case 0xdb: case 0xdd: case 0xdf:
		return 4;
	}
	return 0;
}

/* Fixed payload bytes after codes 0xca..0xd8 (numbers and fixext). */
static int fixed_size(uint8_t b)
{
	static const uint8_t sizes[] = {
		4, 8, 1, 2, 4, 8, 1, 2, 4, 8,	/* 0xca..0xd3 */
		2, 3, 5, 9, 17,			/* fixext 0xd4..0xd8 */
	};

	return b >= 0xca && b <= 0xd8 ? sizes[b - 0xca] : -1;
}

static int skip_sized(scan *s, uint8_t b, unsigned depth)
{
	uint64_t n;

	if (read_be(s, length_width(b), &n))
		return -1;
	if (b >= 0xdc)	/* array16/32, map16/32 */
		return skip_items(s, b >= 0xde ? 2 * n : n, depth);
	if (b >= 0xc7 && b <= 0xc9)	/* ext: a type byte, then data */
		n++;
	return skip_bytes(s, n);
}

static int skip_object(scan *s, unsigned depth)
{
	uint8_t b;

	if (s->pos >= s->len)
		return -1;
	b = s->p[s->pos++];
	if (b <= 0x7f || b >= 0xe0 || b == 0xc0 || b == 0xc2 || b == 0xc3)
		return 0;
	if (b <= 0x8f)
		return skip_items(s, 2 * (uint64_t)(b & 0x0f), depth);
	if (b <= 0x9f)
		return skip_items(s, b & 0x0f, depth);
	if (b <= 0xbf)
		return skip_bytes(s, b & 0x1f);
	if (length_width(b))
		return skip_sized(s, b, depth);
	if (fixed_size(b) > 0)
		return skip_bytes(s, (uint64_t)fixed_size(b));
	return -1; /* 0xc1 is never used */
}

int zr__msgpack_check(const void *buf, size_t len, unsigned max_depth,
		      size_t *used)
{
	scan s = { .p = buf, .len = len, .pos = 0 };

	if (!buf || skip_object(&s, max_depth))
		return -1;
	*used = s.pos;
	return 0;
}
