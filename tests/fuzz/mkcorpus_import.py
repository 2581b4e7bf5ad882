#!/usr/bin/python3
"""mkcorpus_import.py - regenerates the seed corpora of the import
harnesses (tests/fuzz/corpus/image and tests/fuzz/corpus/wds): small real
PNG/JPEG/WebP files of every colour type PIL writes, made from one 16x16
icon of the installed theme, and small WebDataset tars built with
tarfile.  The first byte of an image seed picks the harness's options.
Run with Debian's /usr/bin/python3; the output is committed."""
import glob
import io
import os
import tarfile

import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))


def put(harness, name, data):
    d = os.path.join(HERE, "corpus", harness)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def encode(im, fmt, **kw):
    buf = io.BytesIO()
    im.save(buf, fmt, **kw)
    return buf.getvalue()


def images():
    icon = sorted(glob.glob("/usr/share/icons/*/16x16/**/*.png",
                            recursive=True))[0]
    rgba = Image.open(icon).convert("RGBA").resize((12, 10))
    out = {
        "png_rgba": encode(rgba, "PNG"),
        "png_rgb": encode(rgba.convert("RGB"), "PNG"),
        "png_grey": encode(rgba.convert("L"), "PNG"),
        "png_la": encode(rgba.convert("LA"), "PNG"),
        "png_pal": encode(rgba.convert("RGB").convert("P"), "PNG"),
        "png_pal_trns": encode(rgba.convert("P"), "PNG", transparency=0),
        "png_grey16": encode(Image.fromarray(
            (np.asarray(rgba.convert("L")).astype(np.uint16) * 257)), "PNG"),
        "png_1bit": encode(rgba.convert("1"), "PNG"),
        "jpg_rgb": encode(rgba.convert("RGB"), "JPEG", quality=80),
        "jpg_grey": encode(rgba.convert("L"), "JPEG"),
        "jpg_progressive": encode(rgba.convert("RGB"), "JPEG",
                                  progressive=True),
        "jpg_444": encode(rgba.convert("RGB"), "JPEG", subsampling=0),
        "webp_lossy": encode(rgba.convert("RGB"), "WEBP", quality=50),
        "webp_lossless": encode(rgba, "WEBP", lossless=True),
        "webp_alpha": encode(rgba, "WEBP", quality=60),
    }
    for i, (name, data) in enumerate(sorted(out.items())):
        # options: none, --rgb, --chw, --resize, --center-crop mixes
        put("image", name, bytes([[0, 1, 2, 5, 8, 0x37, 0x4c][i % 7]]) + data)
    # CMYK, which is converted to RGB (kept out of the loop above, whose
    # option bytes it would shift)
    put("image", "jpg_cmyk", bytes([1]) + encode(rgba.convert("CMYK"),
                                                 "JPEG"))
    return out


def tar_bytes(members, gz=False):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz" if gz else "w") as t:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def shards(imgs):
    npy = io.BytesIO()
    np.save(npy, np.arange(6, dtype="<f4").reshape(2, 3))
    sample = lambda k, img: [(f"{k}.png", img), (f"{k}.cls", b"3\n"),
                             (f"{k}.txt", b"a caption"),
                             (f"{k}.feat.npy", npy.getvalue())]
    two = sample("d/a", imgs["png_grey"]) + sample("d/b", imgs["jpg_rgb"])
    put("wds", "two_samples", tar_bytes(two))
    put("wds", "two_samples_gz", tar_bytes(two, gz=True))
    put("wds", "missing_field", tar_bytes(two[:6]))
    put("wds", "webp", tar_bytes([("x.webp", imgs["webp_alpha"]),
                                  ("x.json", b'{"k": 1}')]))


if __name__ == "__main__":
    shards(images())
