"""zrformat - builds and reads zrecord store files byte by byte, independently
of the library, so tests can craft exact (and exactly broken) stores.

The layout is the one documented in include/zrecord.h: meta.zr = 32-byte
header + MsgPack schema in a 4096-byte page, then 16-byte RecordLocs;
data.zr = one frame per record; dict.zr for codec 2.
"""
import ctypes
import os
import struct

import msgpack
import numpy as np

PAGE = 4096
RAW, ZSTD, ZSTD_DICT = 0, 1, 2

_zstd = ctypes.CDLL("libzstd.so.1")
_zstd.ZSTD_compressBound.restype = ctypes.c_size_t
_zstd.ZSTD_compressBound.argtypes = [ctypes.c_size_t]
_zstd.ZSTD_isError.restype = ctypes.c_uint
_zstd.ZSTD_isError.argtypes = [ctypes.c_size_t]
_zstd.ZSTD_compress.restype = ctypes.c_size_t
_zstd.ZSTD_compress.argtypes = [ctypes.c_void_p, ctypes.c_size_t,
                                ctypes.c_char_p, ctypes.c_size_t,
                                ctypes.c_int]
_zstd.ZSTD_createCCtx.restype = ctypes.c_void_p
_zstd.ZSTD_freeCCtx.argtypes = [ctypes.c_void_p]
_zstd.ZSTD_compress_usingDict.restype = ctypes.c_size_t
_zstd.ZSTD_compress_usingDict.argtypes = [
    ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p,
    ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int]


def zstd_compress(data, level=3, dictionary=None):
    """One zstd frame (content size in the frame header, as zstd writes)."""
    cap = _zstd.ZSTD_compressBound(len(data))
    dst = ctypes.create_string_buffer(cap)
    if dictionary is None:
        n = _zstd.ZSTD_compress(dst, cap, data, len(data), level)
    else:
        cctx = _zstd.ZSTD_createCCtx()
        n = _zstd.ZSTD_compress_usingDict(cctx, dst, cap, data, len(data),
                                          dictionary, len(dictionary), level)
        _zstd.ZSTD_freeCCtx(cctx)
    assert not _zstd.ZSTD_isError(n)
    return dst.raw[:n]


def schema_bytes(dtype, item_shape=None):
    """The schema exactly as the seed's Python packs it."""
    if item_shape is None:
        return msgpack.packb({"dtype": np.dtype(dtype).str})
    return msgpack.packb({"dtype": np.dtype(dtype).str,
                          "item_shape": list(item_shape)})


def ragged_record(arr):
    """[u64 ndim][u64 dim]*ndim [payload] of one array."""
    arr = np.ascontiguousarray(arr)
    head = struct.pack("<Q", arr.ndim) + b"".join(
        struct.pack("<Q", d) for d in arr.shape)
    return head + arr.tobytes()


def header(length, tail, schema, codec):
    return (struct.pack("<QQI", length, tail, len(schema)) + bytes(11) +
            bytes([codec]))


def build(path, schema, codec, records, dictionary=None, frames=None):
    """Writes a store at path holding records (logical bytes each).  frames
    overrides the stored bytes per record (for crafted frames).  Returns the
    list of (offset, phys, logic) entries."""
    os.makedirs(path)
    data, locs = b"", []
    for i, rec in enumerate(records):
        if frames is not None and frames[i] is not None:
            frame = frames[i]
        elif codec == RAW:
            frame = rec
        else:
            frame = zstd_compress(rec, 3 if codec == ZSTD else 19,
                                  dictionary if codec == ZSTD_DICT else None)
        locs.append((len(data), len(frame), len(rec)))
        data += frame
    page = header(len(records), len(data), schema, codec) + schema
    page += bytes(PAGE - len(page))
    table = b"".join(struct.pack("<QII", *l) for l in locs)
    with open(os.path.join(path, "meta.zr"), "wb") as f:
        f.write(page + table)
    with open(os.path.join(path, "data.zr"), "wb") as f:
        f.write(data)
    if codec == ZSTD_DICT:
        with open(os.path.join(path, "dict.zr"), "wb") as f:
            f.write(dictionary)
    return locs


def read_header(path):
    """(length, tail_offset, schema_length, reserved, codec) of a store."""
    with open(os.path.join(path, "meta.zr"), "rb") as f:
        page = f.read(32)
    length, tail, slen = struct.unpack_from("<QQI", page)
    return length, tail, slen, page[20:31], page[31]


def read_loc(path, i):
    with open(os.path.join(path, "meta.zr"), "rb") as f:
        f.seek(PAGE + 16 * i)
        return struct.unpack("<QII", f.read(16))


def patch(path, name, offset, data):
    """Overwrites bytes of one store file in place."""
    with open(os.path.join(path, name), "r+b") as f:
        f.seek(offset)
        f.write(data)


def snapshot(path):
    """Bytes of every file of a store: compare before/after."""
    out = {}
    for name in sorted(os.listdir(path)):
        p = os.path.join(path, name)
        if os.path.isfile(p):
            with open(p, "rb") as f:
                out[name] = f.read()
    return out
