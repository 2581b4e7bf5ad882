/*
 * npy.c - the .npy/.npz source.  Rows: every row of each array is a
 * record of a dense store ("data" for .npy files, one store per member
 * name for .npz), read in chunks of about 4 MiB; an .npz's members are
 * read side by side, one libarchive reader each, so rows stay aligned
 * without holding a member in memory.  --per-file: each array is one
 * ragged record instead (a .npy file's store "data", an .npz's member
 * names).  Files go in argument order, members in archive order; a
 * folder stands for its .npy/.npz files in byte order of their names.
 */
#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "import.h"

#define CHUNK_BYTES (4u << 20)
#define HEADER_MAX (65536u + 12)

/* One array being read row by row, from a file or an .npz member. */
typedef struct arr {
	int fd;                  /* a .npy file, or -1               */
	struct archive *a;       /* an .npz member's reader, or NULL */
	zr_npy_header h;
	char name[ZR_IMP_NAME_MAX];
	uint64_t rows, row_bytes;
	unsigned char *buf;
	size_t have, pos;        /* bytes in buf, bytes used          */
	int store;
} arr;

static ssize_t arr_read(arr *x, void *dst, size_t n)
{
	size_t got = 0;
	ssize_t r;

	while (got < n) {
		r = x->a ? archive_read_data(x->a, (char *)dst + got, n - got) :
			   read(x->fd, (char *)dst + got, n - got);
		if (r < 0 && !x->a && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -1 : (ssize_t)got;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

/* Reads the header, then sets the rows up; where names the array. */
static int arr_start(arr *x, const char *where)
{
	unsigned char head[HEADER_MAX];
	size_t len = 0, need = 10, i;
	ssize_t r;
	int rc;

	for (;;) {
		r = arr_read(x, head + len, need - len);
		if (r < 0 || (size_t)r < need - len)
			return zr_imp_error(where, ZR_IMP_EBAD, "ends inside "
					    "the .npy header");
		len = need;
		rc = zr_npy_parse(head, len, &x->h, &need);
		if (rc == 0)
			break;
		if (rc != ZR_E_TRUNCATED || need > HEADER_MAX || need <= len)
			return zr_imp_error(where, ZR_IMP_EBAD, rc ==
					    ZR_E_TRUNCATED ? "bad .npy header" :
					    zr_errmsg());
	}
	if (x->h.header_len != len)
		return zr_imp_error(where, ZR_IMP_EBAD, "bad .npy header "
				    "length");
	if (x->h.ndim == 0)
		return zr_imp_error(where, ZR_E_SHAPE, "a 0-d array has no "
				    "rows (use --per-file)");
	x->rows = x->h.shape[0];
	x->row_bytes = x->h.dtype.itemsize;
	for (i = 1; i < x->h.ndim; i++)
		x->row_bytes *= x->h.shape[i];
	if (x->row_bytes == 0 || x->row_bytes > ZR_RECORD_MAX)
		return zr_imp_error(where, ZR_E_SHAPE, "rows of 0 bytes or "
				    "over 2 GiB");
	x->buf = malloc(x->row_bytes > CHUNK_BYTES ? x->row_bytes :
			CHUNK_BYTES / x->row_bytes * x->row_bytes);
	return x->buf ? 0 : zr_imp_error(where, -ENOMEM, NULL);
}

static const void *arr_row(arr *x, const char *where, int *rc)
{
	size_t cap = x->row_bytes > CHUNK_BYTES ? x->row_bytes :
		     CHUNK_BYTES / x->row_bytes * x->row_bytes;
	ssize_t r;

	if (x->pos == x->have) {
		r = arr_read(x, x->buf, cap);
		if (r < 0 || (size_t)r % x->row_bytes || r == 0) {
			*rc = zr_imp_error(where, ZR_IMP_EBAD, x->a &&
					   archive_error_string(x->a) ?
					   archive_error_string(x->a) :
					   "ends inside its array data");
			return NULL;
		}
		x->have = (size_t)r;
		x->pos = 0;
	}
	x->pos += x->row_bytes;
	return x->buf + x->pos - x->row_bytes;
}

static void arr_close(arr *x)
{
	if (x->fd >= 0)
		close(x->fd);
	if (x->a)
		archive_read_free(x->a);
	free(x->buf);
	memset(x, 0, sizeof(*x));
	x->fd = -1;
}

static int is_npz(const char *path)
{
	size_t n = strlen(path);

	return n >= 4 && !strcasecmp(path + n - 4, ".npz");
}

static struct archive *zip_open(const char *path)
{
	struct archive *a = archive_read_new();

	if (!a)
		return NULL;
	archive_read_support_format_zip(a);
	if (archive_read_open_filename(a, path, 1 << 16) != ARCHIVE_OK) {
		archive_read_free(a);
		return NULL;
	}
	return a;
}

/* "x.npy" -> "x" (np.savez's member names). */
static int member_name(const char *entry, char *out, size_t cap)
{
	size_t n = strlen(entry);

	if (n > 4 && !strcasecmp(entry + n - 4, ".npy"))
		n -= 4;
	if (n == 0 || n >= cap)
		return -EINVAL;
	memcpy(out, entry, n);
	out[n] = 0;
	return 0;
}

/* Positions x->a at member k of the .npz at path. */
static int zip_member(const char *path, unsigned k, arr *x, int *found)
{
	struct archive_entry *e;
	unsigned i = 0;
	int r;

	*found = 0;
	x->a = zip_open(path);
	if (!x->a)
		return zr_imp_error(path, ZR_IMP_EBAD, "not a zip (.npz) file");
	while ((r = archive_read_next_header(x->a, &e)) == ARCHIVE_OK) {
		if (i++ < k)
			continue;
		if (member_name(archive_entry_pathname(e), x->name,
				sizeof(x->name)) < 0)
			return zr_imp_error(path, ZR_IMP_ETEXT, "a member name that "
					    "cannot name a store");
		*found = 1;
		return 0;
	}
	if (r != ARCHIVE_EOF)
		return zr_imp_error(path, ZR_IMP_EBAD,
				    archive_error_string(x->a));
	return 0;
}

/* Opens every array of one source file for reading rows. */
static int open_arrays(const char *path, arr *xs, unsigned *n,
		       zr_imp_dataset *d)
{
	char where[600];
	unsigned k;
	int rc, found;

	for (k = 0; k < ZR_IMP_MAX_FIELDS; k++) {
		memset(&xs[k], 0, sizeof(xs[k]));
		xs[k].fd = -1;
	}
	*n = 0;
	if (!is_npz(path)) {
		xs[0].fd = open(path, O_RDONLY | O_CLOEXEC);
		if (xs[0].fd < 0)
			return zr_imp_error(path, -errno, "cannot open");
		strcpy(xs[0].name, "data");
		*n = 1;
	} else {
		for (k = 0;; k++) {
			if (k == ZR_IMP_MAX_FIELDS)
				return zr_imp_error(path, ZR_IMP_ETEXT, "more than 32 "
						    "members");
			rc = zip_member(path, k, &xs[k], &found);
			if (rc || !found) {
				arr_close(&xs[k]);
				if (rc)
					return rc;
				break;
			}
			(*n)++;
		}
		if (*n == 0)
			return zr_imp_error(path, ZR_IMP_ETEXT, "no arrays");
	}
	for (k = 0; k < *n; k++) {
		snprintf(where, sizeof(where), "%s: %s", path, xs[k].name);
		if (zr_imp_dataset_field(d, xs[k].name, &xs[k].store) < 0)
			return zr_imp_error(where, ZR_IMP_ETEXT, "a name that "
					    "cannot name a store");
		rc = arr_start(&xs[k], where);
		if (rc)
			return rc;
		if (xs[k].rows != xs[0].rows)
			return zr_imp_error(where, ZR_E_SHAPE, "members of "
					    "one .npz must have as many rows "
					    "(or use --per-file)");
	}
	return 0;
}

static int rows_file(const char *path, zr_imp_run *r, zr_imp_dataset *d,
		     unsigned *fields)
{
	arr xs[ZR_IMP_MAX_FIELDS];
	zr_imp_row rows[ZR_IMP_MAX_FIELDS];
	char where[600];
	unsigned n = 0, k;
	uint64_t i;
	int rc = open_arrays(path, xs, &n, d);

	if (rc == 0 && *fields && n != *fields)
		rc = zr_imp_error(path, ZR_E_SHAPE, "holds other arrays than "
				  "the first file");
	*fields = n;
	for (i = 0; rc == 0 && i < xs[0].rows; i++) {
		snprintf(where, sizeof(where), "%s: row %llu", path,
			 (unsigned long long)i);
		for (k = 0; k < n && rc == 0; k++) {
			rows[k].store = xs[k].store;
			rows[k].kind = ZR_IMP_ARRAY;
			rows[k].dtype = xs[k].h.dtype;
			rows[k].ndim = xs[k].h.ndim - 1;
			rows[k].shape = xs[k].h.shape + 1;
			rows[k].len = xs[k].row_bytes;
			rows[k].data = arr_row(&xs[k], where, &rc);
		}
		if (rc == 0)
			rc = zr_imp_emit(r, where, n, rows);
	}
	for (k = 0; k < ZR_IMP_MAX_FIELDS; k++)
		arr_close(&xs[k]);
	return rc;
}

/* --per-file: a .npy is one NPY field read by a worker; an .npz one
 * sample of its members, read here (libarchive streams only). */
static int per_file(const char *path, zr_imp_run *r, zr_imp_dataset *d)
{
	struct archive *a;
	struct archive_entry *e;
	zr_imp_sample *s;
	struct stat st;
	char name[ZR_IMP_NAME_MAX];
	int rc, store, ar;

	if (!is_npz(path)) {
		if (stat(path, &st) < 0)
			return zr_imp_error(path, -errno, "cannot stat");
		if (zr_imp_dataset_field(d, "data", &store) < 0)
			return zr_imp_error(path, -ENOMEM, NULL);
		rc = zr_imp_run_next(r, &s);
		if (rc)
			return rc;
		s->where = strdup(path);
		s->nfields = 1;
		s->f[0].store = store;
		s->f[0].kind = ZR_IMP_NPY;
		s->f[0].path = strdup(path);
		s->f[0].want_size = st.st_size;
		s->f[0].want_mtime = zr_imp_mtime_ns(&st);
		zr_imp_run_bytes(r, (uint64_t)st.st_size);
		return s->where && s->f[0].path ? 0 :
		       zr_imp_error(path, -ENOMEM, NULL);
	}
	a = zip_open(path);
	if (!a)
		return zr_imp_error(path, ZR_IMP_EBAD, "not a zip (.npz) file");
	rc = zr_imp_run_next(r, &s);
	s->where = strdup(path);
	while (rc == 0 && (ar = archive_read_next_header(a, &e)) ==
	       ARCHIVE_OK) {
		zr_imp_field *f = &s->f[s->nfields];
		la_int64_t size = archive_entry_size(e);

		if (s->nfields == ZR_IMP_MAX_FIELDS ||
		    member_name(archive_entry_pathname(e), name,
				sizeof(name)) < 0 ||
		    zr_imp_dataset_field(d, name, &store) < 0) {
			rc = zr_imp_error(path, ZR_IMP_ETEXT, "too many members or "
					  "a name that cannot name a store");
			break;
		}
		f->store = store;
		f->kind = ZR_IMP_NPY;
		s->nfields++;
		if (size <= 0 || size > (1 << 30) ||
		    !(f->bytes = malloc((size_t)size)) ||
		    archive_read_data(a, f->bytes, (size_t)size) != size) {
			rc = zr_imp_error(path, ZR_IMP_EBAD, archive_error_string(
					  a) ? archive_error_string(a) :
					  "a member that cannot be read");
			break;
		}
		f->nbytes = (size_t)size;
		zr_imp_run_bytes(r, (uint64_t)size);
	}
	if (rc == 0 && ar != ARCHIVE_EOF)
		rc = zr_imp_error(path, ZR_IMP_EBAD, archive_error_string(a));
	archive_read_free(a);
	return rc;
}

static int is_npy_name(const char *name)
{
	size_t n = strlen(name);

	return n > 4 && (!strcasecmp(name + n - 4, ".npy") ||
			 !strcasecmp(name + n - 4, ".npz"));
}

static int add_path(char ***paths, int *n, char *path)
{
	char **p = path ? realloc(*paths, (size_t)(*n + 1) * sizeof(*p)) :
		   NULL;

	if (!p) {
		free(path);
		return -ENOMEM;
	}
	*paths = p;
	p[(*n)++] = path;
	return 0;
}

/* A folder's .npy/.npz files, as if named one by one; other entries are
 * counted in *ignored. */
static int add_folder(const zr_imp_dest *dest, const char *dir,
		      char ***paths, int *n, uint64_t *ignored)
{
	struct dirent **list;
	struct stat st;
	char *path;
	int m, i, rc = 0, found = 0;

	m = zr_imp_list_dir(dest, dir, &list);
	if (m < 0)
		return zr_imp_error(dir, m, "cannot read the folder");
	for (i = 0; i < m; i++) {
		if (rc == 0 && asprintf(&path, "%s/%s", dir,
					list[i]->d_name) < 0)
			rc = zr_imp_error(dir, -ENOMEM, NULL);
		else if (rc == 0 && (!is_npy_name(list[i]->d_name) ||
				     stat(path, &st) < 0 ||
				     !S_ISREG(st.st_mode))) {
			(*ignored)++;
			free(path);
		} else if (rc == 0) {
			found++;
			if (add_path(paths, n, path) < 0)
				rc = zr_imp_error(dir, -ENOMEM, NULL);
		}
		free(list[i]);
	}
	free(list);
	if (rc == 0 && !found)
		rc = zr_imp_error(dir, ZR_IMP_ETEXT, "no .npy or .npz files "
				  "found");
	return rc;
}

int zr_imp_npy_claims(const char *dir)
{
	struct dirent **list;
	int n, i, npy = 0, images = 0;

	n = zr_imp_list_dir(NULL, dir, &list);
	for (i = 0; i < n; i++) {
		npy |= is_npy_name(list[i]->d_name);
		images |= zr_imp_is_image_name(list[i]->d_name);
		free(list[i]);
	}
	if (n >= 0)
		free(list);
	return npy && !images;
}

/* The files to read: the SOURCEs, each folder among them replaced by
 * its files. */
static int expand(const zr_imp_dataset *d, char **srcs, int n,
		  char ***paths, int *np)
{
	uint64_t ignored = 0;
	struct stat st;
	int i, rc = 0;

	*paths = NULL;
	*np = 0;
	for (i = 0; i < n && rc == 0; i++)
		if (stat(srcs[i], &st) == 0 && S_ISDIR(st.st_mode))
			rc = add_folder(zr_imp_dataset_dest(d), srcs[i], paths,
					np, &ignored);
		else if (add_path(paths, np, strdup(srcs[i])) < 0)
			rc = zr_imp_error(srcs[i], -ENOMEM, NULL);
	if (rc == 0)
		zr_imp_note_ignored(ignored, ".npy or .npz");
	return rc;
}

static int import_files(const zr_imp_config *cfg, char **srcs, int n,
			zr_imp_dataset *d)
{
	zr_imp_run *r;
	unsigned fields = 0;
	int i, rc;

	for (i = 1; i < n; i++)
		if (is_npz(srcs[i]) != is_npz(srcs[0]))
			return zr_imp_error(srcs[i], ZR_IMP_ETEXT, "mixes .npy "
					    "and .npz files: import them apart");
	rc = zr_imp_run_new(cfg, d, 0, zr_imp_files_size(srcs, n), &r);
	if (rc)
		return rc;
	for (i = 0; i < n && rc == 0; i++)
		rc = zr_imp_skip_rest(r, cfg, srcs[i], cfg->per_file ?
				      per_file(srcs[i], r, d) :
				      rows_file(srcs[i], r, d, &fields));
	return zr_imp_run_end(r, rc);
}

int zr_imp_npy(const zr_imp_config *cfg, char **srcs, int n,
	       zr_imp_dataset *d)
{
	char **paths;
	int np, i, rc = expand(d, srcs, n, &paths, &np);

	if (rc == 0)
		rc = import_files(cfg, paths, np, d);
	for (i = 0; i < np; i++)
		free(paths[i]);
	free(paths);
	return rc;
}
