/*
 * field.c - turns one field's input (a file to read, or bytes a tar
 * member gave) into the array its store holds: a decoded image, a
 * .cls integer, a .npy array or the bytes themselves.  Runs on the
 * decode workers; touches nothing but its own field.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "import.h"

/* One image file larger than this is not an image we can decode. */
#define FILE_MAX (1u << 30)

void zr_imp_sample_clear(zr_imp_sample *s)
{
	unsigned i;

	for (i = 0; i < s->nfields; i++) {
		free(s->f[i].path);
		free(s->f[i].bytes);
		if (!s->f[i].out.borrowed)
			free(s->f[i].out.data);
	}
	free(s->where);
	memset(s, 0, sizeof(*s));
}

static int ends_with(const char *name, const char *suffix)
{
	size_t n = strlen(name), k = strlen(suffix);

	return n >= k && !strcasecmp(name + n - k, suffix);
}

int zr_imp_is_image_name(const char *name)
{
	return ends_with(name, ".jpg") || ends_with(name, ".jpeg") ||
	       ends_with(name, ".png") || ends_with(name, ".webp");
}

enum zr_imp_kind zr_imp_kind_of_ext(const char *ext)
{
	char dotted[ZR_IMP_NAME_MAX + 2];

	snprintf(dotted, sizeof(dotted), ".%s", ext);
	/* webdataset's own decoders go by the last part ("seg.png"). */
	if (zr_imp_is_image_name(dotted))
		return ZR_IMP_IMAGE;
	if (ends_with(dotted, ".cls") || ends_with(dotted, ".cls2") ||
	    ends_with(dotted, ".index"))
		return ZR_IMP_CLS;
	if (ends_with(dotted, ".npy"))
		return ZR_IMP_NPY;
	return ZR_IMP_BYTES;
}

int64_t zr_imp_mtime_ns(const struct stat *st)
{
	return (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

static int fail(zr_imp_field *f, int err, const char *msg)
{
	f->err = err;
	snprintf(f->msg, sizeof(f->msg), "%s", msg);
	return err;
}

/* Reads f->path whole, checking it is the file the walk saw. */
static int read_path(zr_imp_field *f)
{
	struct stat st;
	size_t got = 0;
	ssize_t n;
	int fd = open(f->path, O_RDONLY | O_CLOEXEC), rc = 0;

	if (fd < 0)
		return fail(f, -errno, "cannot open");
	if (fstat(fd, &st) < 0) {
		rc = fail(f, -errno, "cannot stat");
		goto out;
	}
	if (st.st_size != f->want_size || zr_imp_mtime_ns(&st) != f->want_mtime) {
		rc = fail(f, ZR_IMP_ECHANGED, "changed while being imported");
		goto out;
	}
	if ((uint64_t)st.st_size > FILE_MAX) {
		rc = fail(f, -EFBIG, "larger than 1 GiB");
		goto out;
	}
	f->bytes = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!f->bytes) {
		rc = fail(f, -ENOMEM, "");
		goto out;
	}
	while (got < (size_t)st.st_size) {
		n = read(fd, (char *)f->bytes + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = n < 0 ? fail(f, -errno, "read failed") :
				     fail(f, ZR_IMP_ECHANGED, "shrank while being "
					  "imported");
			goto out;
		}
		got += (size_t)n;
	}
	f->nbytes = got;
out:
	close(fd);
	return rc;
}

/* The input bytes become a 1-D uint8 record (the field owns them). */
static int keep_bytes(zr_imp_field *f)
{
	if (f->nbytes == 0)
		return fail(f, ZR_E_EMPTY, "is empty (a record needs at least "
			    "one byte)");
	zr_dtype_parse("|u1", &f->out.dtype);
	f->out.ndim = 1;
	f->out.shape[0] = f->nbytes;
	f->out.data = f->bytes;
	f->out.len = f->nbytes;
	f->bytes = NULL;
	return 0;
}

static int scalar_i8(zr_imp_field *f, int64_t v)
{
	zr_dtype_parse("<i8", &f->out.dtype);
	f->out.ndim = 0;
	f->out.label = v;
	f->out.len = sizeof(v);
	f->out.data = malloc(sizeof(v));
	if (!f->out.data)
		return fail(f, -ENOMEM, "");
	memcpy(f->out.data, &v, sizeof(v));
	return 0;
}

/* A .cls member: one decimal integer, blanks around it allowed. */
static int parse_cls(zr_imp_field *f)
{
	char text[32], *end;
	long long v;
	size_t n = f->nbytes;

	if (n == 0 || n >= sizeof(text))
		return fail(f, ZR_IMP_EBAD, "is not one decimal integer");
	memcpy(text, f->bytes, n);
	text[n] = 0;
	errno = 0;
	v = strtoll(text, &end, 10);
	while (*end == ' ' || *end == '\n' || *end == '\r' || *end == '\t')
		end++;
	if (errno || end == text || *end || strlen(text) != n)
		return fail(f, ZR_IMP_EBAD, "is not one decimal integer");
	return scalar_i8(f, (int64_t)v);
}

static int parse_npy(zr_imp_field *f)
{
	zr_npy_header h;
	int rc = zr_npy_parse(f->bytes, f->nbytes, &h, NULL);

	if (rc < 0)
		return fail(f, rc, zr_errmsg());
	if (h.data_len != f->nbytes - h.header_len)
		return fail(f, ZR_E_TRUNCATED, "the .npy's data does not "
			    "match its header");
	if (h.data_len == 0)
		return fail(f, ZR_E_EMPTY, "the .npy array has no elements");
	f->out.dtype = h.dtype;
	f->out.ndim = h.ndim;
	memcpy(f->out.shape, h.shape, sizeof(h.shape));
	memmove(f->bytes, (char *)f->bytes + h.header_len, h.data_len);
	f->out.data = f->bytes;
	f->out.len = h.data_len;
	f->bytes = NULL;
	return 0;
}

/* The decode thread's buffer holds at least one row of f's store. */
static int scratch_fit(zr_imp_field *f, zr_imp_scratch *sc)
{
	void *p;

	if (sc->cap >= f->put_len)
		return 0;
	p = realloc(sc->buf, f->put_len);
	if (!p)
		return -ENOMEM;
	sc->buf = p;
	sc->cap = f->put_len;
	return 0;
}

/* A record of its store's row size goes into its slot from here, while
 * it is still in this thread's cache; the append then only stages it.
 * A put that fails fails the session, which the append reports. */
static void put(zr_imp_field *f)
{
	if (f->err || !f->put || f->out.len != f->put_len)
		return;
	zr_append_dense_put(f->put, f->slot, f->out.data);
	if (!f->out.borrowed)
		free(f->out.data);
	f->out.data = NULL;
	f->out.borrowed = 0;
	f->stored = 1;
}

static void decode(zr_imp_field *f, const zr_imp_image_opts *opts,
		   zr_imp_scratch *sc)
{
	int rc;

	if (f->kind == ZR_IMP_LABEL) {
		scalar_i8(f, f->out.label);
		return;
	}
	if (!f->bytes && f->path && read_path(f) < 0)
		return;
	switch (f->kind) {
	case ZR_IMP_IMAGE:
		if (opts->encoded) {
			keep_bytes(f);
			break;
		}
		rc = zr_imp_image_decode_into(f->bytes, f->nbytes, opts,
					      sc ? sc->buf : NULL,
					      sc ? f->put_len : 0, &f->out,
					      f->msg, sizeof(f->msg));
		f->err = rc;
		break;
	case ZR_IMP_CLS:
		parse_cls(f);
		break;
	case ZR_IMP_NPY:
		parse_npy(f);
		break;
	default:
		keep_bytes(f);
		break;
	}
	/* The input is no longer needed; the batch holds only outputs. */
	free(f->bytes);
	f->bytes = NULL;
}

void zr_imp_field_decode(zr_imp_field *f, const zr_imp_image_opts *opts,
			 zr_imp_scratch *sc)
{
	f->err = 0;
	if (f->kind == ZR_IMP_ARRAY)
		return;
	if (f->put && scratch_fit(f, sc) < 0)
		sc = NULL;
	decode(f, opts, f->put ? sc : NULL);
	put(f);
}
