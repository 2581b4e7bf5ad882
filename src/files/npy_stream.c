/*
 * npy_stream.c - the .npy stream parser behind `zrecord append` and the
 * filesystem's append file: a small state machine (header, dense rows,
 * ragged record) fed with chunks whose boundaries fall anywhere.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npy_stream.h"

/* Smallest prefix that can tell a .npy header's length (magic, version,
 * 2-byte length); the parser asks for more when it needs it. */
#define NPY_MIN_PREFIX 10
/* Headers carry at most ZR_MAX_NDIM dimensions, so anything this long is
 * garbage; refusing it keeps a hostile stream from growing memory. */
#define NPY_HEADER_MAX (1u << 20)

enum npy_state { ST_HEADER, ST_DENSE, ST_RAGGED };

struct zrfile_npystream {
	zr_append *app;           /* NULL once committed                  */
	const zr_schema *schema;
	size_t row_bytes;         /* dense stores                         */
	int err;                  /* first failure, sticky                */
	int finished;
	uint64_t offset;          /* bytes consumed                       */
	uint64_t npy_start;       /* offset of the current .npy           */
	enum npy_state state;

	unsigned char *hdr;       /* header bytes gathered so far         */
	size_t hdr_len, hdr_cap, hdr_need;
	zr_npy_header cur;        /* header of the array being read       */
	uint64_t left;            /* its data bytes not yet consumed      */

	unsigned char *part;      /* split dense row / whole ragged record */
	size_t part_len, part_cap;
	char msg[512];
};

static int fail(zrfile_npystream *p, int err, uint64_t at, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Records the first failure; later ones keep the first message. */
static int fail(zrfile_npystream *p, int err, uint64_t at, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (p->err)
		return p->err;
	p->err = err;
	n = snprintf(p->msg, sizeof(p->msg), "byte %" PRIu64 ": ", at);
	if (n < 0 || (size_t)n >= sizeof(p->msg))
		return err;
	va_start(ap, fmt);
	vsnprintf(p->msg + n, sizeof(p->msg) - n, fmt, ap);
	va_end(ap);
	return err;
}

/* Library failures carry their own detail in zr_errmsg(). */
static int fail_lib(zrfile_npystream *p, int err, uint64_t at, const char *what)
{
	const char *detail = zr_errmsg();

	if (detail && *detail)
		return fail(p, err, at, "%s: %s", what, detail);
	return fail(p, err, at, "%s: %s", what, zr_strerror(err));
}

static void shape_str(char *dst, size_t cap, uint32_t ndim,
		      const uint64_t *shape)
{
	size_t n = 0;
	uint32_t i;

	n += snprintf(dst, cap, "(");
	for (i = 0; i < ndim && n < cap; i++)
		n += snprintf(dst + n, cap - n, "%s%" PRIu64, i ? ", " : "",
			      shape[i]);
	if (n < cap)
		snprintf(dst + n, cap - n, ndim == 1 ? ",)" : ")");
}

/* Grows buf to hold want bytes.  Growth is geometric but never past limit,
 * so a buffer follows the bytes that actually arrived: a header that
 * declares a 2 GiB record cannot make a few bytes of stream reserve 2 GiB. */
static int reserve(unsigned char **buf, size_t *cap, size_t want,
		   size_t limit)
{
	size_t ncap = *cap < 4096 ? 4096 : *cap;
	unsigned char *nb;

	if (want <= *cap)
		return 0;
	while (ncap < want)
		ncap = ncap > SIZE_MAX / 2 ? want : ncap * 2;
	if (ncap > limit)
		ncap = limit > want ? limit : want;
	nb = realloc(*buf, ncap);
	if (!nb)
		return -ENOMEM;
	*buf = nb;
	*cap = ncap;
	return 0;
}

int zrfile_npystream_new(zr_store *s, zrfile_npystream **out)
{
	zrfile_npystream *p;
	int rc;

	if (!s || !out)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->schema = zr_store_schema(s);
	p->row_bytes = zr_store_row_bytes(s);
	p->hdr_need = NPY_MIN_PREFIX;
	rc = zr_append_begin(s, &p->app);
	if (rc < 0) {
		free(p);
		return rc;
	}
	*out = p;
	return 0;
}

static int check_dense(zrfile_npystream *p, const zr_npy_header *h)
{
	const zr_schema *sc = p->schema;
	char got[256], want[256];

	if (h->ndim == sc->ndim + 1 &&
	    !memcmp(h->shape + 1, sc->shape, sc->ndim * sizeof(uint64_t)))
		return 0;
	shape_str(got, sizeof(got), h->ndim, h->shape);
	shape_str(want, sizeof(want), sc->ndim, sc->shape);
	return fail(p, ZR_E_SHAPE, p->npy_start,
		    "array shape %s is not (rows, *item_shape) with "
		    "item_shape %s", got, want);
}

static int check_ragged(zrfile_npystream *p, const zr_npy_header *h)
{
	uint64_t rec = 8 + 8 * (uint64_t)h->ndim + h->data_len;

	if (h->data_len == 0)
		return fail(p, ZR_E_EMPTY, p->npy_start,
			    "array has no elements; a ragged record cannot "
			    "be empty");
	if (rec > ZR_RECORD_MAX)
		return fail(p, ZR_E_TOOBIG, p->npy_start,
			    "array of %" PRIu64 " bytes exceeds the record "
			    "limit", h->data_len);
	return 0;
}

/* A complete header: check it against the schema and pick the data state. */
static int accept_header(zrfile_npystream *p, const zr_npy_header *h)
{
	int rc;

	if (strcmp(h->dtype.str, p->schema->dtype.str))
		return fail(p, ZR_E_DTYPE, p->npy_start,
			    "array dtype %s does not match the store's %s",
			    h->dtype.str, p->schema->dtype.str);
	rc = p->schema->ragged ? check_ragged(p, h) : check_dense(p, h);
	if (rc < 0)
		return rc;
	p->cur = *h;
	p->left = h->data_len;
	p->hdr_len = 0;
	p->hdr_need = NPY_MIN_PREFIX;
	if (p->left == 0)
		p->state = ST_HEADER; /* a 0-row dense array adds nothing */
	else
		p->state = p->schema->ragged ? ST_RAGGED : ST_DENSE;
	return 0;
}

/* Gathers header bytes, never more than the parser asked for, so array
 * data is not copied.  Returns the bytes consumed from buf. */
static int64_t header_step(zrfile_npystream *p, const unsigned char *buf,
			   size_t len)
{
	size_t take = p->hdr_need - p->hdr_len, need = 0, extra;
	zr_npy_header h;
	int rc;

	if (p->hdr_len == 0)
		p->npy_start = p->offset;
	if (take > len)
		take = len;
	rc = reserve(&p->hdr, &p->hdr_cap, p->hdr_len + take, SIZE_MAX);
	if (rc < 0)
		return fail(p, rc, p->offset, "no memory for a .npy header");
	memcpy(p->hdr + p->hdr_len, buf, take);
	p->hdr_len += take;

	/* Parsing a partial header already rejects a wrong magic or
	 * version, so garbage fails at its first bytes. */
	rc = zr_npy_parse(p->hdr, p->hdr_len, &h, &need);
	if (rc == ZR_E_TRUNCATED) {
		if (need <= p->hdr_len || need > NPY_HEADER_MAX)
			return fail(p, ZR_E_NPY, p->npy_start,
				    ".npy header length %zu is not plausible",
				    need);
		p->hdr_need = need;
		return take;
	}
	if (rc < 0)
		return fail_lib(p, rc, p->npy_start, "bad .npy header");
	/* Bytes past the header came from this chunk; hand them back. */
	extra = p->hdr_len - h.header_len;
	if (h.header_len > p->hdr_len || extra > take)
		return fail(p, ZR_E_NPY, p->npy_start,
			    ".npy header length disagrees with the parser");
	rc = accept_header(p, &h);
	if (rc < 0)
		return rc;
	return take - extra;
}

static int append_rows(zrfile_npystream *p, const void *rows, uint64_t count)
{
	int rc = zr_append_dense(p->app, rows, count);

	if (rc < 0)
		return fail_lib(p, rc, p->offset, "append");
	return 0;
}

static int64_t dense_step(zrfile_npystream *p, const unsigned char *buf,
			  size_t len)
{
	size_t row = p->row_bytes, take;
	int rc;

	if (len > p->left)
		len = p->left;
	if (p->part_len == 0 && len >= row) {
		take = len - len % row;
		rc = append_rows(p, buf, take / row);
		if (rc < 0)
			return rc;
	} else {
		/* A row split across chunks: complete it in the side buffer. */
		take = row - p->part_len;
		if (take > len)
			take = len;
		rc = reserve(&p->part, &p->part_cap, row, row);
		if (rc < 0)
			return fail(p, rc, p->offset, "no memory for a row");
		memcpy(p->part + p->part_len, buf, take);
		p->part_len += take;
		if (p->part_len == row) {
			p->part_len = 0;
			rc = append_rows(p, p->part, 1);
			if (rc < 0)
				return rc;
		}
	}
	p->left -= take;
	if (p->left == 0)
		p->state = ST_HEADER;
	return take;
}

static int append_record(zrfile_npystream *p, const void *data)
{
	zr_ragged_in in = {
		.data = data, .ndim = p->cur.ndim, .shape = p->cur.shape,
	};
	int rc = zr_append_ragged(p->app, &in, 1);

	if (rc < 0)
		return fail_lib(p, rc, p->npy_start, "append");
	return 0;
}

static int64_t ragged_step(zrfile_npystream *p, const unsigned char *buf,
			   size_t len)
{
	const unsigned char *rec = buf;
	size_t take;
	int rc;

	if (p->part_len == 0 && len >= p->left) {
		take = p->left; /* the whole record is in this chunk: no copy */
	} else {
		take = p->left - p->part_len;
		if (take > len)
			take = len;
		rc = reserve(&p->part, &p->part_cap, p->part_len + take,
			     p->cur.data_len);
		if (rc < 0)
			return fail(p, rc, p->offset,
				    "out of memory for a %" PRIu64
				    "-byte record", p->cur.data_len);
		memcpy(p->part + p->part_len, buf, take);
		p->part_len += take;
		if (p->part_len < p->left)
			return take;
		rec = p->part;
	}
	rc = append_record(p, rec);
	if (rc < 0)
		return rc;
	p->part_len = 0;
	p->left = 0;
	p->state = ST_HEADER;
	return take;
}

int zrfile_npystream_feed(zrfile_npystream *p, const void *buf, size_t len)
{
	const unsigned char *b = buf;
	int64_t n;

	if (!p || (!buf && len))
		return -EINVAL;
	if (p->err)
		return p->err;
	if (p->finished)
		return -EINVAL;
	while (len > 0) {
		if (p->state == ST_HEADER)
			n = header_step(p, b, len);
		else if (p->state == ST_DENSE)
			n = dense_step(p, b, len);
		else
			n = ragged_step(p, b, len);
		if (n < 0)
			return (int)n;
		b += n;
		len -= n;
		p->offset += n;
	}
	return 0;
}

int zrfile_npystream_at_boundary(const zrfile_npystream *p)
{
	return p->state == ST_HEADER && p->hdr_len == 0;
}

int zrfile_npystream_finish(zrfile_npystream *p, uint64_t *records)
{
	uint64_t n;
	int rc;

	if (!p)
		return -EINVAL;
	if (p->err)
		return p->err;
	if (p->finished)
		return -EINVAL;
	if (!zrfile_npystream_at_boundary(p))
		return fail(p, ZR_E_TRUNCATED, p->offset,
			    "stream ends inside the .npy that starts at byte %"
			    PRIu64, p->npy_start);
	n = zr_append_count(p->app);
	rc = zr_append_commit(p->app);
	p->app = NULL;
	p->finished = 1;
	if (rc < 0)
		return fail_lib(p, rc, p->offset, "commit");
	if (records)
		*records = n;
	return 0;
}

const char *zrfile_npystream_message(const zrfile_npystream *p)
{
	return p ? p->msg : "";
}

uint64_t zrfile_npystream_offset(const zrfile_npystream *p)
{
	return p ? p->offset : 0;
}

void zrfile_npystream_free(zrfile_npystream *p)
{
	if (!p)
		return;
	zr_append_abort(p->app);
	free(p->hdr);
	free(p->part);
	free(p);
}
