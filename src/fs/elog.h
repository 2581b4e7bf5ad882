/*
 * elog.h - each store's recent failures, readable as STORE/errors, and the
 * daemon's log line (stderr in the foreground, syslog as a daemon).
 */
#ifndef ZR_FS_ELOG_H
#define ZR_FS_ELOG_H

#include <pthread.h>
#include <stddef.h>

#define ZR__ELOG_LINES 32
#define ZR__ELOG_LINE 320

struct zr__elog {
	pthread_mutex_t mu;	/* guards the ring below */
	char line[ZR__ELOG_LINES][ZR__ELOG_LINE];
	unsigned next, count;
};

void zr__elog_init(struct zr__elog *l);
void zr__elog_destroy(struct zr__elog *l);
/* Formats one line "STORE: ...", keeps it in l (NULL: log only) and logs
 * it. */
void zr__elog_add(struct zr__elog *l, const char *store, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Copies the kept lines, oldest first, one per line, into a new malloc'd
 * buffer; *len gets its size.  -ENOMEM on failure. */
int zr__elog_text(struct zr__elog *l, char **out, size_t *len);
/* Where daemon log lines go from now on (0: stderr, 1: syslog). */
void zr__elog_use_syslog(int on);

#endif
