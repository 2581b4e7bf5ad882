/*
 * progress_meter.c - a one-line progress meter on stderr for long operations,
 * shown only when stderr is a terminal so logs and pipes stay clean.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "cli.h"

void zr_cli_progress_init(zr_cli_progress *p, const char *label)
{
	p->on = isatty(STDERR_FILENO);
	p->label = label;
	p->last_permille = -1;
	p->shown = 0;
	pthread_mutex_init(&p->lock, NULL);
}

/* Redraws only when the shown number changes. */
static void show(zr_cli_progress *p, uint64_t done, uint64_t total)
{
	int permille;

	if (total == 0) {
		/* Unknown size (a pipe): count MiB instead of a percentage. */
		permille = (int)((done >> 20) & 0x7fffffff);
		if (permille == p->last_permille)
			return;
		fprintf(stderr, "\r%s: %" PRIu64 " MiB", p->label, done >> 20);
	} else {
		permille = (int)(done >= total ? 1000 :
				 (double)done * 1000.0 / (double)total);
		if (permille == p->last_permille)
			return;
		fprintf(stderr, "\r%s: %3d.%d%%", p->label, permille / 10,
			permille % 10);
	}
	p->last_permille = permille;
	p->shown = 1;
}

void zr_cli_progress_fn(void *ctx, uint64_t done, uint64_t total)
{
	zr_cli_progress *p = ctx;

	if (!p->on)
		return;
	/* The library may report from its pool threads. */
	pthread_mutex_lock(&p->lock);
	show(p, done, total);
	pthread_mutex_unlock(&p->lock);
}

void zr_cli_progress_end(zr_cli_progress *p)
{
	if (p->on && p->shown)
		fputc('\n', stderr);
	p->shown = 0;
	pthread_mutex_destroy(&p->lock);
}
