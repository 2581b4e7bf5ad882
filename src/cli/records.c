/*
 * records.c - writes records as the NumPy file `get` and `batch` print,
 * through the encoder zrecordfs serves its files with (src/files/
 * encoder.h), so a command and a mount give the same bytes: planned (a
 * batch by src/files/batch_file.h, as the mount plans it), then gathered
 * and written out, a dense stack piece by piece (bounded memory), any
 * other form whole; all through one read view, so a file never mixes two
 * states of the store.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "encoder.h"

int zr_cli_several_form(zr_store *s)
{
	return zr_store_schema(s)->ragged ? ZRFILE_NPZ : ZRFILE_STACK;
}

/* Rows per piece of a streamed stack: RSS stays near this whatever the
 * batch (the gather fans each piece out to the pool). */
#define PIECE_BYTES (16u << 20)

/* A dense stack, header then pieces of rows, each gathered into one
 * bounded buffer and written before the next. */
static int write_stack(const zrfile_npy *f, zr_cli_out *o,
		       const char *store, const char *cmd)
{
	uint64_t row, h = zrfile_npy_rows_at(f, &row);
	uint64_t per = row >= PIECE_BYTES ? 1 : PIECE_BYTES / row;
	uint64_t cap = per * row > h ? per * row : h;
	char *buf = cap <= SIZE_MAX ? malloc((size_t)cap) : NULL;
	int rc = buf ? zrfile_npy_fill_head(f, buf) : -ENOMEM;

	if (rc == 0)
		rc = zr_cli_out_write(o, buf, (size_t)h, store, cmd);
	else
		rc = zr_cli_lib_error(store, cmd, rc);
	for (uint64_t at = 0; rc == ZR_CLI_OK && at < f->count; at += per) {
		uint64_t n = f->count - at < per ? f->count - at : per;
		int err = zrfile_npy_fill_piece(f, buf, at, n);

		rc = err ? zr_cli_lib_error(store, cmd, err)
			 : zr_cli_out_write(o, buf, (size_t)(n * row), store,
					    cmd);
	}
	free(buf);
	return rc;
}

/* Any other form is built whole: a ragged record's place in the file
 * depends on the ones before it. */
static int write_whole(const zrfile_npy *f, zr_cli_out *o,
		       const char *store, const char *cmd)
{
	uint64_t max = zrfile_npy_default_max();
	char msg[320];
	void *buf = NULL;
	int err = f->total + f->slack > max ? -EFBIG : 0;

	if (!err && !(buf = malloc((size_t)(f->total + f->slack + 1))))
		err = -ENOMEM;
	if (err) {
		snprintf(msg, sizeof(msg), "the file is %llu bytes, built "
			 "whole in memory (a ragged store's records are placed "
			 "after the ones before them), and may take at most "
			 "%llu (1 GiB or an eighth of the RAM, as a mount's "
			 "max_batch_bytes): ask for fewer records at a time",
			 (unsigned long long)f->total,
			 (unsigned long long)max);
		return zr_cli_error(store, cmd, err, msg);
	}
	err = zrfile_npy_fill(f, buf);
	err = err ? zr_cli_lib_error(store, cmd, err)
		  : zr_cli_out_write(o, buf, (size_t)f->total, store, cmd);
	free(buf);
	return err;
}

int zr_cli_write_file(const zrfile_npy *f, const char *out,
		      const char *store, const char *cmd)
{
	uint64_t row;
	zr_cli_out o;
	int rc = zr_cli_out_open(&o, out, store, cmd);

	if (rc != ZR_CLI_OK)
		return rc;
	rc = zrfile_npy_rows_at(f, &row) ? write_stack(f, &o, store, cmd) :
					   write_whole(f, &o, store, cmd);
	return zr_cli_out_close(&o, store, cmd, rc);
}

int zr_cli_write_records(zr_store *s, int form, const uint64_t *idx,
			 size_t n, const char *out, const char *store,
			 const char *cmd)
{
	zrfile_source st = { .zs = s, .name = NULL };
	zrfile_npy f;
	int rc, err = zr_view_begin(s, ZR_VIEW_WAIT, &st.view);

	if (err)
		return zr_cli_lib_error(store, cmd, err);
	err = zrfile_npy_plan(&f, form, &st, 1, idx, n);
	rc = err ? zr_cli_lib_error(store, cmd, err)
		 : zr_cli_write_file(&f, out, store, cmd);
	zrfile_npy_free(&f);
	zr_view_end(st.view);
	return rc;
}
