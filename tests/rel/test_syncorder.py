"""Sync order, observed: real workloads run under the libiotrace shim
(tests/shim/iotrace.c), which logs every write, truncate and flush; the
trace must show that whenever the library writes the meta.zr header, every
earlier write to data.zr and to the record table was flushed first, and
that the header itself is fsynced before anything else touches the store.
A header on disk that covers payloads or table entries that are not is
what a power cut would turn into a store that opens and serves garbage."""
import os
import signal
import subprocess

import numpy as np

from conftest import binary, builddir

PAGE = 4096   # meta.zr: header + schema page, then the table
HEADER = 32


def shim():
    path = os.path.join(builddir(), "tests", "shim", ".libs",
                        "libiotrace.so")
    assert os.path.exists(path), f"{path} is not built (make check)"
    return path


def traced_env(trace):
    env = dict(os.environ)
    env["ZR_IOTRACE"] = trace
    # After any preload already there (the ASan runtime must stay first).
    env["LD_PRELOAD"] = " ".join(
        p for p in (env.get("LD_PRELOAD", ""), shim()) if p)
    # An ASan program refuses any preload ahead of its runtime; this one
    # is not instrumented and only forwards calls.
    env["ASAN_OPTIONS"] = ":".join(
        p for p in (env.get("ASAN_OPTIONS", ""),
                    "verify_asan_link_order=0") if p)
    return env


def run(trace, *args):
    r = subprocess.run([str(a) for a in args], env=traced_env(trace),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=300)
    assert r.returncode == 0, (args, r.stderr.decode())


def events(trace, store):
    """Per process, in order: (op, file, offset, length, line) for calls
    on the files of store."""
    by_pid = {}
    prefix = os.path.realpath(store) + "/"
    with open(trace) as f:
        for line in f:
            op, path, off, length, _res, pid = line.split()
            if not path.startswith(prefix):
                continue
            name = path[len(prefix):]
            by_pid.setdefault(pid, []).append(
                (op, name, None if off == "-" else int(off),
                 None if length == "-" else int(length), line.strip()))
    return by_pid


def check_order(evs, killed=False):
    """The sync contract over one process's calls, in order."""
    dirty = {}   # "data" / "table" -> the first unflushed write
    for i, (op, name, off, _length, line) in enumerate(evs):
        if op == "write" and name == "data.zr":
            dirty.setdefault("data", line)
        elif op == "write" and name == "meta.zr" and off >= PAGE:
            dirty.setdefault("table", line)
        elif op == "write" and name == "meta.zr" and off < HEADER:
            assert "data" not in dirty, (
                f"header write {line!r} before data.zr was flushed "
                f"(unflushed since {dirty['data']!r})")
            assert "table" not in dirty, (
                f"header write {line!r} before the record table was "
                f"flushed (unflushed since {dirty['table']!r})")
            later = evs[i + 1:]
            if not later and killed:
                continue
            assert later and later[0][:2] in (("fsync", "meta.zr"),
                                              ("fdatasync", "meta.zr")), (
                f"header write {line!r} not followed by an fsync of "
                f"meta.zr but by {later[0][4] if later else 'nothing'!r}")
        elif op in ("fsync", "fdatasync") and name == "data.zr":
            dirty.pop("data", None)
        elif op in ("fsync", "fdatasync") and name == "meta.zr":
            dirty.pop("table", None)


def covering_headers(evs):
    """Header writes with a table write since the previous one: the case
    the order exists for (so a test can tell it checked something)."""
    n, table = 0, False
    for op, name, off, _length, _line in evs:
        if op == "write" and name == "meta.zr":
            if off >= PAGE:
                table = True
            elif off < HEADER:
                n += table
                table = False
    return n


def check_trace(trace, store, killed_pid=None):
    by_pid = events(trace, store)
    assert by_pid, f"no calls on {store} in the trace"
    headers = 0
    for pid, evs in by_pid.items():
        check_order(evs, killed=(pid == str(killed_pid)))
        headers += covering_headers(evs)
    return headers


def save(path, arrays):
    with open(path, "wb") as f:
        for a in arrays:
            np.save(f, a, allow_pickle=False)


def test_cli_append_close_delete_compact(tmp, zr):
    trace = os.path.join(tmp, "trace")
    rows = np.arange(4000 * 64, dtype="<u4").reshape(4000, 64)
    save(os.path.join(tmp, "a.npy"), [rows[:2500], rows[2500:]])
    for codec in ("raw", "zstd"):
        store = os.path.join(tmp, codec)
        run(trace, zr.binary, "create", store, "--dtype", "<u4",
            "--shape=64", "--codec", codec)
        # Append, then close: the close syncs.
        run(trace, zr.binary, "append", store, os.path.join(tmp, "a.npy"))
        run(trace, zr.binary, "append", store, os.path.join(tmp, "a.npy"))
        run(trace, zr.binary, "sync", store)
        run(trace, zr.binary, "delete", store, 0, 17, 4000, 7999)
        run(trace, zr.binary, "compact", store)
        assert check_trace(trace, store) >= 2
        assert zr.stats(store)["records"] == 7996


def test_ragged_append(tmp, zr):
    trace = os.path.join(tmp, "trace")
    store = os.path.join(tmp, "r")
    save(os.path.join(tmp, "r.npy"),
         [np.arange(n, dtype="<i2") for n in range(1, 300)])
    zr.create(store, "<i2", codec="zstd")
    run(trace, zr.binary, "append", store, os.path.join(tmp, "r.npy"))
    run(trace, zr.binary, "delete", store, 3)
    assert check_trace(trace, store) >= 1


def test_explicit_sync_after_appends(tmp):
    """crash_writer appends and calls zr_store_sync in one process, over
    and over; killed mid-loop, its last header write may have no fsync
    after it (the call never returned)."""
    trace = os.path.join(tmp, "trace")
    store = os.path.join(tmp, "w")
    p = subprocess.Popen([binary("tests", "rel", "crash_writer"), store,
                          "64"], env=traced_env(trace),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        synced = [p.stdout.readline() for _ in range(5)]
        assert all(synced), p.stderr.read().decode()
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait()
    assert check_trace(trace, store, killed_pid=p.pid) >= 5
