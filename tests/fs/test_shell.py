"""append and delete as shells and forking programs use them: one open is
one session whatever processes share the descriptor, the opener's close
commits it, and bad input fails the write() that delivers it, which is
where bash reports it.  Every case runs through real bash and checks the
exit status and the store."""
import errno
import os
import subprocess
import time

import numpy as np
import pytest

from conftest import IMG
from fsutil import (expected_after_delete, npy_bytes, store_stats as stats,
                    wait_for)


def records(m, store):
    return [np.load(m.path(store, "records", "%d.npy" % i))
            for i in range(stats(m, store)["records"])]


def errors(m, store):
    with open(m.path(store, "errors")) as f:
        return f.read()


def bash(cmd):
    return subprocess.run(["bash", "-c", cmd], capture_output=True,
                          text=True)


def split_npy(tmp_path, a):
    """a's .npy as a header file and a payload file."""
    data = npy_bytes(a)
    cut = len(data) - a.nbytes
    h, p = tmp_path / "h.bin", tmp_path / "p.bin"
    h.write_bytes(data[:cut])
    p.write_bytes(data[cut:])
    return str(h), str(p)


def child(fn):
    """Runs fn in a forked child; returns its pid.  The child always
    ends with os._exit: 0 if fn returned, 1 if it raised."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            fn()
            code = 0
        finally:
            os._exit(code)
    return pid


def reap(pid):
    return os.waitpid(pid, 0)[1]


def test_subshell_pipeline_appends_once(dense_store, src, mount, tmp_path):
    m = mount(src)
    more = (IMG[:6] ^ 0x5a).astype(np.uint8)
    h, p = split_npy(tmp_path, more)
    r = bash("(cat %s; cat %s) > %s" % (h, p, m.path("img", "append")))
    assert r.returncode == 0, r.stderr
    got = records(m, "img")
    assert len(got) == len(IMG) + 6
    for k in range(6):
        assert (got[len(IMG) + k] == more[k]).all()
    # a loop of commands writing into one redirect is one session too
    one = tmp_path / "one.npy"
    np.save(one, IMG[:1])
    r = bash("for i in 1 2 3; do cat %s; done > %s" %
             (one, m.path("img", "append")))
    assert r.returncode == 0, r.stderr
    assert stats(m, "img")["records"] == len(IMG) + 9


def test_python_fork_and_subprocess_mid_stream(dense_store, src, mount):
    m = mount(src)
    more = (IMG[:4] + 3).astype(np.uint8)
    data = npy_bytes(more)
    half = len(data) // 2
    with open(m.path("img", "append"), "wb", buffering=0) as f:
        f.write(data[:half])
        # the child's exit closes its copy
        assert reap(child(lambda: None)) == 0
        subprocess.run(["true"], check=True)   # exec closes the copy
        # a child writes the next part through the shared descriptor
        assert reap(child(lambda: os.write(f.fileno(),
                                           data[half:half + 100]))) == 0
        assert stats(m, "img")["records"] == len(IMG)
        f.write(data[half + 100:])
    got = records(m, "img")
    assert len(got) == len(IMG) + 4
    for k in range(4):
        assert (got[len(IMG) + k] == more[k]).all()


def test_bad_append_bytes_fail_the_write(dense_store, src, mount):
    m = mount(src)
    app = m.path("img", "append")
    for payload in (r"garbage!", r"\x93NUMPY\x09\x00",
                    r'\x93NUMPY\x01\x00\x10\x00{"descr": nope}\n'):
        r = bash("printf '%s' > %s" % (payload, app))
        assert r.returncode != 0, payload
        assert "Invalid argument" in r.stderr, r.stderr
    assert stats(m, "img")["records"] == len(IMG)
    assert "append write" in errors(m, "img")


def test_truncated_stream_fails_at_the_openers_close(dense_store, src,
                                                     mount, tmp_path):
    m = mount(src)
    f = tmp_path / "x.npy"
    np.save(f, IMG[:3])
    r = bash("head -c 500 %s > %s" % (f, m.path("img", "append")))
    assert r.returncode != 0
    assert "Invalid argument" in r.stderr, r.stderr
    assert stats(m, "img")["records"] == len(IMG)
    with pytest.raises(OSError) as e:
        with open(m.path("img", "append"), "wb") as w:
            w.write(f.read_bytes()[:-1])
    assert e.value.errno == errno.EINVAL
    assert stats(m, "img")["records"] == len(IMG)


def test_writer_that_outlives_the_opener(dense_store, src, mount):
    """The opener's close mid-.npy fails and ends the session: a child's
    later writes start a new one, which fails at its first byte.  If the
    opener closes at a boundary, what a child writes afterwards commits
    when the last descriptor goes (RELEASE); a rest cut short is dropped
    and logged."""
    m = mount(src)
    data = npy_bytes(IMG[:2])

    def later(part):
        time.sleep(0.3)
        os.write(fd, part)

    fd = os.open(m.path("img", "append"), os.O_WRONLY)
    os.write(fd, data[:64])
    pid = child(lambda: later(data[64:]))
    with pytest.raises(OSError) as e:
        os.close(fd)
    assert e.value.errno == errno.EINVAL
    assert reap(pid) != 0               # its write got EINVAL
    assert stats(m, "img")["records"] == len(IMG)

    fd = os.open(m.path("img", "append"), os.O_WRONLY)
    pid = child(lambda: later(data))
    os.close(fd)
    assert reap(pid) == 0
    wait_for(lambda: stats(m, "img")["records"] == len(IMG) + 2)

    fd = os.open(m.path("img", "append"), os.O_WRONLY)
    pid = child(lambda: later(data[:-3]))
    os.close(fd)
    assert reap(pid) == 0
    wait_for(lambda: "after the last close" in errors(m, "img"))
    assert stats(m, "img")["records"] == len(IMG) + 2


def test_delete_errors_reach_bash(dense_store, src, mount):
    m = mount(src)
    delete = m.path("img", "delete")
    cases = [("echo 999999 > %s", "Numerical result out of range"),
             ("printf 40 > %s", "Numerical result out of range"),
             ("echo 3 99999999999999999999999 > %s",
              "Numerical result out of range"),
             ("echo 3x > %s", "Invalid argument"),
             ("echo -1 > %s", "Invalid argument")]
    for cmd, msg in cases:
        r = bash(cmd % delete)
        assert r.returncode != 0, cmd
        assert msg in r.stderr, (cmd, r.stderr)
    assert stats(m, "img")["records"] == len(IMG)
    assert "out of range" in errors(m, "img")
    for arr in (np.array([1, -2], "<i4"), np.array([41], ">u2"),
                np.array([[1]], "<i8"), np.array([1.0])):
        with open("/tmp/zr-del.npy", "wb") as f:
            np.save(f, arr)
        r = bash("cat /tmp/zr-del.npy > %s" % delete)
        assert r.returncode != 0, arr
    os.unlink("/tmp/zr-del.npy")
    got = records(m, "img")
    assert len(got) == len(IMG)
    for g, w in zip(got, IMG):
        assert (g == w).all()


def test_delete_during_append_is_busy_at_write(dense_store, src, mount):
    m = mount(src)
    with open(m.path("img", "append"), "wb", buffering=0) as f:
        f.write(npy_bytes(IMG[:1])[:20])
        r = bash("echo 0 > %s" % m.path("img", "delete"))
        assert r.returncode != 0
        assert "Device or resource busy" in r.stderr, r.stderr
        f.write(npy_bytes(IMG[:1])[20:])
    assert stats(m, "img")["records"] == len(IMG) + 1
    r = bash("echo 0 > %s" % m.path("img", "delete"))
    assert r.returncode == 0, r.stderr
    assert stats(m, "img")["records"] == len(IMG)


def test_delete_by_several_processes_is_one_delete(dense_store, src, mount):
    """External commands writing into one redirect: their indices are
    deleted together at the shell's close, not one command at a time."""
    m = mount(src)
    r = bash("{ /bin/echo 3; /bin/echo 39; /bin/printf '17\\n'; } > %s" %
             m.path("img", "delete"))
    assert r.returncode == 0, r.stderr
    want = expected_after_delete(list(IMG), [3, 39, 17])
    got = records(m, "img")
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert (g == w).all()
