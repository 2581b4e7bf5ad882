"""The .npz writer (src/files/npz) through the common-driver: archives
np.load and zipfile accept, and the no-zip64 limits."""
import io
import subprocess
import zipfile

import numpy as np
import pytest

from conftest import npy_bytes


def drive(driver_bin, *args):
    r = subprocess.run([driver_bin, *map(str, args)], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
    return r.returncode, r.stdout.decode().strip()


def test_members_round_trip(driver_bin, tmp_path):
    arrays = [np.arange(10, dtype="<f8"), np.ones((3, 4), "|u1"),
              np.array(5, dtype=">i4"), np.zeros((2, 0, 3), "<c8")]
    files = []
    for i, a in enumerate(arrays):
        files.append(tmp_path / f"{i}.npy")
        files[-1].write_bytes(npy_bytes(a))
    out = tmp_path / "o.npz"
    code, msg = drive(driver_bin, "npz", out, *files)
    assert code == 0 and msg == f"total {out.stat().st_size}"
    z = zipfile.ZipFile(out)
    assert z.testzip() is None
    assert [i.compress_type for i in z.infolist()] == [zipfile.ZIP_STORED] * 4
    with np.load(out) as npz:
        assert npz.files == [f"arr_{i}" for i in range(4)]
        for i, a in enumerate(arrays):
            assert npz[f"arr_{i}"].dtype == a.dtype
            np.testing.assert_array_equal(npz[f"arr_{i}"], a)


def test_empty_archive(driver_bin, tmp_path):
    out = tmp_path / "o.npz"
    assert drive(driver_bin, "npz", out) == (0, "total 22")
    assert zipfile.ZipFile(out).namelist() == []


def test_layout_total(driver_bin):
    # 30 + 9 local header, 46 + 9 central entry, 22 end record
    assert drive(driver_bin, "layout", 100) == (0, f"total {100 + 116}")


@pytest.mark.parametrize("sizes", [[2**32], [2**31, 2**31],
                                   [2**32 - 1 - 116 + 1]])
def test_over_4gib_is_too_big(driver_bin, sizes):
    code, msg = drive(driver_bin, "layout", *sizes)
    assert code == 1 and msg.startswith("error ZR_E_TOOBIG")


def test_largest_archive_fits(driver_bin):
    assert drive(driver_bin, "layout", 2**32 - 1 - 116) == (
        0, f"total {2**32 - 1}")


def test_too_many_members(driver_bin):
    code, msg = drive(driver_bin, "layout", *([1] * 65536))
    assert code == 1 and msg.startswith("error ZR_E_TOOBIG")
    assert drive(driver_bin, "layout", *([1] * 65535))[0] == 0
