/*
 * sha256.h - SHA-256 (FIPS 180-4), for the content-addressed part objects
 * of a pushed store (s3_push.c): a part's key is its bytes' digest, so a
 * key never names two contents and a resumed push knows what is up.
 */
#ifndef ZR_SHA256_H
#define ZR_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct zr__sha256 {
	uint32_t h[8];
	uint64_t len;      /* bytes hashed so far */
	uint8_t buf[64];   /* a block not full yet */
	size_t n;
};

void zr__sha256_init(struct zr__sha256 *c);
void zr__sha256_update(struct zr__sha256 *c, const void *p, size_t len);
/* The digest as 64 lowercase hex digits and a NUL into hex. */
void zr__sha256_hex(struct zr__sha256 *c, char hex[65]);

#endif
