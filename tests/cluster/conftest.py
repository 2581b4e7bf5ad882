"""conftest.py - fixtures of the cluster suite: one GlusterFS volume for the
whole run (simulated hosts are client mounts of it), a fresh folder on the
volume per test, and a zrecordfs factory whose mounts are always unmounted.
GlusterFS that cannot start fails the run; nothing here skips.
ZR_CLUSTER_LONG=1 (make check-cluster) selects the longer variant."""
import os
import shutil
import sys
import tempfile

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "fs"))
from fsutil import Mount, ZRECORD, ZRECORDFS, stop_mounts  # noqa: E402
from gluster import Volume  # noqa: E402

LONG = os.environ.get("ZR_CLUSTER_LONG") == "1"


@pytest.fixture(scope="session")
def volume():
    assert shutil.which("glusterd"), \
        "glusterd missing: run scripts/deps.sh (glusterfs-server)"
    assert os.access(ZRECORDFS, os.X_OK) and os.access(ZRECORD, os.X_OK), \
        "build zrecord and zrecordfs first"
    base = tempfile.mkdtemp(prefix="zr-cluster-")
    v = Volume(base)
    try:
        v.start()
        yield v
    finally:
        errors = v.teardown()
        shutil.rmtree(base, ignore_errors=True)
    assert not errors, "GlusterFS teardown: %r" % errors


@pytest.fixture
def hosts(volume, request):
    """hosts(n) -> [folder of this test as host 0 .. n-1 sees it]."""
    name = request.node.name.replace("[", "_").replace("]", "")

    def factory(n):
        dirs = [os.path.join(volume.mount(i), name) for i in range(n)]
        os.makedirs(dirs[0], exist_ok=True)
        return dirs
    yield factory
    if 0 in volume.mounts:
        shutil.rmtree(os.path.join(volume.mounts[0], name),
                      ignore_errors=True)


@pytest.fixture
def zrfs(tmp_path):
    """zrfs(src, *opts, name=) -> Mount; every mount is torn down."""
    made = []

    def factory(src, *opts, name="mnt"):
        m = Mount(src, str(tmp_path / name), *opts)
        made.append(m)
        return m
    yield factory
    bad = stop_mounts(made)
    assert not bad, "zrecordfs exited badly: %r" % bad
