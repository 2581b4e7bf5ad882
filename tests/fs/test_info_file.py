"""The mount's own file at its root, .zrecordfs (src/fs/info_file.c): the
daemon's version and pid, and its prefetcher's settings and counters as
"key: value" lines, made at each read.  A daemon (no -f) prints its
unmount summary to syslog, not to a terminal, so the counters must be
readable while mounted: they grow as batches are gathered ahead and
served, in the foreground and in daemon mode alike.  It is a dot file the
mount lists, but `zrecord ls` and `cat` have no mount and do not show it;
a .zrecordfs that SRC holds itself wins."""
import os
import stat
import subprocess
import time

import numpy as np

from fsutil import ZRECORDFS, make_store, unmount, zrecord
from test_prefetch import COMPUTE, counts, trainer

INFO = ".zrecordfs"
KEYS = ["version", "pid", "prefetch", "prefetch_mem", "prefetch_gathered",
        "prefetch_served", "prefetch_dropped", "prefetch_taken_over"]


def info(mnt):
    """The root file as a dict, its keys checked in order."""
    with open(os.path.join(mnt, INFO)) as f:
        text = f.read()
    pairs = [line.split(": ", 1) for line in text.splitlines()]
    assert [k for k, _ in pairs] == KEYS, text
    return {k: v if k == "version" else int(v) for k, v in pairs}


def img_store(src, n=200):
    rows = np.random.default_rng(1).integers(0, 255, (n, 3, 16, 16),
                                             dtype=np.uint8)
    make_store(os.path.join(src, "img"), "u1", shape=(3, 16, 16),
               codec="zstd", rows=rows)


def read_steps(mnt, steps):
    trainer([os.path.join(mnt, "img", "batch", "4-%d.npy" % t)
             for t in steps])


def test_counters_grow_as_batches_are_gathered_ahead(src, mount):
    img_store(src)
    m = mount(src, "ro", "batch_size=20", "prefetch=3", "prefetch_mem=64M")
    before = info(m.mnt)
    assert before["pid"] == m.proc.pid
    assert before["prefetch"] == 3 and before["prefetch_mem"] == 64 << 20
    assert before["version"] == zrecord("--version").stdout.decode().split()[-1]
    assert all(before[k] == 0 for k in KEYS[4:]), before
    read_steps(m.mnt, range(6))
    after = info(m.mnt)
    assert after["prefetch_served"] >= 1, after
    assert after["prefetch_gathered"] >= after["prefetch_served"], after
    assert m.stop() == 0, m.stderr
    # the unmount summary counts at least what the file showed
    gathered, served = counts(m)
    assert gathered >= after["prefetch_gathered"], m.stderr
    assert served >= after["prefetch_served"], m.stderr


def test_prefetch_off_shows_zeros(src, mount):
    img_store(src)
    m = mount(src, "ro", "batch_size=20", "prefetch=0")
    read_steps(m.mnt, range(3))
    got = info(m.mnt)
    assert got["prefetch"] == 0 and got["prefetch_mem"] == 0, got
    assert all(got[k] == 0 for k in KEYS[4:]), got


def test_listing(src, mount, tmp_path):
    img_store(src)
    m = mount(src, "ro")
    assert sorted(os.listdir(m.mnt)) == [INFO, "img"]
    st = os.stat(m.path(INFO))
    assert stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o444
    with open(m.path(INFO), "rb") as f:
        assert st.st_size == len(f.read())
    # hidden from ls and globs; the CLI has no mount and no such file
    ls = subprocess.run(["ls", m.mnt], capture_output=True, check=True)
    assert ls.stdout.decode().split() == ["img"]
    assert zrecord("ls", src).stdout.decode().split() == ["img"]
    r = zrecord("cat", src, INFO, check=False)
    assert r.returncode != 0 and not r.stdout, r
    # SRC that is a store: the file sits beside the store's own
    one = mount(os.path.join(src, "img"), "ro", name="one")
    assert INFO in os.listdir(one.mnt)
    assert info(one.mnt)["pid"] == one.proc.pid


def test_a_name_src_holds_wins(src, mount):
    img_store(src)
    own = os.path.join(src, INFO)
    make_store(os.path.join(own, "s"), "u1", shape=(2,),
               rows=np.zeros((3, 2), np.uint8))
    m = mount(src, "ro")
    assert os.listdir(m.path(INFO)) == ["s"]
    assert m.stop() == 0
    assert "SRC has .zrecordfs at its top" in m.stderr, m.stderr


def wait_gone(pid, seconds=20):
    end = time.monotonic() + seconds
    while os.path.exists("/proc/%d" % pid):
        assert time.monotonic() < end, "zrecordfs %d did not exit" % pid
        time.sleep(0.05)


def test_daemon_mode_counters(src, tmp_path):
    """No -f: the daemon's stderr is /dev/null and its unmount summary
    goes to syslog, so the root file is where its counters are seen."""
    img_store(src)
    mnt = str(tmp_path / "mnt")
    os.makedirs(mnt)
    r = subprocess.run([ZRECORDFS, src, mnt, "-o",
                        "ro,batch_size=20,prefetch=3"],
                       capture_output=True, timeout=20)
    assert r.returncode == 0, r.stderr
    pid = None
    try:
        pid = info(mnt)["pid"]
        with open("/proc/%d/comm" % pid) as f:
            assert f.read().strip() == "zrecordfs"
        read_steps(mnt, range(6))
        got = info(mnt)
        assert got["prefetch_served"] >= 1, got
        time.sleep(COMPUTE)
    finally:
        assert unmount(mnt)
    if pid:
        wait_gone(pid)
