"""`zrecord import` of image folders: real PNG icons and the JPEGs and
WebPs PIL makes of them, each imported record compared with PIL's
decode; class folders, the trainer's options, and bad files."""
import io
import json
import os

import numpy as np
import pytest

from conftest import npy_bytes
from importdata import (class_folder, icons, pil_array, pil_rgb, read_bytes,
                        records, save_as)


def test_class_folders_match_pil(zr, tmp_path):
    src = tmp_path / "src"
    layout = class_folder(str(src))
    dest = tmp_path / "ds"
    zr.ok("import", src, dest)
    assert json.loads((dest / "classes.json").read_text()) == \
        ["cat", "dog", "eel"]
    assert sorted(os.listdir(dest)) == ["classes.json", "files.txt", "image",
                                        "label"]
    imgs = records(zr, dest / "image")
    labels = records(zr, dest / "label")
    paths = [(c, p) for c, ps in sorted(layout.items()) for p in ps]
    assert len(imgs) == len(labels) == len(paths)
    for (cls, p), img, lab in zip(paths, imgs, labels):
        assert int(lab) == ["cat", "dog", "eel"].index(cls)
        want = pil_array(read_bytes(p))
        assert img.dtype == np.uint8 and img.shape == want.shape, p
        # Baseline JPEG: libjpeg-turbo here and PIL's libjpeg-turbo
        # agree exactly (same library, same IDCT and upsampling).
        assert np.array_equal(img, want), p


def test_flat_folder_grey_and_lossy(zr, tmp_path):
    src = tmp_path / "flat"
    src.mkdir()
    files = []
    for i, icon in enumerate(icons(8)):
        if i % 4 == 0:
            data = save_as(icon, "JPEG", grey=True, quality=80)
            name = f"{i}.jpeg"
        elif i % 4 == 1:
            data = save_as(icon, "WEBP", quality=70)
            name = f"{i}.webp"
        elif i % 4 == 2:
            data = save_as(icon, "JPEG", quality=75, subsampling=2)
            name = f"{i}.JPG"
        else:
            data = read_bytes(icon)
            name = f"{i}.png"
        (src / name).write_bytes(data)
        files.append(name)
    (src / "README").write_text("not an image\n")
    dest = tmp_path / "ds"
    r = zr.run("import", src, dest)
    assert r.returncode == 0, r.stderr
    assert b"ignored 1 file" in r.stderr
    assert sorted(os.listdir(dest)) == ["files.txt", "image"]
    got = records(zr, dest / "image")
    order = sorted(files, key=lambda s: s.encode())
    assert len(got) == len(order)
    for name, img in zip(order, got):
        want = pil_array((src / name).read_bytes())
        assert img.shape == want.shape and np.array_equal(img, want), name


def test_rgb_crop_chw_dense(zr, tmp_path):
    src = tmp_path / "src"
    layout = class_folder(str(src), per_class=3)
    dest = tmp_path / "ds"
    zr.ok("import", "--rgb", "--center-crop", "16,12", "--chw",
          "--codec", "zstd", "--threads", "2", src, dest)
    st = zr.stats(dest / "image")
    assert st["ragged"] is False and st["codec"] == "zstd"
    arr = zr.load("get", dest / "image", *range(st["records"]))
    assert arr.shape == (9, 3, 16, 12)
    paths = [p for c in sorted(layout) for p in layout[c]]
    for p, img in zip(paths, arr):
        full = pil_rgb(read_bytes(p))
        h, w = full.shape[:2]
        top, left = (h - 16) // 2, (w - 12) // 2
        want = full[top:top + 16, left:left + 12].transpose(2, 0, 1)
        assert np.array_equal(img, want), p


def test_resize_close_to_pil(zr, tmp_path):
    from PIL import Image
    src = tmp_path / "src"
    src.mkdir()
    for i, icon in enumerate(icons(4, size=48)):
        (src / f"{i}.png").write_bytes(save_as(icon, "PNG"))
    dest = tmp_path / "ds"
    zr.ok("import", "--rgb", "--resize", "20,30", src, dest)
    arr = zr.load("get", dest / "image", 0, 1, 2, 3)
    assert arr.shape == (4, 20, 30, 3)
    for i in range(4):
        im = Image.open(src / f"{i}.png").convert("RGB")
        want = np.asarray(im.resize((30, 20), Image.BILINEAR))
        # Same filter as PIL's; PIL rounds in 8-bit fixed point, we in
        # floating point: at most one level apart.
        diff = np.abs(arr[i].astype(int) - want.astype(int))
        assert diff.max() <= 1, (i, diff.max())


def test_encoded_keeps_bytes(zr, tmp_path):
    src = tmp_path / "src"
    layout = class_folder(str(src), per_class=2)
    dest = tmp_path / "ds"
    zr.ok("import", "--encoded", src, dest)
    got = records(zr, dest / "image")
    paths = [p for c in sorted(layout) for p in layout[c]]
    assert [g.tobytes() for g in got] == [read_bytes(p) for p in paths]
    # the mark the library decodes by, beside the seed's files
    assert (dest / "image" / "content.zr").read_bytes() == b"images\n"
    assert not (dest / "label" / "content.zr").exists()


def test_mixed_channels_dense_needs_rgb(zr, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    ic = icons(2, size=48)
    (src / "a.png").write_bytes(read_bytes(ic[0]))
    (src / "b.jpg").write_bytes(save_as(ic[1], "JPEG", grey=True))
    err = zr.fails(1, "import", "--center-crop", "8", src, tmp_path / "d")
    assert "--rgb" in err and "b.jpg" in err
    assert not (tmp_path / "d").exists()
    assert [p for p in os.listdir(tmp_path) if p.startswith("d.")] == []
    zr.ok("import", "--rgb", "--center-crop", "8", src, tmp_path / "d")
    assert zr.stats(tmp_path / "d" / "image")["records"] == 2


@pytest.mark.parametrize("codec", ["raw", "zstd"])
def test_same_sources_same_bytes(zr, tmp_path, codec):
    src = tmp_path / "src"
    class_folder(str(src), per_class=4)
    for d, threads in (("one", "3"), ("two", "1")):
        zr.ok("import", "--threads", threads, "--codec", codec, src,
              tmp_path / d)
    for store in ("image", "label"):
        for f in ("meta.zr", "data.zr"):
            a = (tmp_path / "one" / store / f).read_bytes()
            b = (tmp_path / "two" / store / f).read_bytes()
            assert a == b, (store, f)


@pytest.mark.parametrize("kind", ["png", "jpg", "webp"])
@pytest.mark.parametrize("damage", ["truncated", "corrupt"])
def test_bad_image_all_or_nothing(zr, tmp_path, kind, damage):
    src = tmp_path / "src"
    layout = class_folder(str(src), per_class=3)
    victim = [p for c in sorted(layout) for p in layout[c]
              if p.endswith(kind)][0]
    data = bytearray(read_bytes(victim))
    if damage == "truncated":
        data = data[:len(data) * 2 // 3]
    else:
        # Past the signature: a decoder must notice the damage.
        for i in range(len(data) // 3, len(data) // 3 + 40):
            data[i] ^= 0x5a
    with open(victim, "wb") as f:
        f.write(data)
    dest = tmp_path / "ds"
    err = zr.fails(1, "import", src, dest)
    assert victim in err
    assert not dest.exists()
    assert os.listdir(tmp_path) == ["src"]
    r = zr.run("import", "--skip-bad", src, dest)
    assert r.returncode == 0, r.stderr
    assert b"skipped 1 bad input" in r.stderr and victim.encode() in r.stderr
    assert zr.stats(dest / "image")["records"] == 8
    assert zr.stats(dest / "label")["records"] == 8


def test_refuses_existing_dest_and_mixed_layout(zr, tmp_path):
    src = tmp_path / "src"
    class_folder(str(src), per_class=1)
    (tmp_path / "ds").mkdir()
    err = zr.fails(1, "import", src, tmp_path / "ds")
    assert "DEST exists" in err
    (src / "stray.png").write_bytes(read_bytes(icons(1)[0]))
    err = zr.fails(1, "import", src, tmp_path / "ds2")
    assert "both images and class folders" in err
    assert not (tmp_path / "ds2").exists()
    err = zr.fails(1, "import", src, tmp_path / "nowhere" / "ds")
    assert "the folder DEST goes in does not exist" in err
    os.remove(src / "stray.png")
    zr.ok("import", src, str(tmp_path / "ds3") + "//")
    assert sorted(os.listdir(tmp_path / "ds3")) == \
        ["classes.json", "files.txt", "image", "label"]
    assert not [p for p in os.listdir(tmp_path) if ".tmp-" in p]


def test_help_and_usage(zr):
    out = zr.ok("import", "--help").decode()
    for opt in ("--rgb", "--resize", "--center-crop", "--chw", "--encoded",
                "--codec", "--threads", "--skip-bad", "--drop-incomplete",
                "--progress", "--type"):
        assert opt in out
    assert "SOURCE" in zr.fails(2, "import", "only-one")
    assert "--encoded" in zr.fails(2, "import", "--encoded", "--rgb", "a",
                                   "b")


def test_options_of_another_source_are_refused(zr, tmp_path):
    src = tmp_path / "src"
    class_folder(str(src), per_class=1)
    for opt, what in (("--keys", "lmdb"), ("--per-file", "npy"),
                      ("--drop-incomplete", "wds")):
        err = zr.fails(2, "import", opt, src, tmp_path / "ds")
        assert f"{opt} goes with {what}" in err
    err = zr.fails(2, "import", "--dataset", "x", src, tmp_path / "ds")
    assert "--dataset goes with hdf5" in err
    assert not (tmp_path / "ds").exists()


def test_every_png_colour_type(zr, tmp_path):
    from PIL import Image
    src = tmp_path / "src"
    src.mkdir()
    im = Image.open(icons(1, size=48)[0]).convert("RGBA")
    grey16 = Image.fromarray(np.asarray(im.convert("L")).astype(np.uint16)
                             * 257 + 3)
    forms = {"a_rgba": im, "b_rgb": im.convert("RGB"),
             "c_l": im.convert("L"), "d_la": im.convert("LA"),
             "e_p": im.convert("RGB").convert("P"), "g_1": im.convert("1"),
             "h_i16": grey16}
    for name, form in forms.items():
        form.save(src / f"{name}.png")
    im.convert("P").save(src / "f_ptrns.png", transparency=0)
    zr.ok("import", src, tmp_path / "ds")
    got = records(zr, tmp_path / "ds" / "image")
    names = sorted(os.listdir(src))
    assert len(got) == len(names) == 8
    for name, img in zip(names, got):
        want = pil_array((src / name).read_bytes())
        assert img.shape == want.shape and np.array_equal(img, want), name


@pytest.mark.parametrize("crop", ["48", "32,40"])
@pytest.mark.parametrize("codec", ["raw", "zstd"])
def test_dense_stores_are_what_the_library_appends(zr, tmp_path,
                                                   monkeypatch, crop, codec):
    """Dense records from the third batch on are put into slots reserved
    in their store by the decode threads (zr_append_dense_reserve/put/
    stage): the store must be byte for byte what zr_append_dense writes
    of the same arrays (`zrecord append` here), with a bad file of a
    reserved batch left out (--skip-bad) and the rest in order.
    --center-crop 48 keeps the 48x48 images as decoded (decoded straight
    into the thread's buffer), 32,40 crops them first."""
    from PIL import Image
    src = tmp_path / "src"
    src.mkdir()
    files = []
    for i, icon in enumerate(icons(40, size=48)):
        # on a background of its own: the themes' symbolic icons are
        # alpha only, the same black square once their alpha is dropped
        im = Image.open(icon).convert("RGBA")
        bg = Image.new("RGBA", im.size, (i * 37 % 256, 128, 200, 255))
        buf = io.BytesIO()
        Image.alpha_composite(bg, im).convert("RGB").save(buf, "JPEG",
                                                          quality=90)
        data = buf.getvalue()
        if i == 25:
            data = data[:len(data) // 3]
        (src / f"{i:03d}.jpg").write_bytes(data)
        if i != 25:
            files.append(data)
    zr.ok("import", "--skip-bad", "--rgb", "--center-crop", crop,
          "--codec", codec, "--threads", "2", src, tmp_path / "ds")
    h, w = (int(x) for x in (crop + "," + crop).split(",")[:2])
    rows = []
    for data in files:
        full = pil_rgb(data)
        top, left = (48 - h) // 2, (48 - w) // 2
        rows.append(full[top:top + h, left:left + w])
    ref = tmp_path / "ref"
    zr.ok("create", ref, "--dtype", "|u1", "--shape", f"{h},{w},3",
          "--codec", codec)
    # one lane, as the import has: the pool places the frames of one
    # call in the order its lanes finish them
    monkeypatch.setenv("ZR_THREADS", "0")
    zr.ok("append", ref, "-", input=npy_bytes(np.stack(rows)))
    for f in ("meta.zr", "data.zr"):
        assert read_bytes(tmp_path / "ds" / "image" / f) == \
            read_bytes(tmp_path / "ref" / f), f


def _without_app14(jpeg):
    """The JPEG with its Adobe APP14 segment taken out."""
    i = jpeg.index(b"\xff\xee")
    seg = int.from_bytes(jpeg[i + 2:i + 4], "big")
    return jpeg[:i] + jpeg[i + 2 + seg:]


def test_cmyk_jpeg_becomes_pil_rgb(zr, tmp_path):
    """TurboJPEG decodes CMYK JPEGs to CMYK only; the import makes them
    RGB exactly as PIL's convert("RGB") does, which takes them as Adobe's
    inverted CMYK with the APP14 marker that says so (PIL and Photoshop
    write it) and without it; a truncated one is a bad file."""
    from PIL import Image
    src = tmp_path / "src"
    src.mkdir()
    im = Image.open(icons(1, size=48)[0]).convert("RGBA")
    bg = Image.new("RGBA", im.size, (40, 160, 90, 255))
    buf = io.BytesIO()
    Image.alpha_composite(bg, im).convert("CMYK").save(buf, "JPEG",
                                                       quality=95)
    adobe = buf.getvalue()
    plain = _without_app14(adobe)
    (src / "a.jpg").write_bytes(adobe)
    (src / "b.jpg").write_bytes(plain)
    (src / "c.jpg").write_bytes(adobe[:len(adobe) // 2])
    r = zr.run("import", "--skip-bad", src, tmp_path / "ds")
    assert r.returncode == 0, r.stderr
    assert b"c.jpg" in r.stderr
    got = records(zr, tmp_path / "ds" / "image")
    assert len(got) == 2
    for data, img in zip((adobe, plain), got):
        want = pil_rgb(data)
        assert img.shape == want.shape and np.array_equal(img, want)
    assert np.array_equal(got[0], got[1])
    assert got[0].std() > 10  # a real picture, not one flat colour
