/*
 * rows.c - what the array sources (HDF5, .npy/.npz, LMDB) share: one
 * sample made of copies of one row (or value) per field, queued in the
 * pipeline like a decoded image; the dtype string of an element type; the
 * check that a file read from start to end did not change meanwhile.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "import.h"

int zr_imp_emit(zr_imp_run *r, const char *where, unsigned n,
		const zr_imp_row *rows)
{
	zr_imp_sample *s;
	unsigned k;
	int rc = zr_imp_run_next(r, &s);
	uint64_t bytes = 0;

	if (rc)
		return rc;
	s->nfields = n;
	s->where = strdup(where);
	for (k = 0; k < n; k++) {
		zr_imp_field *f = &s->f[k];

		f->store = rows[k].store;
		f->kind = rows[k].kind;
		f->out.dtype = rows[k].dtype;
		f->out.ndim = rows[k].ndim;
		if (rows[k].ndim)
			memcpy(f->out.shape, rows[k].shape,
			       rows[k].ndim * sizeof(rows[k].shape[0]));
		if (f->kind == ZR_IMP_BYTES) {
			f->bytes = malloc(rows[k].len ? rows[k].len : 1);
			f->nbytes = rows[k].len;
			if (f->bytes)
				memcpy(f->bytes, rows[k].data, rows[k].len);
		} else {
			f->out.data = malloc(rows[k].len ? rows[k].len : 1);
			f->out.len = rows[k].len;
			if (f->out.data)
				memcpy(f->out.data, rows[k].data, rows[k].len);
		}
		if (!f->bytes && !f->out.data)
			return zr_imp_error(where, -ENOMEM, NULL);
		bytes += rows[k].len;
	}
	zr_imp_run_bytes(r, bytes);
	return s->where ? 0 : zr_imp_error(where, -ENOMEM, NULL);
}

int zr_imp_dtype(char kind, int little, size_t size, zr_dtype *out)
{
	char s[8];

	if (size > 16)
		return ZR_E_DTYPE;
	snprintf(s, sizeof(s), "%c%c%zu", size == 1 ? '|' : little ? '<' : '>',
		 kind, size);
	return zr_dtype_parse(s, out);
}

uint64_t zr_imp_files_size(char **paths, int n)
{
	struct stat st;
	uint64_t total = 0;
	int i;

	for (i = 0; i < n; i++)
		if (stat(paths[i], &st) == 0 && S_ISREG(st.st_mode))
			total += (uint64_t)st.st_size;
	return total;
}

int zr_imp_unchanged(const char *path, const struct stat *before)
{
	struct stat now;

	if (stat(path, &now) == 0 && now.st_size == before->st_size &&
	    zr_imp_mtime_ns(&now) == zr_imp_mtime_ns(before))
		return 0;
	return zr_imp_error(path, ZR_IMP_ECHANGED, "the file changed while "
			    "being imported");
}
