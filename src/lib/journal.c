/*
 * journal.c - STORE/maintenance.zr (see journal.h): writing its slots,
 * reading them back without trusting a byte, and recovery at open.
 *
 * A slot, little-endian:
 *   0   8  magic "ZRMAINT1"
 *   8   4  kind: 1 delete (undo), 2 compact (redo)
 *   12  4  payload length P
 *   16  8  sequence number
 *   24  8  FNV-1a 64 of bytes [0, 24) and of the payload
 *   32  P  payload
 * Delete, one slot at 0: old length, old tail_offset, then per overwritten
 * table entry its index (8) and old bytes (16).  Compact, slots
 * alternating at 0 and ZR__J_SLOT by sequence parity, the newest valid
 * one winning: kind 2, one chunk of a large record's move: record index
 * (UINT64_MAX: no move in flight), src, dst, phys, chunk offset (5 x 8),
 * then the chunk's original bytes; kind 3, a batch of whole records moved
 * to one run at dst: dst, count, per record its index, src and phys (3 x
 * 8), then their original bytes, in order.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "journal.h"

#define J_MAGIC "ZRMAINT1"
#define J_HEAD 32u
#define J_MOVE_HEAD 40u
#define ZR__J_SLOT (J_HEAD + J_MOVE_HEAD + ZR__J_CHUNK)
#define J_FILE_MAX ((uint64_t)1 << 32)
#define NO_MOVE UINT64_MAX

enum { J_DELETE = 1, J_COMPACT = 2, J_BATCH = 3 };

static uint64_t fnv(uint64_t h, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

static uint64_t slot_sum(const uint8_t *slot, const uint8_t *payload,
			 size_t n)
{
	return fnv(fnv(0xcbf29ce484222325ull, slot, 24), payload, n);
}

static void slot_head(uint8_t *b, unsigned kind, size_t plen, uint64_t seq)
{
	memcpy(b, J_MAGIC, 8);
	zr__put32(b + 8, kind);
	zr__put32(b + 12, (uint32_t)plen);
	zr__put64(b + 16, seq);
	zr__put64(b + 24, slot_sum(b, b + J_HEAD, plen));
}

static int jpath(zr_store *s, char *buf, size_t cap)
{
	if ((size_t)snprintf(buf, cap, "%s/" ZR__MAINT_FILE, s->path) >= cap)
		return zr__fail(-ENAMETOOLONG, "%s: path too long", s->path);
	return 0;
}

static int sync_dir(zr_store *s)
{
	int fd = open(s->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), err = 0;

	if (fd < 0 || fsync(fd))
		err = zr__fail(-errno, "%s: fsync of the folder: %s", s->path,
			       strerror(errno));
	if (fd >= 0)
		close(fd);
	return err;
}

/* A new journal (flags O_CREAT | O_TRUNC), or the one being recovered
 * (0: its valid slot must survive until a newer one is durable). */
static int jopen(zr_store *s, int flags, int *fd)
{
	char path[4096];
	int err = jpath(s, path, sizeof(path));

	if (err)
		return err;
	*fd = open(path, O_RDWR | flags | O_CLOEXEC, 0644);
	if (*fd < 0)
		return zr__fail(-errno, "%s: %s", path, strerror(errno));
	return 0;
}

static int jflush(zr_store *s, int fd)
{
	if (fdatasync(fd))
		return zr__fail(-errno, "%s/" ZR__MAINT_FILE ": fdatasync: %s",
				s->path, strerror(errno));
	return 0;
}

int zr__journal_delete(zr_store *s, uint64_t len, uint64_t tail,
		       const uint64_t *pos, size_t n)
{
	const struct zr__map *m = zr__map_of(s, ZR__META);
	size_t plen = 16 + n * (8 + ZR__LOC);
	uint8_t *b;
	int fd = -1, err = 0;

	if (n > (UINT32_MAX - 16) / (8 + ZR__LOC))
		return zr__fail(-E2BIG, "%s: delete of %zu records at once",
				s->path, n);
	b = malloc(J_HEAD + plen);
	if (!b)
		return zr__fail(-ENOMEM, "%s: no memory", s->path);
	zr__put64(b + J_HEAD, len);
	zr__put64(b + J_HEAD + 8, tail);
	for (size_t i = 0; i < n; i++) {
		uint8_t *e = b + J_HEAD + 16 + i * (8 + ZR__LOC);

		zr__put64(e, pos[i]);
		memcpy(e + 8, m->base + zr__loc_pos(pos[i]), ZR__LOC);
	}
	slot_head(b, J_DELETE, plen, 0);
	err = jopen(s, O_CREAT | O_TRUNC, &fd);
	if (!err)
		err = zr__pwrite_all(fd, b, J_HEAD + plen, 0, s->path,
				     ZR__MAINT_FILE);
	if (!err)
		err = jflush(s, fd);
	if (fd >= 0)
		close(fd);
	free(b);
	/* The folder too: a journal that vanished would hide a torn table. */
	return err ? err : sync_dir(s);
}

/* Writes a compact slot: fields (flen bytes), then bytes (n), and makes
 * it durable before anything it guards is overwritten. */
static int slot_put(zr_store *s, struct zr__jmove *j, unsigned kind,
		    const uint8_t *fields, size_t flen, const uint8_t *bytes,
		    size_t n)
{
	uint8_t head[J_HEAD];
	uint64_t at = (j->seq & 1) * ZR__J_SLOT;
	int err = 0;

	if (j->fd < 0)
		err = jopen(s, O_CREAT | O_TRUNC, &j->fd);
	if (!err && j->seq == 0)
		err = sync_dir(s); /* the file must outlive a power cut */
	memcpy(head, J_MAGIC, 8);
	zr__put32(head + 8, kind);
	zr__put32(head + 12, (uint32_t)(flen + n));
	zr__put64(head + 16, j->seq);
	zr__put64(head + 24, fnv(slot_sum(head, fields, flen), bytes, n));
	if (!err)
		err = zr__pwrite_all(j->fd, head, J_HEAD, at, s->path,
				     ZR__MAINT_FILE);
	if (!err)
		err = zr__pwrite_all(j->fd, fields, flen, at + J_HEAD, s->path,
				     ZR__MAINT_FILE);
	if (!err && n)
		err = zr__pwrite_all(j->fd, bytes, n, at + J_HEAD + flen,
				     s->path, ZR__MAINT_FILE);
	j->seq++;
	return err ? err : jflush(s, j->fd);
}

/* The slot of a chunk of one record's move (idx NO_MOVE: none). */
static int slot_move(zr_store *s, struct zr__jmove *j, const uint64_t f[5],
		     const uint8_t *chunk, size_t n)
{
	uint8_t fields[J_MOVE_HEAD];

	for (int i = 0; i < 5; i++)
		zr__put64(fields + 8 * i, f[i]);
	return slot_put(s, j, J_COMPACT, fields, sizeof(fields), chunk, n);
}

int zr__journal_move(zr_store *s, struct zr__jmove *j, uint64_t idx,
		     uint64_t src, uint64_t dst, uint64_t phys, uint64_t done,
		     uint8_t *bounce)
{
	uint8_t off[8];
	int err = 0;

	/* Chunk c overwrites original bytes below c only: those of earlier
	 * chunks (already in place) and its own, which the slot holds. */
	for (; !err && done < phys; done += ZR__J_CHUNK) {
		size_t n = phys - done < ZR__J_CHUNK ? (size_t)(phys - done)
						     : ZR__J_CHUNK;
		uint64_t f[5] = { idx, src, dst, phys, done };

		err = zr__pread_all(s->fd[ZR__DATA], bounce, n, src + done,
				    s->path, "data.zr");
		if (!err)
			err = slot_move(s, j, f, bounce, n);
		if (!err)
			err = zr__pwrite_all(s->fd[ZR__DATA], bounce, n,
					     dst + done, s->path, "data.zr");
		if (!err)
			err = zr__flush(s, ZR__DATA);
	}
	zr__put64(off, dst);
	if (!err)
		err = zr__pwrite_all(s->fd[ZR__META], off, 8,
				     zr__loc_pos(idx), s->path, "meta.zr");
	if (!err)
		err = zr__flush(s, ZR__META);
	/* From here the original bytes may go: say no move is in flight. */
	return err ? err : zr__journal_idle(s, j);
}

int zr__journal_idle(zr_store *s, struct zr__jmove *j)
{
	return slot_move(s, j, (uint64_t[5]){ NO_MOVE, 0, 0, 0, 0 }, NULL,
			 0);
}

int zr__journal_batch_fits(size_t n, uint64_t bytes)
{
	return n <= ZR__J_CHUNK / 24 && bytes <= ZR__J_CHUNK &&
	       16 + 24 * n + bytes <= J_MOVE_HEAD + ZR__J_CHUNK;
}

/* The table entries of a batch, pointed at their run from dst. */
static int batch_table(zr_store *s, const uint8_t *recs, size_t n,
		       uint64_t dst)
{
	uint8_t off[8];
	int err = 0;

	for (size_t i = 0; !err && i < n; i++) {
		zr__put64(off, dst);
		err = zr__pwrite_all(s->fd[ZR__META], off, 8,
				     zr__loc_pos(zr__get64(recs + 24 * i)),
				     s->path, "meta.zr");
		dst += zr__get64(recs + 24 * i + 16);
	}
	return err ? err : zr__flush(s, ZR__META);
}

/* Writes a batch's bytes at dst, then its table entries: each durable
 * before the next step (at open, from the slot). */
static int batch_apply(zr_store *s, const uint8_t *fields, size_t n,
		       const uint8_t *bytes, uint64_t total)
{
	uint64_t dst = zr__get64(fields);
	int err = zr__pwrite_all(s->fd[ZR__DATA], bytes, (size_t)total, dst,
				 s->path, "data.zr");

	if (!err)
		err = zr__flush(s, ZR__DATA);
	return err ? err : batch_table(s, fields + 16, n, dst);
}

int zr__journal_batch(zr_store *s, struct zr__jmove *j,
		      const struct zr__jrec *r, size_t n, uint64_t dst,
		      uint8_t *bounce)
{
	uint8_t *fields = malloc(16 + 24 * n);
	uint64_t total = 0;
	int err = fields ? 0 : zr__fail(-ENOMEM, "%s: no memory", s->path);

	/* The originals first: the run at dst may overlap them. */
	for (size_t i = 0; !err && i < n; i++) {
		zr__put64(fields + 16 + 24 * i, r[i].idx);
		zr__put64(fields + 16 + 24 * i + 8, r[i].src);
		zr__put64(fields + 16 + 24 * i + 16, r[i].phys);
		err = zr__pread_all(s->fd[ZR__DATA], bounce + total,
				    (size_t)r[i].phys, r[i].src, s->path,
				    "data.zr");
		total += r[i].phys;
	}
	if (!err) {
		zr__put64(fields, dst);
		zr__put64(fields + 8, n);
		err = slot_put(s, j, J_BATCH, fields, 16 + 24 * n, bounce,
			       (size_t)total);
	}
	if (!err)
		err = batch_apply(s, fields, n, bounce, total);
	free(fields);
	return err;
}

int zr__journal_end(zr_store *s, struct zr__jmove *j)
{
	char path[4096];
	int err = jpath(s, path, sizeof(path));

	if (j && j->fd >= 0) {
		close(j->fd);
		j->fd = -1;
	}
	if (!err && unlink(path) && errno != ENOENT)
		err = zr__fail(-errno, "%s: remove: %s", path,
			       strerror(errno));
	return err ? err : sync_dir(s);
}

/* A slot read back: valid only if whole and its checksum holds. */
struct slot {
	unsigned kind;
	uint64_t seq;
	const uint8_t *payload;
	size_t len;
};

static int slot_parse(const uint8_t *b, uint64_t size, uint64_t at,
		      struct slot *out)
{
	uint32_t plen;

	if (size < at || size - at < J_HEAD || memcmp(b + at, J_MAGIC, 8))
		return 0;
	plen = zr__get32(b + at + 12);
	if (size - at - J_HEAD < plen ||
	    zr__get64(b + at + 24) != slot_sum(b + at, b + at + J_HEAD, plen))
		return 0;
	*out = (struct slot){ zr__get32(b + at + 8), zr__get64(b + at + 16),
			      b + at + J_HEAD, plen };
	return 1;
}

/* The newest valid slot of the file (0 if none). */
static int newest(const uint8_t *b, uint64_t size, struct slot *out)
{
	struct slot a, c;
	int ha = slot_parse(b, size, 0, &a);
	/* A delete's slot may run past ZR__J_SLOT: nothing else is there. */
	int hc = !(ha && a.kind == J_DELETE) &&
		 slot_parse(b, size, ZR__J_SLOT, &c);

	if (hc && (!ha || c.seq > a.seq))
		a = c;
	if (ha || hc)
		*out = a;
	return ha || hc;
}

static int bad_slot(zr_store *s, const char *why)
{
	return zr__fail(ZR_E_CORRUPT, "%s/" ZR__MAINT_FILE ": %s", s->path,
			why);
}

/* Puts back the table entries and the header a delete overwrote. */
static int undo_delete(zr_store *s, const struct slot *sl, uint64_t *len,
		       uint64_t *tail)
{
	uint64_t n, l, t;
	int err = 0;

	if (sl->len < 16 || (sl->len - 16) % (8 + ZR__LOC))
		return bad_slot(s, "delete slot of a bad size");
	l = zr__get64(sl->payload);
	t = zr__get64(sl->payload + 8);
	n = (sl->len - 16) / (8 + ZR__LOC);
	if (l > (INT64_MAX - ZR__PAGE) / ZR__LOC || t > INT64_MAX)
		return bad_slot(s, "impossible length or tail_offset");
	for (uint64_t i = 0; !err && i < n; i++) {
		const uint8_t *e = sl->payload + 16 + i * (8 + ZR__LOC);

		if (zr__get64(e) >= l)
			return bad_slot(s, "entry past the old length");
		err = zr__pwrite_all(s->fd[ZR__META], e + 8, ZR__LOC,
				     zr__loc_pos(zr__get64(e)), s->path,
				     "meta.zr");
	}
	if (!err)
		err = zr__flush(s, ZR__META);
	if (!err)
		err = zr__header_write(s, l, t);
	if (!err)
		err = zr__flush(s, ZR__META);
	*len = l;
	*tail = t;
	return err;
}

/* Finishes the overlapping move a compact was making. */
static int redo_move(zr_store *s, const struct slot *sl, uint64_t len,
		     uint64_t tail)
{
	struct zr__jmove j = { -1, sl->seq + 1 };
	uint64_t f[5], n = sl->len - J_MOVE_HEAD;
	uint8_t cur[ZR__LOC], *bounce;
	int err;

	for (int i = 0; i < 5 && sl->len >= J_MOVE_HEAD; i++)
		f[i] = zr__get64(sl->payload + 8 * i);
	if (sl->len < J_MOVE_HEAD || f[0] == NO_MOVE)
		return sl->len < J_MOVE_HEAD ? bad_slot(s, "short move slot")
					     : 0;
	if (f[0] >= len || f[2] >= f[1] || f[1] > tail || tail - f[1] < f[3] ||
	    f[4] >= f[3] || n > f[3] - f[4] || n > ZR__J_CHUNK || !n)
		return bad_slot(s, "move slot out of the store's bounds");
	err = zr__pread_all(s->fd[ZR__META], cur, ZR__LOC, zr__loc_pos(f[0]),
			    s->path, "meta.zr");
	if (!err && ((zr__get64(cur) != f[1] && zr__get64(cur) != f[2]) ||
		     zr__get32(cur + 8) != f[3]))
		return bad_slot(s, "move slot does not match the table");
	bounce = err ? NULL : malloc(ZR__J_CHUNK);
	if (!err && !bounce)
		err = zr__fail(-ENOMEM, "%s: no memory", s->path);
	if (!err)
		err = jopen(s, 0, &j.fd);
	/* The chunk in flight from the slot, the rest from its source. */
	if (!err)
		err = zr__pwrite_all(s->fd[ZR__DATA], sl->payload + J_MOVE_HEAD,
				     (size_t)n, f[2] + f[4], s->path,
				     "data.zr");
	if (!err)
		err = zr__flush(s, ZR__DATA);
	if (!err)
		err = zr__journal_move(s, &j, f[0], f[1], f[2], f[3],
				       f[4] + n, bounce);
	if (j.fd >= 0)
		close(j.fd);
	free(bounce);
	return err;
}

/* Redoes a batch from its slot, after checking every field. */
static int redo_batch(zr_store *s, const struct slot *sl, uint64_t len,
		      uint64_t tail)
{
	uint64_t n, dst, at, total = 0;
	uint8_t cur[ZR__LOC];
	int err = 0;

	if (sl->len < 16)
		return bad_slot(s, "short batch slot");
	dst = zr__get64(sl->payload);
	n = zr__get64(sl->payload + 8);
	if (n > (sl->len - 16) / 24 || dst > tail)
		return bad_slot(s, "batch slot of a bad size");
	for (uint64_t i = 0; !err && i < n; i++) {
		const uint8_t *e = sl->payload + 16 + 24 * i;
		uint64_t idx = zr__get64(e), src = zr__get64(e + 8);
		uint64_t phys = zr__get64(e + 16);

		at = dst + total;
		if (idx >= len || phys > sl->len || src > tail ||
		    tail - src < phys || at > src)
			return bad_slot(s, "batch record out of bounds");
		err = zr__pread_all(s->fd[ZR__META], cur, ZR__LOC,
				    zr__loc_pos(idx), s->path, "meta.zr");
		if (!err && ((zr__get64(cur) != src && zr__get64(cur) != at) ||
			     zr__get32(cur + 8) != phys))
			return bad_slot(s, "batch slot does not match the "
					"table");
		total += phys;
	}
	if (!err && total != sl->len - 16 - 24 * n)
		return bad_slot(s, "batch bytes do not add up");
	return err ? err : batch_apply(s, sl->payload, (size_t)n,
				       sl->payload + 16 + 24 * n, total);
}

static int read_journal(zr_store *s, int fd, uint8_t **b, uint64_t *size)
{
	struct stat st;

	if (fstat(fd, &st))
		return zr__fail(-errno, "%s/" ZR__MAINT_FILE ": %s", s->path,
				strerror(errno));
	*size = (uint64_t)st.st_size;
	if (*size > J_FILE_MAX)
		return bad_slot(s, "too large to be a journal");
	*b = malloc(*size ? (size_t)*size : 1);
	if (!*b)
		return zr__fail(-ENOMEM, "%s: no memory", s->path);
	return zr__pread_all(fd, *b, (size_t)*size, 0, s->path,
			     ZR__MAINT_FILE);
}

static int idle(const struct slot *sl)
{
	return sl->kind == J_COMPACT && sl->len >= J_MOVE_HEAD &&
	       zr__get64(sl->payload) == NO_MOVE;
}

static int apply(zr_store *s, const struct slot *sl, uint64_t *len,
		 uint64_t *tail)
{
	if (sl->kind == J_DELETE && sl->seq == 0)
		return undo_delete(s, sl, len, tail);
	if (sl->kind == J_COMPACT)
		return redo_move(s, sl, *len, *tail);
	if (sl->kind == J_BATCH)
		return redo_batch(s, sl, *len, *tail);
	return bad_slot(s, "unknown kind of slot");
}

int zr__journal_recover(zr_store *s, uint64_t *len, uint64_t *tail)
{
	char path[4096];
	uint8_t *b = NULL;
	uint64_t size = 0;
	struct slot sl;
	int fd, err = jpath(s, path, sizeof(path));

	if (err)
		return err;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : zr__fail(-errno, "%s: %s", path,
						      strerror(errno));
	err = read_journal(s, fd, &b, &size);
	close(fd);
	/* No valid slot, or no move in flight: the store is whole. */
	if (!err && (!newest(b, size, &sl) || idle(&sl))) {
		free(b);
		return s->readonly ? 0 : zr__journal_end(s, NULL);
	}
	if (!err && s->readonly)
		err = zr__fail(-EROFS, "%s: an interrupted delete or compact "
			       "must be recovered (" ZR__MAINT_FILE "): open "
			       "the store read-write once", s->path);
	if (!err)
		err = apply(s, &sl, len, tail);
	free(b);
	return err ? err : zr__journal_end(s, NULL);
}
