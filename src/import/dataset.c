/*
 * dataset.c - the dataset folder `zrecord import` writes: one store per
 * field, built in DEST.tmp-XXXXXX next to DEST through one append session
 * per store, committed, synced and renamed to DEST only when every input
 * went in.  Until that rename DEST does not exist, so a failed or killed
 * import never leaves a half-filled dataset where a reader looks.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "import.h"

typedef struct imp_store {
	char name[ZR_IMP_NAME_MAX];
	zr_store *s;
	zr_append *a;
	zr_schema sc;
	int dense;
	size_t row;
	uint64_t count;
	int wb_fd;       /* data.zr, to start its writeback early */
	int reserved;    /* rows reserved for the batch in decode */
} imp_store;

struct zr_imp_dataset {
	const zr_imp_config *cfg;
	zr_imp_dest dest; /* DEST.tmp-XXXXXX, where it is built */
	char *tmp;       /* dest.tmp                          */
	int committed;
	unsigned n;
	imp_store st[ZR_IMP_MAX_FIELDS];
	uint64_t length;
	zr_ragged_in *rin;
	size_t rin_cap;
	uint64_t *keep;  /* the slots of a batch's good samples */
	size_t keep_cap;
	FILE *names;     /* files.txt, or NULL                  */
	size_t names_rel;
};

int zr_imp_dataset_new(const zr_imp_config *cfg, zr_imp_dataset **out)
{
	zr_imp_dataset *d = calloc(1, sizeof(*d));
	struct stat st;

	if (!d)
		return zr_imp_error(cfg->dest, -ENOMEM, NULL);
	d->cfg = cfg;
	if (lstat(cfg->dest, &st) == 0) {
		free(d);
		return zr_imp_error(cfg->dest, ZR_IMP_ETEXT, "DEST exists: remove "
				    "it or name a new folder");
	}
	if (zr_imp_dest_make(&d->dest, cfg->dest)) {
		if (d->names)
		fclose(d->names);
	zr_imp_dest_free(&d->dest);
		free(d);
		return ZR_IMP_FAIL;
	}
	d->tmp = d->dest.tmp;
	*out = d;
	return 0;
}

const zr_imp_dest *zr_imp_dataset_dest(const zr_imp_dataset *d)
{
	return &d->dest;
}

static int valid_name(const char *name)
{
	return *name && strcmp(name, ".") && strcmp(name, "..") &&
	       !strchr(name, '/') && name[0] != '@' && name[0] != '.' &&
	       strlen(name) < ZR_IMP_NAME_MAX &&
	       strcmp(name, "classes.json") && strcmp(name, "files.txt");
}

int zr_imp_dataset_field(zr_imp_dataset *d, const char *name, int *store)
{
	unsigned i;

	for (i = 0; i < d->n; i++)
		if (!strcmp(d->st[i].name, name)) {
			*store = (int)i;
			return 0;
		}
	if (!valid_name(name))
		return -EINVAL;
	if (d->n == ZR_IMP_MAX_FIELDS)
		return -E2BIG;
	snprintf(d->st[d->n].name, ZR_IMP_NAME_MAX, "%s", name);
	d->st[d->n].wb_fd = -1;
	*store = (int)d->n++;
	return 0;
}

/* The schema a field's first record sets: images of a fixed size
 * (--resize H,W or --center-crop) and integers are dense, arrays from
 * HDF5 and .npy rows dense, everything else ragged. */
static int field_dense(const zr_imp_config *cfg, const zr_imp_field *f)
{
	switch (f->kind) {
	case ZR_IMP_IMAGE:
		return !cfg->img.encoded &&
		       (cfg->img.crop_h || cfg->img.resize_w);
	case ZR_IMP_CLS:
	case ZR_IMP_LABEL:
	case ZR_IMP_ARRAY:
		return 1;
	default:
		return 0;
	}
}

static int open_store(zr_imp_dataset *d, imp_store *st,
		      const zr_imp_field *f, const char *where)
{
	char *path, *data;
	int rc;

	memset(&st->sc, 0, sizeof(st->sc));
	st->sc.dtype = f->out.dtype;
	st->dense = field_dense(d->cfg, f);
	st->sc.ragged = !st->dense;
	if (st->dense) {
		st->sc.ndim = f->out.ndim;
		memcpy(st->sc.shape, f->out.shape, sizeof(st->sc.shape));
	}
	if (asprintf(&path, "%s/%s", d->tmp, st->name) < 0)
		return zr_imp_error(where, -ENOMEM, NULL);
	rc = zr_store_create(path, &st->sc, d->cfg->codec, NULL, 0, &st->s);
	if (rc == 0 && asprintf(&data, "%s/data.zr", path) >= 0) {
		st->wb_fd = open(data, O_RDONLY | O_CLOEXEC);
		free(data);
	}
	free(path);
	/* --encoded: the library decodes these records (zrecord(5)). */
	if (rc == 0 && f->kind == ZR_IMP_IMAGE && d->cfg->img.encoded)
		rc = zr_store_mark_images(st->s);
	if (rc == 0)
		rc = zr_append_begin(st->s, &st->a);
	if (rc < 0)
		return zr_imp_error(st->name, rc, zr_errmsg());
	st->row = zr_store_row_bytes(st->s);
	return 0;
}

static void shape_text(const uint64_t *shape, uint32_t ndim, char *buf,
		       size_t cap)
{
	size_t n = 0;
	uint32_t i;

	n += (size_t)snprintf(buf + n, cap - n, "(");
	for (i = 0; i < ndim && n < cap; i++)
		n += (size_t)snprintf(buf + n, cap - n, "%s%" PRIu64,
				      i ? ", " : "", shape[i]);
	if (n < cap)
		snprintf(buf + n, cap - n, ")");
}

/* A record the store cannot take: name it, its shape and the option
 * that makes the records agree. */
static int mismatch(const imp_store *st, const zr_imp_field *f,
		    const char *where)
{
	char want[256], got[256], msg[700];

	shape_text(st->sc.shape, st->sc.ndim, want, sizeof(want));
	shape_text(f->out.shape, f->out.ndim, got, sizeof(got));
	snprintf(msg, sizeof(msg), "field '%s' is %s %s but its store holds "
		 "%s %s (images: --rgb gives every image 3 channels, "
		 "--resize/--center-crop one size)", st->name,
		 f->out.dtype.str, got, st->sc.dtype.str,
		 st->dense ? want : "records");
	return zr_imp_error(where, ZR_E_SHAPE, msg);
}

static int fits(const imp_store *st, const zr_imp_field *f)
{
	if (strcmp(f->out.dtype.str, st->sc.dtype.str))
		return 0;
	if (!st->dense)
		return 1;
	return f->out.ndim == st->sc.ndim &&
	       !memcmp(f->out.shape, st->sc.shape,
		       f->out.ndim * sizeof(f->out.shape[0]));
}

static int grow(void **buf, size_t *cap, size_t need)
{
	void *p;

	if (need <= *cap)
		return 0;
	p = realloc(*buf, need);
	if (!p)
		return -ENOMEM;
	*buf = p;
	*cap = need;
	return 0;
}

int zr_imp_dataset_can_place(const zr_imp_dataset *d)
{
	unsigned i;

	for (i = 0; i < d->n; i++)
		if (d->st[i].s && d->st[i].dense)
			return 1;
	return 0;
}

int zr_imp_dataset_place(zr_imp_dataset *d, zr_imp_sample *s, size_t n)
{
	unsigned k;
	size_t i;
	int rc;

	for (k = 0; n && k < s[0].nfields; k++) {
		int id = s[0].f[k].store;
		imp_store *st = &d->st[id];

		if (!st->s || !st->dense || st->reserved)
			continue;
		rc = zr_append_dense_reserve(st->a, n);
		if (rc < 0)
			return zr_imp_error(st->name, rc, zr_errmsg());
		st->reserved = 1;
		/* Slot i for sample i: the bad ones' are left out when the
		 * batch is staged. */
		for (i = 0; i < n; i++)
			if (k < s[i].nfields && s[i].f[k].store == id) {
				s[i].f[k].put = st->a;
				s[i].f[k].slot = i;
				s[i].f[k].put_len = st->row;
			}
	}
	return 0;
}

/* Room for n records of a batch: the ragged inputs, or the slots kept. */
static int batch_room(zr_imp_dataset *d, const imp_store *st, size_t n)
{
	if (st->reserved)
		return grow((void **)&d->keep, &d->keep_cap,
			    n * sizeof(*d->keep));
	if (!st->dense)
		return grow((void **)&d->rin, &d->rin_cap,
			    n * sizeof(*d->rin));
	return 0;
}

/* The calls that stage what append_field collected: a ragged batch in
 * one call, reserved slots by the list of the good ones. */
static int stage_batch(zr_imp_dataset *d, imp_store *st, size_t n,
		       size_t m)
{
	if (st->reserved) {
		st->reserved = 0;
		return zr_append_dense_stage(st->a, m == n ? NULL : d->keep,
					     m);
	}
	return m && !st->dense ? zr_append_ragged(st->a, d->rin, m) : 0;
}

/* Stages field k of samples [0, n) in the store's session.  In slots
 * reserved by zr_imp_dataset_place the decode threads have put the rows
 * already (or the record is put here); the good ones' slots are staged
 * in order.  Other dense rows go one call each: the library writes a
 * raw row straight from the decoded buffer, where stacking them first
 * would copy every pixel once more. */
static int append_field(zr_imp_dataset *d, unsigned k, zr_imp_sample *s,
			size_t n)
{
	imp_store *st = &d->st[s[0].f[k].store];
	size_t i, m = 0;
	int rc = 0;

	if (batch_room(d, st, n) < 0)
		return zr_imp_error(st->name, -ENOMEM, NULL);
	for (i = 0; i < n && rc == 0; i++) {
		const zr_imp_field *f = &s[i].f[k];

		if (s[i].bad)
			continue;
		if (!fits(st, f))
			return mismatch(st, f, s[i].where);
		if (st->reserved) {
			if (!f->stored)
				rc = zr_append_dense_put(st->a, i, f->out.data);
			d->keep[m] = i;
		} else if (st->dense) {
			rc = zr_append_dense(st->a, f->out.data, 1);
		} else {
			d->rin[m].data = f->out.data;
			d->rin[m].ndim = f->out.ndim;
			d->rin[m].shape = f->out.shape;
		}
		m++;
	}
	if (rc == 0)
		rc = stage_batch(d, st, n, m);
	if (rc < 0)
		return zr_imp_error(st->name, rc, zr_errmsg());
	st->count += m;
	/* The device writes this batch while the next decodes, so the
	 * final sync has little left to wait for (a hint: errors show at
	 * that sync). */
	if (st->wb_fd >= 0)
		sync_file_range(st->wb_fd, 0, 0, SYNC_FILE_RANGE_WRITE);
	return 0;
}

int zr_imp_dataset_names(zr_imp_dataset *d, size_t rel)
{
	char *path;

	if (asprintf(&path, "%s/files.txt", d->tmp) < 0)
		return zr_imp_error("files.txt", -ENOMEM, NULL);
	d->names = fopen(path, "wxe");
	free(path);
	if (!d->names)
		return zr_imp_error("files.txt", -errno, "cannot create");
	d->names_rel = rel;
	return 0;
}

/* The good samples' lines of files.txt (bad ones have no record). */
static int put_names(zr_imp_dataset *d, const zr_imp_sample *s, size_t n)
{
	const char *p;
	size_t i;

	for (i = 0; d->names && i < n; i++) {
		if (s[i].bad)
			continue;
		for (p = s[i].where + d->names_rel; *p; p++) {
			if (*p == '\\' || *p == '\n')
				putc('\\', d->names);
			putc(*p == '\n' ? 'n' : *p, d->names);
		}
		if (putc('\n', d->names) == EOF)
			return zr_imp_error("files.txt", -errno, "cannot write");
	}
	return 0;
}

/* Ends files.txt, durably, before the rename. */
static int close_names(zr_imp_dataset *d)
{
	int rc = 0;

	if (!d->names)
		return 0;
	if (fflush(d->names) || fsync(fileno(d->names)))
		rc = -errno;
	if (fclose(d->names) && !rc)
		rc = -errno;
	d->names = NULL;
	return rc ? zr_imp_error("files.txt", rc, "cannot write") : 0;
}

int zr_imp_dataset_append(zr_imp_dataset *d, zr_imp_sample *s, size_t n)
{
	size_t i, good = 0;
	unsigned k;
	int rc;

	for (i = 0; i < n; i++) {
		if (s[i].bad)
			continue;
		good++;
		for (k = 0; k < s[i].nfields; k++) {
			imp_store *st = &d->st[s[i].f[k].store];

			if (st->s)
				continue;
			rc = open_store(d, st, &s[i].f[k], s[i].where);
			if (rc)
				return rc;
		}
	}
	if (good == 0) {
		/* nothing to stage: give the reserved rows back */
		for (k = 0; k < d->n; k++)
			if (d->st[k].reserved) {
				d->st[k].reserved = 0;
				rc = zr_append_dense_stage(d->st[k].a, NULL,
							   0);
				if (rc < 0)
					return zr_imp_error(d->st[k].name, rc,
							    zr_errmsg());
			}
		return 0;
	}
	for (k = 0; k < s[0].nfields; k++) {
		rc = append_field(d, k, s, n);
		if (rc)
			return rc;
	}
	d->length += good;
	return put_names(d, s, n);
}

int zr_imp_dataset_write_file(zr_imp_dataset *d, const char *name,
			      const char *text)
{
	char *path;
	FILE *f;
	int rc = 0;

	if (asprintf(&path, "%s/%s", d->tmp, name) < 0)
		return zr_imp_error(name, -ENOMEM, NULL);
	f = fopen(path, "wx");
	if (!f || fputs(text, f) < 0 || fflush(f) || fsync(fileno(f)))
		rc = zr_imp_error(path, -errno, "cannot write");
	if (f && fclose(f) && !rc)
		rc = zr_imp_error(path, -errno, "cannot write");
	free(path);
	return rc;
}

static int fsync_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

/* The folder holding DEST, to make the rename durable. */
static int fsync_parent(const char *dest)
{
	char *copy = strdup(dest), *slash;
	int rc;

	if (!copy)
		return -ENOMEM;
	slash = strrchr(copy, '/');
	if (slash == copy)
		slash[1] = 0;
	else if (slash)
		*slash = 0;
	rc = fsync_dir(slash ? copy : ".");
	free(copy);
	return rc;
}

int zr_imp_dataset_commit(zr_imp_dataset *d)
{
	unsigned i;
	int rc;

	if (d->length == 0)
		return zr_imp_error(d->cfg->dest, ZR_IMP_ETEXT, "no records "
				    "found in the sources");
	for (i = 0; i < d->n; i++) {
		imp_store *st = &d->st[i];

		if (st->count != d->length)
			return zr_imp_error(st->name, -EPROTO, "store length "
					    "differs from the dataset's");
		rc = zr_append_commit(st->a);
		st->a = NULL;
		if (rc == 0)
			rc = zr_store_close(st->s);
		else
			zr_store_close(st->s);
		st->s = NULL;
		if (rc < 0)
			return zr_imp_error(st->name, rc, zr_errmsg());
	}
	if (close_names(d))
		return ZR_IMP_FAIL;
	rc = zr_imp_dest_seal(&d->dest);
	if (rc == 0)
		rc = fsync_dir(d->tmp);
	if (rc == 0 && renameat2(AT_FDCWD, d->tmp, AT_FDCWD, d->cfg->dest,
				 RENAME_NOREPLACE) < 0)
		rc = -errno;
	if (rc < 0)
		return zr_imp_error(d->cfg->dest, rc, "cannot move the "
				    "finished dataset into place");
	d->committed = 1;
	rc = fsync_parent(d->cfg->dest);
	if (rc < 0)
		return zr_imp_error(d->cfg->dest, rc, "cannot sync");
	return 0;
}

void zr_imp_dataset_free(zr_imp_dataset *d)
{
	unsigned i;
	int rc;

	if (!d)
		return;
	for (i = 0; i < d->n; i++) {
		zr_append_abort(d->st[i].a);
		zr_store_close(d->st[i].s);
		if (d->st[i].wb_fd >= 0)
			close(d->st[i].wb_fd);
	}
	if (!d->committed && (rc = zr_imp_rmtree(d->tmp)) < 0)
		fprintf(stderr, "zrecord: import: cannot remove %s: %s\n",
			d->tmp, zr_strerror(rc));
	if (d->names)
		fclose(d->names);
	zr_imp_dest_free(&d->dest);
	free(d->rin);
	free(d->keep);
	free(d);
}

uint64_t zr_imp_dataset_length(const zr_imp_dataset *d)
{
	return d->length;
}
