/*
 * info_file.c - the mount's own file at its root, ZRFS_INFO_NAME: what
 * this daemon is and what its prefetcher did so far, as "key: value"
 * lines.  A daemon (no -f) has no terminal to print its prefetch summary
 * on at unmount, so the counters are readable here while it is mounted;
 * made at each open and stat, like the stores' stats files.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "batch_prefetch.h"
#include "info_file.h"

static int info_text(void *ctx, char **out, size_t *len)
{
	struct zrfs_prefetch_counts c;
	char *buf = NULL;
	size_t size = 0;
	FILE *f;

	(void)ctx;
	zrfs_prefetch_counts(&c);
	f = open_memstream(&buf, &size);
	if (!f)
		return -ENOMEM;
	fprintf(f, "version: %s\npid: %ld\nprefetch: %u\nprefetch_mem: %llu\n"
		"prefetch_gathered: %llu\nprefetch_served: %llu\n"
		"prefetch_dropped: %llu\nprefetch_taken_over: %llu\n",
		zr_version_string(), (long)getpid(), c.depth,
		(unsigned long long)c.budget,
		(unsigned long long)c.n.gathered,
		(unsigned long long)c.n.served,
		(unsigned long long)c.n.dropped,
		(unsigned long long)c.taken_over);
	if (fclose(f) || !buf) {
		free(buf);
		return -ENOMEM;
	}
	*out = buf;
	*len = size;
	return 0;
}

void zrfs_info_add(struct zrfs_fs *fs)
{
	int err = zrtree_add_info(&fs->tree, ZRFS_INFO_NAME, info_text, fs);

	if (err == -EEXIST)
		fprintf(stderr, "zrecordfs: warning: SRC has %s at its top; "
			"the mount serves that, not its own %s\n",
			ZRFS_INFO_NAME, ZRFS_INFO_NAME);
	else if (err)
		fprintf(stderr, "zrecordfs: warning: no %s: %s\n",
			ZRFS_INFO_NAME, zr_strerror(err));
}
