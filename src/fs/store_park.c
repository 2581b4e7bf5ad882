/*
 * store_park.c - parked requests (see store_park.h).  One queue for the
 * mount: a request parked while one store's delete runs and run again
 * when another store's returns finds the first still busy and parks
 * again, which costs a retry, not an answer.
 */
#include <errno.h>
#include <stdlib.h>

#include "store_park.h"

int zrfs_busy_to_park(int err)
{
	return err == ZR_E_BUSY ? ZRFS_E_PARK : err;
}

int zrfs_views_begin(struct zrfs_fstore *const *st, size_t n, zr_view **v)
{
	for (size_t i = 0; i < n; i++) {
		int err = zr_view_begin(st[i]->zs, ZR_VIEW_TRY, &v[i]);

		if (err) {
			v[i] = NULL;
			zrfs_views_end(v, i);
			return zrfs_busy_to_park(err);
		}
	}
	return 0;
}

void zrfs_views_end(zr_view **v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		zr_view_end(v[i]);
		v[i] = NULL;
	}
}

int zrfs_st_probe(struct zrfs_fstore *st)
{
	zr_view *v;
	int err = zrfs_views_begin(&st, 1, &v);

	zr_view_end(err ? NULL : v);
	return err;
}

void zrfs_writer_begin(struct zrfs_fs *fs)
{
	/* Counted before the library call, so every request that meets
	 * the call's ZR_E_BUSY finds a writer here and parks. */
	pthread_mutex_lock(&fs->park_mu);
	fs->writers++;
	pthread_mutex_unlock(&fs->park_mu);
}

void zrfs_writer_end(struct zrfs_fs *fs)
{
	pthread_mutex_lock(&fs->park_mu);
	if (--fs->writers == 0 && fs->parked) {
		struct zrfs_parked **tail = &fs->ready;

		while (*tail)
			tail = &(*tail)->next;
		*tail = fs->parked;
		fs->parked = NULL;
	}
	pthread_mutex_unlock(&fs->park_mu);
}

int zrfs_park(struct zrfs_fs *fs, struct zrfs_parked *p)
{
	int err = -EAGAIN;

	pthread_mutex_lock(&fs->park_mu);
	if (fs->writers) {
		p->next = fs->parked;
		fs->parked = p;
		err = 0;
	}
	pthread_mutex_unlock(&fs->park_mu);
	return err;
}

struct zrfs_parked *zrfs_park_take_ready(struct zrfs_fs *fs)
{
	struct zrfs_parked *p;

	pthread_mutex_lock(&fs->park_mu);
	p = fs->ready;
	fs->ready = NULL;
	pthread_mutex_unlock(&fs->park_mu);
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

void zrfs_park_destroy(struct zrfs_fs *fs)
{
	free_list(fs->parked);
	free_list(fs->ready);
	fs->parked = fs->ready = NULL;
}
