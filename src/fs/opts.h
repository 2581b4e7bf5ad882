/*
 * opts.h - zrecordfs command-line options: SRC, the mount point, our own
 * -o options, and the rest handed to libfuse.
 */
#ifndef ZRFS_OPTS_H
#define ZRFS_OPTS_H

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>
#include <stdint.h>

#include "schedule.h"
#include "zrecord.h"

struct zrfs_opts {
	char *src;		/* absolute SRC                           */
	char *mountpoint;
	int ro;
	int foreground;
	int debug;
	int single;		/* -s: one thread serves every request    */
	int clone_fd;
	unsigned max_idle_threads;
	unsigned max_threads;	/* -o max_threads: the session's threads  */
	uint64_t max_batch;	/* -o max_batch_bytes: one batch file     */
	unsigned prefetch;	/* -o prefetch: steps gathered ahead, 0: off */
	uint64_t prefetch_mem;	/* -o prefetch_mem: their bytes, 0: default */
	int direct_batches;	/* -o direct_batches: past the page cache */
	unsigned follow_ms;	/* -o follow: refresh interval, 0: off    */
	zr_sampler_mode mode;	/* default sampler of batch/ files        */
	uint64_t bsize;		/* default batch size                     */
	uint32_t rank, world;
	uint64_t start;		/* -o start: the run's first position     */
	uint64_t granule;	/* -o granule: cycle multiple, 0: W * B   */
	zrcommon_schedule sched; /* -o length=, skip=, grow= (schedule.h) */
	struct fuse_args args;	/* what libfuse's session parses          */
};

/* Parses argv into o.  Returns 0 to mount, 1 when help or the version was
 * printed (exit 0), or -1 after printing a one-line error. */
int zrfs_opts_parse(int argc, char **argv, struct zrfs_opts *o);
void zrfs_opts_free(struct zrfs_opts *o);

#endif
