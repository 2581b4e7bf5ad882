/*
 * hdf5.c - the HDF5 source: every dataset of each file (or the ones named
 * by --dataset), in name order, becomes a dense store of its dtype whose
 * records are its rows; rows are read in chunks of about 4 MiB, one
 * hyperslab per dataset, so memory does not grow with the file.  libhdf5
 * (serial) is only called from the main thread.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <hdf5.h>

#include "import.h"

#define CHUNK_BYTES (4u << 20)

typedef struct h5set {
	char *name;
	hid_t ds, type;
	zr_dtype dtype;
	uint32_t ndim;             /* of one row */
	uint64_t shape[ZR_MAX_NDIM];
	hsize_t rows;
	size_t row_bytes, chunk_rows;
	unsigned char *buf;
	hsize_t first;             /* the row buf[0] holds */
	hsize_t have;
	int store;
} h5set;

typedef struct h5file {
	const char *path;
	hid_t f;
	h5set sets[ZR_IMP_MAX_FIELDS];
	unsigned n;
	char msg[256];
} h5file;

/* The innermost message of HDF5's error stack, for the user. */
static herr_t last_error(unsigned n, const H5E_error2_t *e, void *ctx)
{
	char *msg = ctx;

	if (n == 0 && e->desc)
		snprintf(msg, 256, "%s", e->desc);
	return 0;
}

static int h5_error(h5file *h, const char *what)
{
	char detail[512];

	h->msg[0] = 0;
	H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, last_error, h->msg);
	snprintf(detail, sizeof(detail), "%s%s%s", what,
		 h->msg[0] ? ": " : "", h->msg);
	return zr_imp_error(h->path, ZR_IMP_EBAD, detail);
}

static int set_dtype(hid_t t, zr_dtype *out)
{
	H5T_class_t c = H5Tget_class(t);
	int little = H5Tget_order(t) == H5T_ORDER_LE;
	size_t size = H5Tget_size(t);

	if (c == H5T_INTEGER)
		return zr_imp_dtype(H5Tget_sign(t) == H5T_SGN_NONE ? 'u' : 'i',
				    little, size, out);
	if (c == H5T_FLOAT)
		return zr_imp_dtype('f', little, size, out);
	return ZR_E_DTYPE;
}

static int open_set(h5file *h, const char *name, h5set *s)
{
	hsize_t dims[ZR_MAX_NDIM + 1];
	hid_t space;
	int rank, i;
	uint64_t n;
	char msg[300];

	memset(s, 0, sizeof(*s));
	s->name = strdup(name);
	s->ds = H5Dopen2(h->f, name, H5P_DEFAULT);
	if (!s->name || s->ds < 0)
		return h5_error(h, name);
	s->type = H5Dget_type(s->ds);
	if (s->type < 0 || set_dtype(s->type, &s->dtype) < 0) {
		snprintf(msg, sizeof(msg), "dataset %s: its element type is not "
			 "an integer or float (compound, string, enum and "
			 "bool datasets are not imported: name the others "
			 "with --dataset)", name);
		return zr_imp_error(h->path, ZR_E_DTYPE, msg);
	}
	space = H5Dget_space(s->ds);
	rank = space < 0 ? -1 : H5Sget_simple_extent_ndims(space);
	if (rank < 1 || rank > ZR_MAX_NDIM + 1) {
		if (space >= 0)
			H5Sclose(space);
		snprintf(msg, sizeof(msg), "dataset %s: no rows (a scalar or "
			 "more than %d dimensions)", name, ZR_MAX_NDIM + 1);
		return zr_imp_error(h->path, ZR_E_SHAPE, msg);
	}
	H5Sget_simple_extent_dims(space, dims, NULL);
	H5Sclose(space);
	s->rows = dims[0];
	s->ndim = (uint32_t)rank - 1;
	n = s->dtype.itemsize;
	for (i = 1; i < rank; i++) {
		s->shape[i - 1] = dims[i];
		n *= dims[i];
	}
	if (n == 0 || n > ZR_RECORD_MAX) {
		snprintf(msg, sizeof(msg), "dataset %s: rows of 0 bytes or "
			 "over 2 GiB", name);
		return zr_imp_error(h->path, ZR_E_SHAPE, msg);
	}
	s->row_bytes = (size_t)n;
	s->chunk_rows = CHUNK_BYTES / s->row_bytes ? CHUNK_BYTES / s->row_bytes
						   : 1;
	s->buf = malloc(s->chunk_rows * s->row_bytes);
	return s->buf ? 0 : zr_imp_error(h->path, -ENOMEM, NULL);
}

typedef struct visit {
	h5file *h;
	int rc;
} visit;

/* 1 for a scalar dataset: no rows, so not part of "every dataset". */
static int scalar(hid_t g, const char *name)
{
	hid_t ds = H5Dopen2(g, name, H5P_DEFAULT), sp;
	int rank = -1;

	if (ds < 0)
		return 0;
	sp = H5Dget_space(ds);
	if (sp >= 0) {
		rank = H5Sget_simple_extent_ndims(sp);
		H5Sclose(sp);
	}
	H5Dclose(ds);
	return rank == 0;
}

static herr_t visit_one(hid_t g, const char *name, const H5L_info_t *info,
			void *ctx)
{
	visit *v = ctx;
	H5O_info_t oi;

	(void)info;
	if (H5Oget_info_by_name(g, name, &oi, H5P_DEFAULT) < 0 ||
	    oi.type != H5O_TYPE_DATASET || scalar(g, name))
		return 0;
	if (v->h->n == ZR_IMP_MAX_FIELDS) {
		v->rc = zr_imp_error(v->h->path, ZR_IMP_ETEXT, "more than 32 "
				     "datasets: name the ones to import with "
				     "--dataset");
		return -1;
	}
	v->rc = open_set(v->h, name, &v->h->sets[v->h->n++]);
	return v->rc ? -1 : 0;
}

static int open_sets(const zr_imp_config *cfg, h5file *h)
{
	visit v = { h, 0 };
	unsigned i;

	if (cfg->nnames) {
		for (i = 0; i < cfg->nnames && i < ZR_IMP_MAX_FIELDS; i++) {
			v.rc = open_set(h, cfg->names[i], &h->sets[h->n++]);
			if (v.rc)
				return v.rc;
		}
		return 0;
	}
	if (H5Lvisit(h->f, H5_INDEX_NAME, H5_ITER_INC, visit_one, &v) < 0 &&
	    !v.rc)
		return h5_error(h, "cannot list the datasets");
	if (v.rc == 0 && h->n == 0)
		return zr_imp_error(h->path, ZR_IMP_ETEXT, "no dataset in the file");
	return v.rc;
}

/* "/group/x" -> "group.x": one folder level per store. */
static void store_name(const char *path, char *out, size_t cap)
{
	size_t i;

	while (*path == '/')
		path++;
	snprintf(out, cap, "%s", path);
	for (i = 0; out[i]; i++)
		if (out[i] == '/')
			out[i] = '.';
}

/* Row r of set s, reading the next chunk when it is past the buffer. */
static const void *row(h5file *h, h5set *s, hsize_t r, int *rc)
{
	hsize_t start[ZR_MAX_NDIM + 1] = { 0 }, count[ZR_MAX_NDIM + 1];
	hid_t fspace, mspace;
	uint32_t i;
	herr_t e;

	if (r >= s->first && r < s->first + s->have)
		return s->buf + (size_t)(r - s->first) * s->row_bytes;
	start[0] = r;
	count[0] = s->rows - r < s->chunk_rows ? s->rows - r : s->chunk_rows;
	for (i = 0; i < s->ndim; i++)
		count[i + 1] = s->shape[i];
	fspace = H5Dget_space(s->ds);
	mspace = H5Screate_simple((int)s->ndim + 1, count, NULL);
	e = fspace < 0 || mspace < 0 ||
	    H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count,
				NULL) < 0 ||
	    H5Dread(s->ds, s->type, mspace, fspace, H5P_DEFAULT, s->buf) < 0;
	if (mspace >= 0)
		H5Sclose(mspace);
	if (fspace >= 0)
		H5Sclose(fspace);
	if (e) {
		char what[300];

		snprintf(what, sizeof(what), "dataset %s: cannot read rows "
			 "from %llu", s->name, (unsigned long long)r);
		*rc = h5_error(h, what);
		return NULL;
	}
	s->first = r;
	s->have = count[0];
	return s->buf;
}

static int emit_rows(const zr_imp_config *cfg, h5file *h, zr_imp_run *r,
		     zr_imp_dataset *d)
{
	zr_imp_row rows[ZR_IMP_MAX_FIELDS];
	char name[ZR_IMP_NAME_MAX + 64], where[600];
	hsize_t i;
	unsigned k;
	int rc = 0;

	(void)cfg;
	for (k = 0; k < h->n; k++) {
		store_name(h->sets[k].name, name, sizeof(name));
		if (zr_imp_dataset_field(d, name, &h->sets[k].store) < 0)
			return zr_imp_error(h->path, ZR_IMP_ETEXT, "a dataset name "
					    "that cannot name a store");
		if (h->sets[k].rows != h->sets[0].rows) {
			snprintf(where, sizeof(where), "dataset %s has %llu "
				 "rows, %s has %llu: a dataset's stores are of "
				 "one length (name the ones that agree with "
				 "--dataset)", h->sets[k].name,
				 (unsigned long long)h->sets[k].rows,
				 h->sets[0].name,
				 (unsigned long long)h->sets[0].rows);
			return zr_imp_error(h->path, ZR_E_SHAPE, where);
		}
	}
	for (i = 0; i < h->sets[0].rows && rc == 0; i++) {
		for (k = 0; k < h->n && rc == 0; k++) {
			h5set *s = &h->sets[k];

			rows[k].store = s->store;
			rows[k].kind = ZR_IMP_ARRAY;
			rows[k].dtype = s->dtype;
			rows[k].ndim = s->ndim;
			rows[k].shape = s->shape;
			rows[k].len = s->row_bytes;
			rows[k].data = row(h, s, i, &rc);
		}
		snprintf(where, sizeof(where), "%s: row %llu", h->path,
			 (unsigned long long)i);
		if (rc == 0)
			rc = zr_imp_emit(r, where, h->n, rows);
	}
	return rc;
}

static void close_file(h5file *h)
{
	unsigned k;

	for (k = 0; k < h->n; k++) {
		free(h->sets[k].name);
		free(h->sets[k].buf);
		if (h->sets[k].type > 0)
			H5Tclose(h->sets[k].type);
		if (h->sets[k].ds > 0)
			H5Dclose(h->sets[k].ds);
	}
	if (h->f >= 0)
		H5Fclose(h->f);
}

static int one_file(const zr_imp_config *cfg, const char *path,
		    zr_imp_run *r, zr_imp_dataset *d)
{
	h5file h = { .path = path };
	struct stat before;
	int rc;

	if (stat(path, &before) < 0)
		return zr_imp_error(path, -errno, "cannot stat");
	h.f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
	if (h.f < 0)
		return h5_error(&h, "not an HDF5 file, or a damaged one");
	rc = open_sets(cfg, &h);
	if (rc == 0)
		rc = emit_rows(cfg, &h, r, d);
	close_file(&h);
	return rc ? rc : zr_imp_unchanged(path, &before);
}

int zr_imp_hdf5(const zr_imp_config *cfg, char **srcs, int n,
		zr_imp_dataset *d)
{
	zr_imp_run *r;
	int i, rc;

	/* Errors are reported by us, with the file's name. */
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	rc = zr_imp_run_new(cfg, d, 0, zr_imp_files_size(srcs, n), &r);
	if (rc)
		return rc;
	/* As a broken shard: the rows read so far stay. */
	for (i = 0; i < n && rc == 0; i++)
		rc = zr_imp_skip_rest(r, cfg, srcs[i],
				      one_file(cfg, srcs[i], r, d));
	return zr_imp_run_end(r, rc);
}
