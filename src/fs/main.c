/*
 * main.c - zrecordfs: parse options, lock the mount point, open every
 * store under SRC, mount, serve with the multithreaded session loop, and
 * on unmount or SIGTERM/SIGINT/SIGHUP (shutdown_signals.h) close (and so
 * sync) every store, then let go of the mount point lock (mount_lock.h:
 * what umount waits for).
 *
 * Daemon mode forks before anything else so the worker pool and the
 * session threads all live in the child; the parent exits only once the
 * child reports the mount live (status 0) or failed (1), so mount(8) and
 * scripts can use the mount as soon as zrecordfs returns.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "batch_prefetch.h"
#include "big_buffers.h"
#include "file_kinds.h"
#include "store_park.h"
#include "follow.h"
#include "fuse_dev.h"
#include "info_file.h"
#include "fs.h"
#include "mount_lock.h"
#include "lookup.h"
#include "ops.h"
#include "shape_cache.h"
#include "tree.h"
#include "utab.h"
#include "opts.h"
#include "errors_log.h"
#include "shutdown_signals.h"

/* Parent side: waits for the child's one-byte verdict. */
static int wait_child(int fd)
{
	char ok = 1;

	if (read(fd, &ok, 1) != 1)
		ok = 1;
	return ok ? 1 : 0;
}

static void detach(int notify)
{
	char ok = 0;
	int null = open("/dev/null", O_RDWR);

	if (chdir("/"))
		(void)0;
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		if (null > 2)
			close(null);
	}
	zrtree_elog_use_syslog(1);
	if (write(notify, &ok, 1) != 1)
		(void)0;
	close(notify);
}

/* An empty SRC mounts (stores created later show after a remount), but it
 * is most often a wrong path: say so. */
static void warn_if_empty(const struct zrfs_fs *fs)
{
	if (!fs->tree.nstores)
		fprintf(stderr, "zrecordfs: warning: SRC %s has no stores (a "
			"store is a folder holding meta.zr)\n", fs->opts.src);
}

/* The session loop: libfuse's own defaults except what -o says. */
static int run_loop(struct zrfs_fs *fs)
{
	struct fuse_loop_config *cfg;
	int err;

	if (fs->opts.single)
		return fuse_session_loop(fs->se);
	cfg = fuse_loop_cfg_create();
	if (!cfg)
		return -ENOMEM;
	fuse_loop_cfg_set_clone_fd(cfg, (unsigned)fs->opts.clone_fd);
	fuse_loop_cfg_set_max_threads(cfg, fs->opts.max_threads);
	if (fs->opts.max_idle_threads != UINT_MAX)
		fuse_loop_cfg_set_idle_threads(cfg,
					       fs->opts.max_idle_threads);
	err = fuse_session_loop_mt(fs->se, cfg);
	fuse_loop_cfg_destroy(cfg);
	return err;
}

/* Everything between taking the mount point lock and letting it go. */
static int serve_locked(struct zrfs_fs *fs, int notify)
{
	int ret = 1, err;

	/* Before the first thread (the stores' pools): only the signal
	 * thread may take SIGTERM/SIGINT/SIGHUP. */
	zrfs_sig_block();
	if (zrfs_inode_init(fs))
		return 1;
	if (zrtree_build(&fs->tree, fs->opts.src, (fs->opts.ro ? ZR_OPEN_RDONLY : 0) |
			 (fs->opts.follow_ms ? ZR_OPEN_FOLLOW : 0), &fs->opts.run))
		goto out_tree;
	warn_if_empty(fs);
	zrfs_info_add(fs);
	fs->se = fuse_session_new(&fs->opts.args, &zrfs_ops, sizeof(zrfs_ops),
				  fs);
	if (!fs->se)
		goto out_tree;
	/* libfuse's handlers stay for SIGPIPE; the shutdown signals are
	 * blocked and go to the signal thread. */
	if (fuse_set_signal_handlers(fs->se))
		goto out_session;
	if (zrfs_sig_start(fs->se)) {
		fprintf(stderr, "zrecordfs: cannot start the signal thread\n");
		goto out_signals;
	}
	if (fuse_session_mount(fs->se, fs->opts.mountpoint))
		goto out_signals;
	if (zrfs_follow_start(fs)) {
		fprintf(stderr, "zrecordfs: cannot start the follow thread\n");
		goto out_mounted;
	}
	if (zrcommon_bigbuf_reaper_start()) {
		fprintf(stderr, "zrecordfs: cannot start the buffer thread\n");
		zrfs_follow_stop(fs);
		goto out_mounted;
	}
	/* Before the mount is reported live: `zrecordfs SRC MNT; umount
	 * MNT` must find the entry. */
	zrfs_prefetch_start(fs);
	zrmount_utab_register(fs->opts.src, fs->opts.mountpoint);
	if (notify >= 0)
		detach(notify);
	zrfs_sig_loop_begin();
	err = run_loop(fs);
	zrfs_sig_stop();
	zrfs_prefetch_stop();
	zrfs_follow_stop(fs);
	zrcommon_bigbuf_reaper_stop();
	/* A signal (shutdown_signals.h) or an unmount ends the loop with 0:
	 * both are a clean shutdown. */
	ret = err < 0 ? 1 : 0;
	fuse_remove_signal_handlers(fs->se);
	zrfs_fh_free_all(fs);
	zrfile_shapes_clear();
	/* Close (sync) before unmounting: once the mount is gone a new mount
	 * of the same stores may start and must find them unlocked. */
	zrfs_park_destroy(&fs->park);
	if (zrtree_free(&fs->tree))
		ret = 1;
	fuse_session_unmount(fs->se);
	fuse_session_destroy(fs->se);
	zrfs_inode_free(fs);
	return ret;
out_mounted:
	fuse_session_unmount(fs->se);
	zrfs_sig_stop();
out_signals:
	fuse_remove_signal_handlers(fs->se);
out_session:
	fuse_session_destroy(fs->se);
out_tree:
	zrtree_free(&fs->tree);
	zrfs_inode_free(fs);
	return ret;
}

static int serve(struct zrfs_fs *fs, int notify)
{
	int lock, ret;

	/* A media error under a mapped store file fails that one read (EIO,
	 * and a line in the store's errors file), never the whole mount. */
	if (zr_sigbus_guard()) {
		fprintf(stderr, "zrecordfs: cannot install the SIGBUS guard\n");
		return 1;
	}
	fs->uid = getuid();
	fs->gid = getgid();
	clock_gettime(CLOCK_REALTIME, &fs->t0);
	/* Before the stores: a daemon that served this mount point before
	 * may still be closing them. */
	if (zrmount_lock_take(fs->opts.mountpoint, ZRMOUNT_LOCK_TIMEOUT_MS,
			     &lock))
		return 1;
	ret = serve_locked(fs, notify);
	/* Every store is closed: umount.fuse.zrecordfs may return now. */
	zrmount_lock_release(lock);
	return ret;
}

int main(int argc, char **argv)
{
	static struct zrfs_fs fs;
	int pipefd[2] = { -1, -1 }, ret;
	pid_t pid;

	ret = zrfs_opts_parse(argc, argv, &fs.opts);
	if (!ret && zrmount_check_fuse_dev())
		ret = -1;
	if (ret) {
		zrfs_opts_free(&fs.opts);
		return ret < 0 ? 1 : 0;
	}
	if (!fs.opts.foreground) {
		if (pipe(pipefd)) {
			perror("zrecordfs: pipe");
			return 1;
		}
		pid = fork();
		if (pid < 0) {
			perror("zrecordfs: fork");
			return 1;
		}
		if (pid > 0) {
			close(pipefd[1]);
			return wait_child(pipefd[0]);
		}
		close(pipefd[0]);
		setsid();
	}
	ret = serve(&fs, pipefd[1]);
	zrfs_opts_free(&fs.opts);
	return ret;
}
