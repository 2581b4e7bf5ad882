/*
 * store_park.c - parked requests (see store_park.h).  One queue for the
 * mount: a request parked while one store's delete runs and run again
 * when another store's returns finds the first still busy and parks
 * again, which costs a retry, not an answer.
 */
#include <errno.h>
#include <stdlib.h>

#include "store_park.h"
#include "fs.h"

/* The queue's: held for a few pointer moves, never across a call. */
static pthread_mutex_t park_mu = PTHREAD_MUTEX_INITIALIZER;

int zrfs_busy_to_park(int err)
{
	return err == ZR_E_BUSY ? ZRFS_E_PARK : err;
}

void zrfs_writer_begin(struct zrfs_park_queue *q)
{
	/* Counted before the library call, so every request that meets
	 * the call's ZR_E_BUSY finds a writer here and parks. */
	pthread_mutex_lock(&park_mu);
	q->writers++;
	pthread_mutex_unlock(&park_mu);
}

void zrfs_writer_end(struct zrfs_park_queue *q)
{
	pthread_mutex_lock(&park_mu);
	if (--q->writers == 0 && q->parked) {
		struct zrfs_parked **tail = &q->ready;

		while (*tail)
			tail = &(*tail)->next;
		*tail = q->parked;
		q->parked = NULL;
	}
	pthread_mutex_unlock(&park_mu);
}

int zrfs_park(struct zrfs_park_queue *q, struct zrfs_parked *p)
{
	int err = -EAGAIN;

	pthread_mutex_lock(&park_mu);
	if (q->writers) {
		p->next = q->parked;
		q->parked = p;
		err = 0;
	}
	pthread_mutex_unlock(&park_mu);
	return err;
}

struct zrfs_parked *zrfs_park_take_ready(struct zrfs_park_queue *q)
{
	struct zrfs_parked *p;

	pthread_mutex_lock(&park_mu);
	p = q->ready;
	q->ready = NULL;
	pthread_mutex_unlock(&park_mu);
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
