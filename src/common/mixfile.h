/*
 * mixfile.h - the parser of a mixture file NAME.mix.json (zrecord(1),
 * "Mixtures"), on a buffer and without I/O so the Check suite and a fuzz
 * harness call it directly:
 *
 *   {"sources": [{"path": "web", "weight": 7}, {"path": "code",
 *                "weight": 2}],
 *    "schedule": [{"from": 1000000, "weights": [1, 1]}]}
 *
 * "sources" (1..1024 objects; path: a non-empty string, weight: an
 * integer 0..2^20, at least one above 0) is required; "schedule"
 * (weight changes, "from" in non-decreasing order, one weight per source,
 * at least one above 0) is optional.  Paths are as
 * written (the caller resolves them against the file's folder).  Anything
 * else, an unknown key included, is an error naming where it is.
 */
#ifndef ZRCOMMON_MIXFILE_H
#define ZRCOMMON_MIXFILE_H

#include <stddef.h>
#include <stdint.h>

typedef struct zrcommon_mixfile {
	uint32_t k;          /* sources                                */
	char **path;         /* k strings                              */
	uint64_t *weight;    /* k                                      */
	uint32_t nsched;     /* weight changes                         */
	uint64_t *from;      /* nsched positions                       */
	uint64_t *weights;   /* nsched * k                             */
} zrcommon_mixfile;

/* Parses buf[0..len) into *out (zeroed first; on failure freed again).
 * Returns 0, or -EINVAL with msg (msg_cap bytes) saying what and where. */
int zrcommon_mixfile_parse(const char *buf, size_t len, zrcommon_mixfile *out,
			   char *msg, size_t msg_cap);
void zrcommon_mixfile_free(zrcommon_mixfile *m);

/* The largest mixture file read. */
#define ZRCOMMON_MIXFILE_MAX (1u << 20)
/* Reads the file at path whole and parses it (mixfile_read.c): 0, or
 * -errno (-ELOOP: path is a symlink, refused as the mount hides it),
 * -EFBIG (over ZRCOMMON_MIXFILE_MAX) or the parser's -EINVAL, with msg
 * saying why. */
int zrcommon_mixfile_read(const char *path, zrcommon_mixfile *out, char *msg,
			  size_t msg_cap);

#endif
