/*
 * npy.c - NumPy .npy headers: writing them byte for byte as NumPy 1.24's
 * np.save does (format.py _write_array_header / _wrap_header), and parsing
 * the header dict strictly (a Python literal, but only the subset NumPy
 * writes: quoted strings, True/False, tuples of decimal ints).
 */
#include <errno.h>
#include <string.h>

#include "error.h"
#include "text_builder.h"

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
#define NPY_ALIGN 64
/* np.save leaves room for the first axis to grow to this many digits. */
#define NPY_GROWTH_DIGITS 21
/* Largest header dict we read.  Real headers of at most ZR_MAX_NDIM dims
 * are under 1 KiB; the limit keeps a hostile length from making a
 * streaming caller buffer gigabytes (NumPy itself stops at 10000). */
#define NPY_HEADER_MAX 65536u

/* -- writing ------------------------------------------------------------ */

/* The dict text np.save writes, without its trailing spaces. */
static void header_dict(zr__text *t, const zr_dtype *dtype, uint32_t ndim,
			const uint64_t *shape)
{
	zr__text_add(t, "{'descr': '%s', 'fortran_order': False, 'shape': ",
		     dtype->str);
	zr__text_dims(t, shape, ndim, 1);
	zr__text_add(t, ", }");
}

static size_t dict_len(const zr_dtype *dtype, uint32_t ndim,
		       const uint64_t *shape)
{
	zr__text t;

	zr__text_init(&t, NULL, 0);
	header_dict(&t, dtype, ndim, shape);
	return t.len;
}

/* Bytes before the dict: magic, version, then a u16 (1.0) or u32 length. */
static size_t prefix_len(size_t total)
{
	return total - 10 <= 0xffff ? 10 : 12;
}

/* _wrap_header: the dict plus at least one space-or-newline, padded so the
 * whole header is a multiple of 64; version 2.0 only if 1.0 cannot hold
 * it.  The padding is never zero: an aligned text still gets 64 bytes. */
static size_t wrapped_len(size_t text_len)
{
	size_t hlen = text_len + 1;
	size_t total = 10 + hlen + NPY_ALIGN - (10 + hlen) % NPY_ALIGN;

	if (total - 10 <= 0xffff)
		return total;
	return 12 + hlen + NPY_ALIGN - (12 + hlen) % NPY_ALIGN;
}

static int valid_args(const zr_dtype *dtype, uint32_t ndim,
		      const uint64_t *shape)
{
	return dtype && memchr(dtype->str, '\0', sizeof(dtype->str)) &&
	       ndim <= ZR_MAX_NDIM && (shape || !ndim);
}

static size_t growth(uint32_t ndim, const uint64_t *shape)
{
	return ndim ? NPY_GROWTH_DIGITS - zr__digits(shape[0]) : 0;
}

size_t zr_npy_header_len(const zr_dtype *dtype, uint32_t ndim,
			 const uint64_t *shape)
{
	if (!valid_args(dtype, ndim, shape))
		return 0;
	return wrapped_len(dict_len(dtype, ndim, shape) + growth(ndim, shape));
}

/* Writes magic, version and length field, the dict, then spaces and a
 * newline up to exactly total bytes (checked by the callers). */
static void write_framed(const zr_dtype *dtype, uint32_t ndim,
			 const uint64_t *shape, size_t total, uint8_t *dst)
{
	size_t pre = prefix_len(total), field = total - pre;
	zr__text t;

	memcpy(dst, NPY_MAGIC, NPY_MAGIC_LEN);
	dst[6] = pre == 10 ? 1 : 2;
	dst[7] = 0;
	for (size_t i = 0; i < pre - 8; i++)
		dst[8 + i] = (uint8_t)(field >> (8 * i));
	/* The dict fits (callers checked), so the NUL lands before the end. */
	zr__text_init(&t, (char *)dst + pre, field);
	header_dict(&t, dtype, ndim, shape);
	memset(dst + pre + t.len, ' ', field - t.len - 1);
	dst[total - 1] = '\n';
}

int zr_npy_write_header(const zr_dtype *dtype, uint32_t ndim,
			const uint64_t *shape, void *dst, size_t cap,
			size_t *len)
{
	size_t total = zr_npy_header_len(dtype, ndim, shape);

	zr__clear();
	if (!total || !dst || !len)
		return -EINVAL;
	if (cap < total)
		return zr__fail(-ENOBUFS, "npy header: needs %zu bytes, %zu "
				"given", total, cap);
	write_framed(dtype, ndim, shape, total, dst);
	*len = total;
	return 0;
}

int zr_npy_write_header_fixed(const zr_dtype *dtype, uint32_t ndim,
			      const uint64_t *shape, size_t header_len,
			      void *dst, size_t cap)
{
	zr__clear();
	if (!valid_args(dtype, ndim, shape) || !dst || !header_len ||
	    header_len > NPY_HEADER_MAX)
		return -EINVAL;
	if (cap < header_len)
		return zr__fail(-ENOBUFS, "npy header: needs %zu bytes, %zu "
				"given", header_len, cap);
	if (prefix_len(header_len) + dict_len(dtype, ndim, shape) + 1 >
	    header_len)
		return zr__fail(ZR_E_SHAPE, "npy header: shape of %u dims does "
				"not fit in %zu bytes", (unsigned)ndim,
				header_len);
	write_framed(dtype, ndim, shape, header_len, dst);
	return 0;
}

/* The longest shape text plus growth room any n-dim shape of e elements
 * can need: the tuple's digits are bounded by digits(e) + n - 1, and the
 * first axis (>= 1 digit) is subtracted back by its growth room. */
static size_t max_shape_text(uint32_t n, uint64_t e)
{
	if (n == 0)
		return 2;				/* "()" */
	if (n == 1)
		return 3 + NPY_GROWTH_DIGITS;		/* "(e,)" + room */
	return zr__digits(e) + 3 * n + 19;
}

size_t zr_npy_ragged_header_len(const zr_dtype *dtype, uint64_t logic_len)
{
	static const uint64_t one;
	size_t base, best = 0;

	if (!dtype || !dtype->itemsize)
		return 0;
	base = dict_len(dtype, 0, &one) - 2; /* the dict minus its "()" */
	for (uint32_t n = 0; n <= ZR_MAX_NDIM; n++) {
		uint64_t prefix = 8 + 8 * (uint64_t)n, payload, e;
		size_t len;

		if (logic_len <= prefix)
			break;
		payload = logic_len - prefix;
		if (payload % dtype->itemsize)
			continue;
		e = payload / dtype->itemsize;
		if (n == 0 && e != 1)
			continue;
		len = wrapped_len(base + max_shape_text(n, e));
		if (len > best)
			best = len;
	}
	return best;
}

/* -- parsing ------------------------------------------------------------ */

typedef struct cursor {
	const char *p, *start, *end;
} cursor;

static size_t off(const cursor *c)
{
	return (size_t)(c->p - c->start);
}

static int bad(const cursor *c, const char *what)
{
	return zr__fail(ZR_E_NPY, "npy header: byte %zu of the dict: %s",
			off(c), what);
}

static void skip_ws(cursor *c)
{
	while (c->p < c->end && strchr(" \t\r\n", *c->p) && *c->p)
		c->p++;
}

static int peek(const cursor *c, char ch)
{
	return c->p < c->end && *c->p == ch;
}

static int expect(cursor *c, char ch, const char *what)
{
	skip_ws(c);
	if (!peek(c, ch))
		return bad(c, what);
	c->p++;
	skip_ws(c);
	return 0;
}

/* A quoted string without escapes: all NumPy writes here. */
static int parse_str(cursor *c, char *dst, size_t cap)
{
	char q = c->p < c->end ? *c->p : 0;
	size_t n = 0;

	if (q != '\'' && q != '"')
		return bad(c, "expected a quoted string");
	for (c->p++; c->p < c->end && *c->p != q; c->p++, n++) {
		if (*c->p == '\\' || *c->p < ' ' || *c->p > '~')
			return bad(c, "unsupported character in a string");
		if (n + 1 < cap)
			dst[n] = *c->p;
	}
	if (c->p >= c->end)
		return bad(c, "unterminated string");
	c->p++;
	if (n >= cap)
		return bad(c, "string too long");
	dst[n] = '\0';
	return 0;
}

static int is_word_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       (ch >= '0' && ch <= '9') || ch == '_';
}

static int parse_bool(cursor *c, int *out)
{
	static const char *const words[] = { "False", "True" };

	for (int v = 0; v < 2; v++) {
		size_t n = strlen(words[v]);

		if ((size_t)(c->end - c->p) >= n &&
		    !memcmp(c->p, words[v], n) &&
		    (c->p + n == c->end || !is_word_char(c->p[n]))) {
			c->p += n;
			*out = v;
			return 0;
		}
	}
	return bad(c, "fortran_order must be True or False");
}

/* A decimal int as Python spells it (no leading zeros), within int64. */
static int parse_dim(cursor *c, uint64_t *out)
{
	const char *s = c->p;
	uint64_t v = 0;

	if (peek(c, '-'))
		return bad(c, "negative dimension");
	if (c->p >= c->end || *c->p < '0' || *c->p > '9')
		return bad(c, "expected a dimension");
	for (; c->p < c->end && *c->p >= '0' && *c->p <= '9'; c->p++) {
		if (v > ((uint64_t)INT64_MAX - (uint64_t)(*c->p - '0')) / 10)
			return zr__fail(ZR_E_TOOBIG, "npy header: byte %zu: "
					"dimension over 2^63-1", off(c));
		v = v * 10 + (uint64_t)(*c->p - '0');
	}
	if (*s == '0' && c->p - s > 1 && v)
		return bad(c, "dimension with a leading zero");
	if (c->p < c->end && is_word_char(*c->p))
		return bad(c, "dimension is not a decimal integer");
	*out = v;
	return 0;
}

/* "()", "(3,)", "(3, 4)", "(3, 4,)"; "(3)" is an int, not a tuple. */
static int parse_shape(cursor *c, uint32_t *ndim, uint64_t *shape)
{
	uint32_t n = 0;
	int comma = 0, rc;

	if (!peek(c, '('))
		return bad(c, "shape must be a tuple");
	c->p++;
	skip_ws(c);
	while (!peek(c, ')')) {
		if (n == ZR_MAX_NDIM)
			return bad(c, "more than 32 dimensions");
		rc = parse_dim(c, &shape[n++]);
		if (rc)
			return rc;
		skip_ws(c);
		comma = peek(c, ',');
		if (!comma && !peek(c, ')'))
			return bad(c, "expected ',' or ')' in shape");
		if (comma) {
			c->p++;
			skip_ws(c);
		}
	}
	if (n == 1 && !comma)
		return bad(c, "shape '(d)' is not a tuple");
	c->p++;
	*ndim = n;
	return 0;
}

enum { KEY_DESCR = 1, KEY_FORTRAN = 2, KEY_SHAPE = 4 };

typedef struct dict_vals {
	zr_dtype dtype;
	int fortran;
	uint32_t ndim;
	uint64_t shape[ZR_MAX_NDIM];
} dict_vals;

static int parse_descr(cursor *c, zr_dtype *out)
{
	char s[32];
	int rc;

	if (peek(c, '['))
		return zr__fail(ZR_E_DTYPE, "npy header: structured dtypes "
				"are not supported");
	rc = parse_str(c, s, sizeof(s));
	if (!rc)
		rc = zr_dtype_parse(s, out);
	return rc;
}

static int parse_entry(cursor *c, unsigned *seen, dict_vals *v)
{
	char key[16];
	unsigned bit;
	int rc = parse_str(c, key, sizeof(key));

	if (rc)
		return rc;
	if (!strcmp(key, "descr"))
		bit = KEY_DESCR;
	else if (!strcmp(key, "fortran_order"))
		bit = KEY_FORTRAN;
	else if (!strcmp(key, "shape"))
		bit = KEY_SHAPE;
	else
		return bad(c, "unknown key");
	if (*seen & bit)
		return bad(c, "duplicate key");
	*seen |= bit;
	rc = expect(c, ':', "expected ':'");
	if (rc)
		return rc;
	if (bit == KEY_DESCR)
		return parse_descr(c, &v->dtype);
	if (bit == KEY_FORTRAN)
		return parse_bool(c, &v->fortran);
	return parse_shape(c, &v->ndim, v->shape);
}

static int parse_dict(cursor *c, dict_vals *v)
{
	unsigned seen = 0;
	int rc = expect(c, '{', "expected '{'");

	while (!rc && !peek(c, '}')) {
		rc = parse_entry(c, &seen, v);
		skip_ws(c);
		if (!rc && !peek(c, '}'))
			rc = expect(c, ',', "expected ',' or '}'");
	}
	if (rc)
		return rc;
	c->p++;
	skip_ws(c);
	if (c->p != c->end)
		return bad(c, "text after the dict");
	if (seen != (KEY_DESCR | KEY_FORTRAN | KEY_SHAPE))
		return bad(c, "missing descr, fortran_order or shape");
	return 0;
}

/* product(shape) * itemsize, checked like NumPy: a zero dimension makes
 * the array empty, but the other dimensions must still not overflow. */
static int array_bytes(const dict_vals *v, uint64_t *out)
{
	uint64_t n = v->dtype.itemsize;
	int empty = 0;

	for (uint32_t i = 0; i < v->ndim; i++) {
		if (!v->shape[i]) {
			empty = 1;
			continue;
		}
		if (n > (uint64_t)INT64_MAX / v->shape[i])
			return zr__fail(ZR_E_TOOBIG, "npy header: shape has "
					"more than 2^63-1 bytes");
		n *= v->shape[i];
	}
	*out = empty ? 0 : n;
	return 0;
}

static int check_fortran(const dict_vals *v)
{
	uint32_t big = 0;

	for (uint32_t i = 0; v->fortran && i < v->ndim; i++)
		big += v->shape[i] > 1;
	if (big > 1)
		return zr__fail(ZR_E_NPY, "npy header: Fortran-order arrays "
				"are not supported");
	return 0;
}

/* Magic, version and length field: how many bytes the header takes. */
static int parse_prefix(const uint8_t *b, size_t len, size_t *pre,
			size_t *total, size_t *need)
{
	size_t n = len < NPY_MAGIC_LEN ? len : NPY_MAGIC_LEN;
	uint32_t hlen = 0;

	if (memcmp(b, NPY_MAGIC, n))
		return zr__fail(ZR_E_NPY, "npy: bad magic (not a .npy file)");
	if (len >= 8 && (b[6] < 1 || b[6] > 3 || b[7] != 0))
		return zr__fail(ZR_E_NPY, "npy: unsupported format version "
				"%u.%u", b[6], b[7]);
	*pre = len >= 8 && b[6] > 1 ? 12 : 10;
	if (len < *pre)
		goto truncated;
	for (size_t i = 0; i < *pre - 8; i++)
		hlen |= (uint32_t)b[8 + i] << (8 * i);
	if (hlen > NPY_HEADER_MAX)
		return zr__fail(ZR_E_NPY, "npy: header of %u bytes is too "
				"long", (unsigned)hlen);
	*total = *pre + hlen;
	if (len < *total) {
		*pre = *total;
		goto truncated;
	}
	return 0;
truncated:
	if (need)
		*need = *pre;
	return zr__fail(ZR_E_TRUNCATED, "npy: header needs %zu bytes, "
			"%zu given", *pre, len);
}

int zr_npy_parse(const void *buf, size_t len, zr_npy_header *out,
		 size_t *need)
{
	size_t pre = 0, total = 0;
	dict_vals v = { .ndim = 0 };
	uint64_t bytes = 0;
	cursor c;
	int rc;

	zr__clear();
	if (!buf || !out)
		return -EINVAL;
	rc = parse_prefix(buf, len, &pre, &total, need);
	if (rc)
		return rc;
	c.start = c.p = (const char *)buf + pre;
	c.end = (const char *)buf + total;
	rc = parse_dict(&c, &v);
	if (!rc)
		rc = check_fortran(&v);
	if (!rc)
		rc = array_bytes(&v, &bytes);
	if (rc)
		return rc;
	out->dtype = v.dtype;
	out->ndim = v.ndim;
	memcpy(out->shape, v.shape, sizeof(v.shape));
	out->header_len = total;
	out->data_len = bytes;
	return 0;
}
