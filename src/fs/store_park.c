/*
 * store_park.c - parked requests (see store_park.h).  One queue for the
 * mount: a request parked while one store's delete runs and run again
 * when another store's returns finds the first still busy and parks
 * again, which costs a retry, not an answer.
 */
#include <errno.h>
#include <stdlib.h>

#include "errors_log.h"
#include "store_park.h"
#include "fs.h"

void zrfs_writer_begin(struct zrfs_park_queue *q)
{
	/* Counted before the library call, so every request that meets
	 * the call's ZR_E_BUSY finds a writer here and parks. */
	zrfs_leaf_lock();
	q->writers++;
	zrfs_leaf_unlock();
}

void zrfs_writer_end(struct zrfs_park_queue *q)
{
	zrfs_leaf_lock();
	if (--q->writers == 0 && q->parked) {
		struct zrfs_parked **tail = &q->ready;

		while (*tail)
			tail = &(*tail)->next;
		*tail = q->parked;
		q->parked = NULL;
	}
	zrfs_leaf_unlock();
}

int zrfs_park(struct zrfs_park_queue *q, struct zrfs_parked *p)
{
	int err = -EAGAIN;

	zrfs_leaf_lock();
	if (q->writers) {
		p->next = q->parked;
		q->parked = p;
		err = 0;
	}
	zrfs_leaf_unlock();
	return err;
}

struct zrfs_parked *zrfs_park_take_ready(struct zrfs_park_queue *q)
{
	struct zrfs_parked *p;

	zrfs_leaf_lock();
	p = q->ready;
	q->ready = NULL;
	zrfs_leaf_unlock();
	return p;
}

static void free_list(struct zrfs_parked *p)
{
	while (p) {
		struct zrfs_parked *next = p->next;

		free(p);
		p = next;
	}
}

void zrfs_park_destroy(struct zrfs_park_queue *q)
{
	free_list(q->parked);
	free_list(q->ready);
	q->parked = q->ready = NULL;
}
