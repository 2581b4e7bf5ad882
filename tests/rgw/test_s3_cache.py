"""The host cache of S3 reads, counted in bytes on the wire: every request
goes through scripts/delay-relay.py (no delay), which reports what it
relayed.  One cold pass over a store's records through a mount downloads at
most 1.15x its files; the same pass after unmount and mount with the same
cache at most 2% of that; four processes reading the same batch files
through one mount download what one does; the command's --cache and
loaderx's cache= share the blocks; a new published version is read new;
a cache folder that cannot be used is refused by name.  Real FUSE mounts of
the built daemon, a real engine; they fail, never skip."""
import contextlib
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import TOP_SRC, write_npys
from test_s3_mount import ZRECORDFS, Mount

RELAY = os.path.join(TOP_SRC, "scripts", "delay-relay.py")
REC = 16384  # bytes per record: 64 to a cache block


class Relay:
    """delay-relay.py in front of the engine: AWS_ENDPOINT_URL for the
    processes started while it is in use, and what it relayed."""

    def __init__(self, engine):
        port = engine.endpoint.rsplit(":", 1)[1]
        self.proc = subprocess.Popen(
            [sys.executable, RELAY, "--to", port, "--delay-ms", "0"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline().split()
        assert line[:1] == ["port"], line
        self.endpoint = "http://127.0.0.1:" + line[1]

    def bytes(self):
        """Stops it: the bytes it relayed, both ways."""
        self.proc.terminate()
        err = self.proc.communicate(timeout=60)[1]
        words = err.split()
        return int(words[words.index("bytes,") - 1])


@contextlib.contextmanager
def through(relay):
    """os.environ (which started processes and this one's library read)
    pointed at the relay."""
    saved = os.environ["AWS_ENDPOINT_URL"]
    os.environ["AWS_ENDPOINT_URL"] = relay.endpoint
    try:
        yield
    finally:
        os.environ["AWS_ENDPOINT_URL"] = saved


@pytest.fixture(scope="module")
def big(zr, engine, tmp_path_factory):
    """A dense raw store of 2048 random 16 KiB records (32 MiB: 32 cache
    blocks), uploaded as it is: (local, url, its files' bytes)."""
    tmp = tmp_path_factory.mktemp("big")
    rng = np.random.default_rng(5)
    a = rng.integers(0, 255, (2048, REC), dtype="u1")
    s = tmp / "store"
    zr.ok("create", s, "--dtype", "|u1", "--shape", str(REC))
    zr.ok("append", s, write_npys(tmp / "a.npy", a))
    size = sum(os.path.getsize(s / f) for f in os.listdir(s)
               if os.path.isfile(s / f))
    return s, engine.upload(s, "cache/big"), size


def read_records(mnt, n):
    return [open(os.path.join(mnt, "records", "%d.npy" % i), "rb").read()
            for i in range(n)]


def pass_bytes(engine, url, mnt, cache, want):
    """A mount of url with cache: every record read (and checked); what
    it downloaded."""
    relay = Relay(engine)
    with through(relay):
        m = Mount(url, mnt, "cache=%s" % cache)
    try:
        assert read_records(m.mnt, len(want)) == want
    finally:
        m.stop()
    return relay.bytes()


def test_a_pass_then_a_warm_remount(engine, big, tmp_path):
    local, url, size = big
    want = read_records_local(local, 2048, tmp_path)
    cache = tmp_path / "c"
    cold = pass_bytes(engine, url, str(tmp_path / "m1"), cache, want)
    assert size <= cold <= 1.15 * size, (cold, size)
    warm = pass_bytes(engine, url, str(tmp_path / "m2"), cache, want)
    print("cold pass %d bytes (%.3fx the store's %d); warm remount %d "
          "(%.4fx the cold pass)" % (cold, cold / size, size, warm,
                                     warm / cold))
    assert warm <= 0.02 * cold, (warm, cold)


def read_records_local(local, n, tmp_path):
    m = Mount(local, str(tmp_path / "local"), "ro")
    try:
        return read_records(m.mnt, n)
    finally:
        m.stop()


BATCHES = ["batch/%d-%d.npy" % (7, t) for t in (0, 5, 9)]


def read_batches(mnt, out):
    out.append([open(os.path.join(mnt, b), "rb").read() for b in BATCHES])


def one_mount_bytes(engine, url, tmp_path, name, readers):
    """What a fresh mount (batch_size=4, no prefetch) downloads while
    `readers` threads, each its own process's open and read (cat), read
    the same batch files at once."""
    relay = Relay(engine)
    with through(relay):
        m = Mount(url, str(tmp_path / name), "batch_size=4,prefetch=0,"
                  "cache=%s" % (tmp_path / (name + "-cache")))
    try:
        procs = [subprocess.Popen(
            ["cat"] + [os.path.join(m.mnt, b) for b in BATCHES],
            stdout=subprocess.PIPE) for _ in range(readers)]
        outs = [p.communicate(timeout=120)[0] for p in procs]
        assert all(p.returncode == 0 for p in procs)
    finally:
        m.stop()
    return relay.bytes(), outs


def test_four_processes_download_what_one_does(engine, big, tmp_path):
    _, url, size = big
    one, out1 = one_mount_bytes(engine, url, tmp_path, "one", 1)
    four, out4 = one_mount_bytes(engine, url, tmp_path, "four", 4)
    assert all(o == out1[0] for o in out4) and len(out1[0]) > 12 * REC
    # 12 records touch at most 12 of the 32 blocks: the batches did not
    # download the whole store, so a second download would show
    print("3 batch files: one reader %d bytes, four %d (%.3fx)"
          % (one, four, four / one))
    assert one < 0.5 * size, (one, size)
    assert four <= 1.02 * one, (four, one)


def get_bytes(zr, engine, url, *opts):
    relay = Relay(engine)
    with through(relay):
        out = zr.ok("get", url, "3", "700", "2047", "-o", "-", *opts)
    return relay.bytes(), out


def test_the_command_s_cache_option(zr, engine, big, tmp_path):
    local, url, _ = big
    want = zr.ok("get", local, "3", "700", "2047", "-o", "-")
    c = ["--cache", str(tmp_path / "cli")]
    first, out = get_bytes(zr, engine, url, *c)
    again, out2 = get_bytes(zr, engine, url, *c, "--cache-size", "1G")
    assert out == want and out2 == want
    assert first > 3 * 1024 * 1024 and again < 0.02 * first, (first, again)
    off1, _ = get_bytes(zr, engine, url, "--cache", "off")
    off2, _ = get_bytes(zr, engine, url, "--cache", "off")
    assert off1 > 3 * REC and off2 > 3 * REC
    assert off1 < first  # whole blocks only when they are kept


def test_loaderx_and_the_command_share_blocks(zr, engine, big, tmp_path):
    from loaderx import DenseStore, cache_status, set_cache
    local, url, _ = big
    cache = tmp_path / "shared"
    zr.ok("get", url, "0", "64", "-o", "-", "--cache", str(cache))
    relay = Relay(engine)
    try:
        with through(relay):
            with DenseStore.open(url, cache=str(cache)) as s:
                before = cache_status()
                got = s.gather([1, 2, 65, 66])
                after = cache_status()
    finally:
        set_cache(os.environ["ZR_CACHE"])
        wire = relay.bytes()
    with DenseStore.open(str(local)) as s:
        np.testing.assert_array_equal(got, s.gather([1, 2, 65, 66]))
    assert after["fetched_bytes"] == before["fetched_bytes"]
    assert after["hit_bytes"] - before["hit_bytes"] == 4 * REC
    assert after["folder"] == str(cache / "v1")
    assert wire < 64 * 1024  # the opens' requests only


def test_a_new_version_is_read_new(zr, engine, tmp_path):
    """push v1, read it through a cached mount; append and push v2: a
    mount with the same cache reads v2's records, old and new."""
    rng = np.random.default_rng(9)
    a = rng.integers(0, 255, (300, 4096), dtype="u1")
    s = tmp_path / "grow"
    zr.ok("create", s, "--dtype", "|u1", "--shape", "4096", "--codec", "zstd")
    zr.ok("append", s, write_npys(tmp_path / "a.npy", a[:200]))
    url = engine.url("cache/grow")
    zr.ok("push", s, url, "--part-size", "262144")
    cache = "cache=%s" % (tmp_path / "c")
    m = Mount(url, str(tmp_path / "v1"), cache)
    try:
        assert len(os.listdir(os.path.join(m.mnt, "records"))) == 200
        read_records(m.mnt, 200)
    finally:
        m.stop()
    zr.ok("append", s, write_npys(tmp_path / "b.npy", a[200:]))
    zr.ok("push", s, url, "--part-size", "262144")
    m = Mount(url, str(tmp_path / "v2"), cache)
    try:
        got = read_records(m.mnt, 300)
    finally:
        m.stop()
    for i in (0, 199, 200, 299):
        np.testing.assert_array_equal(
            np.load(__import__("io").BytesIO(got[i])), a[i])


def test_an_unusable_cache_is_refused_by_name(zr, engine, big, tmp_path):
    _, url, _ = big
    f = tmp_path / "a-file"
    f.write_text("not a folder")
    r = zr.run("get", url, "1", "-o", "-", "--cache", str(f))
    assert r.returncode == 2 and str(f) in r.stderr.decode(), r.stderr
    r = zr.run("get", url, "1", "-o", "-", "--cache-size", "1M")
    assert r.returncode == 2 and "--cache-size 1M" in r.stderr.decode()
    mnt = tmp_path / "m"
    mnt.mkdir()
    p = subprocess.run([ZRECORDFS, url, str(mnt), "-f", "-o", "cache=%s" % f],
                       capture_output=True, timeout=60)
    assert p.returncode != 0 and str(f) in p.stderr.decode(), p.stderr
    assert not os.path.ismount(mnt)
    p = subprocess.run([ZRECORDFS, url, str(mnt), "-f", "-o",
                        "cache=%s" % (mnt / "c")], capture_output=True,
                       timeout=60)
    assert p.returncode != 0 and "inside the mount point" in \
        p.stderr.decode(), p.stderr
    assert not os.path.ismount(mnt)
    # a default that cannot be used: the read goes on uncached, and says so
    r = zr.run("get", url, "1", "-o", "-", env={"ZR_CACHE": str(f)})
    assert r.returncode == 0 and len(r.stdout) > REC
    assert "warning: S3 reads were not cached" in r.stderr.decode()
