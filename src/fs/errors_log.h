/*
 * errors_log.h - each store's recent failures, readable as STORE/errors,
 * and the daemon's log line (stderr in the foreground, syslog as a daemon).
 *
 * It stays in the daemon rather than the library: libzrecord already
 * hands every failure to its caller (the return code and zr_errmsg), and
 * a caller that is there to read it, as the CLI and loaderx are, has no
 * use for a ring.  The mount's failures often have no such caller (a
 * kernel readahead gets EIO, a follower's refresh fails), and a file
 * beside the store is how a mount shows them.
 */
#ifndef ZRFS_ERRORS_LOG_H
#define ZRFS_ERRORS_LOG_H

#include <stddef.h>

/* The daemon's one leaf mutex for what is rarely touched: every errors
 * ring and the mount's park queue (store_park.h).  Each holds it for a
 * few copies, never across a call out of its file, so no other lock is
 * ever taken inside it and the two never nest. */
void zrfs_leaf_lock(void);
void zrfs_leaf_unlock(void);

#define ZRFS_ELOG_LINES 32
#define ZRFS_ELOG_LINE 320

/* A ring of the last ZRFS_ELOG_LINES failure lines, allocated with the
 * store or mixture it belongs to (zrfs_elog_new: NULL when out of
 * memory).  Every function here also takes NULL: lines are then only
 * logged, and the text is empty. */
struct zrfs_elog;
struct zrfs_elog *zrfs_elog_new(void);
void zrfs_elog_free(struct zrfs_elog *l);

/* Formats one line "STORE: ...", keeps it in l (NULL: log only) and logs
 * it. */
void zrfs_elog_add(struct zrfs_elog *l, const char *store, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Copies the kept lines, oldest first, one per line, into a new malloc'd
 * buffer; *len gets its size.  -ENOMEM on failure. */
int zrfs_elog_text(struct zrfs_elog *l, char **out, size_t *len);
/* Where daemon log lines go from now on (0: stderr, 1: syslog). */
void zrfs_elog_use_syslog(int on);

#endif
