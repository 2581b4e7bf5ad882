"""conftest.py - fixtures of the zrecordfs suite: a fresh SRC per test and
a mount factory whose mounts are always unmounted in teardown.  A mount
that cannot be made fails the test; nothing here skips."""
import os

import numpy as np
import pytest

from fsutil import Mount, ZRECORD, ZRECORDFS, make_store


@pytest.fixture
def src(tmp_path):
    d = tmp_path / "src"
    d.mkdir()
    return str(d)


@pytest.fixture
def mount(tmp_path):
    """mount(src, *opts) -> Mount; every mount is torn down afterwards."""
    made = []

    def factory(src, *opts, name="mnt"):
        assert os.access(ZRECORDFS, os.X_OK), "build zrecordfs first"
        assert os.access(ZRECORD, os.X_OK), "build zrecord first"
        m = Mount(src, str(tmp_path / name), *opts)
        made.append(m)
        return m

    yield factory
    bad = []
    for m in made:
        if m.proc.returncode is None:
            rc = m.stop()
            print("zrecordfs stderr (%s):\n%s" % (m.mnt, m.stderr))
            if rc != 0:
                bad.append((m.mnt, rc))
    assert not bad, "zrecordfs exited badly: %r" % bad


IMG = np.random.default_rng(7).integers(0, 255, (40, 3, 8, 8), dtype=np.uint8)
RAGGED = [np.random.default_rng(i).standard_normal((i % 5 + 1, 3)).astype(
    "<f4") for i in range(30)]


@pytest.fixture
def dense_store(src):
    path = os.path.join(src, "img")
    make_store(path, "u1", shape=(3, 8, 8), codec="zstd", rows=IMG)
    return path


@pytest.fixture
def ragged_store(src):
    path = os.path.join(src, "rag")
    make_store(path, "<f4", ragged=True, codec="zstd", records=RAGGED)
    return path
