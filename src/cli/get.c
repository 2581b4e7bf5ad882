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
		{ "decode", optional_argument, NULL, 'd' },
		{ "augment", required_argument, NULL, 'a' },
		{ "seed", required_argument, NULL, 's' },
		{ "position", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *out = NULL, *store, *decode = NULL, *augment = NULL;
	uint64_t *idx = NULL, seed = 0, pos = 0;
	zr_image_opts io;
	zr_store *s;
	int c, rc, n, png = 0, images = 0;

	while ((c = zr_cli_getopt(&zr_cli_get, argc, argv, "ho:", opts)) !=
	       -1) {
		if (c == 'p')
			png = 1;
		else if (c == 'o')
			out = optarg;
		else if (c == 'd')
			images = 1, decode = optarg;
		else if (c == 'a')
			images = 1, augment = optarg;
		else if ((c == 's' && zr_cli_parse_u64(optarg, &seed) < 0) ||
			 (c == 'P' && zr_cli_parse_u64(optarg, &pos) < 0))
			return zr_cli_usage(&zr_cli_get, "bad %s '%s': want a "
					    "decimal number", c == 's' ?
					    "--seed" : "--position", optarg);
		else if (c != 's' && c != 'P')
			return zr_cli_getopt_exit(c);
	}
	if (images && png)
		return zr_cli_usage(&zr_cli_get, "--png and --decode/--augment "
				    "exclude each other");
	if (images && (rc = zr_cli_image_opts(&zr_cli_get, decode, augment,
					      &io)) >= 0)
		return rc;
	io.seed = seed;
	io.position = pos;
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
		if (rc == ZR_CLI_OK && images)
			rc = zr_cli_image_check(s, store, "get");
		if (rc == ZR_CLI_OK && images)
			rc = zr_cli_write_images(s, idx, (size_t)n, &io, n == 1,
						 out, store, "get");
		else if (rc == ZR_CLI_OK && png)
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
	.synopsis = "STORE INDEX... [-o OUT] | STORE INDEX --png [-o OUT]\n"
		    "       STORE INDEX... --decode[=SIZE] [--augment A] "
		    "[--seed S] [--position P] [-o OUT]",
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
	"                     4): the bytes of a mount's records/INDEX.png\n"
	"  --decode[=SIZE]    an encoded-image store's records decoded to\n"
	"                     uint8 RGB: without SIZE one record, whole, as\n"
	"                     (H, W, 3); with SIZE (shorter side to SIZE,\n"
	"                     centre crop) a .npy of (count, SIZE, SIZE, 3)\n"
	"  --augment A        the training transform, A = rrc[:SMIN:SMAX]\n"
	"                     and/or flip (comma-separated; SIZE 224 unless\n"
	"                     --decode=SIZE says), drawn from (--seed S,\n"
	"                     --position P + k) for the k-th INDEX\n",
};
