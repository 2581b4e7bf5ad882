/*
 * mpcheck.h - a bounds pre-scan of untrusted MsgPack bytes.  msgpack-c
 * allocates what a container header declares before it has read the
 * elements, so a 10-byte input can ask for gigabytes; this scan rejects
 * such inputs before msgpack_unpack_next sees them.
 */
#ifndef ZR_MPCHECK_H
#define ZR_MPCHECK_H

#include <stddef.h>

/* 0 if buf[0..len) starts with one well-formed object nested at most
 * max_depth containers deep, whose every declared length fits in the
 * remaining bytes; *used gets the object's size.  -1 otherwise. */
int zr__msgpack_check(const void *buf, size_t len, unsigned max_depth,
		      size_t *used);

#endif
