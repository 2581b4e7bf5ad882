/*
 * fuzz_wds.c - libFuzzer harness for `zrecord import`'s WebDataset path:
 * libarchive reads the input as a tar (gzip or not, from memory),
 * wds_read.c groups its members into samples, and every field is decoded
 * as the import would (images, .cls, .npy, bytes).
 *
 * Every sample handed on must have the first sample's fields, each
 * once, and every decoded field must be a consistent array; whatever the
 * input, the reader reports an error or ends cleanly.
 */
#include <archive.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "import.h"

typedef struct seen {
	unsigned nfields;
	uint64_t samples;
} seen;

static int take(void *ctx, zr_imp_sample *s, uint64_t bytes)
{
	static const zr_imp_image_opts opts;
	seen *c = ctx;
	int used[ZR_IMP_MAX_FIELDS] = { 0 };
	unsigned k, i;
	uint64_t n;

	(void)bytes;
	if (c->samples++ == 0)
		c->nfields = s->nfields;
	ZR_FUZZ_CHECK(s->nfields == c->nfields && s->where);
	for (k = 0; k < s->nfields; k++) {
		zr_imp_field *f = &s->f[k];

		ZR_FUZZ_CHECK(f->store == (int)k && !used[k]);
		used[k] = 1;
		zr_imp_field_decode(f, &opts, NULL);
		if (f->err)
			continue;
		n = f->out.dtype.itemsize;
		for (i = 0; i < f->out.ndim; i++)
			n *= f->out.shape[i];
		ZR_FUZZ_CHECK(n == f->out.len && f->out.data);
	}
	zr_imp_sample_clear(s);
	return 0;
}

static void skip(void *ctx, const char *where, const char *why)
{
	(void)ctx;
	ZR_FUZZ_CHECK(where && why);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *devnull;
	seen c = { 0 };
	const zr_imp_wds_sink sink = { take, skip, &c };
	zr_imp_wds_reader *w;
	struct archive *a;

	if (!devnull) {
		devnull = fopen("/dev/null", "w");
		zr_imp_report_to(devnull);
	}
	a = archive_read_new();
	ZR_FUZZ_CHECK(a != NULL);
	archive_read_support_filter_gzip(a);
	archive_read_support_format_tar(a);
	ZR_FUZZ_CHECK(zr_imp_wds_new(size && data[0] & 1, &sink, &w) == 0);
	if (archive_read_open_memory(a, data, size) == ARCHIVE_OK)
		zr_imp_wds_shard(w, a, "fuzz.tar");
	zr_imp_wds_free(w);
	archive_read_free(a);
	return 0;
}
