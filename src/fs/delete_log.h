/*
 * delete_log.h - which record names a store's recent deletes changed, so that a
 * record node stays valid for exactly as long as its index shows the same
 * bytes: a delete changes the holes it fills and the indices past its new
 * end, and nothing else (appends add indices, compacts only move bytes).
 */
#ifndef ZRFS_DELETE_LOG_H
#define ZRFS_DELETE_LOG_H

#include <stddef.h>
#include <stdint.h>

#define ZRFS_DLOG_DELETES 1024		/* deletes remembered            */
#define ZRFS_DLOG_HOLES (1u << 16)	/* hole indices remembered, all  */

struct zrfs_dlog_entry {
	uint64_t gen;		/* the delete's number (1, 2, ...)        */
	uint64_t length;	/* the store's length after it            */
	uint64_t *holes;	/* sorted indices it refilled             */
	size_t n;
};

struct zrfs_dlog {
	struct zrfs_dlog_entry e[ZRFS_DLOG_DELETES]; /* ring, oldest at first */
	size_t first, count, holes;
	uint64_t floor;		/* newest delete forgotten (0: none yet)  */
};

/* Records delete gen (numbers only grow): the holes it refilled (sorted,
 * maybe repeated; a hole at or past length is no hole) and the length
 * after it.  Forgetting a delete raises the floor, which only costs the
 * kernel's cache of records looked up before it. */
void zrfs_dlog_add(struct zrfs_dlog *d, uint64_t gen, const uint64_t *holes,
		  size_t n, uint64_t length);
/* Whether no delete numbered above since changed index idx (0 also when
 * such a delete was forgotten). */
int zrfs_dlog_unchanged(const struct zrfs_dlog *d, uint64_t idx,
			uint64_t since);
void zrfs_dlog_free(struct zrfs_dlog *d);

#endif
