"""Shared fixtures of the reliability suites: the binaries, running the
zrecord command, building stores and .npy bytes, snapshots that prove a
store unchanged, and mounts that are always unmounted (a mount that cannot
be made fails the test, it never skips)."""
import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
# Mounts here must not leave entries in the host's /run/mount/utab
# (a root daemon records itself there: zrecordfs(8)).
os.environ.setdefault("ZRECORDFS_NO_UTAB", "1")
sys.path.insert(0, HERE)
import zrformat  # noqa: E402


def builddir():
    top = os.environ.get("top_builddir")
    return top if top else os.path.dirname(os.path.dirname(HERE))


def binary(*rel):
    path = os.path.join(builddir(), *rel)
    if not os.access(path, os.X_OK):
        pytest.fail(f"{path} is not built (run make check, or set "
                    "top_builddir)")
    return path


def npy_bytes(arr, version=None):
    buf = io.BytesIO()
    if version is None:
        np.save(buf, arr, allow_pickle=False)
    else:
        np.lib.format.write_array(buf, arr, version=version,
                                  allow_pickle=False)
    return buf.getvalue()


class Zr:
    """Runs the zrecord command; results keep stdout as bytes."""

    def __init__(self):
        self.binary = binary("src", "cli", "zrecord")

    def run(self, *args, input=None, timeout=120):
        return subprocess.run([self.binary, *map(str, args)], input=input,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=timeout)

    def ok(self, *args, input=None):
        r = self.run(*args, input=input)
        assert r.returncode == 0, (args, r.stderr.decode())
        return r.stdout

    def stats(self, store):
        return json.loads(self.ok("stats", store))

    def load(self, *args):
        res = np.load(io.BytesIO(self.ok(*args)), allow_pickle=False)
        if isinstance(res, np.lib.npyio.NpzFile):
            return [res[f"arr_{i}"] for i in range(len(res.files))]
        return res

    def create(self, store, dtype, shape=None, codec="zstd"):
        args = ["create", store, "--dtype", dtype, "--codec", codec]
        if shape is None:
            args.append("--ragged")
        else:
            args.append("--shape=" + ",".join(map(str, shape)))
        self.ok(*args)

    def append_arrays(self, store, arrays, tmp):
        path = os.path.join(tmp, "in.npy")
        with open(path, "wb") as f:
            for a in arrays:
                f.write(npy_bytes(a))
        self.ok("append", store, path)


@pytest.fixture(scope="session")
def zr():
    return Zr()


def snapshot(zr, store):
    """What 'the store is unchanged' means: its stats and the exact bytes
    of its files."""
    return zr.stats(store), zrformat.snapshot(store)


def is_mounted(path):
    real = os.path.realpath(path)
    with open("/proc/self/mountinfo") as f:
        return any(line.split()[4] == real for line in f)


def unmount(mnt):
    for cmd in (["fusermount3", "-u", mnt], ["fusermount3", "-u", "-z", mnt],
                ["umount", "-l", mnt]):
        if not is_mounted(mnt):
            return
        subprocess.run(cmd, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=30)


class Mount:
    """A foreground zrecordfs serving src at mnt."""

    def __init__(self, src, mnt, opts=()):
        self.src, self.mnt = src, mnt
        os.makedirs(mnt, exist_ok=True)
        args = [binary("src", "fs", "zrecordfs"), src, mnt, "-f"]
        for o in opts:
            args += ["-o", o]
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=self.log)
        deadline = time.monotonic() + 20
        while not is_mounted(mnt):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.close()
                pytest.fail(f"zrecordfs did not mount {src} at {mnt}: "
                            f"{self.output()}")
            time.sleep(0.02)

    def output(self):
        self.log.seek(0)
        return self.log.read().decode(errors="replace")

    def close(self):
        unmount(self.mnt)
        if self.proc.poll() is None:
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


@pytest.fixture
def mounter():
    """mounter(src, mnt, opts) mounts; every mount is undone at teardown,
    whatever the test did."""
    mounts = []

    def make(src, mnt, opts=()):
        m = Mount(src, mnt, opts)
        mounts.append(m)
        return m

    yield make
    for m in mounts:
        m.close()
    for m in mounts:
        assert not is_mounted(m.mnt), f"{m.mnt} still mounted"


@contextlib.contextmanager
def tmpfs(path, size):
    """A size-limited tmpfs at path, unmounted on exit."""
    os.makedirs(path, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs",
                    path], check=True)
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", path])


def write_file(path, data):
    with open(path, "wb") as f:
        f.write(data)


def cp(src, dst):
    """cp(1), so the errno is what a user's cp sees."""
    return subprocess.run(["cp", src, dst], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=120)


@pytest.fixture
def tmp(tmp_path):
    yield str(tmp_path)
    shutil.rmtree(str(tmp_path), ignore_errors=True)
