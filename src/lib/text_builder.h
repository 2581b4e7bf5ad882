/*
 * text_builder.h - a bounded text builder shared by the .npy header
 * writer and the schema's JSON form: it keeps counting past the end of its
 * buffer, so one routine both measures and writes a text.
 */
#ifndef ZR_TEXT_BUILDER_H
#define ZR_TEXT_BUILDER_H

#include <stddef.h>
#include <stdint.h>

typedef struct zr__text {
	char *buf;  /* may be NULL when only measuring */
	size_t cap; /* bytes available at buf          */
	size_t len; /* bytes the full text needs, without its NUL */
} zr__text;

void zr__text_init(zr__text *t, char *buf, size_t cap);
/* Appends formatted text; whatever does not fit is counted, not written. */
void zr__text_add(zr__text *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Appends dims as a Python tuple "(3,)" / "(3, 4)" / "()" when tuple is
 * set, else as a JSON array "[3]" / "[3, 4]" / "[]". */
void zr__text_dims(zr__text *t, const uint64_t *dims, uint32_t n, int tuple);
/* 1 if everything fit, NUL included. */
int zr__text_fits(const zr__text *t);

/* Decimal digits of v (1 for 0). */
unsigned zr__digits(uint64_t v);

#endif
