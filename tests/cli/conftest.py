"""Shared fixtures for the zrecord command's suite: where the binaries are,
running them, and small helpers that build .npy bytes and stores."""
import io
import json
import os
import subprocess

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


def _builddir():
    top = os.environ.get("top_builddir")
    if top:
        return top
    # Fallback: an in-tree build two levels up.
    return os.path.dirname(os.path.dirname(HERE))


def _binary(rel):
    path = os.path.join(_builddir(), rel)
    if not os.access(path, os.X_OK):
        pytest.fail(f"{path} is not built (run make check, or set "
                    "top_builddir)")
    return path


@pytest.fixture(scope="session")
def zrecord_bin():
    return _binary(os.path.join("src", "cli", "zrecord"))


@pytest.fixture(scope="session")
def driver_bin():
    return _binary(os.path.join("tests", "cli", "common-driver"))


class Zr:
    """Runs the zrecord command; results keep stdout as bytes."""

    def __init__(self, binary):
        self.binary = binary

    def run(self, *args, input=None, stdin=None):
        return subprocess.run([self.binary, *map(str, args)], input=input,
                              stdin=stdin, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, timeout=300)

    def ok(self, *args, input=None):
        r = self.run(*args, input=input)
        assert r.returncode == 0, (args, r.stderr.decode())
        return r.stdout

    def fails(self, code, *args, input=None):
        r = self.run(*args, input=input)
        assert r.returncode == code, (args, r.returncode,
                                      r.stderr.decode())
        assert r.stdout == b"" or code == 1
        return r.stderr.decode()

    def stats(self, store):
        return json.loads(self.ok("stats", store))

    def load(self, *args):
        """np.load of a command's binary stdout (.npy or .npz)."""
        out = self.ok(*args)
        res = np.load(io.BytesIO(out), allow_pickle=False)
        if isinstance(res, np.lib.npyio.NpzFile):
            return [res[f"arr_{i}"] for i in range(len(res.files))]
        return res


@pytest.fixture
def zr(zrecord_bin):
    return Zr(zrecord_bin)


def npy_bytes(arr, version=None):
    buf = io.BytesIO()
    if version is None:
        np.save(buf, arr)
    else:
        np.lib.format.write_array(buf, np.asanyarray(arr), version=version)
    return buf.getvalue()


def write_npys(path, *arrays):
    with open(path, "wb") as f:
        for a in arrays:
            f.write(npy_bytes(a))
    return path


@pytest.fixture
def dense(zr, tmp_path):
    """A raw dense <f4 store of item shape (3, 5) holding 40 records."""
    data = np.arange(40 * 15, dtype="<f4").reshape(40, 3, 5)
    store = tmp_path / "dense"
    zr.ok("create", store, "--dtype", "<f4", "--shape", "3,5")
    zr.ok("append", store, write_npys(tmp_path / "d.npy", data))
    return store, data


def ragged_arrays(n, dtype="<i4", seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        ndim = 1 + i % 3
        shape = tuple(int(x) for x in rng.integers(1, 6, size=ndim))
        out.append(rng.integers(-1000, 1000, size=shape).astype(dtype))
    return out


@pytest.fixture
def ragged(zr, tmp_path):
    """A zstd ragged <i4 store of 30 records of ranks 1..3."""
    arrays = ragged_arrays(30)
    store = tmp_path / "ragged"
    zr.ok("create", store, "--dtype", "int32", "--ragged", "--codec",
          "zstd")
    zr.ok("append", store, write_npys(tmp_path / "r.npy", *arrays))
    return store, arrays
