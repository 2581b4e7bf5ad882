/*
 * records.c - writes records as the NumPy file `get` and `batch` print,
 * through the encoder zrecordfs serves its files with (src/common/
 * npyfile.h), so a command and a mount give the same bytes: planned, then
 * gathered straight into one buffer, then written out, all through one
 * read view, so a file never mixes two states of the store.
 */
#include <errno.h>
#include <stdlib.h>

#include "cli.h"
#include "npyfile.h"

int zr_cli_several_form(zr_store *s)
{
	return zr_store_schema(s)->ragged ? ZR_NPYFILE_NPZ : ZR_NPYFILE_STACK;
}

/* The whole file in a malloc'ed *buf of *len bytes. */
static int encode(zr_store *s, int form, const uint64_t *idx, size_t n,
		  void **buf, size_t *len)
{
	zr_npyfile_stream st = { .zs = s, .name = NULL };
	zr_npyfile f;
	int err = zr_view_begin(s, ZR_VIEW_WAIT, &st.view);

	if (err)
		return err;
	err = zr_npyfile_plan(&f, form, &st, 1, idx, n);

	if (!err && f.total + f.slack > SIZE_MAX)
		err = ZR_E_TOOBIG;
	if (!err && !(*buf = malloc(f.total + f.slack + 1)))
		err = -ENOMEM;
	if (!err) {
		*len = f.total;
		err = zr_npyfile_fill(&f, *buf);
		if (err)
			free(*buf);
	}
	zr_npyfile_free(&f);
	zr_view_end(st.view);
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
