/*
 * run_opts.h - the options that say what batch files draw and how large
 * they may be (struct zrtree_run, tree.h): sampler=, batch_size=, rank=,
 * world=, start=, granule=, skip=, grow=, length=, max_batch_bytes=,
 * decode=, augment=.  One
 * table parses them and prints their --help rows, for the mount's -o
 * (src/fs/opts.c) and `zrecord cat -o`, so that both read a batch name
 * the same way and refuse a bad value in the same words.
 */
#ifndef ZRTREE_RUN_OPTS_H
#define ZRTREE_RUN_OPTS_H

#include <stddef.h>
#include <stdint.h>

#include "tree.h"

/* iid, batch size 256, rank 0 of world 1, from position 0, no schedule,
 * max_batch_bytes of 1 GiB or an eighth of the RAM (the smaller). */
void zrtree_run_defaults(struct zrtree_run *r);
/* Frees what skip=, grow= and length= added. */
void zrtree_run_free(struct zrtree_run *r);

/* Parses the run option arg into r: 0, or -EINVAL with what the option
 * takes in msg ("rank=R takes 0 to 4294967294, below world"); a message
 * names the option, the caller the value.  -ENOENT when arg is no run
 * option. */
int zrtree_run_parse(struct zrtree_run *r, const char *arg, char *msg,
		     size_t cap);
/* The checks across options, after the last: -EINVAL with the reason in
 * msg ("rank=3 needs world > 3"); start=P@G's G becomes the granule. */
int zrtree_run_check(struct zrtree_run *r, char *msg, size_t cap);

/* Prints on stdout the --help row of the run option named name (as in
 * the table: "sampler="); nothing for another name. */
void zrtree_run_help(const char *name);
/* Prints on stdout every run option's --help row, in table order. */
void zrtree_run_help_all(void);
/* One --help row "    -o ARG   HELP", HELP's lines under one another
 * from column 28 (a long ARG on a line of its own): the run options' and
 * a host's own. */
void zrtree_run_help_row(const char *arg, const char *help);

/* The parsers of the run options' values, for a host's own options too:
 * a whole decimal in [lo, hi]; a byte count of at least lo with an
 * optional binary K, M or G.  0 or -EINVAL. */
int zrtree_run_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out);
int zrtree_run_size(const char *s, uint64_t lo, uint64_t *out);

#endif
