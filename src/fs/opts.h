/*
 * opts.h - zrecordfs command-line options: SRC, the mount point, our own
 * -o options, and the rest handed to libfuse (struct zrfs_opts, in fs.h
 * with the daemon's other shared types).
 */
#ifndef ZRFS_OPTS_H
#define ZRFS_OPTS_H

struct zrfs_opts; /* fs.h */

/* Parses argv into o.  Returns 0 to mount, 1 when help or the version was
 * printed (exit 0), or -1 after printing a one-line error. */
int zrfs_opts_parse(int argc, char **argv, struct zrfs_opts *o);
void zrfs_opts_free(struct zrfs_opts *o);

#endif
