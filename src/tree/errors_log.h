/*
 * errors_log.h - each store's recent failures, readable as STORE/errors,
 * and the log line (stderr, or syslog for a daemon).
 *
 * It stays out of libzrecord: the library already
 * hands every failure to its caller (the return code and zr_errmsg), and
 * a caller that is there to read it, as the CLI and loaderx are, has no
 * use for a ring.  The mount's failures often have no such caller (a
 * kernel readahead gets EIO, a follower's refresh fails), and a file
 * beside the store is how a mount shows them.
 */
#ifndef ZRTREE_ERRORS_LOG_H
#define ZRTREE_ERRORS_LOG_H

#include <stddef.h>

#define ZRTREE_ELOG_LINES 32
#define ZRTREE_ELOG_LINE 320

/* A ring of the last ZRTREE_ELOG_LINES failure lines, allocated with the
 * store or mixture it belongs to (zrtree_elog_new: NULL when out of
 * memory).  Every function here also takes NULL: lines are then only
 * logged, and the text is empty. */
struct zrtree_elog;
struct zrtree_elog *zrtree_elog_new(void);
void zrtree_elog_free(struct zrtree_elog *l);

/* Formats one line "STORE: ...", keeps it in l (NULL: log only) and logs
 * it. */
void zrtree_elog_add(struct zrtree_elog *l, const char *store, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Copies the kept lines, oldest first, one per line, into a new malloc'd
 * buffer; *len gets its size.  -ENOMEM on failure. */
int zrtree_elog_text(struct zrtree_elog *l, char **out, size_t *len);
/* Where daemon log lines go from now on (0: stderr, 1: syslog). */
void zrtree_elog_use_syslog(int on);
/* A line that is no failure (the prefetch summary at unmount) to the
 * same place: "PROG: line" on stderr, or syslog at LOG_INFO. */
void zrtree_elog_note(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

#endif
