/*
 * refresh.c - what -o follow does each interval (tree.h, zrtree_refresh):
 * zr_store_refresh on each store; the library publishes a new length
 * atomically, and every name under the mount reads the length when it is
 * looked up (record names that did not exist, batch names, whose entries
 * never stay cached, and stats), so nothing else has to know.  A refresh
 * that fails leaves the store as it was; its message goes to the store's
 * errors file once, not every interval: the store keeps the last line
 * written (refresh_last), which only the refreshing thread touches.
 */
#include <stdio.h>
#include <string.h>

#include "tree.h"

static void refresh_one(struct zrtree_store *st)
{
	char *last = st->refresh_last;

	if (zr_store_refresh(st->zs) == 0) {
		last[0] = 0;
		return;
	}
	if (strncmp(last, zr_errmsg(), ZRTREE_ELOG_LINE - 1) == 0)
		return;
	snprintf(last, ZRTREE_ELOG_LINE, "%s", zr_errmsg());
	zrtree_elog_add(st->log, st->path, "follow: %s", last);
}

void zrtree_refresh(struct zrtree *t)
{
	for (size_t i = 0; i < t->nstores; i++)
		refresh_one(t->stores[i]);
}
