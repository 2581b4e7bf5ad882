"""Real inputs for the `zrecord import` suites: PNG icons of the
installed Debian icon themes, JPEGs and WebPs PIL makes from them, and
what PIL reads back from any of them (the reference every imported
record is compared with)."""
import glob
import io
import os
import shutil

import numpy as np
from PIL import Image

ICON_ROOTS = ["/usr/share/icons/Adwaita", "/usr/share/icons/hicolor"]


def icons(n, size=None):
    """n distinct PNG icon paths, sorted (the themes must hold enough)."""
    found = []
    for root in ICON_ROOTS:
        pattern = f"{root}/{size}x{size}/**/*.png" if size else \
            f"{root}/**/*.png"
        found += glob.glob(pattern, recursive=True)
    found = sorted(set(found))
    assert len(found) >= n, f"only {len(found)} PNG icons installed " \
        "(scripts/deps.sh installs adwaita-icon-theme)"
    return found[:n]


def pil_array(data):
    """What `zrecord import` should make of an image file's bytes: uint8
    HWC with the file's own channels (grey 1, grey+alpha 2, RGB 3, RGBA
    4; a palette gives RGB, or RGBA when it has transparency)."""
    im = Image.open(io.BytesIO(data))
    im.load()
    if im.mode == "P":
        im = im.convert("RGBA" if "transparency" in im.info else "RGB")
    elif im.mode == "1":
        im = im.convert("L")
    elif im.mode in ("I;16", "I;16B", "I"):
        a = np.asarray(im).astype(np.uint32) >> 8
        return a.astype(np.uint8)[:, :, None]
    a = np.asarray(im)
    if a.ndim == 2:
        a = a[:, :, None]
    return a


def pil_rgb(data):
    im = Image.open(io.BytesIO(data))
    return np.asarray(im.convert("RGB"))


def save_as(png_path, fmt, **kw):
    """The icon re-encoded by PIL as fmt ("JPEG", "WEBP", "PNG")."""
    im = Image.open(png_path)
    im.load()
    if fmt == "JPEG":
        im = im.convert("L" if kw.pop("grey", False) else "RGB")
    buf = io.BytesIO()
    im.save(buf, fmt, **kw)
    return buf.getvalue()


def class_folder(root, per_class=6):
    """root/<class>/<file> with PNG, JPEG and WebP images in three
    classes; returns {class: [paths in import order]}."""
    src = icons(per_class * 3)
    kinds = [("png", None, {}), ("jpg", "JPEG", {"quality": 90}),
             ("webp", "WEBP", {"lossless": True})]
    out = {}
    for c, name in enumerate(["cat", "dog", "eel"]):
        d = os.path.join(root, name)
        os.makedirs(d)
        out[name] = []
        for i in range(per_class):
            ext, fmt, kw = kinds[(c + i) % 3]
            p = os.path.join(d, f"{i:03d}.{ext}")
            icon = src[c * per_class + i]
            if fmt:
                with open(p, "wb") as f:
                    f.write(save_as(icon, fmt, **kw))
            else:
                shutil.copyfile(icon, p)
            out[name].append(p)
    return out


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def records(zr, store):
    """Every record of a store, in order, via `zrecord get`."""
    n = zr.stats(store)["records"]
    got = zr.load("get", store, *range(n))
    if isinstance(got, list):
        return got
    return [got] if n == 1 and got.ndim == 0 else list(got)
