"""test_sshfs.py - a filesystem whose flock stays on one host (sshfs over
loopback): `zrecord` and zrecordfs warn at open, and a writer through it
whose store was appended to by another host refuses ("store changed by
another writer") instead of silently writing over that host's records."""
import io
import os
import sys

import numpy as np
import pytest

from fsutil import TOP_SRC, Mount, make_store, zrecord

sys.path.insert(0, os.path.join(TOP_SRC, "contrib", "python"))
import loaderx  # noqa: E402

ROWS = np.arange(20, dtype="<i8")


def test_open_warns_that_the_lock_stays_on_this_host(sshd, mount, tmp_path):
    server = tmp_path / "server"
    server.mkdir()
    make_store(str(server / "s"), "<i8", shape=(), rows=ROWS)
    host = sshd.mount(str(server), str(tmp_path / "h1"))
    r = zrecord("stats", os.path.join(host, "s"))
    assert b"warning" in r.stderr and b"fuse.sshfs" in r.stderr, r.stderr
    assert b"not kept out" in r.stderr
    assert zrecord("stats", str(server / "s")).stderr == b""
    m = mount(host, "ro")
    assert m.stop() == 0
    assert "warning" in m.stderr and "fuse.sshfs" in m.stderr, m.stderr
    with pytest.warns(loaderx.LockScopeWarning, match="fuse.sshfs"):
        loaderx.DenseStore.open(os.path.join(host, "s"),
                                readonly=True).close()


def test_a_writer_refuses_a_store_another_host_appended_to(sshd, tmp_path):
    server = tmp_path / "server"
    server.mkdir()
    store = str(server / "s")
    make_store(store, "<i8", shape=(), rows=ROWS)
    host = sshd.mount(str(server), str(tmp_path / "h1"))
    w = Mount(host, str(tmp_path / "rw"))      # a writer on "host 1"
    try:
        more = str(tmp_path / "more.npy")
        np.save(more, np.arange(100, 105, dtype="<i8"))
        # sshfs keeps flock on host 1: the server's writer gets in
        zrecord("append", store, more)
        mine = np.arange(200, 203, dtype="<i8")
        try:
            with open(w.path("s", "append"), "wb") as f:
                np.save(f, mine)
            refused = None
        except OSError as e:
            refused = e
        assert refused is not None, "the stale writer appended"
    finally:
        rc = w.stop()
    assert "changed by another writer" in w.stderr, w.stderr
    assert rc == 0, w.stderr  # nothing of its own to publish at close
    got = np.load(io.BytesIO(zrecord("get", store, *range(25)).stdout))
    assert (got == np.concatenate([ROWS, np.load(more)])).all()
    assert '"records": 25' in zrecord("stats", store).stdout.decode()
    zrecord("verify", store)
