/*
 * store_guard.c - a writer never trusts a stale view of its store.  Network
 * and FUSE filesystems cache file contents and sizes on each client
 * (GlusterFS's quick-read and md-cache keep them for a second by default),
 * so a handle that has just taken the lock can still be served the store
 * as it was before the previous lock holder's append, and would write its
 * records over that holder's.  So on those filesystems each file is
 * refreshed before it is read at open; and on any filesystem, before a
 * header is published and before an append session, delete or compact
 * starts, the header on disk must still be the one this handle last read
 * or wrote, and data.zr no longer than this handle made it -- else
 * ZR_E_CHANGED, nothing written (the guard for filesystems whose flock
 * does not reach other hosts).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "error.h"
#include "store_io.h"

void zr__guard_init(zr_store *s)
{
	s->cached = (s->file[ZR__META]->traits & ZR__FILE_CACHED) != 0;
}

/* The backend drops each client cache's copy of the file (vfs.h).  A
 * read-only handle does not: a reader may see an older header, whose
 * table and records are all there, and zr__file_size keeps its size check
 * honest. */
int zr__refresh(zr_store *s, int file)
{
	struct zr__file *f = s->file[file];
	int err;

	if (!s->cached || s->readonly || !f->io->refresh)
		return 0;
	err = f->io->refresh(f);
	if (!err)
		return 0;
	return zr__fail(err, "%s/%s: fallocate: %s", s->path,
			zr__file_name(file), strerror(-err));
}

/* Asked fresh on a filesystem with client caches: a header newer than the
 * cached size is not taken for a truncated file. */
int zr__file_size(zr_store *s, int file, uint64_t *out)
{
	struct zr__file *f = s->file[file];
	int err = f->io->size(f, s->cached, out);

	if (err)
		return zr__fail(err, "%s/%s: %s", s->path,
				zr__file_name(file), strerror(-err));
	return 0;
}

/* O_DIRECT wants an aligned buffer: read the whole first page. */
static int read_direct(zr_store *s, struct zr__file *f, uint8_t b[16])
{
	uint8_t *page = aligned_alloc(ZR__PAGE, ZR__PAGE);
	int err = page ? zr__io_read_all(f, page, ZR__PAGE, 0, s->path,
					 "meta.zr")
		       : zr__fail(-ENOMEM, "%s: no memory", s->path);

	if (!err)
		memcpy(b, page, 16);
	free(page);
	return err;
}

/* On a filesystem with client caches the page is read through its own
 * direct (O_DIRECT) open: the handle's file may be served from the
 * kernel's page cache, which a FUSE filesystem such as sshfs never
 * invalidates while the file is open. */
int zr__header_read(zr_store *s, uint64_t *len, uint64_t *tail)
{
	struct zr__file *f = NULL;
	uint8_t b[16];
	int err;

	if (s->cached)
		zr__open_file(s, "meta.zr", ZR__VFS_DIRECT, 0, &f);
	if (!f) { /* no direct reads there: the handle's file */
		err = zr__pread_all(s, ZR__META, b, 16, 0);
	} else {
		err = read_direct(s, f, b);
		zr__io_close(f);
	}
	if (!err) {
		*len = zr__get64(b);
		*tail = zr__get64(b + 8);
	}
	return err;
}

static int changed(zr_store *s, const char *what, const char *why)
{
	return zr__fail(ZR_E_CHANGED, "%s: %s refused: store changed by "
			"another writer (%s): its lock does not reach the "
			"other host, or it was modified behind this handle",
			s->path, what, why);
}

int zr__guard_check(zr_store *s, const char *what)
{
	uint64_t size, len, tail;
	int err = zr__refresh(s, ZR__META);

	if (!err)
		err = zr__refresh(s, ZR__DATA);
	if (!err)
		err = zr__header_read(s, &len, &tail);
	if (!err)
		err = zr__file_size(s, ZR__DATA, &size);
	if (err)
		return err;
	if (len != s->disk_len || tail != s->disk_tail)
		return changed(s, what, "its header moved");
	if (size > s->data_seen)
		return changed(s, what, "data.zr grew");
	return 0;
}

void zr__guard_wrote(zr_store *s, uint64_t len, uint64_t tail)
{
	s->disk_len = len;
	s->disk_tail = tail;
	if (s->data_seen < tail)
		s->data_seen = tail;
}
