"""fsutil.py - helpers of the zrecordfs suite: the build's binaries, making
fixture stores with the `zrecord` command, and mounting/unmounting."""
import fcntl
import io
import json
import os
import subprocess
import tempfile
import time

import numpy as np

TOP_BUILD = os.environ.get("top_builddir") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
TOP_SRC = os.environ.get("top_srcdir") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
ZRECORDFS = os.path.join(TOP_BUILD, "src", "fs", "zrecordfs")
ZRECORD = os.path.join(TOP_BUILD, "src", "cli", "zrecord")
HELPER = os.path.join(TOP_SRC, "src", "mount", "mount.zrecordfs.sh")
UMOUNT_HELPER = os.path.join(TOP_BUILD, "src", "mount", "umount.fuse.zrecordfs")
SHIM = os.path.join(TOP_BUILD, "tests", "shim", ".libs", "libiotrace.so")
# A daemon run as root records its mount in /run/mount/utab (zrecordfs(8));
# the suites' mounts must not leave entries in the host's.  helperns.py,
# whose namespace has a utab of its own, drops this again.
os.environ.setdefault("ZRECORDFS_NO_UTAB", "1")


def slow_flush_env(delay_ms, what="FLUSH"):
    """Environment under which a program sleeps delay_ms in every fsync
    and fdatasync (what="READ": in every pread), the libiotrace shim: a
    slow disk."""
    assert os.path.exists(SHIM), SHIM + " is not built (make check)"
    return {
        "ZR_IOTRACE_%s_DELAY_MS" % what: str(delay_ms),
        "LD_PRELOAD": " ".join(
            p for p in (os.environ.get("LD_PRELOAD", ""), SHIM) if p),
        "ASAN_OPTIONS": ":".join(
            p for p in (os.environ.get("ASAN_OPTIONS", ""),
                        "verify_asan_link_order=0") if p),
    }


def zrecord(*args, check=True):
    r = subprocess.run([ZRECORD, *map(str, args)], capture_output=True)
    if check and r.returncode != 0:
        raise AssertionError("zrecord %s failed: %s" %
                             (" ".join(map(str, args)), r.stderr.decode()))
    return r


def make_store(path, dtype, shape=None, ragged=False, codec="raw",
               rows=None, records=()):
    """Creates a store with the zrecord command and appends rows (dense,
    one array) or records (ragged, a list of arrays)."""
    args = ["create", path, "--dtype", np.dtype(dtype).str, "--codec", codec]
    if ragged:
        args.append("--ragged")
    else:
        args.append("--shape=" + ",".join(map(str, shape)))
    zrecord(*args)
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        if rows is not None and len(rows):
            files.append(os.path.join(tmp, "rows.npy"))
            np.save(files[-1], rows)
        for i, r in enumerate(records):
            files.append(os.path.join(tmp, "r%06d.npy" % i))
            np.save(files[-1], r)
        if files:
            zrecord("append", path, *files)


def store_unlocked(store):
    """True once nobody holds the store's lock (the daemon has exited)."""
    with open(os.path.join(store, "meta.zr"), "rb") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        fcntl.flock(f, fcntl.LOCK_UN)
        return True


def wait_for(pred, timeout=10.0, what="condition"):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return
        time.sleep(0.02)
    raise AssertionError("timed out waiting for " + what)


def unmount(mnt):
    """fusermount3 -u, then umount -l as the last resort."""
    if not os.path.ismount(mnt):
        return True
    r = subprocess.run(["fusermount3", "-u", mnt], capture_output=True)
    if r.returncode == 0:
        return True
    subprocess.run(["umount", "-l", mnt], capture_output=True)
    return False


class Mount:
    """A foreground zrecordfs process serving src at mnt."""

    def __init__(self, src, mnt, *opts):
        self.src, self.mnt = src, mnt
        os.makedirs(mnt, exist_ok=True)
        cmd = [ZRECORDFS, src, mnt, "-f"]
        if opts:
            cmd += ["-o", ",".join(opts)]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        end = time.monotonic() + 10
        while not os.path.ismount(mnt):
            if self.proc.poll() is not None:
                err = self.proc.stderr.read().decode()
                raise AssertionError("zrecordfs failed to mount: " + err)
            if time.monotonic() > end:
                self.proc.kill()
                raise AssertionError("zrecordfs did not mount in 10 s")
            time.sleep(0.01)

    def path(self, *parts):
        return os.path.join(self.mnt, *parts)

    def stop(self):
        """Unmounts and waits for the daemon; returns its exit status."""
        unmount(self.mnt)
        try:
            rc = self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            # Killed, which fails the test; what each thread waited in
            # says why the daemon did not exit.
            print(hung_threads(self.proc.pid))
            self.proc.kill()
            rc = self.proc.wait()
        self.stderr = self.proc.stderr.read().decode()
        return rc


def _proc_text(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError as e:
        return "(%s)" % e.strerror


def hung_threads(pid):
    """A daemon that would not exit, thread by thread: its name, kernel
    wait channel and kernel stack, and gdb's backtraces where gdb is
    installed."""
    lines = ["zrecordfs %d did not exit within 20 s of its unmount:" % pid]
    task = "/proc/%d/task" % pid
    for t in sorted(os.listdir(task), key=int):
        d = os.path.join(task, t)
        lines.append("thread %s %s wchan=%s\n%s" % (
            t, _proc_text(d + "/comm"), _proc_text(d + "/wchan"),
            _proc_text(d + "/stack")))
    gdb = "/usr/bin/gdb"
    if os.access(gdb, os.X_OK):
        try:
            r = subprocess.run([gdb, "-p", str(pid), "-batch", "-nx", "-ex",
                                "thread apply all bt"], capture_output=True,
                               text=True, timeout=60)
            lines.append(r.stdout)
        except subprocess.TimeoutExpired:
            lines.append("(gdb did not answer within 60 s)")
    return "\n".join(lines)


def npy_bytes(a):
    """a as the bytes of a .npy file."""
    b = io.BytesIO()
    np.save(b, a)
    return b.getvalue()


def store_stats(m, store):
    """The mount's stats file of store, parsed."""
    with open(m.path(store, "stats")) as f:
        return json.load(f)


def expected_after_delete(items, deleted):
    """The store's swap-with-last delete, in descending index order."""
    items = list(items)
    for i in sorted(set(deleted), reverse=True):
        items[i] = items[-1]
        items.pop()
    return items


def batch_path(seed, step, mode, size, ext):
    """A batch file's path parts below a store: batch/SEED-STEP.EXT, or
    batch/MODE/SIZE/SEED-STEP.EXT when mode is given."""
    name = "%d-%d.%s" % (seed, step, ext)
    return ["batch", name] if mode is None else ["batch", mode, str(size),
                                                 name]


def batch_args(seed, step, mode, size):
    """The `zrecord batch` flags of the same batch."""
    args = ["--seed", seed, "--step", step]
    if mode is not None:
        args += ["--mode", mode, "--batch-size", size]
    return args
