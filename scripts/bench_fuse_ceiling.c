/*
 * bench_fuse_ceiling.c - the FUSE read ceiling of this machine, for
 * scripts/bench_fs: a libfuse3 low-level daemon that serves one file,
 * MNT/blob, of SIZE bytes from memory, with nothing between the kernel's
 * READ and the reply but a pointer into that memory.  It is mounted and
 * served the way zrecordfs serves batch files (the same libfuse defaults,
 * multithreaded loop, page cache) so that reading it measures what the
 * transport alone costs.  Every open drops the file's cached pages (no
 * keep_cache), so each read of it goes through the daemon again.
 *
 *   bench_fuse_ceiling MNT SIZE [-f] [-o opts]
 */
#define FUSE_USE_VERSION 312
#include <errno.h>
#include <fuse_lowlevel.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define BLOB_INO 2
#define TTL 86400.0

static char *blob;
static size_t blob_size;

static void blob_attr(fuse_ino_t ino, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_nlink = ino == FUSE_ROOT_ID ? 2 : 1;
	st->st_mode = ino == FUSE_ROOT_ID ? S_IFDIR | 0555 : S_IFREG | 0444;
	st->st_size = ino == FUSE_ROOT_ID ? 0 : (off_t)blob_size;
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e;

	if (parent != FUSE_ROOT_ID || strcmp(name, "blob")) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	memset(&e, 0, sizeof(e));
	e.ino = BLOB_INO;
	e.attr_timeout = e.entry_timeout = TTL;
	blob_attr(BLOB_INO, &e.attr);
	fuse_reply_entry(req, &e);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	struct stat st;

	(void)fi;
	if (ino != FUSE_ROOT_ID && ino != BLOB_INO) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	blob_attr(ino, &st);
	fuse_reply_attr(req, &st, TTL);
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	if (ino != BLOB_INO)
		fuse_reply_err(req, EISDIR);
	else
		fuse_reply_open(req, fi);
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	(void)ino;
	(void)fi;
	if (off < 0 || (size_t)off >= blob_size)
		size = 0;
	else if (size > blob_size - (size_t)off)
		size = blob_size - (size_t)off;
	fuse_reply_buf(req, size ? blob + off : NULL, size);
}

static const struct fuse_lowlevel_ops ops = {
	.lookup = op_lookup,
	.getattr = op_getattr,
	.open = op_open,
	.read = op_read,
};

/* The numeric argument (SIZE) is ours; the rest goes to libfuse. */
static int take_size(struct fuse_args *args)
{
	for (int i = 1; i < args->argc; i++) {
		char *end;
		unsigned long long v;

		if (args->argv[i][0] < '0' || args->argv[i][0] > '9')
			continue;
		v = strtoull(args->argv[i], &end, 10);
		if (*end || !v)
			return -1;
		blob_size = (size_t)v;
		memmove(&args->argv[i], &args->argv[i + 1],
			(size_t)(args->argc - i) * sizeof(char *));
		args->argc--;
		return 0;
	}
	return -1;
}

static int serve(struct fuse_args *args, struct fuse_cmdline_opts *o)
{
	struct fuse_session *se = fuse_session_new(args, &ops, sizeof(ops),
						   NULL);
	struct fuse_loop_config *cfg = fuse_loop_cfg_create();
	int ret = 1;

	if (!se || !cfg)
		goto out;
	if (fuse_set_signal_handlers(se) || fuse_session_mount(se,
							       o->mountpoint))
		goto out;
	fuse_daemonize(o->foreground);
	fuse_loop_cfg_set_max_threads(cfg, o->max_threads);
	ret = fuse_session_loop_mt(se, cfg) < 0;
	fuse_session_unmount(se);
	fuse_remove_signal_handlers(se);
out:
	fuse_loop_cfg_destroy(cfg);
	if (se)
		fuse_session_destroy(se);
	return ret;
}

int main(int argc, char **argv)
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct fuse_cmdline_opts o;
	int ret;

	if (take_size(&args) || fuse_parse_cmdline(&args, &o) ||
	    !o.mountpoint) {
		fprintf(stderr, "usage: %s MNT SIZE [-f] [-o opts]\n",
			argv[0]);
		return 2;
	}
	/* pages that hold bytes, not zero pages the kernel shares */
	blob = malloc(blob_size);
	if (!blob)
		return 1;
	for (size_t i = 0; i < blob_size; i++)
		blob[i] = (char)(i * 131 + (i >> 12));
	ret = serve(&args, &o);
	free(o.mountpoint);
	fuse_opt_free_args(&args);
	free(blob);
	return ret;
}
