/*
 * get.c - `zrecord get`: records by index as NumPy files (one record: its
 * .npy, as the mount's records/I.npy; several: a stacked .npy, or an .npz
 * for a ragged store).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "encoder.h"
#include "form_png.h"

/* --png: the record as the mount's records/INDEX.png, read through st's
 * view. */
static int png_of(const zrfile_source *st, uint64_t idx, const char *out,
		  const char *store)
{
	zrfile_png img;
	uint64_t size;
	void *buf;
	int err = zrfile_record_png_plan(st, idx, &img);

	if (err == ZR_E_DTYPE || err == ZR_E_SHAPE) {
		fprintf(stderr, "zrecord get: %s: record %llu is not an image "
			"(--png needs uint8 of shape (H,W), (H,W,C) or "
			"(C,H,W), C in 1, 3, 4)\n", store,
			(unsigned long long)idx);
		return ZR_CLI_FAIL;
	}
	if (err)
		return zr_cli_lib_error(store, "get", err);
	size = zrfile_png_size(&img);
	buf = size <= SIZE_MAX ? malloc(size) : NULL;
	if (!buf)
		return zr_cli_lib_error(store, "get", -ENOMEM);
	err = zrfile_record_png_fill(st, idx, &img, buf);
	err = err ? zr_cli_lib_error(store, "get", err)
		  : zr_cli_out_all(out, buf, size, store, "get");
	free(buf);
	return err;
}

static int write_png(zr_store *s, uint64_t idx, const char *out,
		     const char *store)
{
	zrfile_source st = { .zs = s };
	int err = zr_view_begin(s, ZR_VIEW_WAIT, &st.view);

	if (err)
		return zr_cli_lib_error(store, "get", err);
	err = png_of(&st, idx, out, store);
	zr_view_end(st.view);
	return err;
}

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "png", no_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *out = NULL, *store;
	uint64_t *idx = NULL;
	zr_store *s;
	int c, rc, n, png = 0;

	while ((c = zr_cli_getopt(&zr_cli_get, argc, argv, "ho:", opts)) !=
	       -1) {
		if (c == 'p')
			png = 1;
		else if (c == 'o')
			out = optarg;
		else
			return zr_cli_getopt_exit(c);
	}
	if (optind >= argc)
		return zr_cli_usage(&zr_cli_get, "expected STORE and INDEX...");
	store = argv[optind];
	n = argc - optind - 1;
	if (png && n != 1)
		return zr_cli_usage(&zr_cli_get, "--png takes one INDEX");
	rc = zr_cli_parse_indices(&zr_cli_get, argv + optind + 1, n, &idx);
	if (rc != ZR_CLI_OK)
		return rc;
	rc = zr_cli_open(store, ZR_OPEN_RDONLY, "get", &s);
	if (rc == ZR_CLI_OK) {
		rc = zr_cli_check_range(store, "get", s, idx, (size_t)n);
		if (rc == ZR_CLI_OK && png)
			rc = write_png(s, idx[0], out, store);
		else if (rc == ZR_CLI_OK)
			rc = zr_cli_write_records(s, n == 1 ?
						  ZRFILE_RECORD :
						  zr_cli_several_form(s), idx,
						  (size_t)n, out, store, "get");
		rc = zr_cli_close(s, store, "get", rc);
	}
	free(idx);
	return rc;
}

const zr_cli_cmd zr_cli_get = {
	.name = "get",
	.run = run,
	.synopsis = "STORE INDEX... [-o OUT] | STORE INDEX --png [-o OUT]",
	.help =
	"Writes records as NumPy data to OUT (default stdout, never a\n"
	"terminal).  One INDEX: that record as a .npy, the bytes of a\n"
	"zrecordfs mount's STORE/records/INDEX.npy.  Several: a dense\n"
	"store gives one .npy of shape (count, *item_shape) in the order\n"
	"given; a ragged store gives an .npz whose members arr_0.npy,\n"
	"arr_1.npy, ... are the records in order (like np.savez).  INDEX is\n"
	"a decimal record number from 0 to records - 1.\n\n"
	"  -o, --output OUT   write to the file OUT (\"-\": stdout)\n"
	"  --png              one record of a uint8 image store as a PNG\n"
	"                     (shape (H,W), (H,W,C) or (C,H,W), C in 1, 3,\n"
	"                     4): the bytes of a mount's records/INDEX.png\n",
};
