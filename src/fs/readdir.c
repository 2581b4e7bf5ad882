/*
 * readdir.c - directory listings.  records/ is generated from the offset
 * on each call (entry k is record k - 2), so listing 10^8 records streams
 * in constant memory.  batch/ lists its mode folders only: batch files are
 * unbounded and found by name.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lookup.h"
#include "readdir.h"

enum { ENT_OK, ENT_END };

static int entry(struct zrtree_node *n, uint64_t i, char *name, size_t cap,
		 struct stat *st)
{
	static const zr_sampler_mode modes[] = {
		ZR_SAMPLER_SEQUENTIAL, ZR_SAMPLER_IID, ZR_SAMPLER_CYCLIC
	};
	uint64_t j = i - 2;

	st->st_mode = S_IFDIR;
	st->st_ino = n->ino;
	if (i < 2) {
		snprintf(name, cap, "%s", i ? ".." : ".");
		return ENT_OK;
	}
	switch (n->kind) {
	case ZRTREE_K_DIR:
	case ZRTREE_K_STORE:
		if (j >= n->nkids)
			return ENT_END;
		snprintf(name, cap, "%s", n->kids[j]->name);
		st->st_ino = n->kids[j]->ino;
		if (n->kids[j]->kind > ZRTREE_K_BATCHDIR)
			st->st_mode = S_IFREG;
		return ENT_OK;
	case ZRTREE_K_RECDIR:
		if (j >= zr_store_length(n->st->zs))
			return ENT_END;
		snprintf(name, cap, "%llu.npy", (unsigned long long)j);
		st->st_ino = ZRFS_REC_BIT | (uint64_t)n->st->id <<
			     ZRFS_REC_IDX_BITS | (j & ((1ull << ZRFS_REC_IDX_BITS) - 1));
		st->st_mode = S_IFREG;
		return ENT_OK;
	case ZRTREE_K_BATCHDIR:
		if (n->depth != 0 || j >= sizeof(modes) / sizeof(modes[0]))
			return ENT_END;
		snprintf(name, cap, "%s", zr_sampler_mode_name(modes[j]));
		st->st_ino = FUSE_ROOT_ID; /* unknown until looked up */
		return ENT_OK;
	default:
		return ENT_END;
	}
}

void zrfs_readdir(fuse_req_t req, struct zrfs_fs *fs, struct zrtree_node *n,
		 size_t size, off_t off)
{
	char *buf, name[64 + 256];
	size_t used = 0;
	struct stat st;

	(void)fs;
	if (!n) {
		fuse_reply_err(req, ESTALE);
		return;
	}
	buf = malloc(size ? size : 1);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	memset(&st, 0, sizeof(st));
	for (uint64_t i = off < 0 ? 0 : (uint64_t)off;; i++) {
		int r = entry(n, i, name, sizeof(name), &st);
		size_t need;

		if (r == ENT_END)
			break;
		need = fuse_add_direntry(req, buf + used, size - used, name,
					 &st, (off_t)(i + 1));
		if (need > size - used)
			break;
		used += need;
	}
	fuse_reply_buf(req, buf, used);
	free(buf);
}
