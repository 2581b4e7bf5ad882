/*
 * umount_helper.c - umount.fuse.zrecordfs, the umount(8) helper: unmounts
 * a zrecordfs mount, then waits until its daemon has closed (synced and
 * unlocked) every store, so that a command run after `umount MNT` finds
 * the stores free (mount_lock.h says how the wait works).
 *
 * umount(8) runs /sbin/umount.<fstype> for any mount of that type, as
 *     umount.fuse.zrecordfs MOUNTPOINT [-flnrv] [-N NS] [-t TYPE]
 * The unmount itself is `umount -i` (-i: no helper, so no recursion) for
 * root and `fusermount3 -u` for anyone else.  After a lazy unmount (-l)
 * the daemon lives on until its last open file is closed, and with -N
 * the folder is in another namespace: neither waits.
 * ZRECORDFS_UMOUNT_TIMEOUT=SECONDS bounds the wait (default 60, 0: none).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lock_holder.h"
#include "mount_lock.h"

#define ME "umount.fuse.zrecordfs"
#define EX_USAGE 1   /* umount(8)'s codes */
#define EX_SYSERR 2
#define EX_FAIL 32

struct args {
	const char *mnt, *ns;
	int lazy, force, nomtab, verbose, rdonly;
	unsigned timeout_ms;
};

static void usage(FILE *f)
{
	fprintf(f, "Usage: " ME " MOUNTPOINT [-flnrv] [-N NS] [-t TYPE]\n"
		"       " ME " --help | --version\n\n"
		"Unmounts a zrecordfs mount, then waits until its daemon has "
		"closed\n(synced and unlocked) every store.  umount(8) runs "
		"it; -l (lazy)\nand -N (another namespace) do not wait.\n"
		"ZRECORDFS_UMOUNT_TIMEOUT=SECONDS bounds the wait (default "
		"%u, 0: no wait).\n", ZRMOUNT_LOCK_TIMEOUT_MS / 1000);
}

/* Whole seconds, at most a day. */
static int parse_timeout(struct args *a)
{
	const char *s = getenv("ZRECORDFS_UMOUNT_TIMEOUT");
	char *end;
	unsigned long v;

	a->timeout_ms = ZRMOUNT_LOCK_TIMEOUT_MS;
	if (!s)
		return 0;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (*s < '0' || *s > '9' || *end || errno || v > 86400) {
		fprintf(stderr, ME ": ZRECORDFS_UMOUNT_TIMEOUT='%s': give "
			"whole seconds, 0 to 86400\n", s);
		return -1;
	}
	a->timeout_ms = (unsigned)v * 1000u;
	return 0;
}

/* One of umount(8)'s flags into a; -1 for anything else. */
static int flag(struct args *a, int c)
{
	switch (c) {
	case 'f':
		a->force = 1;
		return 0;
	case 'l':
		a->lazy = 1;
		return 0;
	case 'n':
		a->nomtab = 1;
		return 0;
	case 'r':
		a->rdonly = 1;
		return 0;
	case 'v':
		a->verbose = 1;
		return 0;
	case 'N':
		a->ns = optarg;
		return 0;
	case 't':
		return 0; /* we know our type */
	default:
		return -1;
	}
}

/* 0 to go on, 1 after --help or --version, -1 after a usage message. */
static int parse(int argc, char **argv, struct args *a)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	while ((c = getopt_long(argc, argv, "flnrvhN:t:", longopts,
				NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return 1;
		}
		if (c == 'V') {
			printf(ME " (zrecordfs) %s\n", PACKAGE_VERSION);
			return 1;
		}
		if (flag(a, c)) {
			usage(stderr);
			return -1;
		}
	}
	if (argc - optind != 1) {
		usage(stderr);
		return -1;
	}
	a->mnt = argv[optind];
	return parse_timeout(a);
}

/* The command that unmounts, into argv (room for 12). */
static void unmount_command(const struct args *a, const char **argv)
{
	int i = 0;

	if (geteuid() == 0) {
		argv[i++] = "umount";
		argv[i++] = "-i";
		if (a->nomtab)
			argv[i++] = "-n";
		if (a->lazy)
			argv[i++] = "-l";
		if (a->force)
			argv[i++] = "-f";
		if (a->verbose)
			argv[i++] = "-v";
		if (a->rdonly)
			argv[i++] = "-r";
		if (a->ns) {
			argv[i++] = "-N";
			argv[i++] = a->ns;
		}
	} else {
		/* A user's own FUSE mount: only fusermount3 may undo it. */
		argv[i++] = "fusermount3";
		argv[i++] = "-u";
		if (a->lazy)
			argv[i++] = "-z";
	}
	argv[i++] = a->mnt;
	argv[i] = NULL;
}

/* Runs the unmount; its exit status, or EX_SYSERR. */
static int unmount(const struct args *a)
{
	const char *argv[12];
	int st;
	pid_t pid;

	unmount_command(a, argv);
	/* umount(8) may hand us an empty environment. */
	setenv("PATH", "/usr/sbin:/usr/bin:/sbin:/bin", 0);
	pid = fork();
	if (pid < 0) {
		perror(ME ": fork");
		return EX_SYSERR;
	}
	if (pid == 0) {
		execvp(argv[0], (char *const *)argv);
		fprintf(stderr, ME ": %s: %s\n", argv[0], strerror(errno));
		_exit(EX_SYSERR);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			perror(ME ": waitpid");
			return EX_SYSERR;
		}
	return WIFEXITED(st) ? WEXITSTATUS(st) : EX_SYSERR;
}

static int wait_for_daemon(const struct args *a)
{
	char comm[64];
	int write, err;
	pid_t pid;

	if (a->verbose)
		printf(ME ": waiting for zrecordfs to close the stores of "
		       "%s\n", a->mnt);
	err = zrmount_lock_wait(a->mnt, a->timeout_ms);
	if (!err)
		return 0;
	if (err != -ETIMEDOUT) {
		fprintf(stderr, ME ": %s is unmounted, but cannot wait for its "
			"zrecordfs to close the stores: %s\n", a->mnt,
			strerror(-err));
		return EX_FAIL;
	}
	pid = zrcommon_lock_holder(a->mnt, comm, sizeof(comm), &write);
	fprintf(stderr, ME ": %s is unmounted, but its zrecordfs", a->mnt);
	if (pid)
		fprintf(stderr, " (process %d)", (int)pid);
	fprintf(stderr, " has not closed its stores after %u s; they stay "
		"locked until it does (ZRECORDFS_UMOUNT_TIMEOUT sets the "
		"wait)\n", a->timeout_ms / 1000);
	return EX_FAIL;
}

int main(int argc, char **argv)
{
	struct args a = { 0 };
	int rc = parse(argc, argv, &a);

	if (rc)
		return rc > 0 ? 0 : EX_USAGE;
	rc = unmount(&a);
	if (rc || a.lazy || a.ns || !a.timeout_ms)
		return rc;
	return wait_for_daemon(&a);
}
