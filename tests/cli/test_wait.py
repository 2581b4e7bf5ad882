"""`--wait[=SECONDS]` on the write commands: a store whose lock another
process holds (here flock(1), a real second process) is retried until the
holder lets go, or refused with the usual "store busy" naming the holder
once the time is up; bad values are usage errors."""
import subprocess

import numpy as np
import pytest

from conftest import write_npys

WRITERS = ["append", "delete", "compact", "sync"]

# Holds a shared lock on $1/data.zr (as a read-only handle does) until `echo >&3` (fd 3 is a pipe opened
# for both reading and writing; the holder prints "locked" once it has the
# lock), then runs the rest of the script.
HOLD = r'''
set -u
store=$1 zr=$2 x=$3
exec 3<> <(:)
flock -s "$store/data.zr" sh -c 'echo locked; read _ <&3' > "$store.out" &
holder=$!
until grep -q locked "$store.out" 2>/dev/null; do sleep 0.01; done
'''


def bash(script, *args):
    return subprocess.run(["bash", "-c", script, "bash", *map(str, args)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=120)


def test_wait_outlasts_the_holder(zr, dense, tmp_path):
    store, _ = dense
    x = write_npys(tmp_path / "x.npy", np.ones((2, 3, 5), "<f4"))
    r = bash(HOLD + r'''
"$zr" append "$store" "$x" && exit 10       # busy without --wait
"$zr" append --wait=60 "$store" "$x" & waiter=$!
sleep 0.5; echo >&3                         # the holder lets go
wait $holder; wait $waiter
''', store, zr.binary, x)
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("store busy") == 1, r.stderr
    assert zr.stats(store)["records"] == 42


def test_wait_gives_up_naming_the_holder(zr, dense, tmp_path):
    store, _ = dense
    x = write_npys(tmp_path / "x.npy", np.ones((2, 3, 5), "<f4"))
    r = bash(HOLD + r'''
"$zr" append --wait=1 "$store" "$x"; rc=$?
echo >&3; wait $holder
exit $rc
''', store, zr.binary, x)
    assert r.returncode == 1, r.stderr
    assert r.stderr.startswith(f"zrecord: {store}: append: store busy: "
                               "process "), r.stderr
    assert "(flock) holds its lock for reading" in r.stderr, r.stderr
    assert "still held after waiting 1 s" in r.stderr, r.stderr
    assert zr.stats(store)["records"] == 40


@pytest.mark.parametrize("cmd", WRITERS)
def test_every_write_command_takes_wait(zr, dense, cmd):
    store, _ = dense
    args = {"delete": ["0"], "append": ["/dev/null"]}.get(cmd, [])
    r = bash(HOLD + r'''
shift 3
"$zr" "$@"; rc=$?
echo >&3; wait $holder
exit $rc
''', store, zr.binary, "-", cmd, "--wait=0", store, *args)
    assert r.returncode == 1, r.stderr
    assert f"{cmd}: store busy: process" in r.stderr, r.stderr
    # the message names the way out (issue 22)
    assert "--wait[=SECONDS] retries until it lets go" in r.stderr, r.stderr
    assert "--wait" in zr.ok(cmd, "--help").decode()


@pytest.mark.parametrize("value", ["abc", "-1", "", "1.5", "1s", " 1",
                                   "86401", "99999999999999999999"])
def test_bad_wait_values_are_refused(zr, dense, value):
    store, _ = dense
    err = zr.fails(2, "sync", f"--wait={value}", store)
    assert f"zrecord: sync: --wait='{value}': give whole seconds, 0 to " \
        "86400" in err, err


def test_readers_take_no_wait(zr, dense):
    store, _ = dense
    assert "unknown option '--wait'" in zr.fails(2, "stats", "--wait",
                                                 store)
