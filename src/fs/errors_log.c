/*
 * errors_log.c - a store's ring of recent failure lines (the STORE/errors file)
 * and the daemon's own log sink; the daemon's leaf mutex lives here as the
 * rings are its first users.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "errors_log.h"

struct zrfs_elog {
	char line[ZRFS_ELOG_LINES][ZRFS_ELOG_LINE]; /* zrfs_leaf_lock */
	unsigned next, count;
};

static pthread_mutex_t leaf_mu = PTHREAD_MUTEX_INITIALIZER;
static int use_syslog;

void zrfs_leaf_lock(void)
{
	pthread_mutex_lock(&leaf_mu);
}

void zrfs_leaf_unlock(void)
{
	pthread_mutex_unlock(&leaf_mu);
}

struct zrfs_elog *zrfs_elog_new(void)
{
	return calloc(1, sizeof(struct zrfs_elog));
}

void zrfs_elog_free(struct zrfs_elog *l)
{
	free(l);
}

void zrfs_elog_use_syslog(int on)
{
	use_syslog = on;
	if (on)
		openlog("zrecordfs", LOG_PID, LOG_DAEMON);
}

void zrfs_elog_add(struct zrfs_elog *l, const char *store, const char *fmt, ...)
{
	char msg[ZRFS_ELOG_LINE - 32], stamp[24];
	struct tm tm;
	time_t now = time(NULL);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* One line per failure, whatever the library message held. */
	for (char *p = msg; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	if (use_syslog)
		syslog(LOG_ERR, "%s: %s", store, msg);
	else
		fprintf(stderr, "zrecordfs: %s: %s\n", store, msg);
	if (!l)
		return;
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
	zrfs_leaf_lock();
	snprintf(l->line[l->next], ZRFS_ELOG_LINE, "%s %s\n", stamp, msg);
	l->next = (l->next + 1) % ZRFS_ELOG_LINES;
	if (l->count < ZRFS_ELOG_LINES)
		l->count++;
	zrfs_leaf_unlock();
}

int zrfs_elog_text(struct zrfs_elog *l, char **out, size_t *len)
{
	char *buf = malloc(ZRFS_ELOG_LINES * ZRFS_ELOG_LINE + 1);
	size_t n = 0;

	if (!buf)
		return -ENOMEM;
	zrfs_leaf_lock();
	for (unsigned i = 0; l && i < l->count; i++) {
		unsigned k = (l->next + ZRFS_ELOG_LINES - l->count + i) %
			     ZRFS_ELOG_LINES;
		size_t m = strlen(l->line[k]);

		memcpy(buf + n, l->line[k], m);
		n += m;
	}
	zrfs_leaf_unlock();
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}
