"""`umount MNT` returns once the daemon has closed its stores, so the next
command finds them free; `fusermount3 -u` does not wait, `zrecord
--wait` does.  The daemon runs on a slow disk (the libiotrace shim sleeps
in every flush), so closing a store with pending appends takes seconds,
and a command that did not wait would find it locked."""
import io
import json
import os
import subprocess

import numpy as np

import helperns
from conftest import IMG
from fsutil import ZRECORD, ZRECORDFS, slow_flush_env, zrecord

DELAY_MS = 1000
X = np.full((3, 3, 8, 8), 7, np.uint8)   # appended through the mount
Y = np.full((2, 3, 8, 8), 9, np.uint8)   # appended after the unmount


def slow_daemon(tmp_path):
    """A zrecordfs that mount(8) can run (it drops LD_* variables, so the
    shim is set by a wrapper the helper finds through $ZRECORDFS)."""
    env = slow_flush_env(DELAY_MS)
    wrapper = tmp_path / "slow-zrecordfs"
    wrapper.write_text("#!/bin/sh\nLD_PRELOAD='%s' ASAN_OPTIONS='%s' "
                       "exec '%s' \"$@\"\n" % (env["LD_PRELOAD"],
                                               env["ASAN_OPTIONS"],
                                               ZRECORDFS))
    wrapper.chmod(0o755)
    return {"ZRECORDFS": str(wrapper),
            "ZR_IOTRACE_FLUSH_DELAY_MS": env["ZR_IOTRACE_FLUSH_DELAY_MS"]}


def npys(tmp_path):
    np.save(tmp_path / "x.npy", X)
    np.save(tmp_path / "y.npy", Y)
    return tmp_path / "x.npy", tmp_path / "y.npy"


def check_store(store):
    """The mount's append (X) and the one after it (Y) are both there."""
    stats = json.loads(zrecord("stats", store).stdout)
    assert stats["records"] == len(IMG) + len(X) + len(Y)
    got = np.load(io.BytesIO(
        zrecord("get", store, *range(stats["records"])).stdout))
    np.testing.assert_array_equal(got, np.concatenate([IMG, X, Y]))


def test_umount_then_append_at_once(dense_store, src, tmp_path):
    x, y = npys(tmp_path)
    r = helperns.run(tmp_path, r'''
src=$1 mnt=$2 store=$3 x=$4 y=$5
mkdir -p "$mnt"
mount -t zrecordfs "$src" "$mnt"
cp "$x" "$mnt/img/append"          # committed, not yet synced
umount "$mnt" && "$ZR" append "$store" "$y"
''', src, tmp_path / "m", dense_store, x, y, env=slow_daemon(tmp_path))
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    check_store(dense_store)


def test_umount_gives_up_after_its_timeout(dense_store, src, tmp_path):
    x, y = npys(tmp_path)
    env = slow_daemon(tmp_path)
    env["ZRECORDFS_UMOUNT_TIMEOUT"] = "1"   # the daemon's close takes 3 s
    r = helperns.run(tmp_path, r'''
src=$1 mnt=$2 store=$3 x=$4
mkdir -p "$mnt"
mount -t zrecordfs "$src" "$mnt"
cp "$x" "$mnt/img/append"
rc=0; umount "$mnt" || rc=$?
echo "RC=$rc"
flock -s "$mnt" true                 # now wait for the daemon
''', src, tmp_path / "m", dense_store, x, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "RC=32\n"
    assert r.stderr.startswith("umount.fuse.zrecordfs: %s is unmounted, but "
                               "its zrecordfs (process " % (tmp_path / "m"))
    assert "has not closed its stores after 1 s" in r.stderr, r.stderr
    zrecord("append", dense_store, y)
    check_store(dense_store)


def test_zrecord_wait_outlasts_fusermount(dense_store, src, tmp_path,
                                          mount, monkeypatch):
    x, y = npys(tmp_path)
    with monkeypatch.context() as mp:
        for name, value in slow_flush_env(DELAY_MS).items():
            mp.setenv(name, value)
        m = mount(src)
    subprocess.run(["cp", str(x), m.path("img", "append")], check=True)
    r = subprocess.run(["bash", "-c", r'''
set -u
fusermount3 -u "$1" || exit 10      # returns before the daemon closes
"$ZR" append "$2" "$3" && exit 11   # so the store is still busy
"$ZR" append --wait=60 "$2" "$3"
''', "bash", m.mnt, dense_store, y], env=dict(os.environ, ZR=ZRECORD),
        capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("store busy: process %d " % m.proc.pid) == 1, \
        r.stderr
    assert m.proc.wait(timeout=60) == 0
    check_store(dense_store)


def test_lazy_umount_does_not_wait(dense_store, src, tmp_path):
    r = helperns.run(tmp_path, r'''
src=$1 mnt=$2 store=$3
mkdir -p "$mnt"
mount -t zrecordfs "$src" "$mnt"
exec 9< "$mnt/img/stats"             # keeps the daemon serving
umount -l "$mnt"
flock -n -x "$store/meta.zr" true && exit 10   # still held
exec 9<&-                            # the last user lets go...
flock -s "$mnt" true                 # ...and the daemon closes
flock -n -x "$store/meta.zr" true
''', src, tmp_path / "m", dense_store)
    assert r.returncode == 0, r.stderr


def test_directly_started_daemon_umount_waits(dense_store, src, tmp_path):
    """`zrecordfs SRC MNT; umount MNT; zrecord append ...` 30 times over,
    the daemon started directly (no mount(8), so no utab entry from a
    mount helper) on a slow disk: the daemon records itself in utab, so
    umount runs the helper and each append finds the store free."""
    x, y = npys(tmp_path)
    env = slow_daemon(tmp_path)
    env["ZR_IOTRACE_FLUSH_DELAY_MS"] = "100"
    r = helperns.run(tmp_path, r'''
src=$1 mnt=$2 store=$3 x=$4 y=$5
mkdir -p "$mnt"
fails=0
for i in $(seq 30); do
	"$ZRECORDFS" "$src" "$mnt"
	cp "$x" "$mnt/img/append"
	umount "$mnt"
	"$ZR" append "$store" "$y" || fails=$((fails + 1))
done
echo "FAILS=$fails"
''', src, tmp_path / "m", dense_store, x, y, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "FAILS=0\n", r.stderr
    stats = json.loads(zrecord("stats", dense_store).stdout)
    assert stats["records"] == len(IMG) + 30 * (len(X) + len(Y))
    got = np.load(io.BytesIO(zrecord("get", dense_store,
                                     *range(len(IMG), len(IMG) + 5)).stdout))
    np.testing.assert_array_equal(got, np.concatenate([X, Y]))
