/*
 * latewait.c - an LD_PRELOAD shim for zrecordfs that widens the window
 * between libfuse's "has the session exited?" check in the session loop
 * and the wait that follows it, so that a test can send a signal into it
 * every time (tests/fs/test_mount.py).
 *
 *   ZR_LATEWAIT_MARK=/path/to/mark LD_PRELOAD=.../liblatewait.so zrecordfs ...
 *
 * When the main thread asks fuse_session_exited() and gets "no", the shim
 * creates the mark file (the test's cue) and sleeps up to five seconds
 * before it returns that answer; a signal cuts the sleep short, just as a
 * scheduler delay would have let it land there.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

struct fuse_session;

__attribute__((visibility("default")))
int fuse_session_exited(struct fuse_session *se)
{
	static int (*real)(struct fuse_session *);
	struct timespec t = { 5, 0 };
	const char *mark = getenv("ZR_LATEWAIT_MARK");
	int r, fd;

	if (!real)
		real = (int (*)(struct fuse_session *))dlsym(RTLD_NEXT,
						"fuse_session_exited");
	r = real(se);
	if (!r && gettid() == getpid()) {
		fd = mark ? open(mark, O_CREAT | O_WRONLY | O_CLOEXEC, 0600) : -1;
		if (fd >= 0)
			close(fd);
		nanosleep(&t, NULL);
	}
	return r;
}
