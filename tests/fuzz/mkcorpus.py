#!/usr/bin/python3
"""mkcorpus.py - regenerates the seed corpora under tests/fuzz/corpus/ from
real NumPy headers, real MsgPack schemas and small real stores (built byte
by byte by tests/rel/zrformat.py).  Run it with Debian's /usr/bin/python3;
the output is committed, so the fuzz test needs no Python."""
import io
import os
import shutil
import struct
import sys
import tempfile

import numpy as np
import numpy.lib.format as npf

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "rel"))
import zrformat as zf  # noqa: E402


def put(harness, name, data):
    d = os.path.join(HERE, "corpus", harness)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def npy_bytes(arr, version=None):
    buf = io.BytesIO()
    if version is None:
        np.save(buf, arr)
    else:
        npf.write_array(buf, arr, version=version)
    return buf.getvalue()


def npy_corpus():
    arrays = {
        "f4_3x4": np.zeros((3, 4), "<f4"),
        "u1_scalar": np.array(7, "|u1"),
        "i8_be": np.arange(5, dtype=">i8"),
        "b1_2x2x2": np.ones((2, 2, 2), "|b1"),
        "c16_1": np.zeros((1,), "<c16"),
        "f2_empty": np.zeros((0, 5), "<f2"),
        "u8_big": np.zeros((100000, 1), "<u8")[:2],
        "fortran_1d": np.asfortranarray(np.zeros((1, 6), "<i4")),
        "rank8": np.zeros((1,) * 8, "<i2"),
    }
    for name, arr in arrays.items():
        put("npy", name, npy_bytes(arr)[:200])
    put("npy", "v2", npy_bytes(np.zeros((2, 3), "<f8"), (2, 0))[:160])
    put("npy", "v3", npy_bytes(np.zeros((4,), "<u4"), (3, 0))[:160])
    put("npy", "truncated", npy_bytes(np.zeros((4,), "<u4"))[:40])


def schema_corpus():
    put("schema", "dense_f4_3", zf.schema_bytes("<f4", [3]))
    put("schema", "dense_u1_3x224x224", zf.schema_bytes("|u1", [3, 224, 224]))
    put("schema", "dense_scalar_i8", zf.schema_bytes("<i8", []))
    put("schema", "ragged_i4", zf.schema_bytes("<i4"))
    put("schema", "ragged_c8_be", zf.schema_bytes(">c8"))
    put("schema", "dense_big_dims", zf.schema_bytes("<f8", [65536, 2**20]))
    # Regressions found by fuzz_schema: array/map headers claiming far more
    # elements than bytes follow made msgpack-c allocate 2 GiB .. 128 GiB.
    put("schema", "regress_array32_count",
        b"\x82\xa5dtype\xa3|u1\xaaite\x01\x00\x01ape\x93\xdd\x03\xcc\xe0"
        b"\xcc\xcc\xe0")
    put("schema", "regress_map32_count",
        b"\x82(\xa5dtyxe\xa3<i8\xdf\xaaitem_sha$e\x90")
    put("schema", "regress_map32_top", b"\xdf" + b"\xc8" * 21)


STREAMS = [  # (config byte as in fuzz_npystream.c, arrays)
    (0, [np.arange(12, dtype="<f4").reshape(4, 3),
         np.zeros((1, 3), "<f4")]),
    (1, [np.arange(8, dtype="|u1").reshape(2, 2, 2)]),
    (2, [np.arange(3, dtype="<f8"), np.zeros((0,), "<f8")]),
    (3, [np.arange(5, dtype="<i2"), np.array(3, "<i2"),
         np.ones((2, 3), "<i2")]),
    (4, [np.arange(7, dtype="|u1")]),
    (5, [np.arange(4, dtype=">i4").reshape(2, 2)]),
    (0, [np.zeros((2, 4), "<f4")]),  # wrong shape
    (3, [np.zeros((3,), "<i4")]),    # wrong dtype
]


def npystream_corpus():
    for i, (cfg, arrays) in enumerate(STREAMS):
        stream = b"".join(npy_bytes(a) for a in arrays)
        seed = struct.pack("<I", 2654435761 * (i + 1) & 0xFFFFFFFF)
        put("npystream", "stream%d" % i, bytes([cfg]) + seed + stream)


IDXLISTS = [  # (limit byte as in fuzz_idxlist.c, the list)
    (2, b"3, 0\t17\r\n00039,5 5\n"),
    (3, b"999 1000\n"),
    (2, b"12x\n"),
    (2, np.array([3, 39, 17], "<i8")),
    (4, np.array([7, 0, 65535], ">u2")),
    (2, np.array([1, -2], "|i1")),
    (2, np.array(5, "<u4")),
    (2, np.zeros((1, 2), "<i4")),
    (2, np.zeros((3,), "<f4")),
]


def idxlist_corpus():
    for i, (limit, body) in enumerate(IDXLISTS):
        if isinstance(body, np.ndarray):
            body = npy_bytes(body)
        seed = struct.pack("<I", 2246822519 * (i + 1) & 0xFFFFFFFF)
        put("idxlist", "list%d" % i, seed + bytes([limit]) + body)


def pack_store(path, writable):
    files = zf.snapshot(path)
    flags = (1 if "dict.zr" in files else 0) | (2 if writable else 0)
    meta, data = files["meta.zr"], files.get("data.zr", b"")
    return (bytes([flags]) + struct.pack("<II", len(meta), len(data)) +
            meta + data + files.get("dict.zr", b""))


def store_corpus():
    tmp = tempfile.mkdtemp()
    rng = np.random.default_rng(1)
    dense = [rng.integers(0, 4, 6, dtype="<i4").tobytes() for _ in range(5)]
    ragged = [zf.ragged_record(rng.integers(0, 9, (2, n), dtype="<u2"))
              for n in (1, 3, 7, 2)] + [zf.ragged_record(np.array(5, "<u2"))]
    dictionary = bytes(range(256)) * 2
    cases = [
        ("dense_raw", zf.schema_bytes("<i4", [2, 3]), zf.RAW, dense),
        ("dense_zstd", zf.schema_bytes("<i4", [2, 3]), zf.ZSTD, dense),
        ("ragged_raw", zf.schema_bytes("<u2"), zf.RAW, ragged),
        ("ragged_zstd", zf.schema_bytes("<u2"), zf.ZSTD, ragged),
        ("ragged_dict", zf.schema_bytes("<u2"), zf.ZSTD_DICT, ragged),
        ("empty_zstd", zf.schema_bytes("<f8", [1]), zf.ZSTD, []),
    ]
    try:
        for name, schema, codec, recs in cases:
            path = os.path.join(tmp, name)
            zf.build(path, schema, codec, recs,
                     dictionary if codec == zf.ZSTD_DICT else None)
            put("store", name, pack_store(path, False))
            put("store", name + "_rw", pack_store(path, True))
    finally:
        shutil.rmtree(tmp)


def mixfile_corpus():
    put("mixfile", "two", b'{"sources": [{"path": "web", "weight": 7}, '
        b'{"path": "code", "weight": 2}]}')
    put("mixfile", "sched", b'{"sources": [{"path": "a", "weight": 3}, '
        b'{"path": "b", "weight": 0}, {"path": "c\\"d", "weight": 1}], '
        b'"schedule": [{"from": 10, "weights": [1, 1, 1]}, {"from": 10, '
        b'"weights": [0, 5, 2]}, {"from": 18446744073709551615, '
        b'"weights": [1, 0, 0]}]}')
    put("mixfile", "big", b'{"sources": [{"path": "a", "weight": 1048576}, '
        b'{"path": "b", "weight": 1}]}')
    put("mixfile", "empty", b'{"sources": []}')


if __name__ == "__main__":
    shutil.rmtree(os.path.join(HERE, "corpus"), ignore_errors=True)
    npy_corpus()
    schema_corpus()
    npystream_corpus()
    idxlist_corpus()
    store_corpus()
    mixfile_corpus()
