"""An encoded-image store through the mount (issue 30): records/I.npy is
the image decoded as PIL decodes it, records/I.png that image as a PNG,
records/I.jpg, I.orig.png and I.webp the stored file's bytes (the suffix
of its format only); batch/SEED-STEP.npy under -o decode=SIZE or -o
augment=rrc+flip is `zrecord batch --decode/--augment`'s file byte for
byte and loaderx's DataLoader batch; without either it is refused with
an errors line; a record that does not decode fails its read with EIO
and names store, index and the decoder's message in the errors file."""
import errno
import io
import os
import re
import sys

import numpy as np
import pytest
from PIL import Image

from fsutil import zrecord

sys.path.insert(0, os.path.join(os.environ.get("top_srcdir", "../.."),
                                "contrib", "python"))
sys.path.insert(0, os.path.join(os.environ.get("top_srcdir", "../.."),
                                "contrib", "python", "tests"))

from imagedata import photo, pil_rgb, save  # noqa: E402

# One of each format, of other sizes, so that a mix-up shows.
FILES = [
    save(photo(60, 80, 1), "JPEG", quality=90),
    save(photo(50, 70, 2), "PNG"),
    save(photo(64, 48, 3), "WEBP", quality=80),
    save(photo(90, 75, 4).convert("L"), "JPEG", quality=85),
    save(photo(40, 40, 5).convert("RGBA"), "PNG"),
    save(photo(70, 100, 6), "WEBP", lossless=True),
    save(photo(80, 66, 7), "JPEG", quality=80, progressive=True),
    save(photo(45, 77, 8).convert("P"), "PNG"),
]
STORED = {0: "jpg", 1: "orig.png", 2: "webp"}  # the suffix of each format


def _make(path, files):
    import loaderx
    st = loaderx.RaggedStore.create(str(path), np.uint8, images=True)
    st.append([np.frombuffer(f, np.uint8) for f in files])
    st.close()
    return str(path)


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def _npy(data):
    return np.load(io.BytesIO(data))


def _errors(m, store):
    return _read(m.path(store, "errors")).decode()


@pytest.fixture
def images(src):
    return _make(os.path.join(src, "img"), FILES)


def test_records_decoded_and_stored(images, mount):
    m = mount(os.path.dirname(images), "ro")  # zrecord reads beside it
    for i, data in enumerate(FILES):
        got = _read(m.path("img", "records", "%d.npy" % i))
        assert os.stat(m.path("img", "records", "%d.npy" % i)).st_size == \
            len(got)
        arr = _npy(got)
        assert arr.dtype == np.uint8 and arr.ndim == 3, i
        assert np.array_equal(arr, pil_rgb(data)), i
        png = _read(m.path("img", "records", "%d.png" % i))
        assert np.array_equal(np.asarray(Image.open(io.BytesIO(png))),
                              pil_rgb(data)), i
        # the stored bytes under the suffix of their format, no other
        fmt = STORED[[0, 1, 2, 0, 1, 2, 0, 1][i]]
        assert _read(m.path("img", "records", "%d.%s" % (i, fmt))) == data
        for other in set(STORED.values()) - {fmt}:
            with pytest.raises(FileNotFoundError):
                os.stat(m.path("img", "records", "%d.%s" % (i, other)))
    # records/ lists what it lists for any store, and cat reads the same
    assert sorted(os.listdir(m.path("img", "records"))) == sorted(
        "%d.npy" % i for i in range(len(FILES)))
    src = os.path.dirname(images)
    assert zrecord("cat", src, "img/records/0.jpg").stdout == FILES[0]
    assert zrecord("cat", src, "img/records/1.npy").stdout == _read(
        m.path("img", "records", "1.npy"))


def _cli_batch(store, seed, step, *opts, bsize=4):
    return zrecord("batch", store, "--seed", seed, "--step", step,
                   "--batch-size", bsize, *opts).stdout


def test_batches_are_the_commands_and_loaderx(images, mount):
    src = os.path.dirname(images)
    m = mount(src, "ro", "decode=48", "augment=rrc:0.3:1+flip", "batch_size=4",
              "rank=1", "world=2", "start=8@8")
    args = ("--rank", 1, "--world", 2, "--start", "8@8")
    for seed, step in ((3, 0), (3, 1), (9, 2)):
        name = m.path("img", "batch", "%d-%d.npy" % (seed, step))
        got = _read(name)
        assert os.stat(name).st_size == len(got)
        want = _cli_batch(images, seed, step, *args, "--decode=48",
                          "--augment", "rrc:0.3:1,flip")
        assert got == want, (seed, step)
        arr = _npy(got)
        assert arr.shape == (4, 48, 48, 3) and arr.dtype == np.uint8
        # the ragged forms still hold the stored bytes
        idx = _npy(_read(m.path("img", "batch",
                                "%d-%d.indices.npy" % (seed, step))))
        npz = np.load(io.BytesIO(_read(m.path(
            "img", "batch", "%d-%d.npz" % (seed, step)))))
        assert npz["arr_0"].tobytes() == FILES[idx[0]]
    # the same bytes as `zrecord cat -o` and loaderx's DataLoader
    assert zrecord("cat", "-o", "decode=48,augment=rrc:0.3:1+flip,"
                   "batch_size=4,rank=1,world=2,start=8@8", src,
                   "img/batch/9-2.npy").stdout == _read(
                       m.path("img", "batch", "9-2.npy"))
    import loaderx
    st = loaderx.RaggedStore.open(images, readonly=True)
    dl = loaderx.DataLoader({"image": st}, batch_size=4, seed=3,
                            start_step=1, rank=1, world=2, start=8,
                            schedule=loaderx.Schedule([len(FILES)], "iid",
                                                      granule=8),
                            decode=48, augment="rrc:0.3:1,flip")
    try:
        first = next(iter(dl))["image"]
    finally:
        dl.close()
        st.close()
    assert first.tobytes() == _npy(_read(m.path("img", "batch",
                                                "3-1.npy"))).tobytes()


def test_batch_in_pieces(images, mount):
    """A decoded batch of 16 images of 224 x 224 is 3 pieces of about 1
    MiB (6 images each): read from its end first, each piece's crops are
    still drawn at the batch's position + their place."""
    m = mount(os.path.dirname(images), "ro", "decode=224",
              "augment=rrc+flip", "batch_size=16")
    name = m.path("img", "batch", "4-2.npy")
    size = os.stat(name).st_size
    want = _cli_batch(images, 4, 2, "--decode=224", "--augment",
                      "rrc,flip", bsize=16)
    assert size == len(want) > 2 << 20
    got = bytearray(size)
    with open(name, "rb", buffering=0) as f:
        for at in sorted(range(0, size, 1 << 19), reverse=True):
            f.seek(at)
            piece = f.read(1 << 19)
            got[at:at + len(piece)] = piece
    assert bytes(got) == want


def test_prefetched_steps_are_the_commands(images, mount):
    """Steps read in order are gathered ahead (-o prefetch) by the same
    planner: each is still the command's batch of its step."""
    m = mount(os.path.dirname(images), "ro", "decode=40", "augment=rrc",
              "batch_size=4", "sampler=cyclic", "prefetch=3")
    for step in range(8):
        got = _read(m.path("img", "batch", "6-%d.npy" % step))
        assert got == _cli_batch(images, 6, step, "--mode", "cyclic",
                                 "--decode=40", "--augment", "rrc"), step


def test_batch_evaluation_transform(images, mount):
    m = mount(os.path.dirname(images), "ro", "decode=32", "batch_size=4",
              "sampler=sequential")
    got = _read(m.path("img", "batch", "5-1.npy"))
    assert got == _cli_batch(images, 5, 1, "--mode", "sequential",
                             "--decode=32")
    # sequential step 1 of 4 holds records 4..7, each its centre square
    arr = _npy(got)
    for k in range(4):
        im = Image.open(io.BytesIO(FILES[4 + k])).convert("RGB")
        w, h = im.size
        s = min(w, h)
        box = ((w - s) // 2, (h - s) // 2, (w - s) // 2 + s, (h - s) // 2 + s)
        ref = np.asarray(im.resize((32, 32), Image.BILINEAR, box=box))
        diff = np.abs(arr[k].astype(int) - ref.astype(int)).mean()
        assert diff <= 3, (k, diff)


def test_batch_without_decode_is_refused(images, mount):
    m = mount(os.path.dirname(images), "batch_size=4")
    with pytest.raises(OSError) as e:
        os.stat(m.path("img", "batch", "1-0.npy"))
    assert e.value.errno == errno.EINVAL
    err = _errors(m, "img")
    assert "batch of 4" in err and "decode=SIZE" in err, err
    # today's ragged forms are served as before
    npz = np.load(io.BytesIO(_read(m.path("img", "batch", "1-0.npz"))))
    assert len(npz.files) == 4


def test_bad_options_are_refused(src, mount):
    for opt, words in (("decode=0", "decode=SIZE takes 1 to 4096"),
                       ("augment=rotate", "augment=A takes"),
                       ("augment=flip", "augment=flip needs")):
        r = zrecord("cat", "-o", opt, src, "x", check=False)
        assert r.returncode != 0 and words in r.stderr.decode(), (
            opt, r.stderr)


def test_bad_records_fail_with_eio(src, mount):
    good = FILES[0]
    files = [good, good[:len(good) // 3], b"not an image at all",
             FILES[2][:40]]
    store = _make(os.path.join(src, "bad"), files)
    m = mount(src, "decode=16", "batch_size=4", "sampler=sequential")
    assert np.array_equal(_npy(_read(m.path("bad", "records", "0.npy"))),
                          pil_rgb(good))
    for i in (1, 2, 3):
        for suffix in ("npy", "png"):
            with pytest.raises(OSError) as e:
                _read(m.path("bad", "records", "%d.%s" % (i, suffix)))
            assert e.value.errno == errno.EIO, (i, suffix)
    # the truncated JPEG's stored bytes are still its bytes
    assert _read(m.path("bad", "records", "1.jpg")) == files[1]
    with pytest.raises(OSError) as e:
        _read(m.path("bad", "batch", "0-0.npy"))
    assert e.value.errno == errno.EIO
    err = _errors(m, "bad")
    for i in (1, 2, 3):
        line = [x for x in err.splitlines() if "records/%d.npy" % i in x]
        assert line and "record %d" % i in line[0] and store in line[0], err
    assert "JPEG" in [x for x in err.splitlines()
                      if "records/1.npy" in x][0], err
    assert "not a JPEG, PNG or WebP" in err, err
    # the batch's line names a record that does not decode: whichever of
    # 1, 2 and 3 a lane met first (they decode in parallel)
    assert [x for x in err.splitlines() if "batch 0-0" in x and
            re.search(r"record [123]:", x)], err
    # one failed read of an open file is one line, though the kernel asks
    # again for the range that failed
    assert len([x for x in err.splitlines() if "records/1.npy" in x]) == 1, err
    assert len([x for x in err.splitlines() if "batch 0-0" in x]) == 1, err


def test_images_and_labels_of_one_dataset_align(src, mount):
    """An ImageFolder imported --encoded: the image store's decoded batch
    file and the label store's batch file of one (seed, step) hold the
    same records (docs/mount.md: their .indices.npy are equal), as
    loaderx gathers them."""
    import loaderx
    folder = os.path.join(src, "..", "folder")
    for i, data in enumerate(FILES[:6]):
        cls = os.path.join(folder, "cls%d" % (i % 2))
        os.makedirs(cls, exist_ok=True)
        ext = {"JPEG": "jpg", "PNG": "png", "WEBP": "webp"}[
            Image.open(io.BytesIO(data)).format]
        with open(os.path.join(cls, "%d.%s" % (i, ext)), "wb") as f:
            f.write(data)
    zrecord("import", "--encoded", folder, os.path.join(src, "ds"))
    m = mount(src, "ro", "decode=24", "batch_size=4")
    for step in range(3):
        name = "7-%d" % step
        idx = _npy(_read(m.path("ds", "image", "batch",
                                name + ".indices.npy")))
        assert np.array_equal(idx, _npy(_read(m.path(
            "ds", "label", "batch", name + ".indices.npy"))))
        imgs = _npy(_read(m.path("ds", "image", "batch", name + ".npy")))
        labels = _npy(_read(m.path("ds", "label", "batch", name + ".npy")))
        with loaderx.RaggedStore.open(os.path.join(src, "ds", "image"),
                                      readonly=True) as st:
            assert np.array_equal(imgs, st.gather(idx, decode=24))
        with loaderx.DenseStore.open(os.path.join(src, "ds", "label"),
                                     readonly=True) as st:
            assert np.array_equal(labels, st.gather(idx))
        assert imgs.shape == (4, 24, 24, 3) and len(labels) == 4
