/*
 * iotrace.c - an LD_PRELOAD shim that logs every call which changes a file
 * or its durability, in the order the process made them, so that tests can
 * check write/flush ordering (and, later, replay the writes to build every
 * state a crash could leave).
 *
 *   ZR_IOTRACE=/path/to/trace LD_PRELOAD=.../libiotrace.so program ...
 *
 * One line per call, written with one write(2) on an O_APPEND descriptor,
 * so lines of several threads or processes never interleave:
 *
 *   OP PATH OFFSET LENGTH RESULT PID
 *
 * OP is open, close, write (also writev, pwrite*, pwritev*), ftruncate,
 * fdatasync, fsync, msync, rename, unlink.  PATH is absolute where known
 * (from /proc/self/fd at open), with '%', ' ' and control bytes escaped as
 * %XX, "-" if unknown.  OFFSET is where a write began (positional, or the
 * file position before a plain write), a truncate's new size, else "-";
 * LENGTH is the bytes asked for (msync: the range), else "-".  RESULT is
 * the call's return value, or -errno.  rename logs "rename OLD>NEW".
 * Calls on descriptors the shim never saw opened are logged with PATH
 * from /proc/self/fd, so inherited descriptors are covered too.
 *
 * ZR_IOTRACE_BYTES=/path/to/bytes (with ZR_IOTRACE) also keeps what was
 * written, so that every state a power cut could leave can be rebuilt
 * (tests/rel/crashstates.py): each line gets a seventh field, for a write
 * the offset in that file of its bytes (RESULT bytes, appended there), for
 * an open its flags in decimal (O_TRUNC matters), else "-".
 *
 * ZR_IOTRACE_FLUSH_DELAY_MS=N (with or without ZR_IOTRACE) delays every
 * fsync and fdatasync by N ms: a slow disk.
 *
 * ZR_IOTRACE_READ_DELAY_MS=N delays every pread by N ms (not logged): a
 * slow disk under the store engine's reads of large records, so that a
 * gather takes long enough for a test to meet it under way.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#define LINE_MAX_LEN (2 * PATH_MAX + 128)

/* The real functions, found once (RTLD_NEXT: the next library after this
 * one, normally libc). */
static struct {
	int (*open)(const char *, int, ...);
	int (*openat)(int, const char *, int, ...);
	int (*close)(int);
	ssize_t (*write)(int, const void *, size_t);
	ssize_t (*writev)(int, const struct iovec *, int);
	ssize_t (*pwrite)(int, const void *, size_t, off_t);
	ssize_t (*pread)(int, void *, size_t, off_t);
	ssize_t (*pwritev)(int, const struct iovec *, int, off_t);
	ssize_t (*pwritev2)(int, const struct iovec *, int, off_t, int);
	int (*ftruncate)(int, off_t);
	int (*fdatasync)(int);
	int (*fsync)(int);
	int (*msync)(void *, size_t, int);
	int (*rename)(const char *, const char *);
	int (*renameat)(int, const char *, int, const char *);
	int (*renameat2)(int, const char *, int, const char *, unsigned);
	int (*unlink)(const char *);
	int (*unlinkat)(int, const char *, int);
} real;

static pthread_once_t real_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;
static int trace_fd = -1;
/* The written bytes (ZR_IOTRACE_BYTES): a write's bytes and its line are
 * made under one lock, so lines stay in the order of their bytes. */
static pthread_mutex_t bytes_lock = PTHREAD_MUTEX_INITIALIZER;
static int bytes_fd = -2; /* -2: not opened yet, -1: not wanted */
static int capturing; /* set once, before any call is traced */

static void *next(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

static void resolve(void)
{
	real.open = next("open");
	real.openat = next("openat");
	real.close = next("close");
	real.write = next("write");
	real.writev = next("writev");
	real.pwrite = next("pwrite");
	real.pread = next("pread");
	real.pwritev = next("pwritev");
	real.pwritev2 = next("pwritev2");
	real.ftruncate = next("ftruncate");
	real.fdatasync = next("fdatasync");
	real.fsync = next("fsync");
	real.msync = next("msync");
	real.rename = next("rename");
	real.renameat = next("renameat");
	real.renameat2 = next("renameat2");
	real.unlink = next("unlink");
	real.unlinkat = next("unlinkat");
	capturing = getenv("ZR_IOTRACE") && getenv("ZR_IOTRACE_BYTES");
}

static void init(void)
{
	pthread_once(&real_once, resolve);
}

__attribute__((constructor)) static void iotrace_init(void)
{
	init();
}

/* The trace descriptor is opened on first use, and again if the program
 * closed it (daemons close what they did not open). */
static int trace_get(void)
{
	const char *path;
	int fd;

	pthread_mutex_lock(&trace_lock);
	fd = trace_fd;
	if (fd < 0 && (path = getenv("ZR_IOTRACE")) && *path) {
		fd = real.open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
			       0644);
		trace_fd = fd;
	}
	pthread_mutex_unlock(&trace_lock);
	return fd;
}

static int is_trace_fd(int fd)
{
	return fd >= 0 && (fd == __atomic_load_n(&trace_fd, __ATOMIC_RELAXED) ||
			   fd == __atomic_load_n(&bytes_fd, __ATOMIC_RELAXED));
}

/* Under bytes_lock: the bytes descriptor, opened on first use. */
static int bytes_get(void)
{
	const char *path = getenv("ZR_IOTRACE_BYTES");

	if (bytes_fd == -2)
		bytes_fd = path && *path && getenv("ZR_IOTRACE")
				   ? real.open(path, O_WRONLY | O_CREAT |
						     O_APPEND | O_CLOEXEC, 0644)
				   : -1;
	return bytes_fd;
}

#define BYTES_IOV 64

/* Under bytes_lock: appends iov's first len bytes with one writev (an
 * O_APPEND write is placed whole, so several traced processes can share
 * the file); their offset there, or -1 (the seventh field is then "-" and
 * the rebuild refuses the trace). */
static long long bytes_put(const struct iovec *iov, int cnt, size_t len)
{
	struct iovec v[BYTES_IOV];
	size_t want = len;
	int fd = bytes_get(), n = 0;
	off_t end;

	for (int i = 0; i < cnt && len && n < BYTES_IOV; i++, n++) {
		v[n] = iov[i];
		if (v[n].iov_len > len)
			v[n].iov_len = len;
		len -= v[n].iov_len;
	}
	if (fd < 0 || len || real.writev(fd, v, n) != (ssize_t)want)
		return -1;
	end = lseek(fd, 0, SEEK_CUR);
	return end < 0 ? -1 : (long long)end - (long long)want;
}

/* Appends src to dst[*n..cap) with the escapes of the header comment. */
static void put_escaped(char *dst, size_t *n, size_t cap, const char *src)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; *src && *n + 4 < cap; src++) {
		unsigned char c = (unsigned char)*src;

		if (c <= ' ' || c == '%' || c == 0x7f) {
			dst[(*n)++] = '%';
			dst[(*n)++] = hex[c >> 4];
			dst[(*n)++] = hex[c & 15];
		} else {
			dst[(*n)++] = (char)c;
		}
	}
}

static void fd_path(int fd, char *buf, size_t cap)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, buf, cap - 1);
	if (n <= 0)
		snprintf(buf, cap, "-");
	else
		buf[n] = '\0';
}

/* An absolute form of (dirfd, path) for the calls that take names. */
static void at_path(int dirfd, const char *path, char *buf, size_t cap)
{
	char dir[PATH_MAX];

	if (path[0] == '/') {
		snprintf(buf, cap, "%s", path);
		return;
	}
	if (dirfd == AT_FDCWD) {
		if (!getcwd(dir, sizeof(dir)))
			snprintf(dir, sizeof(dir), ".");
	} else {
		fd_path(dirfd, dir, sizeof(dir));
	}
	/* A name too long to log whole is logged cut. */
	if ((size_t)snprintf(buf, cap, "%s/%s", dir, path) >= cap)
		buf[cap - 1] = '\0';
}

static void num(char *dst, size_t *n, size_t cap, long long v, int known)
{
	int k = known ? snprintf(dst + *n, cap - *n, " %lld", v)
		      : snprintf(dst + *n, cap - *n, " -");

	if (k > 0 && (size_t)k < cap - *n)
		*n += (size_t)k;
}

/* Logs one call; result is the return value (errno taken for -1);
 * extra is the seventh field, written only when capturing. */
static void emit_x(const char *op, const char *path, long long off,
		   int off_known, long long len, int len_known,
		   long long result, int err, long long extra, int extra_known)
{
	char line[LINE_MAX_LEN];
	size_t n = 0;
	int fd = trace_get(), k;

	if (fd < 0)
		return;
	k = snprintf(line, sizeof(line), "%s ", op);
	n = (size_t)k;
	put_escaped(line, &n, sizeof(line) - 64, path);
	num(line, &n, sizeof(line), off, off_known);
	num(line, &n, sizeof(line), len, len_known);
	num(line, &n, sizeof(line), result < 0 ? -(long long)err : result, 1);
	num(line, &n, sizeof(line), (long long)getpid(), 1);
	if (capturing)
		num(line, &n, sizeof(line), extra, extra_known);
	line[n++] = '\n';
	/* One write per line: O_APPEND places it whole. */
	if (real.write(fd, line, n) < 0)
		return;
}

static void emit(const char *op, const char *path, long long off,
		 int off_known, long long len, int len_known, long long result,
		 int err)
{
	emit_x(op, path, off, off_known, len, len_known, result, err, 0, 0);
}

static void emit_fd(const char *op, int fd, long long off, int off_known,
		    long long len, int len_known, long long result, int err)
{
	char path[PATH_MAX];

	if (is_trace_fd(fd))
		return;
	fd_path(fd, path, sizeof(path));
	emit(op, path, off, off_known, len, len_known, result, err);
	errno = err;
}

/* Logs a write of iov (rc bytes of len done) with, when capturing, its
 * bytes; the lock keeps the bytes file in the order of the lines. */
static void emit_write(int fd, long long off, int known,
		       const struct iovec *iov,
		       int cnt, long long len, ssize_t rc, int err)
{
	char path[PATH_MAX];
	long long at = -1;

	if (is_trace_fd(fd))
		return;
	fd_path(fd, path, sizeof(path));
	pthread_mutex_lock(&bytes_lock);
	if (capturing && rc > 0)
		at = bytes_put(iov, cnt, (size_t)rc);
	emit_x("write", path, off, known, len, 1, rc, err, at, at >= 0);
	pthread_mutex_unlock(&bytes_lock);
	errno = err;
}

static mode_t mode_arg(int flags, va_list ap)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE
		       ? (mode_t)va_arg(ap, int)
		       : 0;
}

/* Every open variant is openat underneath. */
static int do_open(int dirfd, const char *path, int flags, mode_t mode)
{
	char name[PATH_MAX];
	int fd, err;

	init();
	fd = real.openat(dirfd, path, flags, mode);
	err = errno;
	if (fd >= 0)
		fd_path(fd, name, sizeof(name));
	else
		at_path(dirfd, path, name, sizeof(name));
	emit_x("open", name, 0, 0, 0, 0, fd, err, flags, 1);
	errno = err;
	return fd;
}

/* open, openat and their 64 twins: variadic, so one macro makes each. */
#define OPEN_VARIADIC(name, params, dir)                                     \
	EXPORT int name params                                               \
	{                                                                    \
		va_list ap;                                                  \
		mode_t mode;                                                 \
									     \
		va_start(ap, flags);                                         \
		mode = mode_arg(flags, ap);                                  \
		va_end(ap);                                                  \
		return do_open(dir, path, flags, mode);                      \
	}

OPEN_VARIADIC(open, (const char *path, int flags, ...), AT_FDCWD)
OPEN_VARIADIC(open64, (const char *path, int flags, ...), AT_FDCWD)
OPEN_VARIADIC(openat, (int dirfd, const char *path, int flags, ...), dirfd)
OPEN_VARIADIC(openat64, (int dirfd, const char *path, int flags, ...), dirfd)

/* What _FORTIFY_SOURCE builds call instead of open/openat. */
EXPORT int __open_2(const char *path, int flags)
{
	return do_open(AT_FDCWD, path, flags, 0);
}

EXPORT int __open64_2(const char *path, int flags)
{
	return do_open(AT_FDCWD, path, flags, 0);
}

EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	return do_open(dirfd, path, flags, 0);
}

EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
	return do_open(dirfd, path, flags, 0);
}

EXPORT int creat(const char *path, mode_t mode)
{
	return do_open(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode);
}

EXPORT int creat64(const char *path, mode_t mode)
{
	return do_open(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode);
}

EXPORT int close(int fd)
{
	char path[PATH_MAX];
	int rc, err;

	init();
	if (is_trace_fd(fd)) {
		/* The program closes what it did not open: reopen later. */
		pthread_mutex_lock(&trace_lock);
		trace_fd = -1;
		pthread_mutex_unlock(&trace_lock);
		return real.close(fd);
	}
	fd_path(fd, path, sizeof(path));
	rc = real.close(fd);
	err = errno;
	emit("close", path, 0, 0, 0, 0, rc, err);
	errno = err;
	return rc;
}

/* The offset a plain write started at: the position after it, less what
 * it wrote (right for O_APPEND too). */
static long long start_of(int fd, ssize_t done, int *known)
{
	off_t end = lseek(fd, 0, SEEK_CUR);

	*known = end >= 0;
	return end >= 0 ? (long long)end - (done > 0 ? done : 0) : 0;
}

static size_t iov_len(const struct iovec *iov, int cnt)
{
	size_t sum = 0;

	for (int i = 0; iov && i < cnt; i++)
		sum += iov[i].iov_len;
	return sum;
}

EXPORT ssize_t write(int fd, const void *buf, size_t len)
{
	ssize_t rc;
	long long off;
	int err, known;

	init();
	rc = real.write(fd, buf, len);
	err = errno;
	if (is_trace_fd(fd))
		return rc;
	off = start_of(fd, rc, &known);
	emit_write(fd, off, known, &(struct iovec){ (void *)buf, len }, 1,
		   (long long)len, rc, err);
	return rc;
}

EXPORT ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	ssize_t rc;
	long long off;
	int err, known;

	init();
	rc = real.writev(fd, iov, cnt);
	err = errno;
	off = start_of(fd, rc, &known);
	emit_write(fd, off, known, iov, cnt, (long long)iov_len(iov, cnt), rc,
		   err);
	return rc;
}

/* Sleeps the milliseconds environment variable var names, if any. */
static void delay(const char *var)
{
	const char *ms = getenv(var);
	struct timespec t;
	long v = ms ? atol(ms) : 0;

	if (v <= 0)
		return;
	t.tv_sec = v / 1000;
	t.tv_nsec = (v % 1000) * 1000000L;
	while (nanosleep(&t, &t) && errno == EINTR)
		;
}

EXPORT ssize_t pwrite(int fd, const void *buf, size_t len, off_t off)
{
	ssize_t rc;

	init();
	rc = real.pwrite(fd, buf, len, off);
	emit_write(fd, off, 1, &(struct iovec){ (void *)buf, len }, 1,
		   (long long)len, rc, errno);
	return rc;
}

EXPORT ssize_t pwrite64(int fd, const void *buf, size_t len, off_t off)
{
	return pwrite(fd, buf, len, off);
}

EXPORT ssize_t pread(int fd, void *buf, size_t len, off_t off)
{
	init();
	delay("ZR_IOTRACE_READ_DELAY_MS");
	return real.pread(fd, buf, len, off);
}

EXPORT ssize_t pread64(int fd, void *buf, size_t len, off_t off)
{
	return pread(fd, buf, len, off);
}

EXPORT ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
	ssize_t rc;

	init();
	rc = real.pwritev(fd, iov, cnt, off);
	emit_write(fd, off, 1, iov, cnt, (long long)iov_len(iov, cnt), rc,
		   errno);
	return rc;
}

EXPORT ssize_t pwritev64(int fd, const struct iovec *iov, int cnt, off_t off)
{
	return pwritev(fd, iov, cnt, off);
}

EXPORT ssize_t pwritev2(int fd, const struct iovec *iov, int cnt, off_t off,
			int flags)
{
	ssize_t rc;
	long long start = off;
	int err, known = 1;

	init();
	rc = real.pwritev2(fd, iov, cnt, off, flags);
	err = errno;
	if (off == -1)
		start = start_of(fd, rc, &known);
	emit_write(fd, start, known, iov, cnt, (long long)iov_len(iov, cnt),
		   rc, err);
	return rc;
}

EXPORT ssize_t pwritev64v2(int fd, const struct iovec *iov, int cnt,
			   off_t off, int flags)
{
	return pwritev2(fd, iov, cnt, off, flags);
}

EXPORT int ftruncate(int fd, off_t len)
{
	int rc;

	init();
	rc = real.ftruncate(fd, len);
	emit_fd("ftruncate", fd, len, 1, 0, 0, rc, errno);
	return rc;
}

EXPORT int ftruncate64(int fd, off_t len)
{
	return ftruncate(fd, len);
}

/* fsync and fdatasync: delayed, done, logged. */
static int flush(const char *op, int (*fn)(int), int fd)
{
	int rc;

	/* a slow disk, for tests of what waits on a sync or a compact */
	delay("ZR_IOTRACE_FLUSH_DELAY_MS");
	rc = fn(fd);
	emit_fd(op, fd, 0, 0, 0, 0, rc, errno);
	return rc;
}

EXPORT int fdatasync(int fd)
{
	init();
	return flush("fdatasync", real.fdatasync, fd);
}

EXPORT int fsync(int fd)
{
	init();
	return flush("fsync", real.fsync, fd);
}

EXPORT int msync(void *addr, size_t len, int flags)
{
	int rc, err;

	init();
	rc = real.msync(addr, len, flags);
	err = errno;
	emit("msync", "-", (long long)(uintptr_t)addr, 1, (long long)len, 1,
	     rc, err);
	errno = err;
	return rc;
}

/* old and new are already absolute (resolved before the call). */
static void emit_rename(const char *old, const char *new, int rc, int err)
{
	char both[2 * PATH_MAX + 2];

	if ((size_t)snprintf(both, sizeof(both), "%s>%s", old, new) >=
	    sizeof(both))
		both[sizeof(both) - 1] = '\0';
	emit("rename", both, 0, 0, 0, 0, rc, err);
	errno = err;
}

EXPORT int rename(const char *old, const char *new)
{
	char a[PATH_MAX], b[PATH_MAX];
	int rc, err;

	init();
	/* Names before the call: afterwards old no longer resolves. */
	at_path(AT_FDCWD, old, a, sizeof(a));
	at_path(AT_FDCWD, new, b, sizeof(b));
	rc = real.rename(old, new);
	err = errno;
	emit_rename(a, b, rc, err);
	return rc;
}

EXPORT int renameat(int ofd, const char *old, int nfd, const char *new)
{
	char a[PATH_MAX], b[PATH_MAX];
	int rc, err;

	init();
	at_path(ofd, old, a, sizeof(a));
	at_path(nfd, new, b, sizeof(b));
	rc = real.renameat(ofd, old, nfd, new);
	err = errno;
	emit_rename(a, b, rc, err);
	return rc;
}

EXPORT int renameat2(int ofd, const char *old, int nfd, const char *new,
		     unsigned flags)
{
	char a[PATH_MAX], b[PATH_MAX];
	int rc, err;

	init();
	at_path(ofd, old, a, sizeof(a));
	at_path(nfd, new, b, sizeof(b));
	rc = real.renameat2(ofd, old, nfd, new, flags);
	err = errno;
	emit_rename(a, b, rc, err);
	return rc;
}

EXPORT int unlink(const char *path)
{
	char a[PATH_MAX];
	int rc, err;

	init();
	at_path(AT_FDCWD, path, a, sizeof(a));
	rc = real.unlink(path);
	err = errno;
	emit("unlink", a, 0, 0, 0, 0, rc, err);
	errno = err;
	return rc;
}

EXPORT int unlinkat(int dirfd, const char *path, int flags)
{
	char a[PATH_MAX];
	int rc, err;

	init();
	at_path(dirfd, path, a, sizeof(a));
	rc = real.unlinkat(dirfd, path, flags);
	err = errno;
	emit("unlink", a, 0, 0, 0, 0, rc, err);
	errno = err;
	return rc;
}
