/*
 * record.c - records/I.npy, and records/I.png for image records.  A record
 * node's bytes never change (see Contents in tree.h), so the kernel keeps
 * their pages (keep_cache) and a repeated open costs no decoding: a handle
 * copies its record only when the kernel first asks for a page it does not
 * have, through the library view its open file began (open_file.h), so
 * every read of a handle serves that one record whole, whatever deletes
 * happen before it is closed (and a compact after such a delete fails with
 * EBUSY until it is: the view may still read the bytes compact would
 * move).  After a delete, the names whose bytes it changed are made to be
 * looked up again.
 */
#include <stdio.h>
#include <stdlib.h>

#include "file_kinds.h"
#include "lookup.h"
#include "u64.h"

/* Makes the kernel look records/IDX.npy (and .png) up again at its next
 * use. */
static void unname(struct zrfs_fs *fs, const struct zrtree_store *st,
		   uint64_t idx)
{
	static const char *const ext[] = { "npy", "png" };
	char name[32];

	for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]); i++) {
		int n = snprintf(name, sizeof(name), "%llu.%s",
				 (unsigned long long)idx, ext[i]);

		fuse_lowlevel_notify_inval_entry(fs->se, st->records_ino,
						 name, (size_t)n);
	}
}

void zrfs_record_unname_changed(struct zrfs_fs *fs,
			       const struct zrtree_store *st,
			       const uint64_t *del, size_t ndel,
			       uint64_t length)
{
	uint64_t *known;
	size_t nknown;

	if (zrfs_inode_records(fs, st, &known, &nknown))
		return;
	for (size_t i = 0; i < nknown; i++) {
		uint64_t idx = known[i];

		if (idx < length && !bsearch(&idx, del, ndel, sizeof(*del),
					     zrtree_cmp_u64))
			continue;
		unname(fs, st, idx);
	}
	free(known);
}

const struct zrfs_kind_ops zrfs_record_kind = {
	.mode = S_IFREG | 0444,
	.flags = ZRFS_KF_KEEP_CACHE | ZRFS_KF_HANDLE_SIZE,
	.attr_ttl = ZRFS_TTL_LONG,
	.entry_ttl = ZRFS_TTL_LONG,
	.open = zrfs_file_open,
	.read = zrfs_file_read,
	.size = zrfs_node_size,
};
