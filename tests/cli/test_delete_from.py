"""zrecord delete --from FILE: the indices in the grammar of a mount's delete
file (text or an integer .npy, src/files/index_list.h), from a file or
stdin, give the store the same delete as the same indices as arguments; a
bad list changes nothing and says what is wrong."""
import shutil

import numpy as np
import pytest

from conftest import npy_bytes

INDICES = [3, 39, 17, 0, 5, 39]
TEXT = b"3, 39\n17\t0,,00005\r\n39"


def twin(store, tmp_path):
    """A copy of store, for the same delete done another way."""
    other = tmp_path / "twin"
    shutil.copytree(store, other)
    return other


def contents(zr, store):
    n = zr.stats(store)["records"]
    return n, zr.load("get", store, *range(n))


def assert_same_store(zr, a, b):
    na, ra = contents(zr, a)
    nb, rb = contents(zr, b)
    assert na == nb
    np.testing.assert_array_equal(ra, rb)


def deleted_by_args(zr, store, tmp_path, indices):
    other = twin(store, tmp_path)
    zr.ok("delete", other, *indices)
    return other


def test_text_file_is_the_arguments_delete(zr, dense, tmp_path):
    store, _ = dense
    want = deleted_by_args(zr, store, tmp_path, INDICES)
    (tmp_path / "list.txt").write_bytes(TEXT)
    zr.ok("delete", store, "--from", tmp_path / "list.txt")
    assert zr.stats(store)["records"] == 40 - 5
    assert_same_store(zr, store, want)


def test_stdin_is_the_arguments_delete(zr, dense, tmp_path):
    store, _ = dense
    want = deleted_by_args(zr, store, tmp_path, INDICES)
    zr.ok("delete", "--from", "-", store, input=TEXT)
    assert_same_store(zr, store, want)


@pytest.mark.parametrize("dtype", ["<i8", ">i2", "|u1", "<u4", ">u8"])
def test_numpy_npy_is_the_arguments_delete(zr, dense, tmp_path, dtype):
    store, _ = dense
    want = deleted_by_args(zr, store, tmp_path, INDICES)
    np.save(tmp_path / "list.npy", np.array(INDICES, dtype=dtype))
    zr.ok("delete", store, "--from", tmp_path / "list.npy")
    assert_same_store(zr, store, want)


def test_npy_on_stdin_and_arguments_together(zr, dense, tmp_path):
    """INDEX arguments and --from are one delete."""
    store, _ = dense
    want = deleted_by_args(zr, store, tmp_path, [1, 2, 30])
    zr.ok("delete", store, 1, "--from", "-",
          input=npy_bytes(np.array([2, 30], ">i4")))
    assert_same_store(zr, store, want)


def test_empty_list_deletes_nothing(zr, dense, tmp_path):
    store, data = dense
    zr.ok("delete", store, "--from", "-", input=b"")
    zr.ok("delete", store, "--from", "-", input=b" \n,")
    zr.ok("delete", store, "--from", "-",
          input=npy_bytes(np.zeros((0,), "<i8")))
    n, got = contents(zr, store)
    assert n == 40
    np.testing.assert_array_equal(got, data)


BAD = [
    (b"3 x\n", "Invalid argument",
     "byte 2 (0x78) is neither a digit nor a separator"),
    (b"3 -1\n", "Invalid argument", "byte 2 (0x2d)"),
    (b"3 40\n", "out of range",
     "index 40 is out of range (the store holds 40 records)"),
    (b"99999999999999999999999", "out of range",
     "index 99999999999999999999999 is out of range"),
    (npy_bytes(np.array([1, -2], "<i4")), "out of range",
     "index -2 is out of range"),
    (npy_bytes(np.array([1.0, 2.0])), "",
     "the .npy must be a 1-d integer array"),
    (npy_bytes(np.array([[1, 2]], "<i8")), "",
     "the .npy must be a 1-d integer array"),
    (npy_bytes(np.asfortranarray(np.zeros((2, 2), "<i8"))), "",
     "malformed .npy header"),
    (npy_bytes(np.array([1, 2, 3], "<i8"))[:-3], "",
     "the .npy's size disagrees with its shape"),
    (npy_bytes(np.array([1, 2, 3], "<i8"))[:40], "",
     "malformed .npy header"),
]


@pytest.mark.parametrize("body,err,detail", BAD)
def test_bad_list_changes_nothing(zr, dense, tmp_path, body, err, detail):
    store, data = dense
    before = zr.stats(store)
    path = tmp_path / "bad"
    path.write_bytes(body)
    msg = zr.fails(1, "delete", store, 1, "--from", path)
    assert err in msg and detail in msg, msg
    assert str(path) in msg and str(store) in msg
    msg = zr.fails(1, "delete", store, "--from", "-", input=body)
    assert "stdin: " + detail in msg, msg
    assert zr.stats(store) == before
    n, got = contents(zr, store)
    np.testing.assert_array_equal(got, data)


def test_from_usage(zr, dense, tmp_path):
    store, _ = dense
    msg = zr.fails(1, "delete", store, "--from", tmp_path / "missing")
    assert "No such file or directory" in msg and "missing" in msg
    assert "given once" in zr.fails(2, "delete", store, "--from", "-",
                                    "--from", "-")
    assert "--from FILE" in zr.fails(2, "delete", "--from", "-")
    assert "--from FILE" in zr.ok("delete", "--help").decode()
    assert zr.stats(store)["records"] == 40
