/*
 * journal_recover.c - reading STORE/maintenance.zr back without trusting
 * a byte (journal_fmt.h), and recovery at open: a delete rolled back, a
 * compact's batch or chunk in flight redone.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "error.h"
#include "journal_fmt.h"
#include "store_io.h"

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
	    zr__get64(b + at + 24) !=
		    zr__slot_sum(b + at, b + at + J_HEAD, plen))
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
		err = zr__pwrite_all(s, ZR__META, e + 8, ZR__LOC,
				     zr__loc_pos(zr__get64(e)));
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
	struct zr__jmove j = { NULL, sl->seq + 1 };
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
	err = zr__pread_all(s, ZR__META, cur, ZR__LOC, zr__loc_pos(f[0]));
	if (!err && ((zr__get64(cur) != f[1] && zr__get64(cur) != f[2]) ||
		     zr__get32(cur + 8) != f[3]))
		return bad_slot(s, "move slot does not match the table");
	bounce = err ? NULL : malloc(ZR__J_CHUNK);
	if (!err && !bounce)
		err = zr__fail(-ENOMEM, "%s: no memory", s->path);
	if (!err)
		err = zr__jopen(s, 0, &j.f);
	/* The chunk in flight from the slot, the rest from its source. */
	if (!err)
		err = zr__pwrite_all(s, ZR__DATA, sl->payload + J_MOVE_HEAD,
				     (size_t)n, f[2] + f[4]);
	if (!err)
		err = zr__flush(s, ZR__DATA);
	if (!err)
		err = zr__journal_move(s, &j, f[0], f[1], f[2], f[3],
				       f[4] + n, bounce);
	zr__io_close(j.f);
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
		err = zr__pread_all(s, ZR__META, cur, ZR__LOC,
				    zr__loc_pos(idx));
		if (!err && ((zr__get64(cur) != src && zr__get64(cur) != at) ||
			     zr__get32(cur + 8) != phys))
			return bad_slot(s, "batch slot does not match the "
					"table");
		total += phys;
	}
	if (!err && total != sl->len - 16 - 24 * n)
		return bad_slot(s, "batch bytes do not add up");
	return err ? err : zr__jbatch_apply(s, sl->payload, (size_t)n,
				       sl->payload + 16 + 24 * n, total);
}

static int read_journal(zr_store *s, struct zr__file *f, uint8_t **b,
			uint64_t *size)
{
	int err = f->io->size(f, 0, size);

	if (err)
		return zr__fail(err, "%s/" ZR__MAINT_FILE ": %s", s->path,
				strerror(-err));
	if (*size > J_FILE_MAX)
		return bad_slot(s, "too large to be a journal");
	*b = malloc(*size ? (size_t)*size : 1);
	if (!*b)
		return zr__fail(-ENOMEM, "%s: no memory", s->path);
	return zr__io_read_all(f, *b, (size_t)*size, 0, s->path,
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
	struct zr__file *f;
	int have, err = zr__jpath(s, path, sizeof(path));

	if (err)
		return err;
	err = s->vfs->open(s->vfs, path, 0, 0, &f);
	if (err)
		return err == -ENOENT ? 0 : zr__fail(err, "%s: %s", path,
						     strerror(-err));
	err = read_journal(s, f, &b, &size);
	zr__io_close(f);
	/* No valid slot, or no move in flight: the store is whole, but a
	 * compact that stopped between two moves is still worth telling of
	 * (and its journal removing). */
	if (!err && (!(have = newest(b, size, &sl)) || idle(&sl))) {
		free(b);
		if (s->readonly)
			return have ? ZR__NEED_WRITER : 0;
		if (have)
			s->recovered = ZR__RECOVERED_COMPACT;
		return zr__journal_end(s, NULL);
	}
	if (!err && s->readonly) {
		free(b);
		return ZR__NEED_WRITER;
	}
	if (!err)
		s->recovered = sl.kind == J_DELETE ? ZR__RECOVERED_DELETE
						   : ZR__RECOVERED_COMPACT;
	/* Followers may have opened since this writer: they must go. */
	if (!err)
		err = zr__lock_exclusive(s, "recovery");
	if (!err)
		err = apply(s, &sl, len, tail);
	free(b);
	return err ? err : zr__journal_end(s, NULL);
}
