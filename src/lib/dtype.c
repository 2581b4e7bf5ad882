/*
 * dtype.c - parsing NumPy dtype spellings into the canonical dtype.str of
 * the fixed-size numeric types a store may hold.
 */
#include <errno.h>
#include <string.h>

#include "error.h"

/* The only kinds and sizes a schema may name; order matters nowhere. */
static const struct {
	char kind;
	uint32_t itemsize;
} known_types[] = {
	{ 'b', 1 }, { 'i', 1 }, { 'i', 2 }, { 'i', 4 }, { 'i', 8 },
	{ 'u', 1 }, { 'u', 2 }, { 'u', 4 }, { 'u', 8 }, { 'f', 2 },
	{ 'f', 4 }, { 'f', 8 }, { 'c', 8 }, { 'c', 16 },
};

/* Plain names are NumPy's, always in native (little-endian) order. */
static const struct {
	const char *name;
	const char *str;
} plain_names[] = {
	{ "bool", "|b1" },       { "int8", "|i1" },     { "int16", "<i2" },
	{ "int32", "<i4" },      { "int64", "<i8" },    { "uint8", "|u1" },
	{ "uint16", "<u2" },     { "uint32", "<u4" },   { "uint64", "<u8" },
	{ "float16", "<f2" },    { "float32", "<f4" },  { "float64", "<f8" },
	{ "complex64", "<c8" },  { "complex128", "<c16" },
};

static int known(char kind, uint32_t itemsize)
{
	for (size_t i = 0; i < sizeof(known_types) / sizeof(known_types[0]);
	     i++)
		if (known_types[i].kind == kind &&
		    known_types[i].itemsize == itemsize)
			return 1;
	return 0;
}

/* Parses "[<>=|]?KIND[SIZE]"; the size is one or two decimal digits. */
static int parse_typestr(const char *s, zr_dtype *out)
{
	char order = '<';
	uint32_t size = 0;
	const char *p = s;
	zr_dtype d;

	if (*p == '<' || *p == '>' || *p == '=' || *p == '|')
		order = *p++;
	if (order == '=' || order == '|')
		order = '<'; /* native, and the library is little-endian */
	if (!*p || !strchr("biufc", *p))
		return -1;
	d.kind = *p++;
	if (*p < '1' || *p > '9')
		return -1;
	while (*p >= '0' && *p <= '9' && size < 100)
		size = size * 10 + (uint32_t)(*p++ - '0');
	if (*p || !known(d.kind, size))
		return -1;
	d.itemsize = size;
	d.order = size == 1 ? '|' : order;
	/* Sizes are 1..16, so the string is at most "<c16". */
	memset(d.str, 0, sizeof(d.str));
	d.str[0] = d.order;
	d.str[1] = d.kind;
	if (size >= 10)
		d.str[2] = (char)('0' + size / 10);
	d.str[strlen(d.str)] = (char)('0' + size % 10);
	*out = d;
	return 0;
}

int zr_dtype_parse(const char *s, zr_dtype *out)
{
	zr__clear();
	if (!s || !out)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(plain_names) / sizeof(plain_names[0]);
	     i++)
		if (!strcmp(s, plain_names[i].name))
			return parse_typestr(plain_names[i].str, out);
	if (strlen(s) <= 4 && parse_typestr(s, out) == 0)
		return 0;
	return zr__fail(ZR_E_DTYPE,
			"dtype '%.40s': not a fixed-size numeric dtype "
			"(bool, int, uint, float, complex)",
			s);
}
