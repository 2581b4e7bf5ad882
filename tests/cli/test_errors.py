"""Failures leave stores unchanged and say why; --help and --version."""
import fcntl
import io
import os
import subprocess

import numpy as np
import pytest

from conftest import npy_bytes, write_npys

COMMANDS = ["create", "append", "get", "batch", "stats", "schema", "verify",
            "train-dict", "delete", "compact", "sync", "push", "pull"]


def append_fails(zr, store, code, *paths, input=None):
    before = zr.stats(store)
    err = zr.fails(code, "append", store, *paths, input=input)
    assert zr.stats(store) == before
    return err


def test_wrong_dtype(zr, dense, tmp_path):
    store, _ = dense
    err = append_fails(zr, store, 1, write_npys(
        tmp_path / "a.npy", np.zeros((2, 3, 5), "<f8")))
    assert err.startswith(f"zrecord: {store}: append: dtype mismatch")
    assert "<f8" in err and "<f4" in err and "a.npy" in err


def test_wrong_shape(zr, dense, tmp_path):
    store, _ = dense
    err = append_fails(zr, store, 1, write_npys(
        tmp_path / "a.npy", np.zeros((2, 5, 3), "<f4")))
    assert "shape mismatch" in err and "(2, 5, 3)" in err


def test_one_bad_file_rejects_the_whole_append(zr, dense, tmp_path):
    store, _ = dense
    good = write_npys(tmp_path / "g.npy", np.ones((4, 3, 5), "<f4"))
    bad = write_npys(tmp_path / "b.npy", np.ones((4, 3), "<f4"))
    append_fails(zr, store, 1, good, good, bad)


@pytest.mark.parametrize("junk", [b"this is not a numpy file at all\n",
                                  b"abc", b"\x93NUMPY\x09\x00"])
def test_garbage_file(zr, dense, tmp_path, junk):
    store, _ = dense
    (tmp_path / "g.npy").write_bytes(junk)
    err = append_fails(zr, store, 1, tmp_path / "g.npy")
    assert "malformed .npy" in err and "byte 0" in err


def test_garbage_after_good_arrays(zr, dense, tmp_path):
    store, _ = dense
    good = npy_bytes(np.ones((4, 3, 5), "<f4"))
    (tmp_path / "g.npy").write_bytes(good + b"PK\x03\x04")
    err = append_fails(zr, store, 1, tmp_path / "g.npy")
    assert f"byte {len(good)}:" in err


@pytest.mark.parametrize("cut", [5, 60, 200])
def test_truncated_file(zr, dense, tmp_path, cut):
    store, _ = dense
    whole = npy_bytes(np.ones((4, 3, 5), "<f4"))
    (tmp_path / "t.npy").write_bytes(whole + whole[:cut])
    err = append_fails(zr, store, 1, tmp_path / "t.npy")
    assert "input ends early" in err


def test_truncated_stdin(zr, dense):
    store, _ = dense
    whole = npy_bytes(np.ones((4, 3, 5), "<f4"))
    assert "input ends early" in append_fails(zr, store, 1, "-",
                                              input=whole[:-1])


def test_fortran_matrix_is_refused(zr, tmp_path):
    store = tmp_path / "s"
    zr.ok("create", store, "--dtype", "<f4", "--ragged")
    f = write_npys(tmp_path / "f.npy",
                   np.asfortranarray(np.ones((2, 3), "<f4")))
    append_fails(zr, store, 1, f)


def test_empty_ragged_record(zr, ragged, tmp_path):
    store, _ = ragged
    f = write_npys(tmp_path / "e.npy", np.ones(3, "<i4"),
                   np.zeros((2, 0), "<i4"))
    assert "zero-byte record" in append_fails(zr, store, 1, f)


def test_missing_input_file(zr, dense, tmp_path):
    store, _ = dense
    err = append_fails(zr, store, 1, tmp_path / "nope.npy")
    assert "nope.npy" in err


def test_missing_store(zr, tmp_path):
    f = write_npys(tmp_path / "a.npy", np.ones(3, "<f4"))
    for args in (["append", tmp_path / "x", f], ["get", tmp_path / "x", 0],
                 ["verify", tmp_path / "x"], ["sync", tmp_path / "x"]):
        err = zr.fails(1, *args)
        assert err.startswith(f"zrecord: {tmp_path / 'x'}: {args[0]}: "
                              "no store")


@pytest.mark.parametrize("cmd", COMMANDS)
def test_command_help(zr, cmd):
    out = zr.ok(cmd, "--help").decode()
    assert out.startswith(f"Usage: zrecord {cmd} ")
    assert zr.ok("help", cmd).decode() == out


def test_overview_and_version(zr):
    out = zr.ok("--help").decode()
    for cmd in COMMANDS:
        assert f"zrecord {cmd} " in out
    assert "default 256" in zr.ok("batch", "--help").decode()
    assert "iid (default" in zr.ok("batch", "--help").decode()
    version = zr.ok("--version").decode()
    assert version.startswith("zrecord (zrecordfs) ")
    # The command's version, then the running library's.
    v = os.environ.get("PACKAGE_VERSION") or version.split()[2].rstrip(",")
    assert version == f"zrecord (zrecordfs) {v}, libzrecord {v}\n"


def test_usage_errors(zr):
    assert zr.run().returncode == 2
    assert "unknown command" in zr.fails(2, "frobnicate")
    assert zr.fails(2, "help", "frobnicate")
    assert "unknown option" in zr.fails(2, "stats", "--frob", "x")


def test_huge_declared_ragged_record_reserves_only_what_arrives(zr, ragged):
    """A header declaring a 1.6 GiB record followed by a few bytes ends as a
    truncated stream, not as an allocation of the declared size.  Outside
    ASan (whose shadow memory needs the address space) the command runs
    under a 3 GiB address-space limit: its store mappings reserve 2 GiB, so
    reserving the declared record as well would fail with ENOMEM."""
    store, _ = ragged
    before = zr.stats(store)
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, {"descr": "<i4", "fortran_order": False, "shape": (429496729,)})
    cmd = [zr.binary, "append", str(store), "-"]
    if os.environ.get("ZR_SANITIZERS") != "1":
        cmd = ["sh", "-c", 'ulimit -v 3145728; exec "$0" "$@"'] + cmd
    r = subprocess.run(cmd, input=buf.getvalue() + b"\0" * 100,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=60)
    assert r.returncode == 1, r.stderr.decode()
    assert b"input ends early" in r.stderr, r.stderr.decode()
    assert zr.stats(store) == before


def test_store_busy_names_the_holder_once(zr, dense):
    store, _ = dense
    # the locks of a writer, a reader, a follower, a seed process
    with open(os.path.join(store, "data.zr"), "rb") as f:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        err = zr.fails(1, "get", store, "0")
        assert err.count("store busy") == 1 and err.count("\n") == 1, err
        assert f"zrecord: {store}: get: store busy: process {os.getpid()} " \
            "(" in err and "holds its lock for writing" in err, err
        fcntl.flock(f, fcntl.LOCK_UN)
        fcntl.flock(f, fcntl.LOCK_SH | fcntl.LOCK_NB)
        err = zr.fails(1, "sync", store)
        assert "holds its lock for reading" in err, err
    with open(os.path.join(store, "meta.zr"), "rb") as f:
        fcntl.flock(f, fcntl.LOCK_SH | fcntl.LOCK_NB)
        err = zr.fails(1, "delete", store, "0")
        assert "holds its lock as a follower" in err, err
        fcntl.flock(f, fcntl.LOCK_UN)
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        err = zr.fails(1, "get", store, "0")
        assert "holds its lock alone" in err, err


def test_push_and_pull_usage(zr, tmp_path):
    """Checked before any request: no S3 engine needed."""
    assert "--part-size" in zr.fails(2, "push", tmp_path, "s3://b/x",
                                     "--part-size", "100")
    assert zr.fails(2, "push", tmp_path)
    assert zr.fails(2, "pull", "s3://b/x")
    err = zr.fails(1, "push", tmp_path, "s3://b")
    assert "s3://b: not a destination: give s3://BUCKET/PREFIX/NAME" in err
    err = zr.fails(1, "pull", "s3://b/x", tmp_path)
    assert f"{tmp_path} exists: pull makes a new store" in err
    assert "not a source" in zr.fails(1, "pull", tmp_path, tmp_path / "d")
