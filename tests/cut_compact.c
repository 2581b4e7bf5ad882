/*
 * cut_compact.c - `cut_compact STORE` leaves STORE as a compact cut short
 * by a crash: it opens the store read-write and exits, without closing,
 * once the compact has made its last move but not yet truncated, so
 * STORE/maintenance.zr stays behind for the recovery tests (tests/cli,
 * tests/fs, contrib/python).  Exits 0 if it stopped there, 1 otherwise.
 */
#include <stdio.h>
#include <unistd.h>

#include "zrecord.h"

static void stop_at_end(void *ctx, uint64_t done, uint64_t total)
{
	(void)ctx;
	if (done == total)
		_exit(0);
}

int main(int argc, char **argv)
{
	zr_store *s;

	if (argc != 2 || zr_store_open(argv[1], 0, &s)) {
		fprintf(stderr, "cut_compact: %s\n", zr_errmsg());
		return 1;
	}
	zr_store_compact(s, stop_at_end, NULL);
	fprintf(stderr, "cut_compact: the compact had nothing to move\n");
	_exit(1);
}
