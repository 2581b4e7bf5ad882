/*
 * images.c - `zrecord get` of an encoded-image store with --decode or
 * --augment: the records decoded by the library's gather
 * (zr_view_gather_images) into one .npy of uint8 RGB, (H, W, 3) for one
 * record, (count, S, S, 3) for several; the checks `zrecord batch`
 * shares (its decoded batch is the planner's, as a mount's is).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int zr_cli_image_opts(const zr_cli_cmd *cmd, const char *decode,
		      const char *augment, zr_image_opts *o)
{
	if (zr_image_opts_parse(decode, augment, o) < 0)
		return zr_cli_usage(cmd, "%s", zr_errmsg());
	return -1;
}

int zr_cli_image_check(zr_store *s, const char *store, const char *cmd)
{
	if (zr_store_images(s))
		return ZR_CLI_OK;
	fprintf(stderr, "zrecord: %s: %s: --decode and --augment need an "
		"encoded-image store (`zrecord import --encoded` makes one); "
		"this one is not marked (zrecord(5), content.zr)\n", store,
		cmd);
	return ZR_CLI_FAIL;
}

int zr_cli_image_sized(const zr_image_opts *o, const char *store,
		       const char *cmd)
{
	if (o->size || (o->flags & ZR_IMAGE_RRC))
		return ZR_CLI_OK;
	return zr_cli_error(store, cmd, -EINVAL, "whole images (--decode "
			    "without a SIZE) come one record at a time; give "
			    "--decode=SIZE for several");
}

/* The array's shape: one record's own (H, W, 3) when single, else
 * (n, S, S, 3); the bytes it needs in *bytes. */
static int image_shape(zr_view *v, const uint64_t *idx, size_t n,
		       const zr_image_opts *o, int single, uint64_t *shape,
		       uint32_t *ndim, uint64_t *bytes)
{
	uint32_t h, w;
	int err = zr_view_image_shape(v, idx[0], o, &h, &w);

	if (err)
		return err;
	*ndim = 0;
	if (!single)
		shape[(*ndim)++] = n;
	shape[(*ndim)++] = h;
	shape[(*ndim)++] = w;
	shape[(*ndim)++] = 3;
	*bytes = (uint64_t)n * h * w * 3;
	return 0;
}

static int gather_npy(zr_view *v, const uint64_t *idx, size_t n,
		      const zr_image_opts *o, int single, uint8_t **out,
		      size_t *len)
{
	uint64_t shape[4], bytes, off[2];
	zr_dtype u1;
	uint32_t ndim;
	size_t hl;
	uint8_t *buf;
	int err = image_shape(v, idx, n, o, single, shape, &ndim, &bytes);

	if (err)
		return err;
	zr_dtype_parse("|u1", &u1);
	hl = zr_npy_header_len(&u1, ndim, shape);
	buf = bytes <= SIZE_MAX - hl ? malloc(hl + bytes) : NULL;
	if (!buf)
		return -ENOMEM;
	off[0] = 0;
	off[1] = bytes;
	err = zr_npy_write_header(&u1, ndim, shape, buf, hl, &hl);
	if (!err)
		err = zr_view_gather_images(v, idx, n, o, buf + hl, bytes,
					    o->size || (o->flags &
							ZR_IMAGE_RRC) ? NULL
								      : off);
	if (err) {
		free(buf);
		return err;
	}
	*out = buf;
	*len = hl + bytes;
	return 0;
}

int zr_cli_write_images(zr_store *s, const uint64_t *idx, size_t n,
			const zr_image_opts *o, int single, const char *out,
			const char *store, const char *cmd)
{
	char why[512];
	uint8_t *buf = NULL;
	size_t len = 0;
	zr_view *v;
	int err;

	if (!single && zr_cli_image_sized(o, store, cmd) != ZR_CLI_OK)
		return ZR_CLI_FAIL;
	err = zr_view_begin(s, ZR_VIEW_WAIT, &v);
	if (err)
		return zr_cli_lib_error(store, cmd, err);
	err = gather_npy(v, idx, n, o, single, &buf, &len);
	snprintf(why, sizeof(why), "%s", err ? zr_errmsg() : "");
	zr_view_end(v);
	if (err)
		return zr_cli_error(store, cmd, err, why);
	err = zr_cli_out_all(out, buf, len, store, cmd);
	free(buf);
	return err;
}
