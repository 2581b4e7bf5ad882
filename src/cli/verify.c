/*
 * verify.c - `zrecord verify`: decodes every record and lists the bad ones
 * (sorted, one per line on stdout), exiting non-zero if there are any.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

typedef struct bad_entry {
	uint64_t idx;
	int err;
} bad_entry;

typedef struct bad_list {
	pthread_mutex_t lock; /* guards everything below: the library may
			       * report from several pool threads */
	bad_entry *v;
	size_t n, cap;
	int oom;
} bad_list;

static void on_bad(void *ctx, uint64_t idx, int err)
{
	bad_list *l = ctx;
	bad_entry *nv;

	pthread_mutex_lock(&l->lock);
	if (l->n == l->cap) {
		nv = realloc(l->v, (l->cap ? l->cap * 2 : 64) * sizeof(*nv));
		if (!nv) {
			l->oom = 1;
			goto out;
		}
		l->v = nv;
		l->cap = l->cap ? l->cap * 2 : 64;
	}
	l->v[l->n].idx = idx;
	l->v[l->n].err = err;
	l->n++;
out:
	pthread_mutex_unlock(&l->lock);
}

static int by_index(const void *a, const void *b)
{
	uint64_t x = ((const bad_entry *)a)->idx;
	uint64_t y = ((const bad_entry *)b)->idx;

	return x < y ? -1 : x > y;
}

static int report(const char *store, zr_store *s, bad_list *l, int64_t bad)
{
	char msg[128];
	size_t i;

	if (l->n)
		qsort(l->v, l->n, sizeof(*l->v), by_index);
	for (i = 0; i < l->n; i++)
		printf("bad record %" PRIu64 ": %s\n", l->v[i].idx,
		       zr_strerror(l->v[i].err));
	if (bad == 0) {
		printf("ok: %" PRIu64 " records\n", zr_store_length(s));
		return ZR_CLI_OK;
	}
	snprintf(msg, sizeof(msg), "%" PRId64 " of %" PRIu64 " records bad%s",
		 bad, zr_store_length(s), l->oom ? " (list incomplete)" : "");
	return zr_cli_error(store, "verify", ZR_E_CORRUPT, msg);
}

static int run(int argc, char **argv)
{
	bad_list l = { .lock = PTHREAD_MUTEX_INITIALIZER };
	zr_cli_progress prog;
	const char *store;
	zr_store *s;
	int64_t bad;
	int rc;

	rc = zr_cli_store_args(&zr_cli_verify, argc, argv, 0);
	if (rc >= 0)
		return rc;
	store = argv[optind];
	rc = zr_cli_open(store, ZR_OPEN_RDONLY, "verify", &s);
	if (rc != ZR_CLI_OK)
		return rc;
	zr_cli_progress_init(&prog, "verify");
	bad = zr_store_verify(s, on_bad, &l, zr_cli_progress_fn, &prog);
	zr_cli_progress_end(&prog);
	if (bad < 0)
		rc = zr_cli_lib_error(store, "verify", (int)bad);
	else
		rc = report(store, s, &l, bad);
	free(l.v);
	return zr_cli_close(s, store, "verify", rc);
}

const zr_cli_cmd zr_cli_verify = {
	.name = "verify",
	.run = run,
	.synopsis = "STORE",
	.help =
	"Decodes every record and checks it (bounds, codec frame, length,\n"
	"ragged shape prefix).  Prints \"bad record I: reason\" for each bad\n"
	"record and exits 1 if there is any; prints \"ok: N records\" and\n"
	"exits 0 otherwise.\n",
};
