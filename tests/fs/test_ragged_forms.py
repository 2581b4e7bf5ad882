"""Ragged batches in one read (issue 13): a ragged store's
batch/SEED-STEP.packed.npz (data, offsets, shapes) and .padded.npz (data,
lengths) hold what loaderx's RaggedStore.gather(idx, form="packed" |
"padded", pad=0) returns, the same bytes as `zrecord batch --form`; each
member is also served as a .npy of its own (SEED-STEP.packed.npy,
.offsets.npy, .shapes.npy, .padded.npy, .lengths.npy), byte for byte the
member; and a store whose records cannot take the form refuses every one
of its names with EINVAL."""
import errno
import hashlib
import os
import subprocess
import sys

import numpy as np
import pytest

from fsutil import batch_args, batch_path, make_store, zrecord
from test_batch_cache import model_delete, npy_bytes
from test_stalls import write

sys.path.insert(0, os.path.join(os.environ.get("top_srcdir", "../.."),
                                "contrib", "python"))

RNG = np.random.default_rng(13)
TOKENS = [RNG.integers(-2**31, 2**31 - 1, size=(RNG.integers(1, 40),))
          .astype("<i4") for _ in range(30)]
# varying H only: both forms; varying H and W: packed only
IMAGES_H = [RNG.integers(0, 255, size=(RNG.integers(1, 9), 5, 3))
            .astype("u1") for _ in range(20)]
IMAGES_HW = [RNG.integers(0, 255, size=(RNG.integers(1, 9),
                                        RNG.integers(1, 7), 3))
             .astype("u1") for _ in range(20)]
MIXED_NDIM = [np.arange(4, dtype="<i4"), np.arange(6, dtype="<i4")
              .reshape(2, 3)] * 5

BATCHES = [(7, 0, None, None), (0, 3, "iid", 5), (11, 2, "cyclic", 8),
           (5, 9, "sequential", 3)]


@pytest.fixture(params=["raw", "zstd"])
def stores(request, src):
    for name, dtype, recs in (("tokens", "<i4", TOKENS),
                              ("images_h", "u1", IMAGES_H),
                              ("images_hw", "u1", IMAGES_HW),
                              ("mixed", "<i4", MIXED_NDIM)):
        make_store(os.path.join(src, name), dtype, ragged=True,
                   codec=request.param, records=recs)
    return src


def cmp(a, b):
    return subprocess.run(["cmp", str(a), str(b)]).returncode == 0


# each form's members, and the name of each one's .npy part
PARTS = {"packed": [("data", "packed.npy"), ("offsets", "offsets.npy"),
                    ("shapes", "shapes.npy")],
         "padded": [("data", "padded.npy"), ("lengths", "lengths.npy")]}


def check_parts(m, src, tmp_path, store, form, seed, step, mode, size, z):
    """Every part file is its .npz member, byte for byte, and the CLI's
    --form of the same part."""
    for member, suffix in PARTS[form]:
        part = m.path(store, *batch_path(seed, step, mode, size, suffix))
        with open(part, "rb") as f:
            got = f.read()
        assert got == z.zip.read(member + ".npy"), (store, suffix)
        mine = tmp_path / "cli.npy"
        zrecord("batch", os.path.join(src, store),
                *batch_args(seed, step, mode, size), "--form", suffix,
                "-o", mine)
        assert cmp(mine, part), (store, suffix, seed, step)


def check_form(m, src, tmp_path, store, form, batches=BATCHES):
    # here, not at the top: the TSan phase runs this file's concurrency
    # test, and a TSan-built libzrecord cannot load into CPython
    from loaderx.zrecord import RaggedStore
    with RaggedStore.open(os.path.join(src, store), readonly=True) as rs:
        for seed, step, mode, size in batches:
            served = m.path(store, *batch_path(seed, step, mode, size,
                                                form + ".npz"))
            idx = np.load(m.path(store, *batch_path(
                seed, step, mode, size, "indices.npy")))
            want = rs.gather(idx, form=form, pad=0)
            with np.load(served) as z:
                names = ["data", "offsets", "shapes"] if form == "packed" \
                    else ["data", "lengths"]
                assert sorted(z.files) == sorted(names)
                for name, w in zip(names, want):
                    got = z[name]
                    assert got.dtype == w.dtype, (store, form, name)
                    assert got.shape == w.shape, (store, form, name)
                    assert np.array_equal(got, w), (store, form, name)
                check_parts(m, src, tmp_path, store, form, seed, step,
                            mode, size, z)
            mine = tmp_path / "cli.npz"
            zrecord("batch", os.path.join(src, store),
                    *batch_args(seed, step, mode, size), "--form", form,
                    "-o", mine)
            assert cmp(mine, served), (store, form, seed, step)


def test_forms_match_loaderx_and_the_cli(stores, mount, tmp_path):
    m = mount(stores, "ro")
    check_form(m, stores, tmp_path, "tokens", "packed")
    check_form(m, stores, tmp_path, "tokens", "padded")
    check_form(m, stores, tmp_path, "images_h", "packed")
    check_form(m, stores, tmp_path, "images_h", "padded")
    check_form(m, stores, tmp_path, "images_hw", "packed")
    # --form npz is the default batch file
    mine = tmp_path / "cli.npz"
    zrecord("batch", os.path.join(stores, "tokens"), "--seed", 7,
            "--step", 0, "--form", "npz", "-o", mine)
    assert cmp(mine, m.path("tokens", "batch", "7-0.npz"))


def test_tokens_offsets_are_cu_seqlens(stores, mount):
    m = mount(stores, "ro")
    with np.load(m.path("tokens", "batch", "sequential", "4",
                        "0-1.packed.npz")) as z:
        lens = [len(t) for t in TOKENS[4:8]]
        assert z["offsets"].tolist() == [0] + np.cumsum(lens).tolist()
        assert z["shapes"].tolist() == [[n] for n in lens]
        assert np.array_equal(z["data"], np.concatenate(TOKENS[4:8]))
    one = m.path("tokens", "batch", "sequential", "4")
    lens = [len(t) for t in TOKENS[4:8]]
    assert np.load(os.path.join(one, "0-1.offsets.npy")).tolist() == \
        [0] + np.cumsum(lens).tolist()
    assert np.array_equal(np.load(os.path.join(one, "0-1.packed.npy"),
                                  mmap_mode="r"),
                          np.concatenate(TOKENS[4:8]))
    padded = np.load(os.path.join(one, "0-1.padded.npy"))
    assert padded.shape == (4, max(lens))
    for row, t in zip(padded, TOKENS[4:8]):
        assert np.array_equal(row[:len(t)], t) and not row[len(t):].any()


def test_bad_part_names(stores, mount):
    m = mount(stores, "ro")
    batch = m.path("tokens", "batch")
    for name in ["0-0.packed.npy.npy", "0-0..npy", "0-.packed.npy",
                 "-0.offsets.npy", "0-0.PACKED.npy", "0-0.packed",
                 "0-0.offsets", "00-1.shapes.npy", "0-0.lengths.npz",
                 "0-0.data.npy", "0-0.npy", "0-0.packed.npy" + "x" * 200,
                 "0-0.offsets.npy\n"]:
        assert lookup_errno(os.path.join(batch, name)) == errno.ENOENT, name
    assert lookup_errno(os.path.join(batch, "0-0.offsets.npy")) == 0


def test_dense_stores_have_no_ragged_forms(src, mount):
    make_store(os.path.join(src, "dense"), "<i4", shape=(3,),
               rows=np.arange(12, dtype="<i4").reshape(4, 3))
    m = mount(src, "ro")
    for _, parts in PARTS.items():
        for _, suffix in parts:
            assert lookup_errno(m.path("dense", "batch", "0-0." + suffix)) \
                == errno.ENOENT, suffix
    assert lookup_errno(m.path("dense", "batch", "0-0.npy")) == 0


def lookup_errno(path):
    try:
        os.stat(path)
    except OSError as e:
        return e.errno
    return 0


def test_records_that_cannot_take_the_form_refuse_it(stores, mount,
                                                     tmp_path):
    m = mount(stores, "ro")
    batch = m.path("mixed", "batch", "sequential", "4")
    for form in ("packed", "padded"):
        for name in [form + ".npz"] + [p for _, p in PARTS[form]]:
            assert lookup_errno(os.path.join(batch, "0-0." + name)) == \
                errno.EINVAL, name
    # one record only: one ndim, the form is served
    one = m.path("mixed", "batch", "sequential", "1")
    assert lookup_errno(os.path.join(one, "0-0.packed.npz")) == 0
    for name in ("padded.npz", "padded.npy", "lengths.npy"):
        hw = m.path("images_hw", "batch", "sequential", "20", "0-0." + name)
        assert lookup_errno(hw) == errno.EINVAL, name
    assert lookup_errno(m.path("images_hw", "batch", "sequential", "20",
                               "0-0.packed.npz")) == 0
    for form in ("packed", "padded", "offsets.npy", "lengths.npy"):
        r = zrecord("batch", os.path.join(stores, "mixed"), "--seed", 0,
                    "--step", 0, "--mode", "sequential", "--batch-size", 4,
                    "--form", form, "-o", tmp_path / "x.npz", check=False)
        assert r.returncode != 0
        r = zrecord("batch", os.path.join(stores, "mixed"), "--seed", 0,
                    "--step", 0, "--mode", "sequential", "--batch-size", 4,
                    "--form", "bogus", check=False)
        assert r.returncode != 0


def test_padded_over_max_batch_bytes_is_efbig(src, mount):
    """The padded size is known only from the shapes: checked once they
    are read, after the cheap bound let the name through."""
    recs = [np.arange(10000, dtype="<i4")] + [np.arange(1, dtype="<i4")] * 15
    make_store(os.path.join(src, "long"), "<i4", ragged=True, records=recs)
    m = mount(src, "ro", "max_batch_bytes=64K")
    batch = m.path("long", "batch", "sequential", "16")
    assert lookup_errno(os.path.join(batch, "0-0.padded.npz")) == errno.EFBIG
    assert lookup_errno(os.path.join(batch, "0-0.padded.npy")) == errno.EFBIG
    # each part is a file of its own, bounded on its own
    assert np.load(os.path.join(batch, "0-0.lengths.npy")).tolist() == \
        [len(r) for r in recs]
    with np.load(os.path.join(batch, "0-0.packed.npz")) as z:
        assert np.array_equal(z["data"], np.concatenate(recs))
    np.load(os.path.join(batch, "0-0.npz")).close()


def test_parts_read_by_many_processes_at_once(stores, mount):
    """`xargs -P8 md5sum` over the parts of 24 batches, each batch's parts
    spread over different processes (so their lookups share and race for
    the kept shapes): every part is its .npz member."""
    m = mount(stores, "ro")
    batch = m.path("tokens", "batch", "iid", "6")
    names = ["%d-%d.%s" % (s, t, suffix) for t in range(8) for s in range(3)
             for f in ("packed", "padded") for _, suffix in PARTS[f]]
    r = subprocess.run("xargs -P8 -n3 md5sum", shell=True, cwd=batch,
                       input="\n".join(reversed(names)).encode(),
                       capture_output=True, check=True)
    got = dict(reversed(line.split()) for line in r.stdout.decode()
               .splitlines())
    assert len(got) == len(names)
    for name in names:
        stem, suffix = name.split(".", 1)
        form = "packed" if suffix in ("packed.npy", "offsets.npy",
                                      "shapes.npy") else "padded"
        member = dict((p, mb) for mb, p in PARTS[form])[suffix]
        with np.load(os.path.join(batch, stem + "." + form + ".npz")) as z:
            want = hashlib.md5(z.zip.read(member + ".npy")).hexdigest()
        assert got[name] == want, name


def test_kept_records_never_outlive_a_delete(src, mount):
    """On a compressed store a lookup of a packed name gathers its records
    and keeps them for the read (src/fs/shape_cache.h).  A delete, then appends
    that bring the store back to its length, between the lookup and the
    read change the batch: the read serves the batch as the store now is,
    never the records kept before."""
    recs = [np.full(3 + i % 5, i, dtype="<i4") for i in range(12)]
    make_store(os.path.join(src, "t"), "<i4", ragged=True, codec="zstd",
               records=recs)
    m = mount(src, "batch_size=6", "sampler=sequential")
    batch = m.path("t", "batch")
    names = ["0-0." + suffix for _, suffix in PARTS["packed"]]
    for name in names:
        os.stat(os.path.join(batch, name))  # lookups: records kept
    write(m.path("t", "delete"), "0 2 4\n")
    new = [np.full(7, 100 + i, dtype="<i4") for i in range(3)]
    with open(m.path("t", "append"), "wb") as f:
        for a in new:
            f.write(npy_bytes(a))
    now = (model_delete(recs, [0, 2, 4]) + new)[:6]
    data, offsets, shapes = [np.load(os.path.join(batch, n)) for n in names]
    assert np.array_equal(data, np.concatenate(now))
    assert offsets.tolist() == [0] + np.cumsum([len(r) for r in now]).tolist()
    assert shapes.tolist() == [[len(r)] for r in now]
