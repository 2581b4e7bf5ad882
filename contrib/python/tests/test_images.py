"""Encoded-image stores through loaderx: the mark (and the seed's format
untouched), every format and mode decoded exactly as PIL decodes it, the
evaluation and training transforms within zrecord.h's tolerance of PIL's
reference of the same box, crops that are a pure function of (seed,
position), and records that do not decode."""
import os

import numpy as np
import pytest

from imagedata import augment_box, kinds, photo, pil_box, pil_rgb, save
from loaderx import RaggedStore
from loaderx.zrecord import image_opts
from loaderx._lib import ffi, lib


def make(path, files, codec="zstd"):
    st = RaggedStore.create(str(path), np.uint8, codec=codec, images=True)
    st.append([np.frombuffer(f, np.uint8) for f in files])
    return st


def test_mark_leaves_the_seed_format(tmp_path):
    plain = RaggedStore.create(str(tmp_path / "plain"), np.uint8)
    plain.append([np.frombuffer(b"abc", np.uint8)])
    plain.close()
    st = make(tmp_path / "img", [b"abc"])
    assert st.images
    st.close()
    assert (tmp_path / "img" / "content.zr").read_bytes() == b"images\n"
    for name in ("meta.zr", "data.zr"):
        assert (tmp_path / "img" / name).read_bytes() == \
            (tmp_path / "plain" / name).read_bytes()
    again = RaggedStore.open(str(tmp_path / "img"))
    assert again.images
    assert again[0].tobytes() == b"abc"  # the bytes, as the seed sees them
    again.close()
    assert not RaggedStore.open(str(tmp_path / "plain")).images


def test_mark_refuses_other_schemas_and_contents(tmp_path):
    st = RaggedStore.create(str(tmp_path / "f"), np.float32)
    with pytest.raises(ValueError, match="ragged |u1"):
        st.mark_images()
    st.close()
    st = RaggedStore.create(str(tmp_path / "u"), np.uint8)
    st.close()
    (tmp_path / "u" / "content.zr").write_bytes(b"audio\n")
    with pytest.raises(ValueError, match="unknown content mark"):
        RaggedStore.open(str(tmp_path / "u"))


@pytest.mark.parametrize("codec", ["raw", "zstd"])
def test_whole_images_equal_pil(tmp_path, codec):
    files = kinds()
    st = make(tmp_path / "s", list(files.values()), codec)
    got = st.gather(np.arange(len(files)), decode=True)
    for (name, data), img in zip(files.items(), got):
        want = pil_rgb(data)
        assert img.shape == want.shape, name
        assert np.array_equal(img, want), name


def _centre(w, h):
    m = min(w, h)
    x0, y0 = (w - m) // 2, (h - m) // 2
    return (x0, y0, x0 + m, y0 + m)


@pytest.mark.parametrize("size", [64, 32, 16])
def test_decode_size_within_tolerance(tmp_path, size):
    files = kinds(150, 200)
    st = make(tmp_path / "s", list(files.values()))
    got = st.gather(np.arange(len(files)), decode=size)
    assert got.shape == (len(files), size, size, 3)
    for (name, data), img in zip(files.items(), got):
        want = pil_box(data, size, _centre(200, 150))
        diff = np.abs(img.astype(int) - want)
        if name.startswith("jpeg"):
            assert diff.mean() <= 3.0, (name, diff.mean())
        else:  # no DCT scaling: PIL's resample, step for step
            assert diff.max() == 0, (name, diff.max())


def test_undecimated_jpeg_box_is_pil(tmp_path):
    # a box under 8/7 of the output: decoded at full scale, cropped and
    # skipped, then PIL's resample, byte for byte (the crop's margin
    # keeps libjpeg-turbo's crop edges out of the box: image_jpeg.c)
    data = save(photo(120, 160), "JPEG", quality=90)
    st = make(tmp_path / "s", [data])
    img = st.gather([0], decode=110)[0]
    assert np.array_equal(img, pil_box(data, 110, _centre(160, 120)))


@pytest.mark.parametrize("name", ["jpeg-baseline", "jpeg-progressive",
                                  "jpeg-grey", "jpeg-cmyk", "jpeg-444"])
def test_undecimated_augment_boxes_are_pil(tmp_path, name):
    # boxes under the output (no DCT scaling) at many crop edges, odd and
    # even: PIL's resample of PIL's decode exactly (a 4:2:0 crop's right
    # edge once read chroma libjpeg never wrote)
    data = kinds(375, 500)[name]
    st = make(tmp_path / "s", [data] * 24)
    got = st.gather(np.arange(24), augment="rrc:0.05:0.1,flip", seed=3)
    for k in range(24):
        box, flip = augment_box(3, k, 500, 375, 0.05, 0.1)
        assert np.array_equal(got[k], _reference(data, 224, box, flip)), k


def _reference(data, size, box, flip):
    want = pil_box(data, size, box)
    return want[:, ::-1] if flip else want


@pytest.mark.parametrize("fmt", ["PNG", "JPEG"])
def test_augment_is_the_documented_box(tmp_path, fmt):
    # the box and flip transcribed from zrecord.h's text, then PIL's
    # resize of that box: a PNG equals it, a JPEG is within tolerance
    files = [save(photo(375, 500, s), fmt, quality=90) for s in range(4)]
    st = make(tmp_path / "s", files)
    got = st.gather(np.arange(4), augment="rrc:0.25:1,flip", seed=11,
                    position=40)
    flips = 0
    for k, data in enumerate(files):
        box, flip = augment_box(11, 40 + k, 500, 375, 0.25, 1.0)
        flips += flip
        diff = np.abs(got[k].astype(int) -
                      _reference(data, 224, box, flip))
        if fmt == "PNG":
            assert diff.max() == 0, (k, box, flip)
        else:
            assert diff.mean() <= 3.0, (k, box, diff.mean())


def test_augment_flips_about_half(tmp_path):
    flips = [augment_box(5, p, 500, 375)[1] for p in range(200)]
    assert 70 < sum(flips) < 130
    data = save(photo(60, 80), "PNG")
    st = make(tmp_path / "s", [data] * 16)
    got = st.gather(np.arange(16), augment="rrc,flip", seed=5)
    for k in range(16):
        box, flip = augment_box(5, k, 80, 60)
        assert np.array_equal(got[k], _reference(data, 224, box, flip)), k


def test_augment_is_a_pure_function_of_seed_and_position(tmp_path):
    files = [save(photo(300, 400, s), "JPEG", quality=90) for s in range(6)]
    st = make(tmp_path / "s", files)
    idx = np.arange(6)
    a = st.gather(idx, augment="rrc,flip", seed=7, position=12)
    b = st.gather(idx, augment="rrc,flip", seed=7, position=12)
    assert a.shape == (6, 224, 224, 3) and np.array_equal(a, b)
    # record k is position 12 + k: a batch of one at position 14 is a[2]
    one = st.gather([2], augment="rrc,flip", seed=7, position=14)
    assert np.array_equal(one[0], a[2])
    c = st.gather(idx, augment="rrc,flip", seed=8, position=12)
    assert not np.array_equal(a, c)


def test_bad_records_name_store_and_index(tmp_path):
    good = save(photo(40, 50), "JPEG")
    files = [good, good[:len(good) // 2], b"not an image at all",
             save(photo(40, 50), "PNG")[:60]]
    st = make(tmp_path / "s", files)
    st.gather([0], decode=32)
    for i, why in [(1, "JPEG"), (2, "not a JPEG, PNG or WebP"), (3, "PNG")]:
        with pytest.raises(OSError) as e:
            st.gather([0, i], decode=32)
        assert "record %d" % i in str(e.value), e.value
        assert why in str(e.value), e.value
        assert str(tmp_path / "s") in str(e.value)


def test_decode_needs_an_image_store(tmp_path):
    st = RaggedStore.create(str(tmp_path / "s"), np.uint8)
    st.append([np.frombuffer(b"xyz", np.uint8)])
    with pytest.raises(ValueError, match="not an encoded-image store"):
        st.gather([0], decode=32)
    with pytest.raises(ValueError, match="augment"):
        image_opts(None, "rotate")


@pytest.mark.parametrize("name", ["jpeg-baseline", "jpeg-progressive",
                                  "jpeg-cmyk", "png-rgb8", "webp"])
@pytest.mark.parametrize("w", [100, 75])
def test_box_of_output_size_is_the_crop(tmp_path, name, w):
    # decode=min(W, H): the centred square itself, copied, not resampled
    # (a square JPEG's rows decoded straight into the batch)
    data = kinds(75, w)[name]
    st = make(tmp_path / "s", [data])
    got = st.gather([0], decode=75)[0]
    x0 = (w - 75) // 2
    assert np.array_equal(got, pil_rgb(data)[:, x0:x0 + 75])
