"""Hostile names and writes against a live read-write mount: a generator
of valid, edge and hostile paths (huge and negative numbers, leading
zeros, signs, Unicode digits, every suffix, paths nested under files,
255- and 300-character names) looked up, listed and read, and of random
bytes written into append, delete, sync and compact.  Its bounded run is
part of `make check` (ZR_HOSTILE_COUNT operations, default 400); `make
hostile-live HOSTILE_COUNT=N` runs longer.

Checks: the daemon stays up; its memory stays bounded (VmHWM); no call
takes over a second; no name gives EIO; and the stores are unchanged
afterwards: the same records, byte for byte, and `zrecord verify` passes.
The random bytes are drawn so that they can never be a valid input (an
append gets no .npy magic, a delete at least one byte no index list
holds), so "unchanged" is what every one of them must leave."""
import errno
import io
import os
import random
import time

import numpy as np

from conftest import Mount, Zr, npy_bytes

COUNT = int(os.environ.get("ZR_HOSTILE_COUNT", "400"))
SEED = int(os.environ.get("ZR_HOSTILE_SEED", "22"))
SLOW_S = 1.0
HWM_KIB = 512 * 1024

D_ROWS = np.arange(30, dtype="<f4").reshape(10, 3)
R_RECS = [np.arange(n, dtype="<i2") for n in (1, 4, 9, 2, 5)]
A_ROWS = np.arange(10, dtype="<i8")

# What a name may fail with; EIO never.
ALLOWED = {errno.ENOENT, errno.ENOTDIR, errno.EISDIR, errno.EINVAL,
           errno.ENAMETOOLONG, errno.EFBIG, errno.ERANGE, errno.EACCES,
           errno.EPERM, errno.EROFS, errno.EBUSY, errno.ENOSYS,
           errno.EOVERFLOW}

NUMBERS = ["0", "1", "9", "10", "11", "-1", "-0", "+1", "007", "00",
           "0x1", "1e3", " 1", "1 ", "1.0", "", "٣", "１", "²", "Ⅻ",
           str(2**32), str(2**63 - 1), str(2**63), str(2**64 - 1),
           str(2**64), "9" * 40, "18446744073709551616"]
SUFFIXES = [".npy", ".npz", ".png", ".packed.npz", ".padded.npz",
            ".indices.npy", ".offsets.npy", ".shapes.npy", ".lengths.npy",
            ".padded.npy", ".packed.npy", ".NPY", ".npy.npy", ".txt", "",
            ".", ".npy/", ".npy\x7f"]
MODES = ["sequential", "iid", "cyclic", "random", "IID", ""]
STORES = ["D", "R", "ds/a", "ds/b", "ds"]
FILES = ["stats", "schema", "errors", "append", "delete", "sync",
         "compact", "records/0.npy", "batch/0-0.npy"]


def number(rng):
    return rng.choice(NUMBERS)


def name(rng):
    """One path below the mount point, valid, edge or hostile."""
    st = rng.choice(STORES)
    kind = rng.randrange(8)
    if kind == 0:
        rel = "%s/records/%s%s" % (st, number(rng), rng.choice(SUFFIXES))
    elif kind == 1:
        rel = "%s/batch/%s-%s%s" % (st, number(rng), number(rng),
                                    rng.choice(SUFFIXES))
    elif kind == 2:
        rel = "%s/batch/%s/%s/%s-%s%s" % (
            st, rng.choice(MODES), number(rng), number(rng), number(rng),
            rng.choice(SUFFIXES))
    elif kind == 3:
        rel = "ds/@batch/%s/%s/%s-%s%s" % (
            rng.choice(MODES), number(rng), number(rng), number(rng),
            rng.choice(SUFFIXES))
    elif kind == 4:   # nested under a file
        rel = "%s/%s/%s" % (st, rng.choice(FILES), rng.choice(
            ["x", "0.npy", "..", ".", "records"]))
    elif kind == 5:   # long names
        rel = "%s/%s" % (st, rng.choice(["a" * 255, "b" * 300,
                                         "records/" + "1" * 255,
                                         "records/" + "0" * 300 + ".npy"]))
    elif kind == 6:
        rel = "%s/%s" % (st, rng.choice(FILES))
    else:
        rel = "%s/%s" % (st, "".join(rng.choice("0-9.npyz/@\x01é ")
                                     for _ in range(rng.randrange(1, 20))))
    return rel


def timed(fn):
    t = time.monotonic()
    err = 0
    try:
        fn()
    except OSError as e:
        err = e.errno
    return err, time.monotonic() - t


def read_some(path):
    with open(path, "rb") as f:
        f.read(4096)


def probe(mnt, rel, rng):
    """stat, then list or read the name; the errnos and the slowest call."""
    path = os.path.join(mnt, rel)
    out = [timed(lambda: os.stat(path))]
    if rng.random() < 0.5:
        out.append(timed(lambda: os.listdir(path)))
    else:
        out.append(timed(lambda: read_some(path)))
    return out


def garbage(rng, what):
    """Random bytes that can never be a valid input of what."""
    # empty is a valid (empty) append or delete: never drawn for them
    n = rng.choice([0, 1, 7, 64, 300, 5000])
    if what in ("append", "delete"):
        n = max(n, 1)
    b = bytearray(rng.getrandbits(8) for _ in range(n))
    if what == "append":
        if b[:1] == b"\x93":
            b[0] = 0
    elif what == "delete":
        b.append(rng.choice(b"xZ#\xff\x00-"))
        if b[:1] == b"\x93":
            b[0] = ord("q")
    return bytes(b)


def write(mnt, store, what, data):
    def go():
        with open(os.path.join(mnt, store, what), "wb") as f:
            f.write(data)
    return timed(go)


def contents(zr, store):
    st = zr.stats(store)
    n = st["records"]
    return n, [bytes(zr.ok("get", store, i)) for i in range(n)]


def hwm_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def make_stores(zr, src, tmp):
    zr.create(os.path.join(src, "D"), "<f4", (3,))
    zr.append_arrays(os.path.join(src, "D"), [D_ROWS], tmp)
    zr.create(os.path.join(src, "R"), "<i2")
    zr.append_arrays(os.path.join(src, "R"), R_RECS, tmp)
    for s in ("a", "b"):
        zr.create(os.path.join(src, "ds", s), "<i8", ())
        zr.append_arrays(os.path.join(src, "ds", s), [A_ROWS], tmp)


def test_hostile_names_and_writes_on_a_live_mount(tmp):
    zr = Zr()
    rng = random.Random(SEED)
    src, mnt = os.path.join(tmp, "src"), os.path.join(tmp, "mnt")
    make_stores(zr, src, tmp)
    stores = ["D", "R", "ds/a", "ds/b"]
    before = {s: contents(zr, os.path.join(src, s)) for s in stores}
    m = Mount(src, mnt)
    eio, slow, other, writes = [], [], [], 0
    try:
        for i in range(COUNT):
            if i % 10 == 9:
                store = rng.choice(stores)
                what = rng.choice(["append", "delete", "sync", "compact"])
                data = garbage(rng, what)
                err, dt = write(mnt, store, what, data)
                writes += 1
                if what in ("sync", "compact") and err:
                    other.append((store, what, err))
                if what in ("append", "delete") and not err:
                    other.append((store, what, "accepted %r" % data[:20]))
                results = [(err, dt)]
                rel = "%s/%s" % (store, what)
            else:
                rel = name(rng)
                results = probe(mnt, rel, rng)
            for err, dt in results:
                if err == errno.EIO:
                    eio.append(rel)
                elif err and err not in ALLOWED:
                    other.append((rel, errno.errorcode.get(err, err)))
                if dt > SLOW_S:
                    slow.append((rel, round(dt, 2)))
            assert m.proc.poll() is None, "the daemon died at %r" % rel
        assert np.array_equal(np.load(os.path.join(mnt, "D/records/9.npy")),
                              D_ROWS[9])
        hwm = hwm_kib(m.proc.pid)
    finally:
        rc = m.close()
    print("hostile-live: %d operations (%d writes), daemon peak RSS %d "
          "KiB" % (COUNT, writes, hwm))
    assert not eio, "EIO from names: %r" % eio[:10]
    assert not slow, "calls over %g s: %r" % (SLOW_S, slow[:10])
    assert not other, "unexpected results: %r" % other[:10]
    assert hwm < HWM_KIB, "daemon peak RSS %d KiB" % hwm
    assert rc == 0, m.output()
    for s in stores:
        path = os.path.join(src, s)
        assert zr.run("verify", path).returncode == 0, s
        assert contents(zr, path) == before[s], "%s changed" % s
