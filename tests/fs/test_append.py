"""Appending through the mount: cp, cat and Python writes land as records
at close; every malformed stream fails with an errno, leaves the store
unchanged and leaves a line in the store's errors file."""
import errno
import io
import os
import subprocess

import numpy as np
import pytest

from conftest import IMG, RAGGED
from fsutil import npy_bytes, store_stats as stats


def snapshot(m, store):
    """Every record file's bytes, the store's observable state."""
    n = stats(m, store)["records"]
    out = []
    for i in range(n):
        with open(m.path(store, "records", "%d.npy" % i), "rb") as f:
            out.append(f.read())
    return out


def test_cp_and_cat_dense(dense_store, src, mount, tmp_path):
    m = mount(src)
    more = (IMG[:5] + 1).astype(np.uint8)
    f = tmp_path / "more.npy"
    np.save(f, more)
    subprocess.run(["cp", str(f), m.path("img", "append")], check=True)
    assert stats(m, "img")["records"] == len(IMG) + 5
    for k in range(5):
        got = np.load(m.path("img", "records", "%d.npy" % (len(IMG) + k)))
        assert (got == more[k]).all()
    g = tmp_path / "g.npy"
    np.save(g, IMG[:2])
    subprocess.run("cat %s %s > %s" % (f, g, m.path("img", "append")),
                   shell=True, check=True)
    assert stats(m, "img")["records"] == len(IMG) + 12
    last = np.load(m.path("img", "records", "%d.npy" % (len(IMG) + 11)))
    assert (last == IMG[1]).all()


def test_python_chunked_writes_and_zero_rows(dense_store, src, mount):
    m = mount(src)
    data = npy_bytes(IMG[::-1]) + npy_bytes(IMG[:0]) + npy_bytes(IMG[3:4])
    with open(m.path("img", "append"), "wb", buffering=0) as f:
        for pos in range(0, len(data), 777):
            f.write(data[pos:pos + 777])
        # nothing is visible before close
        assert stats(m, "img")["records"] == len(IMG)
    assert stats(m, "img")["records"] == 2 * len(IMG) + 1
    assert (np.load(m.path("img", "records", "%d.npy" % len(IMG))) ==
            IMG[-1]).all()
    assert (np.load(m.path("img", "records", "%d.npy" % (2 * len(IMG)))) ==
            IMG[3]).all()


def test_ragged_append(ragged_store, src, mount):
    m = mount(src)
    new = [np.full((2, 2), 7, "<f4"), np.float32(3.5).reshape(()),
           np.arange(9, dtype="<f4")]
    with open(m.path("rag", "append"), "wb") as f:
        for a in new:
            f.write(npy_bytes(a))
    n = len(RAGGED)
    assert stats(m, "rag")["records"] == n + 3
    for k, a in enumerate(new):
        got = np.load(m.path("rag", "records", "%d.npy" % (n + k)))
        assert got.shape == a.shape and (got == a).all()


GOOD = npy_bytes(IMG[:2])


@pytest.mark.parametrize("case", [
    "wrong_dtype", "wrong_shape", "garbage_header", "truncated_payload",
    "truncated_header", "good_then_bad"])
def test_malformed_dense_append(dense_store, src, mount, case, tmp_path):
    payload = {
        "wrong_dtype": npy_bytes(IMG[:2].astype("<u2")),
        "wrong_shape": npy_bytes(IMG[:2, :, :4]),
        "garbage_header": b"\x93NUMPY\x01\x00\x10\x00{'descr': nope}\n" +
                          b"x" * 200,
        "truncated_payload": GOOD[:-5],
        "truncated_header": GOOD[:40],
        "good_then_bad": GOOD + npy_bytes(IMG[:1].astype("<f4")),
    }[case]
    m = mount(src)
    before = snapshot(m, "img")
    st_before = stats(m, "img")
    f = tmp_path / "bad.npy"
    f.write_bytes(payload)
    r = subprocess.run(["cp", str(f), m.path("img", "append")],
                       capture_output=True)
    assert r.returncode != 0
    assert b"Invalid argument" in r.stderr
    assert stats(m, "img") == st_before
    assert snapshot(m, "img") == before
    with open(m.path("img", "errors")) as e:
        lines = e.read().splitlines()
    assert lines and "append" in lines[-1]
    # the store still takes a good append afterwards
    with open(m.path("img", "append"), "wb") as w:
        w.write(GOOD)
    assert stats(m, "img")["records"] == len(IMG) + 2


def test_malformed_ragged_append(ragged_store, src, mount):
    m = mount(src)
    before = snapshot(m, "rag")
    for payload in (npy_bytes(np.zeros((0, 3), "<f4")),      # zero bytes
                    npy_bytes(np.zeros(3, "<f8")),            # dtype
                    npy_bytes(np.ones(3, "<f4"))[:-1]):       # truncated
        with pytest.raises(OSError) as e:
            with open(m.path("rag", "append"), "wb") as w:
                w.write(npy_bytes(np.ones(2, "<f4")) + payload)
        assert e.value.errno == errno.EINVAL
        assert snapshot(m, "rag") == before


def test_second_appender_is_busy(dense_store, src, mount):
    m = mount(src)
    with open(m.path("img", "append"), "wb") as first:
        with pytest.raises(OSError) as e:
            open(m.path("img", "append"), "wb")
        assert e.value.errno == errno.EBUSY
        first.write(GOOD)
    assert stats(m, "img")["records"] == len(IMG) + 2


def test_append_reads_as_usage_and_ro_refuses(dense_store, src, mount):
    """Reading append shows its usage line (copies of a store read every
    file) and appends nothing; reading and writing in one open is
    refused."""
    m = mount(src)
    with open(m.path("img", "append"), "rb") as f:
        assert f.read().startswith(b"append: ")
    with pytest.raises(PermissionError):
        open(m.path("img", "append"), "r+b")
    with pytest.raises(PermissionError):
        open(m.path("img", "stats"), "wb")
    assert stats(m, "img")["records"] == len(IMG)
    assert m.stop() == 0
    ro = mount(src, "ro", name="ro")
    with pytest.raises(OSError) as e:
        open(ro.path("img", "append"), "wb")
    assert e.value.errno == errno.EROFS


def vm_hwm_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise AssertionError("no VmHWM for %d" % pid)


def test_large_append_uses_bounded_memory(src, mount):
    """A 384 MiB stream through append: the daemon's peak memory stays far
    below the stream's size (rows go straight to the store)."""
    from fsutil import make_store
    rows, width = 384, 1 << 20
    make_store(os.path.join(src, "wide"), "u1", shape=(width,))
    m = mount(src)
    before = vm_hwm_kib(m.proc.pid)
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": "|u1", "fortran_order": False,
                 "shape": (rows, width)})
    chunk = np.arange(width, dtype=np.uint8)
    with open(m.path("wide", "append"), "wb", buffering=0) as f:
        f.write(header.getvalue())
        for r in range(rows):
            chunk[0] = r % 256
            f.write(chunk.tobytes())
    assert stats(m, "wide")["records"] == rows
    got = np.load(m.path("wide", "records", "%d.npy" % (rows - 1)))
    assert got[0] == (rows - 1) % 256 and (got[1:] == chunk[1:]).all()
    grown = vm_hwm_kib(m.proc.pid) - before
    print("daemon VmHWM grew by %d KiB" % grown)
    assert grown < 96 * 1024, "daemon grew by %d KiB" % grown


def test_disk_full_append_fails_cleanly(tmp_path, mount):
    """A store on a 3 MiB tmpfs: an append that does not fit fails with
    ENOSPC at write or close, and the store keeps exactly its records."""
    from fsutil import make_store
    small = tmp_path / "small"
    small.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs",
                    str(small)], check=True)
    m = None
    try:
        make_store(str(small / "s"), "u1", shape=(4096,),
                   rows=np.ones((16, 4096), np.uint8))
        m = mount(str(small))
        before = snapshot(m, "s")
        big = tmp_path / "big.npy"
        np.save(big, np.full((2048, 4096), 5, np.uint8))       # 8 MiB
        r = subprocess.run(["cp", str(big), m.path("s", "append")],
                           capture_output=True)
        assert r.returncode != 0
        assert b"No space left on device" in r.stderr
        assert snapshot(m, "s") == before
        with open(m.path("s", "errors")) as log:
            assert "append" in log.read().splitlines()[-1]
        # space is reusable: a small append still works
        with open(m.path("s", "append"), "wb") as f:
            np.save(f, np.full((2, 4096), 9, np.uint8))
        assert stats(m, "s")["records"] == 18
    finally:
        if m is not None:
            m.stop()
        if subprocess.run(["umount", str(small)]).returncode:
            subprocess.run(["umount", "-l", str(small)])


def test_o_append_and_non_sequential_writes(dense_store, src, mount,
                                            tmp_path):
    m = mount(src)
    f = tmp_path / "two.npy"
    np.save(f, IMG[:2])
    subprocess.run("cat %s >> %s" % (f, m.path("img", "append")),
                   shell=True, check=True)
    assert stats(m, "img")["records"] == len(IMG) + 2
    data = npy_bytes(IMG[:2])
    with pytest.raises(OSError) as e:
        with open(m.path("img", "append"), "wb", buffering=0) as w:
            w.write(data[:100])
            w.seek(200)
            w.write(data[200:])
    assert e.value.errno == errno.EINVAL
    assert stats(m, "img")["records"] == len(IMG) + 2
