/*
 * batch_write.c - what `zrecord batch`'s two draws, a store's (batch.c)
 * and a mixture's (batchmix.c), share (batch_write.h): the length each
 * source starts with, the planner's spec of the batch, and the planned
 * batch written out.
 */
#include <stdio.h>

#include "batch_stream.h"
#include "batch_write.h"

int zr_cli_batch_length(const batch_args *a, size_t k, size_t sources,
			uint64_t n, uint64_t *out)
{
	const zrcommon_schedule *s = &a->sched;

	if (!s->nlen) {
		*out = n;
		return ZR_CLI_OK;
	}
	if (s->nlen != sources)
		return zr_cli_usage(a->cmd, "--length gives %zu lengths, "
				    "want one per source (%zu)", s->nlen,
				    sources);
	if (s->len[k] > n) {
		fprintf(stderr, "zrecord: %s: batch: --length %llu of source "
			"%zu is above its %llu records\n", a->store,
			(unsigned long long)s->len[k], k,
			(unsigned long long)n);
		return ZR_CLI_FAIL;
	}
	*out = s->len[k];
	return ZR_CLI_OK;
}

void zr_cli_batch_spec(const batch_args *a, int form,
		       const zrcommon_mixfile *mix,
		       struct zrfile_batch_spec *s)
{
	*s = (struct zrfile_batch_spec){
		.cfg = a->cfg, .start = a->start, .granule = a->granule,
		.step = a->step, .sched = &a->sched, .form = form, .mix = mix,
	};
}

int zr_cli_batch_plan(const struct zrfile_batch_spec *s,
		      struct zrfile_batch *b, char *msg, size_t cap)
{
	int err = s->mix ? 0 : zrfile_batch_resumed(s->cfg.mode, s->start,
						    s->granule, msg, cap);

	return err ? err : zrfile_batch_plan(b, s, 0, 0, msg, cap);
}

int zr_cli_batch_write(const batch_args *a,
		       const struct zrfile_batch_spec *s,
		       struct zrfile_batch *b)
{
	char msg[320];
	int rc, err = zr_cli_batch_plan(s, b, msg, sizeof(msg));

	if (err && msg[0])
		rc = zr_cli_error(a->store, "batch", err, msg);
	else if (err)
		rc = zr_cli_lib_error(a->store, "batch", err);
	else
		rc = zr_cli_write_file(&b->file, a->out, a->store, "batch");
	zrfile_batch_free(b);
	return rc;
}
