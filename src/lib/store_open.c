/*
 * store_open.c - a store's lifetime: open (through the backend its path
 * selects, with every check a file from the medium needs before it is
 * trusted, and the recovery of an interrupted delete or compact), close,
 * and the read-only accessors.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "error.h"
#include "journal.h"
#include "store_view.h"

/* Larger than any tier's dictionary; bounds what open will load. */
#define ZR__DICT_FILE_MAX ((size_t)128 << 20)

static void store_free(zr_store *s)
{
	if (s->locks_ok)
		zr__map_free_all(s);
	for (int i = 0; i < 2; i++)
		zr__io_close(s->file[i]); /* also drops the locks */
	if (s->locks_ok) {
		zr__views_free(s);
		pthread_mutex_destroy(&s->map_lock);
		pthread_mutex_destroy(&s->view_lock);
		pthread_mutex_destroy(&s->live_lock);
		pthread_mutex_destroy(&s->sync_lock);
		pthread_rwlock_destroy(&s->rw);
	}
	ZSTD_freeDDict(s->ddict);
	ZSTD_freeCDict(s->cdict);
	free(s->dict);
	free(s->recovered_msg);
	free(s->path);
	free(s);
}

/* Writers first, so that a steady stream of gathers cannot starve a
 * delete or compact.  Safe because no reader ever takes it twice. */
static void rwlock_init(pthread_rwlock_t *rw)
{
	pthread_rwlockattr_t attr;

	pthread_rwlockattr_init(&attr);
	pthread_rwlockattr_setkind_np(
		&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(rw, &attr);
	pthread_rwlockattr_destroy(&attr);
}

static int store_alloc(const char *path, const struct zr__vfs *vfs,
		       unsigned flags, zr_store **out)
{
	zr_store *s = calloc(1, sizeof(*s));

	if (!s || !(s->path = strdup(path))) {
		free(s);
		return zr__fail(-ENOMEM, "%s: no memory", path);
	}
	s->vfs = vfs;
	s->readonly = (flags & ZR_OPEN_RDONLY) != 0;
	s->follow = (flags & ZR_OPEN_FOLLOW) != 0;
	pthread_mutex_init(&s->map_lock, NULL);
	pthread_mutex_init(&s->view_lock, NULL);
	pthread_mutex_init(&s->live_lock, NULL);
	pthread_mutex_init(&s->sync_lock, NULL);
	rwlock_init(&s->rw);
	s->locks_ok = 1;
	*out = s;
	return 0;
}

/* Both files, then the role's locks (store_lock.c), and only then is
 * anything read: the previous holder's writes are done. */
static int open_files(zr_store *s)
{
	unsigned mode = s->readonly ? 0 : ZR__VFS_WRITE;
	int err = zr__open_file(s, "meta.zr", mode, 0, &s->file[ZR__META]);

	if (err == -ENOENT || err == -ENOTDIR)
		return zr__fail(ZR_E_NOSTORE, "%s: no store (no meta.zr)",
				s->path);
	if (err)
		return zr__fail(err, "%s/meta.zr: %s", s->path,
				strerror(-err));
	err = zr__open_file(s, "data.zr", mode, 0, &s->file[ZR__DATA]);
	if (err)
		return zr__fail(err == -ENOENT ? ZR_E_CORRUPT : err,
				"%s/data.zr: %s", s->path, strerror(-err));
	err = zr__lock_open(s);
	if (err)
		return err;
	zr__guard_init(s);
	zr__scope_init(s);
	return zr__refresh(s, ZR__META);
}

static int check_header(zr_store *s, const uint8_t *page, uint64_t *len,
			uint64_t *tail)
{
	uint32_t slen = zr__get32(page + 16);

	*len = zr__get64(page);
	*tail = zr__get64(page + 8);
	if (slen < 1 || slen > ZR_SCHEMA_MAX)
		return zr__fail(ZR_E_CORRUPT, "%s/meta.zr: schema_length %"
				PRIu32 " not in 1..%d", s->path, slen,
				ZR_SCHEMA_MAX);
	for (int i = 20; i < 31; i++)
		if (page[i])
			return zr__fail(ZR_E_CORRUPT, "%s/meta.zr: reserved "
					"byte %d is 0x%02x", s->path, i,
					page[i]);
	if (page[31] > ZR_CODEC_ZSTD_DICT)
		return zr__fail(ZR_E_CORRUPT, "%s/meta.zr: unknown codec %u",
				s->path, page[31]);
	if (*len > (INT64_MAX - ZR__PAGE) / ZR__LOC || *tail > INT64_MAX)
		return zr__fail(ZR_E_CORRUPT, "%s/meta.zr: length %" PRIu64
				" or tail_offset %" PRIu64 " impossible",
				s->path, *len, *tail);
	s->codec = (zr_codec)page[31];
	return 0;
}

static int load_schema(zr_store *s, const uint8_t *page)
{
	int err = zr_schema_decode(page + ZR__HEADER, zr__get32(page + 16),
				   &s->schema);
	char why[ZR__MSG_MAX];

	if (!err && !s->schema.ragged)
		err = zr_schema_row_bytes(&s->schema, &s->row_bytes);
	if (!err)
		return 0;
	snprintf(why, sizeof(why), "%s", zr_errmsg());
	return zr__fail(ZR_E_SCHEMA, "%s/meta.zr: bad schema: %s", s->path,
			why);
}

static int read_page(zr_store *s, uint64_t *len, uint64_t *tail)
{
	uint8_t page[ZR__PAGE];
	uint64_t size;
	int err = zr__file_size(s, ZR__META, &size);

	if (err)
		return err;
	if (size < ZR__PAGE)
		return zr__fail(ZR_E_CORRUPT, "%s/meta.zr: %" PRIu64
				" bytes, shorter than its %u-byte page",
				s->path, size, ZR__PAGE);
	err = zr__pread_all(s, ZR__META, page, ZR__PAGE, 0);
	if (!err)
		err = check_header(s, page, len, tail);
	if (!err)
		err = load_schema(s, page);
	if (err)
		return err;
	if (size < zr__loc_pos(*len))
		return zr__fail(ZR_E_CORRUPT, "%s/meta.zr: %" PRIu64
				" bytes cannot hold %" PRIu64 " records",
				s->path, size, *len);
	return 0;
}

static int check_data(zr_store *s, uint64_t tail)
{
	uint64_t size;
	int err = zr__refresh(s, ZR__DATA);

	if (!err)
		err = zr__file_size(s, ZR__DATA, &size);
	if (err)
		return err;
	atomic_init(&s->data_seen, size);
	if (size < tail)
		return zr__fail(ZR_E_CORRUPT, "%s/data.zr: %" PRIu64
				" bytes, shorter than tail_offset %" PRIu64,
				s->path, size, tail);
	return 0;
}

static int read_dict(zr_store *s, struct zr__file *f)
{
	uint64_t size = 0;
	int err = f->io->size(f, 0, &size);

	if (err)
		return zr__fail(err, "%s/dict.zr: %s", s->path,
				strerror(-err));
	if (size == 0 || size > ZR__DICT_FILE_MAX)
		return zr__fail(ZR_E_CORRUPT, "%s/dict.zr: %" PRIu64
				" bytes is not a dictionary", s->path, size);
	s->dict = malloc((size_t)size);
	if (!s->dict)
		return zr__fail(-ENOMEM, "%s/dict.zr: no memory", s->path);
	s->dict_len = (size_t)size;
	err = zr__io_read_all(f, s->dict, s->dict_len, 0, s->path,
			      "dict.zr");
	if (err)
		return err;
	s->ddict = ZSTD_createDDict(s->dict, s->dict_len);
	if (!s->ddict)
		return zr__fail(ZR_E_CORRUPT, "%s/dict.zr: not loadable",
				s->path);
	return 0;
}

static int load_dict(zr_store *s)
{
	struct zr__file *f = NULL;
	int err = zr__open_file(s, "dict.zr", 0, 0, &f);

	if (err == -ENOENT) {
		if (s->codec != ZR_CODEC_ZSTD_DICT)
			return 0;
		return zr__fail(ZR_E_CORRUPT, "%s: zstd_dict store without "
				"dict.zr", s->path);
	}
	if (err)
		return zr__fail(err, "%s/dict.zr: %s", s->path,
				strerror(-err));
	if (s->codec != ZR_CODEC_ZSTD_DICT)
		err = zr__fail(ZR_E_CORRUPT, "%s: %s store has an unexpected "
			       "dict.zr", s->path, zr_codec_name(s->codec));
	else
		err = read_dict(s, f);
	zr__io_close(f);
	return err;
}

/* An interrupted delete or compact left its journal: finish it, then
 * check the files again as the header now describes them. */
static int recover(zr_store *s, uint64_t *len, uint64_t *tail)
{
	uint64_t l = *len, t = *tail;
	int err = zr__journal_recover(s, &l, &t);

	if (err || (l == *len && t == *tail))
		return err;
	err = read_page(s, len, tail);
	if (!err && *tail != t)
		err = zr__fail(ZR_E_CORRUPT, "%s/meta.zr: header not as "
			       "recovered", s->path);
	return err ? err : check_data(s, *tail);
}

/* A recovered compact redid the move in flight, not the rest: what it
 * left to reclaim is the user's to decide (a compact is long, an open
 * should not be). */
static void recovery_note(zr_store *s)
{
	zr_stats st = { 0 };
	int n;

	if (s->recovered == ZR__RECOVERED_DELETE)
		n = asprintf(&s->recovered_msg, "%s: rolled back an "
			     "interrupted delete (" ZR__MAINT_FILE "): its "
			     "records are all still there; run the delete "
			     "again", s->path);
	else if (zr_store_stats(s, &st) == 0 && st.reclaimable)
		n = asprintf(&s->recovered_msg, "%s: recovered an "
			     "interrupted compact (" ZR__MAINT_FILE "); %"
			     PRIu64 " bytes are still reclaimable: run "
			     "`zrecord compact %s` again", s->path,
			     st.reclaimable, s->path);
	else
		n = asprintf(&s->recovered_msg, "%s: recovered an "
			     "interrupted compact (" ZR__MAINT_FILE "); "
			     "nothing is left to reclaim", s->path);
	if (n < 0)
		s->recovered_msg = NULL;
	zr__clear();
}

const char *zr_store_recovered(const zr_store *s)
{
	return s ? s->recovered_msg : NULL;
}

/* One open as asked; ZR__NEED_WRITER if a read-only one found a journal
 * to recover. */
static int open_as(const char *path, const struct zr__vfs *vfs,
		   unsigned flags, zr_store **out)
{
	zr_store *s = NULL;
	uint64_t len, tail;
	int err;

	err = store_alloc(path, vfs, flags, &s);
	if (err)
		return err;
	err = open_files(s);
	if (!err)
		err = read_page(s, &len, &tail);
	if (!err)
		err = check_data(s, tail);
	/* Before the sizes are trusted: recovery may change the header. */
	if (!err)
		err = recover(s, &len, &tail);
	if (!err)
		err = load_dict(s);
	if (!err)
		err = zr__content_load(s);
	if (!err)
		err = zr__map_ensure(s, ZR__META, zr__loc_pos(len));
	if (!err)
		err = zr__map_ensure(s, ZR__DATA, tail);
	/* Recovery is done: let followers in. */
	zr__lock_share(s);
	if (!err)
		err = zr__lock_held(s, "open");
	if (err) {
		store_free(s);
		return err;
	}
	atomic_init(&s->tail, tail);
	atomic_init(&s->length, len);
	zr__guard_wrote(s, len, tail);
	if (s->recovered)
		recovery_note(s);
	*out = s;
	return 0;
}

/* SQLite's hot-journal rule: a reader that finds an interrupted delete
 * or compact recovers it, through a read-write handle of its own, when it
 * may write the store's files.  Where it may not, the error says which
 * command will. */
static int recover_for_reader(const char *path, const struct zr__vfs *vfs,
			      char **note)
{
	char why[ZR__MSG_MAX];
	zr_store *w = NULL;
	int err = open_as(path, vfs, 0, &w);

	if (!err) {
		*note = w->recovered_msg;
		w->recovered_msg = NULL;
		return zr_store_close(w);
	}
	snprintf(why, sizeof(why), "%s", zr_errmsg());
	if (err == -EROFS)
		return zr__fail(err, "%s: copy the store to writable storage "
				"and run `zrecord recover` on the copy: an "
				"interrupted delete or compact left its "
				"journal (" ZR__MAINT_FILE ") and the medium is "
				"read-only (%s)", path, why);
	return zr__fail(err, "%s: run `zrecord recover %s` as a user who may "
			"write its files, once no other process has it open: "
			"an interrupted delete or compact left its journal ("
			ZR__MAINT_FILE ") and this read-only open cannot "
			"recover it (%s)", path, path, why);
}

int zr__store_open_vfs(const char *path, const struct zr__vfs *vfs,
		       unsigned flags, zr_store **out)
{
	char *note = NULL;
	int err;

	if (!path || !*path || !out ||
	    (flags & ~(unsigned)(ZR_OPEN_RDONLY | ZR_OPEN_FOLLOW)))
		return zr__fail(-EINVAL, "zr_store_open: bad arguments");
	if ((flags & ZR_OPEN_FOLLOW) && !(flags & ZR_OPEN_RDONLY))
		return zr__fail(-EINVAL, "zr_store_open: ZR_OPEN_FOLLOW needs "
				"ZR_OPEN_RDONLY");
	err = open_as(path, vfs, flags, out);
	if (err != ZR__NEED_WRITER)
		return err;
	err = recover_for_reader(path, vfs, &note);
	if (!err)
		err = open_as(path, vfs, flags, out);
	if (err == ZR__NEED_WRITER)
		err = zr__fail(ZR_E_BUSY, "%s: store busy: another delete or "
			       "compact was cut short while this open "
			       "recovered one; open it again", path);
	if (!err)
		(*out)->recovered_msg = note;
	else
		free(note);
	return err;
}

int zr_store_open(const char *path, unsigned flags, zr_store **out)
{
	const struct zr__vfs *vfs;
	int err;

	zr__clear();
	if (!path || !*path || !out)
		return zr__fail(-EINVAL, "zr_store_open: bad arguments");
	err = zr__vfs_find(path, &vfs);
	return err ? err : zr__store_open_vfs(path, vfs, flags, out);
}

int zr_store_probe(const char *path)
{
	const struct zr__vfs *vfs;
	char p[4096];
	int err;

	zr__clear();
	if (!path || !*path)
		return zr__fail(-EINVAL, "zr_store_probe: bad arguments");
	err = zr__vfs_find(path, &vfs);
	if (err)
		return err;
	if ((size_t)snprintf(p, sizeof(p), "%s/meta.zr", path) >= sizeof(p))
		return zr__fail(-ENAMETOOLONG, "%s: path too long", path);
	err = vfs->probe(vfs, p);
	if (err == -ENOENT || err == -ENOTDIR) {
		zr__clear(); /* no store is an answer, not a failure */
		return 0;
	}
	if (err)
		return zr__fail(err, "%s: %s", p, strerror(-err));
	return 1;
}

int zr_store_close(zr_store *s)
{
	int err = 0;

	if (!s)
		return 0;
	zr__clear();
	if (!s->readonly)
		err = zr_store_sync(s);
	store_free(s);
	return err;
}

uint64_t zr_store_length(const zr_store *s)
{
	return zr__length(s);
}

const zr_schema *zr_store_schema(const zr_store *s)
{
	return &s->schema;
}

zr_codec zr_store_codec(const zr_store *s)
{
	return s->codec;
}

int zr_store_readonly(const zr_store *s)
{
	return s->readonly;
}

size_t zr_store_row_bytes(const zr_store *s)
{
	return s->row_bytes;
}

int zr_store_loc(const zr_store *s, uint64_t idx, zr_loc *out)
{
	uint64_t len;

	zr__clear();
	len = zr__length(s);
	return zr__loc_get(s, idx, len, zr__tail(s), out);
}
