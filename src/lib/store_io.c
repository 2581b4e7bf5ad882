/*
 * store_io.c - the engine's low-level pieces: positional I/O that survives
 * short transfers, the read mappings of meta.zr and data.zr, and validated
 * access to the record table and to one record's bytes.
 */
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "codec.h"
#include "error.h"
#include "store_io.h"

/* Address space is cheap and remapping is not: reserve generously so that
 * a growing store rarely makes a new mapping. */
#define ZR__MAP_MIN ((uint64_t)1 << 30)

int zr__open_file(zr_store *s, const char *name, unsigned flags,
		  unsigned mode, struct zr__file **out)
{
	char p[4096];

	if ((size_t)snprintf(p, sizeof(p), "%s/%s", s->path, name) >=
	    sizeof(p))
		return zr__fail(-ENAMETOOLONG, "%s: path too long", s->path);
	return s->vfs->open(s->vfs, p, flags, mode, out);
}

int zr__sync(zr_store *s, int file, int how)
{
	int err = zr__io_sync(s->file[file], how);

	if (err)
		return zr__fail(err, "%s/%s: %s: %s", s->path,
				zr__file_name(file),
				how == ZR__SYNC_ALL ? "fsync" : "fdatasync",
				strerror(-err));
	return 0;
}

int zr__flush(zr_store *s, int file)
{
	return zr__sync(s, file, ZR__SYNC_DATA);
}

int zr__truncate(zr_store *s, int file, uint64_t len)
{
	int err = zr__io_truncate(s->file[file], len);

	if (err)
		return zr__fail(err, "%s/%s: truncate: %s", s->path,
				zr__file_name(file), strerror(-err));
	return 0;
}

/* A backend without map (vfs.h): meta.zr's first need bytes read into
 * memory, true for as long as nothing writes them (a read-only handle on
 * a medium nothing writes, or below the length a follower took); data.zr
 * gets no base, and its records are read through the file. */
static int map_read_in(zr_store *s, int file, uint64_t need,
		       struct zr__map *m)
{
	uint8_t *b;
	int err;

	m->file = file;
	m->copy = 1;
	m->len = (size_t)need;
	m->base = NULL;
	if (file == ZR__DATA)
		return 0;
	b = malloc(need ? (size_t)need : 1);
	if (!b)
		return zr__fail(-ENOMEM, "%s: no memory for a table of %"
				PRIu64 " bytes", s->path, need);
	err = zr__pread_all(s, file, b, (size_t)need, 0);
	if (err)
		free(b);
	else
		m->base = b;
	return err;
}

static int map_file(zr_store *s, int file, uint64_t need,
		    struct zr__map *m)
{
	struct zr__file *f = s->file[file];
	uint64_t len = need > ZR__MAP_MIN / 2 ? 2 * need : ZR__MAP_MIN;
	const void *base;
	int err;

	if (!f->io->map)
		return map_read_in(s, file, need, m);
	err = f->io->map(f, (size_t)len, &base);
	if (err)
		return zr__fail(err, "%s: mmap of %" PRIu64 " bytes: %s",
				s->path, len, strerror(-err));
	m->base = base;
	m->len = (size_t)len;
	m->file = file;
	m->copy = 0;
	return 0;
}

int zr__map_ensure(zr_store *s, int file, uint64_t need)
{
	struct zr__map *cur = atomic_load_explicit(&s->map[file],
						   memory_order_acquire);
	struct zr__map *m;
	int err = 0;

	if (cur && cur->len >= need)
		return 0;
	if (need > SIZE_MAX / 4)
		return zr__fail(-EFBIG, "%s: file too large to map", s->path);
	pthread_mutex_lock(&s->map_lock);
	cur = atomic_load_explicit(&s->map[file], memory_order_acquire);
	if (cur && cur->len >= need)
		goto out;
	m = malloc(sizeof(*m));
	if (!m) {
		err = zr__fail(-ENOMEM, "%s: no memory", s->path);
		goto out;
	}
	err = map_file(s, file, need, m);
	if (err) {
		free(m);
		goto out;
	}
	m->next = s->maps;
	s->maps = m;
	atomic_store_explicit(&s->map[file], m, memory_order_release);
out:
	pthread_mutex_unlock(&s->map_lock);
	return err;
}

void zr__map_free_all(zr_store *s)
{
	while (s->maps) {
		struct zr__map *m = s->maps;

		s->maps = m->next;
		if (m->copy)
			free((void *)m->base);
		else
			s->file[m->file]->io->unmap(s->file[m->file],
						    m->base, m->len);
		free(m);
	}
	s->map[ZR__META] = NULL;
	s->map[ZR__DATA] = NULL;
}

static int loc_check(const zr_store *s, uint64_t idx, uint64_t tail,
		     const zr_loc *l)
{
	const char *why = NULL;

	if (l->phys_length == 0 || l->logic_length == 0)
		why = "zero length";
	else if (l->logic_length > ZR_RECORD_MAX)
		why = "logic_length over 2 GiB";
	else if (l->offset > tail || tail - l->offset < l->phys_length)
		why = "extends past the data.zr frontier";
	else if (s->row_bytes && l->logic_length != s->row_bytes)
		why = "logic_length is not the row width";
	else if (!s->row_bytes && l->logic_length < 8)
		why = "ragged record shorter than its prefix";
	else if (s->codec == ZR_CODEC_RAW &&
		 l->phys_length != l->logic_length)
		why = "raw record with phys_length != logic_length";
	if (!why)
		return 0;
	return zr__fail(ZR_E_CORRUPT, "%s/meta.zr: record %" PRIu64
			" (offset %" PRIu64 ", phys %" PRIu32 ", logic %"
			PRIu32 ", frontier %" PRIu64 "): %s", s->path, idx,
			l->offset, l->phys_length, l->logic_length, tail, why);
}

/* A record index that names no record: the fault of a block of them. */
#define NO_RECORD UINT64_MAX

/* The error of a fault at offset off of the mapping of file. */
static int map_fault(const zr_store *s, int file, uint64_t idx, size_t off)
{
	const char *name = file == ZR__META ? "meta.zr" : "data.zr";
	char rec[48] = "";
	ZSTD_DCtx *d;

	/* The jump may have left a frame half decoded (and a dictionary
	 * referenced) in the thread's shared context. */
	if (file == ZR__DATA && s->codec != ZR_CODEC_RAW &&
	    (d = zr__dctx()))
		ZSTD_DCtx_reset(d, ZSTD_reset_session_and_parameters);
	/* A block's fault in the table still tells whose entry it was. */
	if (idx == NO_RECORD && file == ZR__META && off >= ZR__PAGE)
		idx = (off - ZR__PAGE) / ZR__LOC;
	if (idx != NO_RECORD)
		snprintf(rec, sizeof(rec), " record %" PRIu64 ":", idx);
	return zr__fail(-EIO, "%s/%s:%s I/O error reading the mapped file at "
			"offset %zu (SIGBUS: unreadable page, or the file "
			"was truncated)", s->path, name, rec, off);
}

/* What a mapping guards: nothing for data.zr on a backend without map. */
static struct zr__guard_span span_of(const struct zr__map *m)
{
	return (struct zr__guard_span){ m->base, m->base ? m->len : 0 };
}

int zr__map_read_guarded(const zr_store *s, const struct zr__map *m,
			 int file, uint64_t idx, int (*fn)(void *), void *arg)
{
	struct zr__guard_span span = span_of(m);
	struct zr__guard_fault at;
	int err = zr__guard_run(&span, 1, fn, arg, &at);

	if (err != ZR__GUARD_FAULT)
		return err;
	return map_fault(s, file, idx, at.off);
}

int zr__maps_read_guarded(const zr_store *s, const struct zr__map *meta,
			  const struct zr__map *data, int (*fn)(void *),
			  void *arg)
{
	/* Indexed by file; no data span when fn reads no record. */
	struct zr__guard_span spans[2] = {
		[ZR__META] = span_of(meta),
		[ZR__DATA] = data ? span_of(data) : (struct zr__guard_span){ 0 },
	};
	struct zr__guard_fault at;
	int err = zr__guard_run(spans, data ? 2 : 1, fn, arg, &at);

	if (err != ZR__GUARD_FAULT)
		return err;
	return map_fault(s, (int)at.span, NO_RECORD, at.off);
}

/* One load per field (the byte-wise zr__get64 is not merged by the
 * compiler, and this runs once per gathered record). */
static inline void loc_fields(const uint8_t *b, zr_loc *l)
{
	memcpy(&l->offset, b, 8);
	memcpy(&l->phys_length, b + 8, 4);
	memcpy(&l->logic_length, b + 12, 4);
}

int zr__loc_decode(const zr_store *s, uint64_t idx, uint64_t tail,
		   const uint8_t *b, zr_loc *out)
{
	zr_loc l;

	loc_fields(b, &l);
	l.offset = le64toh(l.offset);
	l.phys_length = le32toh(l.phys_length);
	l.logic_length = le32toh(l.logic_length);
	if (loc_check(s, idx, tail, &l))
		return ZR_E_CORRUPT;
	*out = l;
	return 0;
}

int zr__loc_read(const zr_store *s, const struct zr__map *meta, uint64_t idx,
		 uint64_t len, uint64_t tail, zr_loc *out)
{
	if (idx >= len)
		return zr__fail(ZR_E_RANGE, "%s: index %" PRIu64
				" out of range (length %" PRIu64 ")", s->path,
				idx, len);
	return zr__loc_decode(s, idx, tail, meta->base + zr__loc_pos(idx),
			      out);
}

struct loc_args {
	const zr_store *s;
	const struct zr__map *meta;
	uint64_t idx, len, tail;
	zr_loc *out;
};

static int loc_load(void *arg)
{
	const struct loc_args *a = arg;

	return zr__loc_read(a->s, a->meta, a->idx, a->len, a->tail, a->out);
}

int zr__loc_get(const zr_store *s, uint64_t idx, uint64_t len, uint64_t tail,
		zr_loc *out)
{
	struct loc_args a = { s, zr__map_of(s, ZR__META), idx, len, tail,
			      out };

	if (!zr__guard_enabled())
		return loc_load(&a);
	return zr__map_read_guarded(s, a.meta, ZR__META, idx, loc_load, &a);
}

/* Raw records at least this large are read with pread rather than copied
 * from the mapping: the copy costs the same, but mapped pages count in the
 * reader's PSS (a loader over a raw image store would carry the whole
 * store), and a page that fails to read is an error instead of SIGBUS.
 * Smaller records stay on the mapping, where a syscall per record would
 * cost more than the copy. */
#define ZR__PREAD_MIN (64u << 10)

int zr__record_src(const zr_store *s, const struct zr__map *data,
		   const zr_loc *loc, const uint8_t **src, uint8_t **buf)
{
	uint8_t *b;
	int err;

	*buf = NULL;
	if (data->base) {
		*src = data->base + loc->offset;
		return 0;
	}
	b = malloc(loc->phys_length);
	if (!b)
		return zr__fail(-ENOMEM, "%s: no memory for a record of %"
				PRIu32 " bytes", s->path, loc->phys_length);
	err = zr__pread_all(s, ZR__DATA, b, loc->phys_length, loc->offset);
	if (err) {
		free(b);
		return err;
	}
	*src = *buf = b;
	return 0;
}

/* A record on a backend without map: read, then decoded if it must be. */
static int record_through(const zr_store *s, const struct zr__map *data,
			  uint64_t idx, const zr_loc *loc, void *dst)
{
	const uint8_t *src;
	uint8_t *buf;
	int err;

	if (s->codec == ZR_CODEC_RAW)
		return zr__pread_all(s, ZR__DATA, dst, loc->logic_length,
				     loc->offset);
	err = zr__record_src(s, data, loc, &src, &buf);
	if (!err)
		err = zr__decode(s->ddict, src, loc->phys_length, dst,
				 loc->logic_length, s->path, idx);
	free(buf);
	return err;
}

int zr__record_from(const zr_store *s, uint64_t idx, const zr_loc *loc,
		    const uint8_t *src, void *dst)
{
	if (s->codec != ZR_CODEC_RAW)
		return zr__decode(s->ddict, src, loc->phys_length, dst,
				  loc->logic_length, s->path, idx);
	memcpy(dst, src, loc->logic_length);
	return 0;
}

int zr__record_read(const zr_store *s, const struct zr__map *data,
		    uint64_t idx, const zr_loc *loc, void *dst)
{
	if (!data->base)
		return record_through(s, data, idx, loc, dst);
	if (s->codec == ZR_CODEC_RAW && loc->logic_length >= ZR__PREAD_MIN)
		return zr__pread_all(s, ZR__DATA, dst, loc->logic_length,
				     loc->offset);
	return zr__record_from(s, idx, loc, data->base + loc->offset, dst);
}

struct rec_args {
	const zr_store *s;
	const struct zr__map *data;
	uint64_t idx;
	const zr_loc *loc;
	void *dst;
};

static int rec_load(void *arg)
{
	const struct rec_args *a = arg;

	return zr__record_read(a->s, a->data, a->idx, a->loc, a->dst);
}

int zr__record_decode(const zr_store *s, uint64_t idx, const zr_loc *loc,
		      void *dst)
{
	const struct zr__map *m = zr__map_of(s, ZR__DATA);
	struct rec_args a = { s, m, idx, loc, dst };

	/* A pread faults into an error of its own: no guard needed. */
	if (!zr__guard_enabled() || !m->base ||
	    (s->codec == ZR_CODEC_RAW && loc->logic_length >= ZR__PREAD_MIN))
		return zr__record_read(s, m, idx, loc, dst);
	return zr__map_read_guarded(s, m, ZR__DATA, idx, rec_load, &a);
}

int zr__ragged_head(const void *head, size_t head_len, uint64_t total,
		    size_t itemsize, uint32_t *ndim, uint64_t *shape,
		    size_t *payload_offset)
{
	const uint8_t *b = head;
	uint64_t n, elems = 1, prefix;

	if (itemsize == 0)
		return zr__fail(-EINVAL, "ragged record: itemsize 0");
	if (head_len < 8 || total < 8)
		return zr__fail(ZR_E_CORRUPT, "ragged record of %" PRIu64
				" bytes has no prefix", total);
	n = zr__get64(b);
	if (n > ZR_MAX_NDIM)
		return zr__fail(ZR_E_CORRUPT, "ragged record: ndim %" PRIu64
				" over %d", n, ZR_MAX_NDIM);
	prefix = 8 + 8 * n;
	if (total < prefix || head_len < prefix)
		return zr__fail(ZR_E_CORRUPT, "ragged record: %" PRIu64
				" bytes cannot hold a rank-%" PRIu64
				" prefix", total, n);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t d = zr__get64(b + 8 + 8 * i);

		if (d && elems > UINT64_MAX / d)
			return zr__fail(ZR_E_CORRUPT, "ragged record: shape "
					"overflows");
		elems *= d;
		if (shape)
			shape[i] = d;
	}
	if (elems == 0 || elems > (total - prefix) / itemsize ||
	    elems * itemsize != total - prefix)
		return zr__fail(ZR_E_CORRUPT, "ragged record: shape holds %"
				PRIu64 " elements of %zu bytes but payload "
				"is %" PRIu64 " bytes", elems, itemsize,
				total - prefix);
	*ndim = (uint32_t)n;
	if (payload_offset)
		*payload_offset = (size_t)prefix;
	return 0;
}

int zr_ragged_parse(const void *rec, size_t len, size_t itemsize,
		    uint32_t *ndim, uint64_t shape[ZR_MAX_NDIM],
		    size_t *payload_offset)
{
	uint64_t dims[ZR_MAX_NDIM];
	uint32_t n;
	int err;

	zr__clear();
	if (!rec && len)
		return zr__fail(-EINVAL, "ragged record: NULL buffer");
	err = zr__ragged_head(rec, len, len, itemsize, &n, dims,
			      payload_offset);
	if (err)
		return err;
	*ndim = n;
	if (shape)
		memcpy(shape, dims, n * sizeof(dims[0]));
	return 0;
}

void zr__header_encode(uint8_t b[ZR__HEADER], uint64_t length, uint64_t tail,
		       uint32_t schema_len, zr_codec codec)
{
	memset(b, 0, ZR__HEADER);
	zr__put64(b, length);
	zr__put64(b + 8, tail);
	zr__put32(b + 16, schema_len);
	b[31] = (uint8_t)codec;
}

int zr__header_write(zr_store *s, uint64_t length, uint64_t tail)
{
	uint8_t b[16];

	/* Only length and tail change after create. */
	zr__put64(b, length);
	zr__put64(b + 8, tail);
	return zr__pwrite_all(s, ZR__META, b, 16, 0);
}

int zr__writable(const zr_store *s, const char *name)
{
	if (s->readonly)
		return zr__fail(-EROFS, "%s: %s on a read-only handle",
				s->path, name);
	return zr__lock_held(s, name);
}
