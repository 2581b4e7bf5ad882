/*
 * index_list.c - the parser of record-index lists (index_list.h): a state
 * machine fed with chunks whose boundaries fall anywhere, inside a number,
 * a .npy header or an item.  Each byte is looked at once, so the time is
 * linear in the input whatever its chunking.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index_list.h"
#include "index_set.h"

/* The first bytes of a .npy, enough to learn its header's length. */
#define NPY_PREFIX 10
/* Digits of an index that a message shows before "...". */
#define SHOWN_DIGITS 24

enum form { FORM_NONE, FORM_TEXT, FORM_NPY };

struct zrfile_idxlist {
	int err;                  /* first failure, sticky               */
	int finished;
	enum form form;           /* picked by the first byte            */
	uint64_t fed;             /* bytes fed before the current chunk  */
	struct zrfile_idxset set; /* the complete indices (index_set.h)  */

	/* text: the number being read (leading zeros left out) */
	int in_num;
	unsigned digits;          /* its significant digits so far       */
	int overflow;             /* past UINT64_MAX                     */
	uint64_t value;
	char shown[SHOWN_DIGITS + 1];

	/* .npy: the header, then the item being read */
	unsigned char *hdr;
	size_t hdr_len, hdr_need;
	int have_header;
	zr_npy_header h;
	unsigned char item[8];
	size_t item_len;

	char msg[256];
};

static int fail(zrfile_idxlist *p, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Records the first failure; later ones keep the first message. */
static int fail(zrfile_idxlist *p, int err, const char *fmt, ...)
{
	va_list ap;

	if (p->err)
		return p->err;
	p->err = err;
	va_start(ap, fmt);
	vsnprintf(p->msg, sizeof(p->msg), fmt, ap);
	va_end(ap);
	return err;
}

static int out_of_range(zrfile_idxlist *p, const char *index, uint64_t limit)
{
	return fail(p, ZR_E_RANGE, "index %s is out of range (the store holds "
		    "%" PRIu64 " records)", index, limit);
}

static int push(zrfile_idxlist *p, uint64_t x, uint64_t limit)
{
	if (zrfile_idxset_add(&p->set, x, limit))
		return fail(p, -ENOMEM, "out of memory for %zu indices",
			    p->set.n + 1);
	return 0;
}

/* -- text ------------------------------------------------------------------ */

static int is_sep(unsigned char c)
{
	return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == ',';
}

static void digit(zrfile_idxlist *p, unsigned d)
{
	p->in_num = 1;
	if (!p->digits && !d)
		return;
	if (p->digits < SHOWN_DIGITS)
		p->shown[p->digits] = (char)('0' + d);
	p->digits++;
	if (p->overflow || p->value > (UINT64_MAX - d) / 10)
		p->overflow = 1;
	else
		p->value = p->value * 10 + d;
}

/* Checks the number read so far: more digits only make it larger, so a
 * number cut by a chunk's end fails as soon as its start does. */
static int num_check(zrfile_idxlist *p, uint64_t limit)
{
	char shown[SHOWN_DIGITS + 4];

	if (!p->overflow && p->value < limit)
		return 0;
	if (!p->digits)
		snprintf(shown, sizeof(shown), "0");
	else
		snprintf(shown, sizeof(shown), "%.*s%s",
			 p->digits > SHOWN_DIGITS ? SHOWN_DIGITS :
			 (int)p->digits, p->shown,
			 p->digits > SHOWN_DIGITS ? "..." : "");
	return out_of_range(p, shown, limit);
}

/* Keeps the number read, checked already, and starts the next one. */
static int num_keep(zrfile_idxlist *p, uint64_t limit)
{
	int err = push(p, p->value, limit);

	p->in_num = 0;
	p->digits = 0;
	p->overflow = 0;
	p->value = 0;
	return err;
}

static int text_feed(zrfile_idxlist *p, const unsigned char *s, size_t len,
		     uint64_t limit)
{
	int err;

	for (size_t i = 0; i < len; i++) {
		if (s[i] >= '0' && s[i] <= '9') {
			digit(p, s[i] - '0');
			continue;
		}
		if (!is_sep(s[i]))
			return fail(p, -EINVAL, "byte %" PRIu64 " (0x%02x) is "
				    "neither a digit nor a separator",
				    p->fed + i, s[i]);
		if (p->in_num && ((err = num_check(p, limit)) ||
				  (err = num_keep(p, limit))))
			return err;
	}
	return p->in_num ? num_check(p, limit) : 0;
}

/* -- .npy ------------------------------------------------------------------ */

static int bad_npy(zrfile_idxlist *p, const char *why)
{
	return fail(p, ZR_E_NPY, "%s", why);
}

/* Gathers header bytes from s[*used, len) until the header parses.  Each
 * call parses what it has, so bad magic fails at the chunk that brings
 * it; final: the input ends here. */
static int header_feed(zrfile_idxlist *p, const unsigned char *s, size_t len,
		       size_t *used, int final)
{
	size_t need = 0;
	int err;

	for (;;) {
		size_t take = p->hdr_need - p->hdr_len;

		if (take > len - *used)
			take = len - *used;
		if (take) {
			memcpy(p->hdr + p->hdr_len, s + *used, take);
			p->hdr_len += take;
			*used += take;
		}
		err = zr_npy_parse(p->hdr, p->hdr_len, &p->h, &need);
		if (!err)
			break;
		if (err != ZR_E_TRUNCATED || final || need <= p->hdr_len)
			return bad_npy(p, "malformed .npy header");
		if (need > p->hdr_need) {
			unsigned char *h = realloc(p->hdr, need);

			if (!h)
				return fail(p, -ENOMEM, "out of memory for a "
					    ".npy header of %zu bytes", need);
			p->hdr = h;
			p->hdr_need = need;
		}
		if (*used == len)
			return 0;
	}
	if ((p->h.dtype.kind != 'i' && p->h.dtype.kind != 'u') ||
	    p->h.dtype.itemsize < 1 || p->h.dtype.itemsize > 8 ||
	    p->h.ndim > 1)
		return bad_npy(p, "the .npy must be a 1-d integer array");
	p->have_header = 1;
	return 0;
}

/* The item in p->item, range-checked and kept. */
static int npy_index(zrfile_idxlist *p, uint64_t limit)
{
	unsigned w = p->h.dtype.itemsize;
	char shown[24];
	uint64_t x = 0;

	for (unsigned b = 0; b < w; b++)
		x |= (uint64_t)p->item[p->h.dtype.order == '>' ? w - 1 - b : b]
		     << (8 * b);
	if (p->h.dtype.kind == 'i' && (x >> (8 * w - 1)) & 1) {
		if (w < 8)
			x |= ~(uint64_t)0 << (8 * w);
		snprintf(shown, sizeof(shown), "%" PRId64, (int64_t)x);
		return out_of_range(p, shown, limit);
	}
	if (x >= limit) {
		snprintf(shown, sizeof(shown), "%" PRIu64, x);
		return out_of_range(p, shown, limit);
	}
	return push(p, x, limit);
}

static int npy_feed(zrfile_idxlist *p, const unsigned char *s, size_t len,
		    uint64_t limit)
{
	size_t used = 0, w;
	int err;

	if (!p->have_header) {
		err = header_feed(p, s, len, &used, 0);
		if (err || !p->have_header)
			return err;
	}
	if (p->fed + len > p->h.header_len + p->h.data_len)
		return bad_npy(p, "the .npy's size disagrees with its shape");
	w = p->h.dtype.itemsize;
	while (used < len) {
		size_t take = w - p->item_len;

		if (take > len - used)
			take = len - used;
		memcpy(p->item + p->item_len, s + used, take);
		p->item_len += take;
		used += take;
		if (p->item_len < w)
			break;
		p->item_len = 0;
		if ((err = npy_index(p, limit)))
			return err;
	}
	return 0;
}

static int npy_end(zrfile_idxlist *p)
{
	size_t used = 0;
	int err;

	if (!p->have_header) {
		err = header_feed(p, NULL, 0, &used, 1);
		if (err)
			return err;
	}
	if (p->fed != p->h.header_len + p->h.data_len)
		return bad_npy(p, "the .npy's size disagrees with its shape");
	return 0;
}

/* -- the interface ----------------------------------------------------------- */

int zrfile_idxlist_new(zrfile_idxlist **out)
{
	zrfile_idxlist *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	p->hdr = malloc(NPY_PREFIX);
	if (!p->hdr) {
		free(p);
		return -ENOMEM;
	}
	p->hdr_need = NPY_PREFIX;
	*out = p;
	return 0;
}

int zrfile_idxlist_feed(zrfile_idxlist *p, const void *buf, size_t len,
			uint64_t limit)
{
	const unsigned char *s = buf;
	int err;

	if (p->err)
		return p->err;
	if (p->finished)
		return -EINVAL;
	if (!len)
		return 0;
	if (len > ZRFILE_IDXLIST_MAX - p->fed)
		return fail(p, -EFBIG, "input over %u MiB",
			    ZRFILE_IDXLIST_MAX >> 20);
	if (p->form == FORM_NONE)
		p->form = s[0] == 0x93 ? FORM_NPY : FORM_TEXT;
	if (p->form == FORM_NPY)
		err = npy_feed(p, s, len, limit);
	else
		err = text_feed(p, s, len, limit);
	p->fed += len;
	return err;
}

int zrfile_idxlist_finish(zrfile_idxlist *p, uint64_t limit, uint64_t **idx,
			  size_t *n)
{
	char shown[24];
	uint64_t past;
	int err = 0;

	if (p->err)
		return p->err;
	if (p->finished)
		return -EINVAL;
	/* The last number passed its check when its chunk ended. */
	if (p->in_num)
		err = num_keep(p, limit);
	else if (p->form == FORM_NPY)
		err = npy_end(p);
	/* The limit may have shrunk since the feeds checked them. */
	if (!err && zrfile_idxset_first_at(&p->set, limit, &past)) {
		snprintf(shown, sizeof(shown), "%" PRIu64, past);
		err = out_of_range(p, shown, limit);
	}
	if (!err && zrfile_idxset_take(&p->set, idx, n))
		err = fail(p, -ENOMEM, "out of memory for %zu indices",
			   p->set.n);
	if (err)
		return err;
	p->finished = 1;
	return 0;
}

size_t zrfile_idxlist_bytes(const zrfile_idxlist *p)
{
	return zrfile_idxset_bytes(&p->set);
}

const char *zrfile_idxlist_message(const zrfile_idxlist *p)
{
	return p ? p->msg : "";
}

void zrfile_idxlist_free(zrfile_idxlist *p)
{
	if (!p)
		return;
	zrfile_idxset_clear(&p->set);
	free(p->hdr);
	free(p);
}
