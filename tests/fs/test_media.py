"""A media error under a store file fails that one read with EIO and a
line in the store's errors file; the daemon and every other store keep
serving.  A file truncated behind the daemon's back stands in for the
failing disk: reading a mapped page past the end raises SIGBUS, as a
failed page read does."""
import errno
import os

import numpy as np
import pytest

from fsutil import make_store


def stores(src, rows, codecs):
    """One dense store of rows per name: codec."""
    for name, codec in codecs.items():
        make_store(os.path.join(src, name), rows.dtype, shape=rows.shape[1:],
                   codec=codec, rows=rows)


def test_truncated_data_file_gives_eio_not_a_dead_daemon(src, mount):
    rows = np.arange(500 * 16, dtype="<i8").reshape(500, 16)
    stores(src, rows, {"raw": "raw", "zst": "zstd", "ok": "raw"})
    m = mount(src, "ro")
    assert (np.load(m.path("raw", "records", "0.npy")) == rows[0]).all()
    for name in ("raw", "zst"):
        os.truncate(os.path.join(src, name, "data.zr"), 0)
        for path in (m.path(name, "records", "300.npy"),
                     m.path(name, "batch", "1-1.npy")):
            with pytest.raises(OSError) as e:
                with open(path, "rb") as f:
                    f.read()
            assert e.value.errno == errno.EIO, (path, e.value)
        with open(m.path(name, "errors")) as f:
            log = f.read()
        assert "data.zr" in log and "I/O error" in log, log
    assert m.proc.poll() is None, "zrecordfs died"
    assert (np.load(m.path("ok", "records", "300.npy")) == rows[300]).all()
    assert np.load(m.path("ok", "batch", "1-1.npy")).shape == (256, 16)


def test_truncated_table_gives_eio(src, mount):
    rows = np.arange(500 * 4, dtype="<i4").reshape(500, 4)
    stores(src, rows, {"s": "raw", "ok": "raw"})
    m = mount(src, "ro")
    os.truncate(os.path.join(src, "s", "meta.zr"), 4096)
    with pytest.raises(OSError) as e:
        np.load(m.path("s", "records", "400.npy"))
    assert e.value.errno == errno.EIO
    assert m.proc.poll() is None, "zrecordfs died"
    assert (np.load(m.path("ok", "records", "400.npy")) == rows[400]).all()
