"""A compact cut short: every command that opens the store, the read-only
ones included, recovers it as SQLite recovers a hot journal, and says what
is still reclaimable; `zrecord recover` does the same on its own."""
import os
import subprocess

import numpy as np

from conftest import _binary


def cut_compact(store):
    subprocess.run([_binary("tests/cut_compact"), str(store)], check=True,
                   timeout=120)
    assert (store / "maintenance.zr").exists()


def test_read_command_recovers_and_says_what_is_left(zr, dense):
    store, data = dense
    zr.ok("delete", store, *range(0, 40, 2))
    before = zr.load("get", store, *range(20))
    cut_compact(store)
    r = zr.run("stats", store)
    assert r.returncode == 0, r.stderr.decode()
    err = r.stderr.decode()
    assert "recovered an interrupted compact" in err, err
    assert "1200 bytes are still reclaimable" in err, err
    assert "zrecord compact %s" % store in err, err
    assert not (store / "maintenance.zr").exists()
    st = zr.stats(store)
    assert st["records"] == 20 and st["reclaimable"] == 20 * 60
    np.testing.assert_array_equal(zr.load("get", store, *range(20)), before)
    zr.ok("compact", store)
    assert zr.stats(store)["reclaimable"] == 0


def test_recover_command(zr, dense):
    store, _ = dense
    r = zr.run("recover", store)
    assert r.returncode == 0
    assert "nothing to recover" in r.stderr.decode()
    zr.ok("delete", store, 5)
    cut_compact(store)
    r = zr.run("recover", store)
    assert r.returncode == 0, r.stderr.decode()
    assert "60 bytes are still reclaimable" in r.stderr.decode()
    assert zr.stats(store)["records"] == 39
    assert zr.run("verify", store).returncode == 0
