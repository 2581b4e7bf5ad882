/*
 * journal.c - writing STORE/maintenance.zr (layout in journal_fmt.h): a
 * delete's undo slot, a compact's batch, chunk and idle slots, each made
 * durable before what it guards is overwritten; and its removal.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "error.h"
#include "journal_fmt.h"
#include "store_io.h"

static void slot_head(uint8_t *b, unsigned kind, size_t plen, uint64_t seq)
{
	memcpy(b, J_MAGIC, 8);
	zr__put32(b + 8, kind);
	zr__put32(b + 12, (uint32_t)plen);
	zr__put64(b + 16, seq);
	zr__put64(b + 24, zr__slot_sum(b, b + J_HEAD, plen));
}

int zr__jpath(zr_store *s, char *buf, size_t cap)
{
	if ((size_t)snprintf(buf, cap, "%s/" ZR__MAINT_FILE, s->path) >= cap)
		return zr__fail(-ENAMETOOLONG, "%s: path too long", s->path);
	return 0;
}

static int sync_dir(zr_store *s)
{
	int err = ZR__VFS_DO(s->vfs, sync_dir, s->path);

	if (err)
		return zr__fail(err, "%s: fsync of the folder: %s", s->path,
				strerror(-err));
	return 0;
}

int zr__jopen(zr_store *s, unsigned flags, struct zr__file **f)
{
	char path[4096];
	int err = zr__jpath(s, path, sizeof(path));

	if (err)
		return err;
	err = s->vfs->open(s->vfs, path, ZR__VFS_WRITE | flags, 0644, f);
	if (err)
		return zr__fail(err, "%s: %s", path, strerror(-err));
	return 0;
}

static int jflush(zr_store *s, struct zr__file *f)
{
	int err = zr__io_sync(f, ZR__SYNC_DATA);

	if (err)
		return zr__fail(err, "%s/" ZR__MAINT_FILE ": fdatasync: %s",
				s->path, strerror(-err));
	return 0;
}

int zr__journal_delete(zr_store *s, uint64_t len, uint64_t tail,
		       const uint64_t *pos, size_t n)
{
	const struct zr__map *m = zr__map_of(s, ZR__META);
	size_t plen = 16 + n * (8 + ZR__LOC);
	struct zr__file *f = NULL;
	uint8_t *b;
	int err = 0;

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
	err = zr__jopen(s, ZR__VFS_CREATE | ZR__VFS_TRUNC, &f);
	if (!err)
		err = zr__io_write_all(f, b, J_HEAD + plen, 0, s->path,
				       ZR__MAINT_FILE);
	if (!err)
		err = jflush(s, f);
	zr__io_close(f);
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

	if (!j->f)
		err = zr__jopen(s, ZR__VFS_CREATE | ZR__VFS_TRUNC, &j->f);
	if (!err && j->seq == 0)
		err = sync_dir(s); /* the file must outlive a power cut */
	memcpy(head, J_MAGIC, 8);
	zr__put32(head + 8, kind);
	zr__put32(head + 12, (uint32_t)(flen + n));
	zr__put64(head + 16, j->seq);
	zr__put64(head + 24,
		  zr__fnv(zr__slot_sum(head, fields, flen), bytes, n));
	if (!err)
		err = zr__io_write_all(j->f, head, J_HEAD, at, s->path,
				       ZR__MAINT_FILE);
	if (!err)
		err = zr__io_write_all(j->f, fields, flen, at + J_HEAD,
				       s->path, ZR__MAINT_FILE);
	if (!err && n)
		err = zr__io_write_all(j->f, bytes, n, at + J_HEAD + flen,
				       s->path, ZR__MAINT_FILE);
	j->seq++;
	return err ? err : jflush(s, j->f);
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

		err = zr__pread_all(s, ZR__DATA, bounce, n, src + done);
		if (!err)
			err = slot_move(s, j, f, bounce, n);
		if (!err)
			err = zr__pwrite_all(s, ZR__DATA, bounce, n,
					     dst + done);
		if (!err)
			err = zr__flush(s, ZR__DATA);
	}
	zr__put64(off, dst);
	if (!err)
		err = zr__pwrite_all(s, ZR__META, off, 8, zr__loc_pos(idx));
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
		err = zr__pwrite_all(s, ZR__META, off, 8,
				     zr__loc_pos(zr__get64(recs + 24 * i)));
		dst += zr__get64(recs + 24 * i + 16);
	}
	return err ? err : zr__flush(s, ZR__META);
}

int zr__jbatch_apply(zr_store *s, const uint8_t *fields, size_t n,
		       const uint8_t *bytes, uint64_t total)
{
	uint64_t dst = zr__get64(fields);
	int err = zr__pwrite_all(s, ZR__DATA, bytes, (size_t)total, dst);

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
		err = zr__pread_all(s, ZR__DATA, bounce + total,
				    (size_t)r[i].phys, r[i].src);
		total += r[i].phys;
	}
	if (!err) {
		zr__put64(fields, dst);
		zr__put64(fields + 8, n);
		err = slot_put(s, j, J_BATCH, fields, 16 + 24 * n, bounce,
			       (size_t)total);
	}
	if (!err)
		err = zr__jbatch_apply(s, fields, n, bounce, total);
	free(fields);
	return err;
}

int zr__journal_end(zr_store *s, struct zr__jmove *j)
{
	char path[4096];
	int err = zr__jpath(s, path, sizeof(path));

	if (j && j->f) {
		zr__io_close(j->f);
		j->f = NULL;
	}
	if (!err) {
		err = ZR__VFS_DO(s->vfs, remove, path);
		if (err == -ENOENT)
			err = 0;
		else if (err)
			err = zr__fail(err, "%s: remove: %s", path,
				       strerror(-err));
	}
	return err ? err : sync_dir(s);
}

