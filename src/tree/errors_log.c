/*
 * errors_log.c - a store's ring of recent failure lines (the STORE/errors
 * file) and the log sink they also go to.
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

struct zrtree_elog {
	char line[ZRTREE_ELOG_LINES][ZRTREE_ELOG_LINE]; /* ring_mu */
	unsigned next, count;
};

/* Every ring's: each holds it for a few copies, never across a call. */
static pthread_mutex_t ring_mu = PTHREAD_MUTEX_INITIALIZER;
static int use_syslog;

struct zrtree_elog *zrtree_elog_new(void)
{
	return calloc(1, sizeof(struct zrtree_elog));
}

void zrtree_elog_free(struct zrtree_elog *l)
{
	free(l);
}

void zrtree_elog_use_syslog(int on)
{
	use_syslog = on;
	if (on)
		openlog(program_invocation_short_name, LOG_PID, LOG_DAEMON);
}

void zrtree_elog_note(const char *fmt, ...)
{
	char msg[ZRTREE_ELOG_LINE];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (use_syslog)
		syslog(LOG_INFO, "%s", msg);
	else
		fprintf(stderr, "%s: %s\n", program_invocation_short_name, msg);
}

void zrtree_elog_add(struct zrtree_elog *l, const char *store, const char *fmt, ...)
{
	char msg[ZRTREE_ELOG_LINE - 32], stamp[24];
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
		fprintf(stderr, "%s: %s: %s\n", program_invocation_short_name,
			store, msg);
	if (!l)
		return;
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
	pthread_mutex_lock(&ring_mu);
	snprintf(l->line[l->next], ZRTREE_ELOG_LINE, "%s %s\n", stamp, msg);
	l->next = (l->next + 1) % ZRTREE_ELOG_LINES;
	if (l->count < ZRTREE_ELOG_LINES)
		l->count++;
	pthread_mutex_unlock(&ring_mu);
}

int zrtree_elog_text(struct zrtree_elog *l, char **out, size_t *len)
{
	char *buf = malloc(ZRTREE_ELOG_LINES * ZRTREE_ELOG_LINE + 1);
	size_t n = 0;

	if (!buf)
		return -ENOMEM;
	pthread_mutex_lock(&ring_mu);
	for (unsigned i = 0; l && i < l->count; i++) {
		unsigned k = (l->next + ZRTREE_ELOG_LINES - l->count + i) %
			     ZRTREE_ELOG_LINES;
		size_t m = strlen(l->line[k]);

		memcpy(buf + n, l->line[k], m);
		n += m;
	}
	pthread_mutex_unlock(&ring_mu);
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}
