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
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "error.h"
#include "store.h"

static const char *const names[2] = { "meta.zr", "data.zr" };

/* f_type values of filesystems that may cache a file on each client. */
static int client_cached(unsigned long type)
{
	switch (type) {
	case 0x65735546UL: /* FUSE: GlusterFS, sshfs, ... */
	case 0x6969UL:     /* NFS */
	case 0xff534d42UL: /* CIFS */
	case 0xfe534d42UL: /* SMB2 */
	case 0x00c36400UL: /* Ceph */
		return 1;
	}
	return 0;
}

void zr__guard_init(zr_store *s)
{
	struct statfs sf;

	s->cached = fstatfs(s->fd[ZR__META], &sf) == 0 &&
		    client_cached((unsigned long)sf.f_type);
}

/* An allocation of a byte the file already has changes nothing, yet the
 * request reaches the server and each client cache drops what it held of
 * the file (GlusterFS: contents and size).  A read-only descriptor cannot
 * allocate: a reader may see an older header, whose table and records are
 * all there, and zr__file_size keeps its size check honest. */
int zr__refresh(zr_store *s, int file)
{
	if (!s->cached || s->readonly ||
	    fallocate(s->fd[file], FALLOC_FL_KEEP_SIZE, 0, 1) == 0 ||
	    errno == EOPNOTSUPP || errno == ENOSYS)
		return 0;
	return zr__fail(-errno, "%s/%s: fallocate: %s", s->path, names[file],
			strerror(errno));
}

/* A forced statx asks the server, past the kernel's and the client's
 * cached attributes: a header newer than the cached size is not taken for
 * a truncated file. */
int zr__file_size(zr_store *s, int file, uint64_t *out)
{
	struct statx stx;

	if (statx(s->fd[file], "", AT_EMPTY_PATH |
		  (s->cached ? AT_STATX_FORCE_SYNC : AT_STATX_SYNC_AS_STAT),
		  STATX_SIZE, &stx))
		return zr__fail(-errno, "%s/%s: %s", s->path, names[file],
				strerror(errno));
	*out = stx.stx_size;
	return 0;
}

/* O_DIRECT wants an aligned buffer: read the whole first page. */
static int read_direct(zr_store *s, int fd, uint8_t b[16])
{
	uint8_t *page = aligned_alloc(ZR__PAGE, ZR__PAGE);
	int err = page ? zr__pread_all(fd, page, ZR__PAGE, 0, s->path,
				       "meta.zr")
		       : zr__fail(-ENOMEM, "%s: no memory", s->path);

	if (!err)
		memcpy(b, page, 16);
	free(page);
	return err;
}

/* On a filesystem with client caches the page is read through its own
 * O_DIRECT descriptor: the handle's descriptor may be served from the
 * kernel's page cache, which a FUSE filesystem such as sshfs never
 * invalidates while the file is open. */
int zr__header_read(zr_store *s, uint64_t *len, uint64_t *tail)
{
	char p[4096];
	uint8_t b[16];
	int fd = -1, err;

	if (s->cached &&
	    (size_t)snprintf(p, sizeof(p), "%s/meta.zr", s->path) < sizeof(p))
		fd = open(p, O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (fd < 0) { /* no O_DIRECT there: the handle's descriptor */
		err = zr__pread_all(s->fd[ZR__META], b, 16, 0, s->path,
				    "meta.zr");
	} else {
		err = read_direct(s, fd, b);
		close(fd);
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
