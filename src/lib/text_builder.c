/*
 * text_builder.c - the bounded text builder (see text_builder.h).
 */
#include <stdarg.h>
#include <stdio.h>

#include "text_builder.h"

void zr__text_init(zr__text *t, char *buf, size_t cap)
{
	t->buf = buf;
	t->cap = buf ? cap : 0;
	t->len = 0;
	if (t->cap)
		t->buf[0] = '\0';
}

void zr__text_add(zr__text *t, const char *fmt, ...)
{
	int room = t->len < t->cap;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(room ? t->buf + t->len : NULL,
		      room ? t->cap - t->len : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		t->len += (size_t)n;
}

void zr__text_dims(zr__text *t, const uint64_t *dims, uint32_t n, int tuple)
{
	zr__text_add(t, "%c", tuple ? '(' : '[');
	for (uint32_t i = 0; i < n; i++)
		zr__text_add(t, "%s%llu", i ? ", " : "",
			     (unsigned long long)dims[i]);
	zr__text_add(t, "%s%c", tuple && n == 1 ? "," : "",
		     tuple ? ')' : ']');
}

int zr__text_fits(const zr__text *t)
{
	return t->len < t->cap;
}

unsigned zr__digits(uint64_t v)
{
	unsigned d = 1;

	while (v >= 10) {
		v /= 10;
		d++;
	}
	return d;
}
