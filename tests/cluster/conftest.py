"""conftest.py - fixtures of the cluster suite: one GlusterFS volume for the
whole run (simulated hosts are client mounts of it), a fresh folder on the
volume per test, and the zrecordfs suite's mount factory.
GlusterFS that cannot start fails the run; nothing here skips.
ZR_CLUSTER_LONG=1 (make check-cluster) selects the longer variant."""
import importlib.util
import os
import shutil
import sys
import tempfile

import pytest

FS = os.path.join(os.path.dirname(__file__), "..", "fs")
sys.path.insert(0, FS)
from fsutil import ZRECORD, ZRECORDFS  # noqa: E402
from gluster import Volume  # noqa: E402
from sshfs import Sshd  # noqa: E402

# The zrecordfs suite's mount factory (every mount torn down), reused.
_spec = importlib.util.spec_from_file_location(
    "fs_conftest", os.path.join(FS, "conftest.py"))
_fs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_fs)
mount = _fs.mount

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
def sshd(tmp_path):
    """A loopback sshd; sshd.mount(folder, mnt) is an sshfs "host"."""
    assert shutil.which("sshfs") and os.access("/usr/sbin/sshd", os.X_OK), \
        "sshfs or sshd missing: run scripts/deps.sh"
    base = tmp_path / "ssh"
    base.mkdir()
    s = Sshd(str(base))
    try:
        s.start()
        yield s
    finally:
        errors = s.teardown()
    assert not errors, "sshfs teardown: %r" % errors
