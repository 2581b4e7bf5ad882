"""Hostile-input catalogue: every malformed input we promise to survive,
listed in ONE table (CATALOGUE below), each asserting a clear error and an
unchanged store.

Entry points ("where"):
  cli     `zrecord append STORE FILE...` with the bytes as the file(s)
  args    a `zrecord` command line ({D}/{R} = the dense/ragged store)
  store   a store file damaged on disk, then read with `zrecord`
  append  the bytes `cp`'d into a zrecordfs mount's STORE/append
  path    an operation on a path inside the mount
  mount   a store damaged on disk, then SRC mounted with zrecordfs

"Unchanged" means: the store's stats are equal, and its committed bytes
(the header page, the live record table, data.zr up to tail_offset) are
byte-identical.  A failed append session may leave garbage past the
frontier (documented in zrecord.h: never visible, overwritten by the next
append); where the input fails before any record is staged the whole files
must be identical, and that is checked too.

Stores: D is dense <f4 item_shape (3,) zstd with 10 records; R is ragged
<i2 zstd with 5 records; they are rebuilt for every cli/args/store case.
"""
import errno
import os
import shutil
import struct
import subprocess

import numpy as np
import pytest

import zrformat as zf
from conftest import cp, npy_bytes, write_file

D_ROWS = np.arange(30, dtype="<f4").reshape(10, 3)
R_RECS = [np.arange(n, dtype="<i2").reshape(-1) for n in (1, 4, 9)] + [
    np.array(7, "<i2"), np.ones((2, 3), "<i2")]


def hdr(text, version=(1, 0), magic=b"\x93NUMPY", pad=True):
    """A .npy header around a literal dict text, padded like NumPy's."""
    body = text.encode("latin1")
    lenfmt = "<H" if version[0] == 1 else "<I"
    pre = len(magic) + 2 + struct.calcsize(lenfmt)
    if pad:
        body += b" " * ((64 - (pre + len(body) + 1) % 64) % 64) + b"\n"
    return magic + bytes(version) + struct.pack(lenfmt, len(body)) + body


def arr(descr, shape, fortran=False):
    return "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (
        descr, fortran, shape)


GOOD_D = npy_bytes(np.zeros((2, 3), "<f4"))
GOOD_R = npy_bytes(np.arange(3, dtype="<i2"))

# -- the catalogue --------------------------------------------------------
# (id, where, store, input, expected)
#   input: bytes (one file) / list of bytes (several files) for cli and
#          append; argv for args; (file, offset, bytes) patches or a
#          callable(store_path) for store; a callable(mnt) for path.
#   expected: (exit status, words one of which the message must contain)
#          for cli/args/store; errno set for append/path.
E_NPY = ["npy", "malformed", "header"]
E_TRUNC = ["truncat", "ends early", "short"]
E_DTYPE = ["dtype"]
E_SHAPE = ["shape"]
E_BIG = ["too", "overflow", "big", "2 gib", "large", "npy"]
E_CORRUPT = ["malformed", "corrupt"]
E_DECODE = ["malformed", "corrupt", "decompress", "frame", "codec"]
EINVAL = {errno.EINVAL}
ANY_INPUT_ERR = {errno.EINVAL, errno.EFBIG, errno.EIO, errno.ERANGE}


def loc(i):
    return zf.PAGE + 16 * i


def frames_bomb(path):
    """Record 0 of R becomes a zstd frame of 1 MiB for a 16-byte slot."""
    rec = zf.ragged_record(np.zeros(4, "<i2"))
    bomb = zf.zstd_compress(rec + bytes(1 << 20))
    rebuild_r(path, frames={0: bomb}, logic={0: len(rec)})


def frames_short(path):
    """Record 1's frame decodes to fewer bytes than logic_length says."""
    rec = zf.ragged_record(np.arange(4, dtype="<i2"))
    rebuild_r(path, frames={1: zf.zstd_compress(rec[:-2])},
              logic={1: len(rec)})


def ragged_prefix(head):
    """Record 0 of R gets a hand-made (well-framed) ragged prefix."""
    def mutate(path):
        rebuild_r(path, records={0: head})
    return mutate


def rebuild_r(path, frames=None, records=None, logic=None):
    """Rewrites R at path with some frames/records replaced (zrformat)."""
    shutil.rmtree(path)
    recs = [zf.ragged_record(a) for a in R_RECS]
    for i, r in (records or {}).items():
        recs[i] = r
    fr = [None] * len(recs)
    for i, f in (frames or {}).items():
        fr[i] = f
    zf.build(path, zf.schema_bytes("<i2"), zf.ZSTD, recs, frames=fr)
    for i, n in (logic or {}).items():
        zf.patch(path, "meta.zr", loc(i) + 12, struct.pack("<I", n))


def remove(name):
    def mutate(path):
        os.remove(os.path.join(path, name))
    return mutate


def add_dict(path):
    write_file(os.path.join(path, "dict.zr"), b"\x37\xa4\x30\xec" + bytes(60))


def truncate_meta(path):
    with open(os.path.join(path, "meta.zr"), "r+b") as f:
        f.truncate(100)


def truncate_table(path):
    with open(os.path.join(path, "meta.zr"), "r+b") as f:
        f.truncate(loc(9) + 8)


def expect_oserror(fn, errnos):
    with pytest.raises(OSError) as e:
        fn()
    assert e.value.errno in errnos, e.value


def p_open(rel, mode="rb"):
    def op(mnt):
        with open(os.path.join(mnt, rel), mode) as f:
            f.write(b"1\n") if "+" in mode or "w" in mode else f.read(1)
    return op


def p_stat(rel):
    return lambda mnt: os.stat(os.path.join(mnt, rel))


def p_write(rel, data):
    def op(mnt):
        with open(os.path.join(mnt, rel), "wb") as f:
            f.write(data)
    return op


CATALOGUE = [
    # ---- .npy streams through `zrecord append` ------------------------
    ("cli-wrong-dtype", "cli", "D", npy_bytes(np.zeros((2, 3), "<f8")),
     (1, E_DTYPE)),
    ("cli-big-endian", "cli", "D", npy_bytes(np.zeros((2, 3), ">f4")),
     (1, E_DTYPE)),
    ("cli-wrong-row-shape", "cli", "D", npy_bytes(np.zeros((2, 4), "<f4")),
     (1, E_SHAPE)),
    ("cli-wrong-rank", "cli", "D", npy_bytes(np.zeros((2, 3, 1), "<f4")),
     (1, E_SHAPE)),
    ("cli-1d-into-rows", "cli", "D", npy_bytes(np.zeros(3, "<f4")),
     (1, E_SHAPE)),
    ("cli-scalar-into-rows", "cli", "D", npy_bytes(np.float32(1)),
     (1, E_SHAPE)),
    ("cli-ragged-wrong-dtype", "cli", "R", npy_bytes(np.zeros(3, "<i4")),
     (1, E_DTYPE)),
    ("cli-ragged-zero-elements", "cli", "R", npy_bytes(np.zeros(0, "<i2")),
     (1, ["zero", "empty"])),
    ("cli-ragged-zero-axis", "cli", "R", npy_bytes(np.zeros((3, 0), "<i2")),
     (1, ["zero", "empty"])),
    ("cli-garbage", "cli", "D", b"hello, I am not an array\n" * 4,
     (1, E_NPY)),
    ("cli-npz-not-npy", "cli", "D", b"PK\x03\x04" + bytes(60), (1, E_NPY)),
    ("cli-truncated-header", "cli", "D", GOOD_D[:20], (1, E_TRUNC)),
    ("cli-truncated-payload", "cli", "D", GOOD_D[:-5], (1, E_TRUNC)),
    ("cli-ragged-truncated-payload", "cli", "R", GOOD_R[:-1], (1, E_TRUNC)),
    ("cli-trailing-garbage", "cli", "D", GOOD_D + b"xyz",
     (1, E_NPY + E_TRUNC)),
    ("cli-header-len-past-eof", "cli", "D",
     b"\x93NUMPY\x01\x00\xff\xff{'descr'", (1, E_TRUNC)),
    ("cli-bad-version", "cli", "D", hdr(arr("<f4", "(1, 3)"), (9, 9)),
     (1, E_NPY)),
    ("cli-bad-magic", "cli", "D", hdr(arr("<f4", "(1, 3)"),
                                      magic=b"\x93NUMPZ"), (1, E_NPY)),
    ("cli-header-not-dict", "cli", "D", hdr("[1, 2, 3]"), (1, E_NPY)),
    ("cli-missing-shape", "cli", "D",
     hdr("{'descr': '<f4', 'fortran_order': False, }"), (1, E_NPY)),
    ("cli-unknown-key", "cli", "D",
     hdr("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 3), "
         "'extra': 1, }"), (1, E_NPY)),
    ("cli-fortran-2d", "cli", "D",
     hdr(arr("<f4", "(2, 3)", True)) + bytes(24), (1, E_NPY)),
    ("cli-fortran-not-bool", "cli", "D",
     hdr("{'descr': '<f4', 'fortran_order': 'no', 'shape': (1, 3), }"),
     (1, E_NPY)),
    ("cli-negative-dim", "cli", "D", hdr(arr("<f4", "(-1, 3)")), (1, E_NPY)),
    ("cli-bad-tuple", "cli", "D", hdr(arr("<f4", "(1,, 3)")), (1, E_NPY)),
    ("cli-nul-in-header", "cli", "D",
     hdr(arr("<f4", "(1, 3)").replace(" }", "\0}")), (1, E_NPY)),
    ("cli-rank-33", "cli", "D", hdr(arr("<f4", "(" + "1, " * 33 + ")")),
     (1, E_NPY + E_SHAPE)),
    ("cli-huge-declared-rows", "cli", "D",
     hdr(arr("<f4", "(1099511627776, 3)")) + bytes(24), (1, E_TRUNC + E_BIG)),
    ("cli-size-overflow", "cli", "D",
     hdr(arr("<f4", "(4611686018427387904, 4611686018427387904, 3)")),
     (1, E_BIG + E_SHAPE)),
    ("cli-dim-over-u64", "cli", "D",
     hdr(arr("<f4", "(18446744073709551616, 3)")), (1, E_NPY + E_BIG)),
    ("cli-ragged-over-2gib", "cli", "R",
     hdr(arr("<i2", "(1073741825,)")) + bytes(64), (1, E_BIG + E_TRUNC)),
    ("cli-object-dtype", "cli", "D", hdr(arr("|O", "(1, 3)")),
     (1, E_DTYPE)),
    ("cli-unicode-dtype", "cli", "D", hdr(arr("<U3", "(1, 3)")),
     (1, E_DTYPE)),
    ("cli-datetime-dtype", "cli", "D", hdr(arr("<M8[s]", "(1, 3)")),
     (1, E_DTYPE)),
    ("cli-structured-dtype", "cli", "D",
     hdr("{'descr': [('a', '<f4')], 'fortran_order': False, "
         "'shape': (1, 3), }"), (1, E_DTYPE + E_NPY)),
    ("cli-good-then-bad-array", "cli", "D",
     GOOD_D + npy_bytes(np.zeros((1, 3), "<f8")), (1, E_DTYPE)),
    ("cli-good-file-then-bad-file", "cli", "D",
     [GOOD_D, npy_bytes(np.zeros((1, 2), "<f4"))], (1, E_SHAPE)),
    ("cli-ragged-good-then-truncated", "cli", "R",
     GOOD_R + GOOD_R[:-3], (1, E_TRUNC)),
    # ---- command lines ------------------------------------------------
    ("args-negative-index", "args", "D", ["get", "{D}", "-1"],
     (2, ["negative"])),
    ("args-index-out-of-range", "args", "D", ["get", "{D}", "10"],
     (1, ["range"])),
    ("args-non-numeric-index", "args", "D", ["get", "{D}", "abc"],
     (2, ["decimal", "number"])),
    ("args-index-over-u64", "args", "D",
     ["get", "{D}", "99999999999999999999999"], (2, ["decimal", "range"])),
    ("args-empty-index", "args", "D", ["get", "{D}", ""],
     (2, ["decimal", "number"])),
    ("args-hex-index", "args", "D", ["get", "{D}", "0x3"],
     (2, ["decimal", "number"])),
    ("args-exponent-index", "args", "D", ["get", "{D}", "1e3"],
     (2, ["decimal", "number"])),
    ("args-delete-out-of-range", "args", "D", ["delete", "{D}", "3", "10"],
     (1, ["range"])),
    ("args-delete-negative", "args", "R", ["delete", "{R}", "-2"],
     (2, ["negative"])),
    ("args-create-existing", "args", "D",
     ["create", "{D}", "--dtype", "<f4", "--shape=3"], (1, ["exist"])),
    ("args-create-zero-dim", "args", "D",
     ["create", "{D}/../new", "--dtype", "<f4", "--shape=3,0"],
     (2, ["shape", "zero", "dimension", "schema"])),
    ("args-create-bad-dtype", "args", "D",
     ["create", "{D}/../new", "--dtype", "<U4", "--shape=3"],
     (2, ["dtype"])),
    ("args-dotdot-missing-store", "args", "D",
     ["get", "{D}/../../nowhere/../x", "0"], (1, ["no store"])),
    ("args-batch-size-zero", "args", "D",
     ["batch", "{D}", "--seed", "1", "--step", "0", "--batch-size", "0"],
     (1, ["batch", "size"])),
    ("args-cyclic-batch-over-length", "args", "D",
     ["batch", "{D}", "--seed", "1", "--step", "0", "--mode", "cyclic",
      "--batch-size", "11"], (1, ["cyclic", "batch", "length"])),
    # ---- store files damaged on disk ------------------------------------
    ("store-meta-truncated", "store", "D", truncate_meta,
     (1, E_CORRUPT)),
    ("store-table-truncated", "store", "D", truncate_table, (1, E_CORRUPT)),
    ("store-schema-length-0", "store", "D",
     [("meta.zr", 16, struct.pack("<I", 0))], (1, E_CORRUPT + ["schema"])),
    ("store-schema-length-5000", "store", "D",
     [("meta.zr", 16, struct.pack("<I", 5000))], (1, E_CORRUPT + ["schema"])),
    ("store-reserved-nonzero", "store", "D", [("meta.zr", 25, b"\x01")],
     (1, E_CORRUPT)),
    ("store-codec-7", "store", "D", [("meta.zr", 31, b"\x07")],
     (1, E_CORRUPT + ["codec"])),
    ("store-schema-garbage", "store", "D", [("meta.zr", 32, b"\xc1\xc1")],
     (1, ["schema"])),
    ("store-length-huge", "store", "D",
     [("meta.zr", 0, struct.pack("<Q", 1 << 40))], (1, E_CORRUPT)),
    ("store-tail-past-eof", "store", "D",
     [("meta.zr", 8, struct.pack("<Q", 1 << 30))], (1, E_CORRUPT)),
    ("store-loc-offset-past-tail", "store", "D",
     [("meta.zr", loc(4), struct.pack("<Q", 1 << 20))], (1, E_CORRUPT)),
    ("store-loc-offset-overflow", "store", "D",
     [("meta.zr", loc(4), struct.pack("<Q", 2**64 - 8))], (1, E_CORRUPT)),
    ("store-loc-phys-zero", "store", "D",
     [("meta.zr", loc(4) + 8, struct.pack("<I", 0))], (1, E_CORRUPT)),
    ("store-loc-logic-zero", "store", "D",
     [("meta.zr", loc(4) + 12, struct.pack("<I", 0))], (1, E_CORRUPT)),
    ("store-loc-logic-not-row", "store", "D",
     [("meta.zr", loc(4) + 12, struct.pack("<I", 16))], (1, E_CORRUPT)),
    ("store-loc-logic-over-2gib", "store", "R",
     [("meta.zr", loc(4) + 12, struct.pack("<I", 2**31 + 1))],
     (1, E_CORRUPT)),
    ("store-logic-2gib-lie", "store", "R",
     [("meta.zr", loc(1) + 12, struct.pack("<I", 2**31))], (1, E_DECODE)),
    ("store-frame-bytes-flipped", "store", "D",
     lambda p: zf.patch(p, "data.zr", zf.read_loc(p, 4)[0] + 4, b"\xff" * 6),
     (1, E_DECODE)),
    ("store-decompression-bomb", "store", "R", frames_bomb, (1, E_DECODE)),
    ("store-frame-too-short", "store", "R", frames_short, (1, E_DECODE)),
    ("store-ragged-ndim-40", "store", "R",
     ragged_prefix(struct.pack("<Q", 40) + bytes(8 * 40) + b"\0\0"),
     (1, E_CORRUPT)),
    ("store-ragged-shape-mismatch", "store", "R",
     ragged_prefix(struct.pack("<QQ", 1, 5) + bytes(4)), (1, E_CORRUPT)),
    ("store-ragged-shape-overflow", "store", "R",
     ragged_prefix(struct.pack("<QQQ", 2, 2**63, 4) + bytes(2)),
     (1, E_CORRUPT)),
    ("store-ragged-prefix-cut", "store", "R",
     ragged_prefix(struct.pack("<Q", 3) + bytes(4)), (1, E_CORRUPT)),
    ("store-dict-missing", "store", "D",
     lambda p: zf.patch(p, "meta.zr", 31, b"\x02"), (1, E_CORRUPT + ["dict"])),
    ("store-stray-dict", "store", "D", add_dict, (1, E_CORRUPT + ["dict"])),
    ("store-data-missing", "store", "D", remove("data.zr"),
     (1, E_CORRUPT + ["data.zr", "no such"])),
    ("store-meta-missing", "store", "D", remove("meta.zr"), (1, ["no store"])),
    # ---- .npy streams cp'd into the mount's append file ------------------
    ("append-wrong-dtype", "append", "D",
     npy_bytes(np.zeros((2, 3), "<i4")), EINVAL),
    ("append-wrong-shape", "append", "D",
     npy_bytes(np.zeros((2, 2), "<f4")), EINVAL),
    ("append-garbage", "append", "D", os.urandom(3000), EINVAL),
    ("append-truncated-header", "append", "D", GOOD_D[:30], EINVAL),
    ("append-truncated-payload", "append", "D", GOOD_D[:-1], EINVAL),
    ("append-huge-declared-rows", "append", "D",
     hdr(arr("<f4", "(1099511627776, 3)")) + bytes(120), ANY_INPUT_ERR),
    ("append-size-overflow", "append", "R",
     hdr(arr("<i2", "(4611686018427387904, 8)")), ANY_INPUT_ERR),
    ("append-ragged-zero-elements", "append", "R",
     npy_bytes(np.zeros((0, 2), "<i2")), EINVAL),
    ("append-ragged-wrong-dtype", "append", "R",
     npy_bytes(np.zeros(5, "|u1")), EINVAL),
    ("append-good-then-bad", "append", "R",
     GOOD_R * 3 + npy_bytes(np.zeros(2, "<f4")), EINVAL),
    # ---- paths inside the mount -----------------------------------------
    ("path-record-at-length", "path", "D", p_stat("D/records/10.npy"),
     {errno.ENOENT}),
    ("path-record-negative", "path", "D", p_stat("D/records/-1.npy"),
     {errno.ENOENT}),
    ("path-record-non-numeric", "path", "D", p_stat("D/records/abc.npy"),
     {errno.ENOENT}),
    ("path-record-over-u64", "path", "D",
     p_stat("D/records/99999999999999999999999.npy"), {errno.ENOENT}),
    ("path-record-no-suffix", "path", "D", p_stat("D/records/1"),
     {errno.ENOENT}),
    ("path-record-leading-zero", "path", "D", p_stat("D/records/01.npy"),
     {errno.ENOENT}),
    ("path-record-leading-plus", "path", "D", p_stat("D/records/+1.npy"),
     {errno.ENOENT}),
    ("path-under-a-file", "path", "D", p_stat("D/records/1.npy/x"),
     {errno.ENOTDIR, errno.ENOENT}),
    ("path-long-name", "path", "D", p_stat("D/records/" + "7" * 250 + ".npy"),
     {errno.ENOENT, errno.ENAMETOOLONG}),
    ("path-300-char-name", "path", "D", p_stat("D/" + "x" * 300),
     {errno.ENOENT, errno.ENAMETOOLONG}),
    ("path-1100-char-name", "path", "D", p_stat("D/" + "x" * 1100),
     {errno.ENOENT, errno.ENAMETOOLONG}),
    ("path-meta-hidden", "path", "D", p_stat("D/meta.zr"), {errno.ENOENT}),
    ("path-data-hidden", "path", "D", p_stat("D/data.zr"), {errno.ENOENT}),
    ("path-batch-garbage", "path", "D", p_stat("D/batch/abc.npy"),
     {errno.ENOENT}),
    ("path-batch-size-zero", "path", "D", p_stat("D/batch/iid/0/1-1.npy"),
     {errno.ENOENT}),
    ("path-batch-bad-mode", "path", "D", p_stat("D/batch/bogus/4/1-1.npy"),
     {errno.ENOENT}),
    ("path-batch-seed-over-u64", "path", "D",
     p_stat("D/batch/99999999999999999999999-1.npy"), {errno.ENOENT}),
    ("path-create-file", "path", "D", p_write("D/newfile", b"x"),
     {errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSYS}),
    ("path-mkdir", "path", "D", lambda m: os.mkdir(os.path.join(m, "D/x")),
     {errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSYS}),
    ("path-write-record", "path", "D", p_open("D/records/0.npy", "r+b"),
     {errno.EACCES, errno.EPERM, errno.EROFS, errno.EBADF}),
    ("path-unlink-record", "path", "D",
     lambda m: os.unlink(os.path.join(m, "D/records/0.npy")),
     {errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSYS}),
    ("path-rename-stats", "path", "D",
     lambda m: os.rename(os.path.join(m, "D/stats"),
                         os.path.join(m, "D/stats2")),
     {errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSYS}),
    ("path-delete-non-numeric", "path", "D", p_write("D/delete", b"abc\n"),
     EINVAL),
    ("path-delete-out-of-range", "path", "D", p_write("D/delete", b"10\n"),
     {errno.ERANGE, errno.EINVAL}),
    ("path-delete-negative", "path", "D", p_write("D/delete", b"-1\n"),
     {errno.EINVAL, errno.ERANGE}),
    # ---- a damaged store under SRC at mount time --------------------------
    ("mount-codec-7", "mount", "R", [("meta.zr", 31, b"\x07")],
     (1, ["codec"])),
    ("mount-meta-truncated", "mount", "D", truncate_meta,
     (1, E_CORRUPT + ["shorter"])),
    ("mount-schema-garbage", "mount", "R", [("meta.zr", 32, b"\xc1\xc1")],
     (1, ["schema"])),
]

IDS = [c[0] for c in CATALOGUE]
assert len(set(IDS)) == len(IDS) and len(IDS) >= 50


def cases(*wheres):
    return [pytest.param(*c[1:], id=c[0]) for c in CATALOGUE
            if c[1] in wheres]


# -- checking "unchanged" -------------------------------------------------
def committed(files, header):
    """The committed bytes: header page, live table, data up to tail."""
    length, tail = header[0], header[1]
    return (files["meta.zr"][:zf.PAGE + 16 * length],
            files.get("data.zr", b"")[:tail])


def state(path):
    files = zf.snapshot(path)
    return files, zf.read_header(path)


def assert_unchanged(before, after, whole=False):
    (fb, hb), (fa, ha) = before, after
    assert hb == ha
    assert committed(fb, hb) == committed(fa, ha)
    if whole:
        assert fb == fa


def assert_message(text, words):
    low = text.lower()
    assert any(w in low for w in words), text


# -- fixtures --------------------------------------------------------------
@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """D and R built once; each case damages its own copy."""
    from conftest import Zr
    zr, base = Zr(), str(tmp_path_factory.mktemp("template"))
    d, r = os.path.join(base, "D"), os.path.join(base, "R")
    zr.create(d, "<f4", (3,))
    zr.append_arrays(d, [D_ROWS], base)
    zr.create(r, "<i2")
    zr.append_arrays(r, R_RECS, base)
    return {"D": d, "R": r}


@pytest.fixture
def stores(template, tmp):
    out = {}
    for k, p in template.items():
        out[k] = os.path.join(tmp, "src", k)
        shutil.copytree(p, out[k])
    return out


# -- the cases ------------------------------------------------------------
@pytest.mark.parametrize("where,which,data,expected", cases("cli"))
def test_cli_append(zr, stores, tmp, where, which, data, expected):
    store = stores[which]
    files = data if isinstance(data, list) else [data]
    paths = []
    for i, blob in enumerate(files):
        paths.append(os.path.join(tmp, f"in{i}.npy"))
        write_file(paths[-1], blob)
    before, stats = state(store), zr.stats(store)
    r = zr.run("append", store, *paths)
    assert r.returncode == expected[0], r.stderr
    assert_clean(r.stderr.decode())
    assert_message(r.stderr.decode(), expected[1])
    assert zr.stats(store) == stats
    assert_unchanged(before, state(store))


@pytest.mark.parametrize("where,which,argv,expected", cases("args"))
def test_args(zr, stores, where, which, argv, expected):
    argv = [a.format(**stores) for a in argv]
    before = {k: state(p) for k, p in stores.items()}
    r = zr.run(*argv)
    assert r.returncode == expected[0], r.stderr
    assert_clean(r.stderr.decode())
    assert_message(r.stderr.decode(), expected[1])
    assert r.stdout == b""
    for k, p in stores.items():
        assert_unchanged(before[k], state(p), whole=True)
    assert not os.path.exists(os.path.join(os.path.dirname(stores["D"]),
                                           "new"))


def assert_clean(msg):
    """An error message, not a sanitizer report or a crash."""
    assert msg.strip(), "failed without a message"
    assert "Sanitizer" not in msg and "runtime error" not in msg, msg


def read_all(zr, store, n):
    """Reads through every read command; returns their failures."""
    fails = []
    for argv in (["stats", store], ["verify", store],
                 ["get", store, *range(n)], ["get", store, "4"]):
        r = zr.run(*argv)
        if r.returncode != 0:
            fails.append((r.returncode, r.stderr.decode()))
    return fails


def apply_damage(store, damage):
    if callable(damage):
        damage(store)
    else:
        for name, off, data in damage:
            zf.patch(store, name, off, data)


@pytest.mark.parametrize("where,which,damage,expected", cases("store"))
def test_damaged_store(zr, stores, where, which, damage, expected):
    store = stores[which]
    apply_damage(store, damage)
    before = zf.snapshot(store)
    fails = read_all(zr, store, len(D_ROWS) if which == "D" else
                     len(R_RECS))
    # At least the command that touches the damage fails, clearly; none
    # crashes (a signal gives a negative status).
    assert fails, "damaged store read without any error"
    for code, msg in fails:
        assert code == expected[0], msg
        assert_clean(msg)
    assert any(any(w in m.lower() for w in expected[1]) for _, m in fails), \
        fails
    # Reading never writes.
    assert zf.snapshot(store) == before


@pytest.mark.parametrize("where,which,damage,expected", cases("mount"))
def test_damaged_store_at_mount(stores, tmp, where, which, damage,
                                expected):
    """A damaged store makes the mount fail at once, naming the store; the
    daemon does not serve a half-valid tree, and writes nothing."""
    from conftest import binary, is_mounted, unmount
    store = stores[which]
    apply_damage(store, damage)
    before = zf.snapshot(store)
    mnt = os.path.join(tmp, "mnt")
    os.makedirs(mnt)
    try:
        r = subprocess.run([binary("src", "fs", "zrecordfs"),
                            os.path.dirname(store), mnt, "-f"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=60)
    finally:
        mounted = is_mounted(mnt)
        unmount(mnt)
    assert not mounted
    assert r.returncode == expected[0], r.stderr
    msg = r.stderr.decode()
    assert_clean(msg)
    assert store in msg, msg
    assert_message(msg, expected[1])
    assert zf.snapshot(store) == before


# -- through the mount ---------------------------------------------------
@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """One mount of fresh D and R for every mount case of this module."""
    from conftest import Mount, Zr, is_mounted
    zr = Zr()
    base = str(tmp_path_factory.mktemp("hostile"))
    src, mnt = os.path.join(base, "src"), os.path.join(base, "mnt")
    zr.create(os.path.join(src, "D"), "<f4", (3,))
    zr.append_arrays(os.path.join(src, "D"), [D_ROWS], base)
    zr.create(os.path.join(src, "R"), "<i2")
    zr.append_arrays(os.path.join(src, "R"), R_RECS, base)
    m = Mount(src, mnt)
    try:
        yield src, mnt
    finally:
        m.close()
        assert not is_mounted(mnt)


def mount_state(src, mnt, which):
    with open(os.path.join(mnt, which, "stats")) as f:
        stats = f.read()
    return stats, state(os.path.join(src, which))


@pytest.mark.parametrize("where,which,data,errnos", cases("append"))
def test_mount_append(served, tmp, where, which, data, errnos):
    src, mnt = served
    path = os.path.join(tmp, "in.npy")
    write_file(path, data)
    stats, before = mount_state(src, mnt, which)
    r = cp(path, os.path.join(mnt, which, "append"))
    assert r.returncode != 0
    msg = r.stderr.decode()
    assert any(os.strerror(e) in msg for e in errnos), msg
    stats2, after = mount_state(src, mnt, which)
    assert stats2 == stats
    assert_unchanged(before, after)
    with open(os.path.join(mnt, which, "errors")) as f:
        assert f.read().strip(), "no reason logged in the errors file"


@pytest.mark.parametrize("where,which,op,errnos", cases("path"))
def test_mount_path(served, where, which, op, errnos):
    src, mnt = served
    stats, before = mount_state(src, mnt, which)
    listing = sorted(os.listdir(os.path.join(src, which)))
    expect_oserror(lambda: op(mnt), errnos)
    stats2, after = mount_state(src, mnt, which)
    assert stats2 == stats
    assert_unchanged(before, after, whole=True)
    assert sorted(os.listdir(os.path.join(src, which))) == listing
    # The mount still serves the store.
    assert np.array_equal(np.load(os.path.join(mnt, "D/records/9.npy")),
                          D_ROWS[9])


def test_dotdot_stays_inside(served):
    """`..` is resolved by the kernel inside the mount: it never reaches
    SRC's parent through the daemon, and the store files stay hidden."""
    src, mnt = served
    # SRC holds two stores: a dataset, whose @batch is always listed
    assert sorted(os.listdir(os.path.join(mnt, "D", ".."))) == \
        [".zrecordfs", "@batch", "D", "R"]
    assert os.path.samefile(os.path.join(mnt, "D/records/../../R"),
                            os.path.join(mnt, "R"))
    assert "meta.zr" not in os.listdir(os.path.join(mnt, "D/records/../"))


def test_mount_still_serves(served, tmp):
    """After every hostile input above, the mount takes a good append and
    serves old and new records exactly."""
    src, mnt = served
    path = os.path.join(tmp, "good.npy")
    write_file(path, GOOD_R)
    assert cp(path, os.path.join(mnt, "R", "append")).returncode == 0
    n = len(R_RECS)
    got = np.load(os.path.join(mnt, f"R/records/{n}.npy"))
    assert np.array_equal(got, np.arange(3, dtype="<i2"))
    for i, a in enumerate(R_RECS):
        got = np.load(os.path.join(mnt, f"R/records/{i}.npy"))
        assert got.shape == a.shape and np.array_equal(got, a)


def test_catalogue_size():
    assert len(CATALOGUE) >= 50
