/*
 * progress_line.c - the import's progress line on stderr: samples done
 * (of the total when the source knows it), MiB/s of input and the time
 * left.
 * Shown when stderr is a terminal, or always with --progress; redrawn at
 * most five times a second so it costs nothing.
 */
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "import.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void zr_imp_progress_init(zr_imp_progress *p, int mode, uint64_t items,
			  uint64_t bytes)
{
	p->on = mode < 0 ? isatty(STDERR_FILENO) : mode;
	p->start = p->last = now();
	p->items = p->bytes = 0;
	p->total_items = items;
	p->total_bytes = bytes;
}

static void draw(zr_imp_progress *p, double t, char end)
{
	double secs = t - p->start, mibs, left = -1;

	mibs = secs > 0 ? (double)p->bytes / (1 << 20) / secs : 0;
	if (p->total_bytes && p->bytes && p->bytes <= p->total_bytes)
		left = secs * (double)(p->total_bytes - p->bytes) / p->bytes;
	else if (p->total_items && p->items && p->items <= p->total_items)
		left = secs * (double)(p->total_items - p->items) / p->items;
	fprintf(stderr, "\rimport: %llu", (unsigned long long)p->items);
	if (p->total_items)
		fprintf(stderr, "/%llu", (unsigned long long)p->total_items);
	fprintf(stderr, " samples, %.1f MiB/s", mibs);
	if (left >= 0)
		fprintf(stderr, ", ETA %d:%02d", (int)left / 60,
			(int)left % 60);
	fprintf(stderr, "   %c", end);
	if (end == '\n' || end == '\r')
		fflush(stderr);
}

void zr_imp_progress_step(zr_imp_progress *p, uint64_t items,
			  uint64_t bytes)
{
	double t;

	p->items += items;
	p->bytes += bytes;
	if (!p->on)
		return;
	t = now();
	if (t - p->last < 0.2)
		return;
	p->last = t;
	draw(p, t, '\r');
}

void zr_imp_progress_end(zr_imp_progress *p)
{
	if (p->on)
		draw(p, now(), '\n');
	p->on = 0;
}
