/*
 * batch_schedule.c - the mount's batch schedule (batch_schedule.h).
 */
#include <errno.h>

#include "batch_schedule.h"
#include "batch_node.h"
#include "errors_log.h"

int zrfs_sched_option(struct zrfs_opts *o, int which, const char *val)
{
	char msg[160]; /* opts.c prints the option's own message */

	if (which == ZRCOMMON_SKIP || which == ZRCOMMON_GROW)
		return zrcommon_schedule_add(&o->sched, which, val, msg,
					     sizeof(msg));
	return zrcommon_schedule_lengths(&o->sched, val, ':', msg,
					 sizeof(msg));
}

static int not_served(const struct zrfs_node *n, const char *why)
{
	const char *name;
	struct zrfs_elog *log = zrfs_batch_elog(n, &name);

	zrfs_elog_add(log, name, "batch %llu-%llu: -o length, grow: %s "
		      "(ENOENT)", (unsigned long long)n->seed,
		      (unsigned long long)n->step, why);
	return -ENOENT;
}

int zrfs_sched_base(struct zrfs_fs *fs, const struct zrfs_node *n,
		    uint32_t k, const uint64_t *have, uint64_t *base)
{
	char msg[160];

	if (zrcommon_schedule_base(&fs->opts.sched, k, have, base, msg,
				   sizeof(msg)))
		return not_served(n, msg);
	return 0;
}

int zrfs_sched_apply(struct zrfs_fs *fs, const struct zrfs_node *n,
		     zr_stream *st, const uint64_t *from,
		     const uint64_t *weights, size_t nw,
		     const uint64_t *base, const uint64_t *have)
{
	const struct zrfs_opts *o = &fs->opts;
	char msg[256];
	int err = zrcommon_schedule_apply(&o->sched, st, from, weights, nw,
					  zr_stream_sources(st));

	if (!err)
		err = zrcommon_schedule_check(&o->sched, st, o->start, n->step,
					      o->rank, o->world, n->bsize,
					      base, have, msg, sizeof(msg));
	return err == -ENOENT ? not_served(n, msg) : err;
}
