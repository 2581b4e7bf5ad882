/*
 * handles.c - open-file handles: allocation, reference counts (and the list
 * shutdown frees).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "file_kinds.h"
#include "index_list.h"
#include "npy_stream.h"
#include "lookup.h"
#include "open_file.h"

struct zrfs_fh *zrfs_fh_new(struct zrfs_fs *fs, struct zrtree_node *n)
{
	struct zrfs_fh *fh = calloc(1, sizeof(*fh));

	if (!fh)
		return NULL;
	fh->node = n;
	zrfs_inode_hold(fs, n);
	atomic_init(&fh->refs, 1);
	pthread_mutex_init(&fh->mu, NULL);
	pthread_mutex_lock(&fs->tables_mu);
	fh->next = fs->fhs;
	if (fs->fhs)
		fs->fhs->prev = fh;
	fs->fhs = fh;
	pthread_mutex_unlock(&fs->tables_mu);
	return fh;
}

static void fh_free(struct zrfs_fs *fs, struct zrfs_fh *fh)
{
	pthread_mutex_lock(&fs->tables_mu);
	if (fh->prev)
		fh->prev->next = fh->next;
	else
		fs->fhs = fh->next;
	if (fh->next)
		fh->next->prev = fh->prev;
	pthread_mutex_unlock(&fs->tables_mu);
	free(fh->buf);
	zrtree_file_close(fh->file);
	pthread_mutex_destroy(&fh->mu);
	zrfile_npystream_free(fh->ns); /* an unfinished session is aborted */
	zrfile_idxlist_free(fh->ix);
	zrfs_inode_forget(fs, fh->node->ino, 1);
	free(fh);
}

/* A handle reaches the threads that use it through the kernel (fi->fh):
 * the reply that hands it over and the request that brings it back are
 * system calls, which order memory, but ThreadSanitizer cannot see them.
 * Tell it, before the first access to the handle. */
#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#define HANDED_OVER(p) __tsan_release(p)
#define TAKEN_OVER(p) __tsan_acquire(p)
#else
#define HANDED_OVER(p) ((void)(p))
#define TAKEN_OVER(p) ((void)(p))
#endif

void zrfs_fh_publish(struct zrfs_fh *fh)
{
	HANDED_OVER(fh);
}

struct zrfs_fh *zrfs_fh_get(struct zrfs_fh *fh)
{
	TAKEN_OVER(fh);
	atomic_fetch_add_explicit(&fh->refs, 1, memory_order_relaxed);
	return fh;
}

void zrfs_fh_put(struct zrfs_fs *fs, struct zrfs_fh *fh)
{
	/* acq_rel: the freeing thread sees every other holder's writes */
	if (fh && atomic_fetch_sub_explicit(&fh->refs, 1,
					    memory_order_acq_rel) == 1)
		fh_free(fs, fh);
}

/* Only after the session loop has ended: no request holds a reference. */
void zrfs_fh_free_all(struct zrfs_fs *fs)
{
	while (fs->fhs)
		fh_free(fs, fs->fhs);
}
