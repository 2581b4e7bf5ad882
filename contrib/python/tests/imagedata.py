"""imagedata.py - the encoded images the image tests decode: a textured
photo-like picture (smooth colour fields plus grain, so JPEG has real
detail to keep) saved by PIL in every format and mode zrecord.h promises,
and PIL's own decode of each, the reference."""
import io

import numpy as np
from PIL import Image


def photo(h, w, seed=0):
    """An RGB picture of h x w with texture."""
    rng = np.random.default_rng(seed)
    x = np.linspace(0, 6, w)[None, :]
    y = np.linspace(0, 4, h)[:, None]
    base = np.stack([np.sin(x * 1.3 + y) * 100 + 128,
                     np.cos(x * 0.7 - y * 1.1) * 90 + 128,
                     np.sin(x * y * 0.5 + seed) * 80 + 128], -1)
    base += rng.normal(0, 18, (h, w, 3))
    return Image.fromarray(np.clip(base, 0, 255).astype(np.uint8))


def save(im, fmt, **kw):
    buf = io.BytesIO()
    im.save(buf, fmt, **kw)
    return buf.getvalue()


def pil_rgb(data):
    """The exactness reference of zrecord.h."""
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))


def pil_box(data, size, box):
    """PIL's reference of a resized box (x0, y0, x1, y1)."""
    im = Image.open(io.BytesIO(data)).convert("RGB")
    return np.asarray(im.resize((size, size), Image.BILINEAR, box=box))


def kinds(h=75, w=100, seed=0):
    """Name -> file bytes, one of each format and mode."""
    im = photo(h, w, seed)
    grey16 = np.asarray(im.convert("L")).astype(np.uint16) * 300
    return {
        "jpeg-baseline": save(im, "JPEG", quality=90),
        "jpeg-progressive": save(im, "JPEG", quality=85, progressive=True),
        "jpeg-grey": save(im.convert("L"), "JPEG", quality=90),
        "jpeg-cmyk": save(im.convert("CMYK"), "JPEG", quality=90),
        "jpeg-444": save(im, "JPEG", quality=90, subsampling=0),
        "png-rgb8": save(im, "PNG"),
        "png-rgba": save(im.convert("RGBA"), "PNG"),
        "png-palette": save(im.convert("P"), "PNG"),
        "png-grey": save(im.convert("L"), "PNG"),
        "png-grey-alpha": save(im.convert("LA"), "PNG"),
        "png-grey16": save(Image.fromarray(grey16), "PNG"),
        "png-rgb16": _png_rgb16(im),
        "webp": save(im, "WEBP", quality=80),
        "webp-alpha": save(im.convert("RGBA"), "WEBP", quality=80),
        "webp-lossless": save(im, "WEBP", lossless=True),
    }


def _png_rgb16(im):
    """A 16-bit RGB PNG (PIL cannot write one): written by hand."""
    import struct
    import zlib
    a = np.asarray(im).astype(">u2") * 257 + 3
    h, w, _ = a.shape
    raw = b"".join(b"\0" + a[y].tobytes() for y in range(h))

    def chunk(t, d):
        return (struct.pack(">I", len(d)) + t + d +
                struct.pack(">I", zlib.crc32(t + d) & 0xffffffff))
    return (b"\x89PNG\r\n\x1a\n" +
            chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 16, 2, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def _unit(w):
    return (w >> 11) * (1.0 / 9007199254740992.0)


def _exp(x):
    r = 1.0
    for k in range(24, 0, -1):
        r = 1.0 + x * r / k
    return r


def augment_box(seed, pos, w, h, smin=0.08, smax=1.0):
    """zrecord.h's RandomResizedCrop box and flip for (seed, position),
    transcribed from its text: (x0, y0, x1, y1), flip."""
    import math
    from refsampler import sampler_ref
    it = sampler_ref.words(seed, pos)
    wd = [next(it) for _ in range(23)]
    flip = wd[0] >> 63 == 1
    lo, hi = -0.28768207245178090, 0.28768207245178090
    for a in range(10):
        area = w * h * (smin + (smax - smin) * _unit(wd[1 + 2 * a]))
        r = _exp(lo + (hi - lo) * _unit(wd[2 + 2 * a]))
        bw = math.floor(math.sqrt(area * r) + 0.5)
        bh = math.floor(math.sqrt(area / r) + 0.5)
        if 0 < bw <= w and 0 < bh <= h:
            y0 = math.floor(_unit(wd[21]) * (h - bh + 1))
            x0 = math.floor(_unit(wd[22]) * (w - bw + 1))
            return (x0, y0, x0 + bw, y0 + bh), flip
    if w / h < 0.75:
        bw, bh = w, min(h, math.floor(w * 4.0 / 3.0 + 0.5))
    elif w / h > 4.0 / 3.0:
        bw, bh = min(w, math.floor(h * 4.0 / 3.0 + 0.5)), h
    else:
        bw, bh = w, h
    x0, y0 = (w - bw) // 2, (h - bh) // 2
    return (x0, y0, x0 + bw, y0 + bh), flip
