"""Records you can look at: uint8 image records as records/I.png through
the mount and `zrecord get --png`, read back by PIL and by Python's zlib
equal to the record, recognised by file(1), sized at getattr without
encoding (stat equals the bytes read)."""
import errno
import os
import struct
import subprocess
import zlib

import numpy as np
import pytest
from PIL import Image

from fsutil import make_store, zrecord

RNG = np.random.default_rng(11)


def as_hwc(a, planar):
    """The (H, W[, C]) pixels PIL returns for record a."""
    if planar:
        a = a.transpose(1, 2, 0)
    if a.ndim == 3 and a.shape[2] == 1:
        a = a[:, :, 0]
    return a


def zlib_pixels(data):
    """The PNG's rows through Python's zlib, filter bytes dropped."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width, height, ctype = 8, b"", 0, 0, 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        crc = struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])[0]
        assert zlib.crc32(kind + body) == crc, kind
        if kind == b"IHDR":
            width, height, _, ctype = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    assert kind == b"IEND" and pos == len(data)
    chans = {0: 1, 2: 3, 6: 4}[ctype]
    raw = np.frombuffer(zlib.decompress(idat), np.uint8)
    rows = raw.reshape(height, 1 + width * chans)
    assert (rows[:, 0] == 0).all()
    px = rows[:, 1:].reshape(height, width, chans)
    return px[:, :, 0] if chans == 1 else px


def check_png(path, want):
    data = open(path, "rb").read()
    assert os.stat(path).st_size == len(data)
    assert (zlib_pixels(data) == want).all()
    with Image.open(path) as im:
        assert (np.asarray(im) == want).all()
    out = subprocess.run(["file", "-b", path], capture_output=True,
                         text=True, check=True).stdout
    assert out.startswith("PNG image data"), out


DENSE = [("hwc3", (6, 9, 3), False), ("hwc4", (5, 7, 4), False),
         ("hw", (8, 300), False), ("chw3", (3, 10, 12), True),
         ("hwc1", (4, 4, 1), False), ("blocks", (200, 400, 3), False)]


@pytest.mark.parametrize("name,shape,planar", DENSE)
def test_dense_image_records(src, mount, tmp_path, name, shape, planar):
    rows = RNG.integers(0, 256, (5,) + shape, dtype=np.uint8)
    store = os.path.join(src, name)
    make_store(store, "u1", shape=shape, codec="zstd", rows=rows)
    m = mount(src, "ro")     # zrecord reads next to it
    for i in (0, 4):
        path = m.path(name, "records", "%d.png" % i)
        check_png(path, as_hwc(rows[i], planar))
        got = tmp_path / "cli.png"
        zrecord("get", store, i, "--png", "-o", got)
        assert got.read_bytes() == open(path, "rb").read()
    # not listed (a listing would double what cp -r copies), but found
    assert not any(n.endswith(".png") for n in
                   os.listdir(m.path(name, "records")))
    assert not os.path.exists(m.path(name, "records", "5.png"))


def test_ragged_images_and_non_images(src, mount, tmp_path):
    recs = [RNG.integers(0, 256, s, dtype=np.uint8)
            for s in [(4, 5, 3), (70, 40), (3, 8, 9), (2, 2, 2), (7,)]]
    store = os.path.join(src, "rag")
    make_store(store, "u1", ragged=True, codec="zstd", records=recs)
    make_store(os.path.join(src, "f4"), "<f4", shape=(4, 4, 3),
               rows=np.zeros((2, 4, 4, 3), "<f4"))
    m = mount(src, "ro")
    check_png(m.path("rag", "records", "0.png"), recs[0])
    check_png(m.path("rag", "records", "1.png"), recs[1])
    check_png(m.path("rag", "records", "2.png"), as_hwc(recs[2], True))
    for i in (3, 4):          # (2, 2, 2) and 1-d: not images
        with pytest.raises(OSError) as e:
            os.stat(m.path("rag", "records", "%d.png" % i))
        assert e.value.errno == errno.ENOENT
        r = zrecord("get", store, i, "--png", check=False)
        assert r.returncode == 1 and b"not an image" in r.stderr
    assert not os.path.exists(m.path("f4", "records", "0.png"))
    r = zrecord("get", store, 0, 1, "--png", check=False)
    assert r.returncode == 2 and b"--png takes one INDEX" in r.stderr


def test_png_follows_a_delete(src, mount):
    """A delete that moves another record into the index changes the
    .png the name shows, as for .npy; an open .png keeps its bytes."""
    rows = RNG.integers(0, 256, (6, 4, 6, 3), dtype=np.uint8)
    make_store(os.path.join(src, "img"), "u1", shape=(4, 6, 3), rows=rows)
    m = mount(src)
    path = m.path("img", "records", "1.png")
    check_png(path, rows[1])
    with open(path, "rb") as held:
        with open(m.path("img", "delete"), "w") as d:
            d.write("1\n")
        assert (zlib_pixels(held.read()) == rows[1]).all()
    check_png(path, rows[5])
    assert not os.path.exists(m.path("img", "records", "5.png"))
