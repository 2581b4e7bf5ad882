/*
 * text_files.c - what reading a store folder's small files shows: the text
 * files (stats, schema, errors), the bytes of an import's side files
 * (classes.json, files.txt), the host's file at the root (its text is
 * the host's) and the one-line usage of the append and control files --
 * copies of a store folder (cp -r, rsync, tar) read every file and must
 * not fail.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mixture.h"
#include "statsjson.h"
#include "file_bytes.h"
#include "errors_log.h"

static int stats_json(struct zrtree_store *st, char **out, size_t *len)
{
	zr_stats s;
	int err;

	/* The library's stats would wait for a compact: ZR_E_BUSY instead. */
	err = zrtree_st_probe(st);
	if (!err)
		err = zr_store_stats(st->zs, &s);
	return err ? err : zrcommon_stats_json(st->zs, &s, out, len);
}

static int schema_json(struct zrtree_store *st, char **out, size_t *len)
{
	char *buf = malloc(ZR_SCHEMA_MAX * 4 + 2);
	int err;

	if (!buf)
		return -ENOMEM;
	err = zr_schema_json(zr_store_schema(st->zs), buf, ZR_SCHEMA_MAX * 4);
	if (err) {
		free(buf);
		return err;
	}
	strcat(buf, "\n");
	*out = buf;
	*len = strlen(buf);
	return 0;
}

/* A side file's bytes, as many as the tree showed at build. */
static int side_bytes(const struct zrtree_node *n, char **out, size_t *len)
{
	int fd = open(n->file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), err = 0;
	size_t got = 0;
	struct stat st;
	ssize_t r;
	char *buf;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || (uint64_t)st.st_size != n->size) {
		close(fd);
		return -ESTALE;
	}
	buf = malloc(n->size ? n->size : 1);
	while (buf && got < n->size) {
		r = read(fd, buf + got, n->size - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			err = r < 0 ? -errno : -ESTALE;
			break;
		}
		got += (size_t)r;
	}
	close(fd);
	if (!buf || err) {
		free(buf);
		return buf ? err : -ENOMEM;
	}
	*out = buf;
	*len = got;
	return 0;
}

int zrtree_text(const struct zrtree_node *n, char **out, size_t *len)
{
	switch (n->kind) {
	case ZRTREE_K_STATS:
		if (n->mix)
			return zrtree_mix_stats(n->mix, out, len);
		return stats_json(n->st, out, len);
	case ZRTREE_K_SCHEMA:
		return schema_json(n->st, out, len);
	case ZRTREE_K_ERRORS:
		return zrtree_elog_text(n->mix ? zrtree_mix_elog(n->mix) :
				      n->st->log, out, len);
	case ZRTREE_K_SIDE:
		return side_bytes(n, out, len);
	case ZRTREE_K_INFO:
		return n->info(n->info_ctx, out, len);
	default:
		return -EINVAL;
	}
}

const char *zrtree_usage(enum zrtree_kind kind)
{
	static const char *const usage[] = {
		[ZRTREE_K_APPEND] = "append: write .npy files here to append "
				    "their records\n",
		[ZRTREE_K_SYNC] = "sync: write anything here to make the store "
				  "durable\n",
		[ZRTREE_K_COMPACT] = "compact: write anything here to compact "
				     "the store in place\n",
		[ZRTREE_K_DELETE] = "delete: write record indices here (text or "
				    "an integer .npy) to delete them\n",
	};

	return usage[kind] ? usage[kind] : "";
}
