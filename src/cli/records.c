/*
 * records.c - writes records as the NumPy file `get` and `batch` print,
 * through the encoder zrecordfs serves its files with (src/common/
 * npy_file.h), so a command and a mount give the same bytes: planned, then
 * gathered straight into one buffer, then written out.
 */
#include <errno.h>
#include <stdlib.h>

#include "cli.h"
#include "npy_file.h"

int zr_cli_several_form(zr_store *s)
{
	return zr_store_schema(s)->ragged ? ZRFILE_NPZ : ZRFILE_STACK;
}

/* The whole file in a malloc'ed *buf of *len bytes. */
static int encode(zr_store *s, int form, const uint64_t *idx, size_t n,
		  void **buf, size_t *len)
{
	zrfile_source st = { .zs = s, .name = NULL };
	zrfile_npy f;
	int err = zrfile_npy_plan(&f, form, &st, 1, idx, n);

	if (!err && f.total + f.slack > SIZE_MAX)
		err = ZR_E_TOOBIG;
	if (!err && !(*buf = malloc(f.total + f.slack + 1)))
		err = -ENOMEM;
	if (!err) {
		*len = f.total;
		err = zrfile_npy_fill(&f, *buf);
		if (err)
			free(*buf);
	}
	zrfile_npy_free(&f);
	return err;
}

int zr_cli_write_records(zr_store *s, int form, const uint64_t *idx,
			 size_t n, const char *out, const char *store,
			 const char *cmd)
{
	void *buf = NULL;
	size_t len = 0;
	int rc = encode(s, form, idx, n, &buf, &len);

	if (rc < 0)
		return zr_cli_lib_error(store, cmd, rc);
	rc = zr_cli_out_all(out, buf, len, store, cmd);
	free(buf);
	return rc;
}
